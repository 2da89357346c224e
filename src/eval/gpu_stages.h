// The GPU stages: sanitize, correct, instructions, time. Each runs the solution in a fresh ptxbench-runner
// child process (which starts the solution's process under compute-sanitizer or Nsight Compute where the
// stage needs them, all of it in the sandbox of sandbox.h), with a time limit; the parent only reads what the
// child reports on its authenticated result channel and how it ended, so a hanging, crashing or lying
// solution costs one stage, never the judge. Each stage's details carry "sandbox": what confined the run.
#pragma once

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compile/compile.h"
#include "eval/gpu_gate.h"
#include "eval/sandbox.h"
#include "eval/verdict.h"
#include "task/task.h"

namespace ptxbench {

inline constexpr const char* kGpuStageNames[] = {"sanitize", "correct", "instructions", "time"};

struct GpuTools {
  std::filesystem::path runner;  // ptxbench-runner
  std::filesystem::path compute_sanitizer = "compute-sanitizer";
  std::filesystem::path ncu = "ncu";
  std::filesystem::path cuobjdump = "cuobjdump";
  // The most of cuobjdump's SASS listing of a submission the instruction stage reads (forbidden.h's
  // kListingLimit; tests lower it). It reads the listing whole, so a longer one fails the stage.
  size_t sass_listing_limit = kListingLimit;
  // Attached by the runner to a solution that ran out of its stage's time, for where its threads wait
  // (hang_report.h); empty: none.
  std::filesystem::path cuda_gdb = "cuda-gdb";
  // Samples the GPUs' power, clock and slowdown reasons beside the time stage's calls (gpu_monitor.h); empty:
  // none.
  std::filesystem::path nvidia_smi = "nvidia-smi";
  std::filesystem::path scratch;  // for tool logs
  std::string visible_device;     // CUDA_VISIBLE_DEVICES for the runner and the baseline; empty: as inherited
  std::string python = "python3";  // the python with torch and triton that runs Triton solutions
  // Where that python's bytecode is kept for the sandboxed processes (python_bytecode.h); empty: none.
  std::filesystem::path python_bytecode;
  // Per runner process. Sanitizer and profiler runs are slower than plain ones.
  double sanitize_limit_s = 240;
  double correct_limit_s = 120;
  double profile_limit_s = 240;
  double time_limit_s = 120;
  void set_all_limits(double seconds) {
    sanitize_limit_s = correct_limit_s = profile_limit_s = time_limit_s = seconds;
  }
  // The instruction stage's profiled call also collects the architecture profile's Nsight Compute sections
  // and its details hold their summary (profile_summary.h; run --feedback profile): more replay passes, on
  // the GPU's counters, so that the stage has the GPU alone (gpu_stages.cpp) rather than beside the sanitize
  // stage.
  bool profile_sections = false;
  int trials = 3;
  int warmup = 10;
  int repetitions = 50;
  // The GPU stages to run, by name (kGpuStageNames); the others are "skipped" as not requested. The time
  // stage needs the correct stage's pass.
  std::vector<std::string> stages{std::begin(kGpuStageNames), std::end(kGpuStageNames)};
  bool wants(const std::string& stage) const {
    return std::find(stages.begin(), stages.end(), stage) != stages.end();
  }
  // The project's root, under which a baseline module lies (a family descriptor's BaselineSpec::module, the
  // attention tasks' baselines/attention_cudnn.py): Python entry points that the runner runs with `python` in
  // a process of its own and times alternating with the solution. Empty: such tasks get no speedup.
  std::filesystem::path project_root;
  // The sandbox every runner process starts in, resolved once by the front end (resolve_sandbox). Left as
  // default-constructed it is unavailable, and the GPU stages are a harness error instead of running
  // unconfined.
  SandboxStatus sandbox;
  uint64_t sandbox_data_bytes = uint64_t{32} << 30;  // RLIMIT_DATA in the sandbox (0: none)
  // The gate the stages pass when evaluations share the GPU (LocalEvaluator, run --gpu-share); nullptr:
  // this evaluation has the GPU to itself.
  GpuGate* gate = nullptr;
};

// ptxbench-runner beside this executable; empty when there is none ($PTXBENCH_RUNNER: eval/settings.h).
std::filesystem::path runner_beside_executable();

// Appends the four GPU stage results to `verdict` and sets its speedup and coverage.
void run_gpu_stages(const CompileResult& compiled, const Task& task, const GpuTools& tools, Verdict& verdict);

// When evaluations share the GPU and the host (tools.gate): the details key under which a stage's `result` is
// kept when the stage is run again with the GPU to itself, because the sharing may have caused it; "" when
// the result stands. `overlapped`: another stage held the gate during this one (GpuGate::Pass::overlapped).
std::string rerun_alone_because(const StageResult& result, bool overlapped);

// The runner's stdout judged as its result channel (src/runner/protocol.h): the document when the output is
// exactly one document followed by a valid HMAC tag under `key`; otherwise what was wrong, in words. Both
// empty: the runner wrote nothing.
struct ChannelRead {
  std::optional<nlohmann::json> document;
  std::string tampered;
};
ChannelRead read_result_channel(const std::string& out, const std::string& key);

// Pieces, exposed for tests: what one stage makes of the runner's result document and how the process ended.
StageResult correct_stage_from(const nlohmann::json& result, const Task& task);
StageResult time_stage_from(const nlohmann::json& result, const Task& task);
std::string describe_failed_trial(const nlohmann::json& shape_result, const Task& task);

}  // namespace ptxbench
