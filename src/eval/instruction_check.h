// The instruction stage's arithmetic: from Nsight Compute's per-opcode counts of the launches in the
// solution's call, decide whether the solution executed every required instruction family, whether its
// required MMA instruction did the task's FLOPs (coverage), and whether all the work came from the
// submission's own kernels on the stream it was given. Pure functions: the stage driver runs ncu and passes
// the parsed report in.
//
// What counts, and why:
// - Only launches of kernels built from the submission count toward the families and the coverage. A library
//   kernel (cuBLAS' nvjet_sm90_..., which executes HGMMA, UTMALDG and SYNCS itself) would otherwise pass.
// - A kernel is "from the submission" when its name matches a kernel of the compile stage (ptxas report or
//   cuobjdump). The stage asks ncu for mangled names, which match exactly or not at all (ncu's demangled
//   names were seen without their namespace on the H200). A demangled name from ncu is matched by its
//   signature, spaces ignored, or, where the two demanglers differ, by the qualified name without template
//   arguments and parameters. A name can be copied (an extern "C" kernel named like a cuBLAS kernel), so
//   when the submission's static SASS is given each launch must also have executed only opcodes present in
//   its compiled code: every function its name matches (template instances can share a name once the
//   spellings differ) and the device functions the kernels call; a launch that ran other opcodes is not
//   the submission's kernel.
// - The solution's stream is the one the harness passed (its cudaStreamGetId, which is what ncu prints as
//   Stream). Without it, the stream with most launches of submission kernels is taken. The ABI puts all GPU
//   work on that stream: a launch on another stream escapes the timing, so it fails the stage.
// - The required MMA must do the math, not merely run: the arithmetic other instructions could have done
//   (FFMA and friends at 32 lanes, mma.sync at its shape) may cover at most 1 - threshold of the task's
//   FLOPs, so a full set of wgmma whose results are thrown away, with the output computed by FMA or mma.sync,
//   fails.
// - Counts are warp-level. One wgmma (HGMMA/QGMMA/IGMMA/BGMMA) is issued by the 4 warps of a warpgroup and
//   counted 4 times: it does 2*M*N*K FLOPs, read from the `64xNxK` part of the opcode, per 4 counts. mma.sync
//   (HMMA/IMMA .16816 and friends) is per warp. Opcodes whose shape is not in the name (Blackwell UTCHMMA)
//   make the coverage unknown, and the stage says so instead of guessing.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "arch/profile.h"
#include "eval/ncu_report.h"
#include "eval/sass_inventory.h"
#include "eval/verdict.h"
#include "task/task.h"

