// An architecture is one profile: arch/<name>.json (with what every architecture shares, arch/common.json),
// inlined into the binary at build time so that what judges is what was built. Everything ptxbench knows of
// an architecture is read from it: the gencode and compute capability, whether its GPU stages run here, the
// instruction families a task may require with their PTX mnemonics and SASS opcodes, the MMA opcodes and the
// FLOPs of each, the hardware counters of its tensor pipe, its kit and its baselines. tasks/generate.py
// reads the same files.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench {

// An instruction family a task may require: the opcodes that prove it ran.
struct InstructionFamilySpec {
  std::string name;               // "wgmma", "tma", "mbarrier": as verdicts report it
  std::vector<std::string> ptx;   // PTX mnemonics, alone or with modifiers: "wgmma.mma_async"
  std::vector<std::string> sass;  // SASS opcodes, alone or with modifiers: "HGMMA", "SYNCS.PHASECHK"
  std::string why;                // what it is for
};

// MMA opcodes and the work of one warp-level count of each.
struct MmaOpcodes {
  std::vector<std::string> opcodes;  // base names: "HGMMA"
  int64_t warps = 1;                 // warps that issue one instruction together (a warpgroup's 4)
  // The shape is an "MxNxK" modifier of the opcode (HGMMA.64x128x16.F32.BF16); else, when `shapes` is empty,
  // it is not in the name at all (tcgen05's is in a register).
  bool shape_in_name = false;
  std::map<std::string, std::array<int64_t, 3>> shapes;  // modifier -> M, N, K: "16816" -> {16, 8, 16}
};

// A hardware counter of the tensor pipe that the runner reads around a call (runner/tensor_counter.h).
struct CounterSpec {
  std::string metric;                // "sm__inst_executed_pipe_tensor_op_gmma.sum"
  std::vector<std::string> opcodes;  // the SASS opcodes it counts, when a per-opcode count must equal it
};

// What the profiler feedback reads (eval/profile_summary.h): the Nsight Compute sections to collect, and the
// metrics of each figure, the first one the report holds (names move between Nsight Compute versions).
struct ProfileSpec {
  std::vector<std::string> sections;                        // "SpeedOfLight", "WarpStateStats"
  std::map<std::string, std::vector<std::string>> figures;  // "dram_throughput_pct" -> candidate metrics
  std::string stall_prefix, stall_suffix;  // each stall reason's metric: prefix + reason + suffix
  // Whether the summary reads this metric: a figure's candidate, or a stall reason's.
  bool reads(std::string_view metric) const;
};

struct ArchProfile {
  std::string name;        // "sm_90a"
  std::string marketing;   // "Hopper"
  std::string gencode;     // nvcc's -gencode value
  int compute_capability;  // 90, 100: what a GPU reports to run this architecture's tasks
  bool runs = false;       // its GPU stages run on a host of this project ("runtime": "full")
  std::string runs_text;   // what a task description says of it
  std::vector<std::string> tracks;
  std::string kit;  // folder under kits/; kits/common/ptx is shared by every architecture
  // Dense bf16 tensor-core FLOPs per SM per clock: with the SM count and clock, the peak the time stage's
  // physics floor holds a call to (runner/timing_rules.h).
  int dense_bf16_flops_per_sm_per_clock = 0;
  InstructionFamilySpec math;  // the MMA that does a task's FLOPs
  // The other families a task may require, by their key in the profile ("tma", "bulk-copy", "mbarrier").
  std::map<std::string, InstructionFamilySpec> families;
  // The PTX mnemonics and SASS opcodes (base names) a task of this architecture may require: a task file's
  // "ptx" and "sass" entries each name one, alone or with modifiers after it ("mbarrier.try_wait.parity"), so
  // that a misspelt one stops the task from loading (known_instruction).
  std::vector<std::string> ptx_mnemonics;
  std::vector<std::string> sass_opcodes;
  std::vector<MmaOpcodes> mma_opcodes;
  // The tensor pipe's counters: `mma` the architecture's own MMA (one per warp that issues it), `tensor`
  // every MMA of the pipe. None where no metric is known (counters_missing says why).
  struct Counters {
    CounterSpec mma, tensor;
  };
  std::optional<Counters> counters;
  std::string counters_missing;
  // The profiler feedback's metrics: arch/common.json's, with the tensor pipe's ("tensor_pipe_pct") where
  // one is known.
  ProfileSpec profile;
  std::vector<std::string> baselines;  // the vendor baselines a task of it may name, beside "none"
};

const std::vector<ArchProfile>& all_archs();
const ArchProfile* find_arch(const std::string& name);
// The profile of the GPU of this compute capability, or nullptr.
const ArchProfile* arch_of_compute_capability(int compute_capability);

// Whether `name` is one of `known`, or one of them followed by modifiers ("." and more).
bool known_instruction(const std::vector<std::string>& known, const std::string& name);

// The instruction families a task may require (the "name" of each "required" entry), over every profile:
// fixed there, so that a misspelt one stops the task from loading rather than reading as a family the
// solution failed to execute.
std::vector<std::string> instruction_family_names();

// The MMA an opcode performs, when its name says, by every profile's table: HGMMA.64x128x16.F32.BF16 ->
// {64, 128, 16, 4 warps}, HMMA.16816.F32.BF16 -> {16, 8, 16, 1 warp}.
struct MmaShape {
  int64_t m = 0, n = 0, k = 0;
  int64_t warps_per_instruction = 1;  // warps that issue it together (ncu counts each of them)
  int64_t flops_per_count() const { return 2 * m * n * k / warps_per_instruction; }
};
std::optional<MmaShape> parse_mma_shape(std::string_view opcode);
// Whether an opcode (with or without modifiers) is one of the profiles' MMA opcodes.
bool is_mma_opcode(std::string_view opcode);

// A profile from its JSON text and the shared part's; throws std::invalid_argument naming the field that is
// wrong. Exposed for the tests; all_archs() reads the inlined files.
ArchProfile parse_profile(std::string_view text, std::string_view common_text);

}  // namespace ptxbench