namespace ptxbench {

struct InstructionCheckInput {
  // Kernel names built from the submission, mangled or demangled (the compile stage's ptxas report).
  std::vector<std::string> submission_kernels;
  // cudaStreamGetId() of the stream handed to the solution in the profiled call; ncu prints the same id.
  std::optional<int64_t> solution_stream;
  // `cuobjdump -sass` of the submission's cubin, when available: its kernels count as the submission's, and
  // each launch's executed opcodes are checked against its compiled code.
  const SassInventory* static_sass = nullptr;
};

struct FamilyExecution {
  std::string name;                        // "wgmma"
  std::vector<std::string> sass_prefixes;  // "HGMMA"
  bool does_the_math = false;
  int64_t executed = 0;  // warp-level, over the submission's launches
  // False when ncu gave base opcodes only and a prefix names modifiers ("SYNCS.PHASECHK"): then `executed`
  // counts every opcode of that base ("SYNCS"), an upper bound. Zero is still a real zero.
  bool exact = true;
  int64_t executed_elsewhere = 0;          // warp-level, in launches of kernels not built from the submission
  std::map<std::string, int64_t> opcodes;  // the matching opcodes of the submission's launches
};

struct LaunchCheck {
  int id = 0;
  std::string kernel;
  int64_t stream = -1;
  bool from_submission = false;
  bool on_solution_stream = true;
  int64_t instructions = 0;
  // Opcodes this launch executed that its kernel's compiled code lacks (only with static SASS).
  std::vector<std::string> opcodes_not_in_compiled_code;
};

struct CoverageEstimate {
  std::optional<double> coverage;  // mma_flops / task_flops; absent when unknown
  int64_t mma_flops = 0;           // from the opcodes with a known shape
  int64_t task_flops = 0;
  // Arithmetic other than the required MMA in the submission's launches (FFMA, HFMA2, mma.sync, ...), in
  // FLOPs it could do at most (every lane active): a required MMA whose results are thrown away, with the
  // math done elsewhere, shows here. At most 1 - threshold of the task's FLOPs may come from it.
  int64_t other_flops = 0;
  std::map<std::string, int64_t> other_opcodes;  // base opcode -> warp-level count
  std::map<std::string, int64_t>
      unknown_shape_opcodes;  // executed MMA opcodes whose shape is not in the name
  std::string note;           // why the coverage is unknown, if it is
};

struct InstructionCheck {
  StageStatus status = StageStatus::failed;
  std::string message;  // what failed and by how much, for a person or a model
  std::vector<FamilyExecution> families;
  std::vector<LaunchCheck> launches;
  std::optional<int64_t> solution_stream;
  bool solution_stream_given = false;
  std::vector<std::string> foreign_kernels;     // "nvjet_sm90_tst_128x64_64x8_1x2_h_bz_TNT (stream 13)"
  std::vector<std::string> off_stream_kernels;  // "plain_c_kernel (stream 14)"
  CoverageEstimate coverage;
  std::vector<std::string> ncu_problems;  // ncu's errors: the counts may be incomplete
};

// Entry: the stage's decision for the launches profiled in the solution's call on `shape` (the main shape).
InstructionCheck check_instructions(const NcuReport& report, const Task& task, const Shape& shape,
                                    const InstructionCheckInput& input);

// The stage's decision before any profile, from the submission's compiled code alone: a required family none
// of whose SASS prefixes any opcode of `compiled` (cuobjdump of the submission's cubin) has cannot have
// executed, so the stage fails without running ncu (40-120 s for a slow kernel).
struct StaticDecision {
  StageStatus status = StageStatus::failed;  // as check_instructions' "not executed"
  std::vector<std::string> not_compiled;     // the families absent, labelled: "wgmma (HGMMA)"
  std::string message;                       // "not in the compiled code: wgmma (HGMMA), tma (UTMALDG)"
};

// Why it is sound: given the static SASS, check_instructions counts a family only in launches whose every
// executed opcode is in that code (classify_launches), and it matches opcodes to families as this does
// (family_has_opcode), so a family absent from that code ends in "not executed" whatever ran (given opcodes
// with modifiers, which the stage asks ncu for). Every function of `compiled` counts, kernels and the device
// functions they call alike: the cubin holds the submission's code only, and a launch is held to a part of it
// (its kernel and the callees), so nothing a launch could be counted for is called absent. Code loaded at run
// time changes nothing: a launch that ran the family's opcodes ran some the compiled code lacks, so it is not
// the submission's. The static scan forbids such loading besides (dlopen, cuModuleLoad*, cuLibraryLoad*,
// cuLink*, nvrtc, nvJitLink, any library but the CUDA and C/C++ runtimes), but cannot close every way: the
// TMA kit needs cudaGetDriverEntryPoint, which hands out any driver function by name (docs/anti-cheat.md).
// Nothing here rests on that scan. nullopt when every family is there, or when `compiled` has no function.
std::optional<StaticDecision> decide_from_compiled_code(const Task& task, const SassInventory& compiled);

// Pieces, exposed for tests and for the report (an MMA's shape: arch/profile.h's parse_mma_shape).
CoverageEstimate estimate_coverage(const std::map<std::string, int64_t>& math_opcodes, int64_t task_flops);
// Whether a kernel name printed by ncu and one from the compile stage name the same kernel (see above).
bool same_kernel(const std::string& ncu_name, const std::string& compiled_name);

nlohmann::json to_json(const FamilyExecution& family);
nlohmann::json to_json(const LaunchCheck& launch);
nlohmann::json to_json(const CoverageEstimate& coverage);
nlohmann::json to_json(const InstructionCheck& check);
// Marked `decided_by` "static SASS inventory", with the coverage null: no profile ran.
nlohmann::json to_json(const StaticDecision& decision);

}  // namespace ptxbench
