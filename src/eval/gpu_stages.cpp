// The GPU stages' registry: their order, and what each needs of the ones before it. Each stage is a unit of
// its own (gpu_stage.h); this file alone decides which of them run.
#include "eval/gpu_stages.h"

#include <fmt/format.h>
#include <random>
#include <string_view>

#include "eval/gpu_stage.h"
#include "runner/protocol.h"

namespace ptxbench {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A folder of one evaluation's under `parent` (none when `parent` is empty), removed with the object.
class EvaluationFolder {
 public:
  EvaluationFolder(const fs::path& parent, const std::string& prefix) {
    if (parent.empty()) return;
    std::random_device random;
    path_ = parent / fmt::format("{}-{:08x}{:08x}", prefix, random(), random());
    fs::create_directories(path_);
  }
  ~EvaluationFolder() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  EvaluationFolder(const EvaluationFolder&) = delete;
  EvaluationFolder& operator=(const EvaluationFolder&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

struct GpuStage {
  const char* name;
  // Whether the stage may run beside another evaluation's on a shared GPU (gpu_gate.h).
  GpuGate::Use use;
  StageResult (*run)(StageContext&);
  // Why the stage cannot run after the stages before it, or "" when it can.
  std::string (*blocked)(const Verdict&, const GpuTools&);
};

std::string runs_always(const Verdict&, const GpuTools&) {
  return "";
}

// A speed is measured only for a correct solution.
std::string needs_correct(const Verdict& verdict, const GpuTools& tools) {
  if (verdict.stage("correct")->status == StageStatus::passed) return "";
  return tools.wants("correct") ? "the solution is not correct: its speed is not measured"
                                : "not run: the time stage needs the correct stage (--stages)";
}

// Only the sanitize stage runs beside other evaluations' work: what the tools report is the solution
// process's own, which another process's context on the GPU does not change, and most of its time is the
// tools' work on the host. The correct and instruction stages read the device's counters (the tensor
// counter, the profiler: CUPTI_ERROR_HARDWARE_BUSY when another process holds them), and the timed calls and
// their overhead checks are measured on a host and a GPU that do nothing else.
constexpr GpuStage kGpuStages[] = {
    {"sanitize", GpuGate::Use::shared, sanitize_stage, runs_always},
    {"correct", GpuGate::Use::alone, correct_stage, runs_always},
    {"instructions", GpuGate::Use::alone, instructions_stage, runs_always},
    {"time", GpuGate::Use::alone, time_stage, needs_correct},
};

constexpr bool registry_matches_names() {
  if (std::size(kGpuStages) != std::size(kGpuStageNames)) return false;
  for (size_t i = 0; i < std::size(kGpuStages); ++i)
    if (std::string_view(kGpuStages[i].name) != kGpuStageNames[i]) return false;
  return true;
}
static_assert(registry_matches_names(), "kGpuStageNames (gpu_stages.h) lists the registry's stages in order");

// Why no stage after `stage` runs, or "" when they may. After a time-out: a solution that never finishes
// would hang every later stage as well. After a harness error: what a later stage saw of the solution could
// not be told from the host's failure, and the verdict is the harness's error, never the solution's failure.
// (A failure or a runtime error does not stop them: each later stage is evidence of its own, and the verdict
// fails whatever they find.)
std::string stops_the_rest(const StageResult& stage) {
  if (stage.status == StageStatus::timeout) return fmt::format("not run: the {} stage timed out", stage.name);
  if (stage.status == StageStatus::harness_error)
    return fmt::format("not run: the {} stage could not be judged (a harness error)", stage.name);
  return "";
}

// Runs `stage` through the gate, when the GPU is shared; a result that the sharing may have caused
// (rerun_alone_because) is set aside, and the stage run again with the GPU alone decides.
StageResult run_at_gate(const GpuStage& stage, StageContext& context) {
  GpuGate* gate = context.tools.gate;
  if (!gate) return stage.run(context);
  StageResult result;
  bool overlapped = false;
  {
    const GpuGate::Pass pass = gate->enter(stage.use);
    result = stage.run(context);
    overlapped = pass.overlapped();
  }
  const std::string because = rerun_alone_because(result, overlapped);
  if (because.empty()) return result;
  const std::string first = result.message;
  const GpuGate::Pass pass = gate->enter(GpuGate::Use::alone);
  result = stage.run(context);
  if (!result.details.is_object()) result.details = json::object();
  result.details[because] = first;
  return result;
}

json sandbox_details(const SandboxSetup& sandbox) {
  json details = sandbox.status->to_json();
  if (sandbox.status->requested) {
    details["hidden"] = json::array();
    for (const auto& p : sandbox.policy.hidden) details["hidden"].push_back(p.string());
    details["data_limit_bytes"] = sandbox.policy.limits.data_bytes;
    details["profiling_keeps_cap_sys_admin"] = sandbox.profiling_admin;
  }
  return details;
}

}  // namespace

std::string rerun_alone_because(const StageResult& result, bool overlapped) {
  // Only a time-out on a GPU of its own is the solution's.
  if (result.status == StageStatus::timeout && overlapped) return "timed_out_sharing_the_gpu";
  // The claims check alone (the request's overhead beyond its calibrated bound, timing_rules.h): the time
  // stage has the GPU and the gated stages to itself, but the other evaluations' ungated host work can add
  // that overhead. An honest reference failed so (h200-2026-12-05b: 101 us against 88 allowed); a solution
  // that misreports its times fails the second run as it did the first.
  const json& details = result.details;
  if (result.name == "time" && result.status == StageStatus::failed && details.is_object() &&
      !details.value(protocol::kTimesVerified, true) &&
      !details.value(protocol::kHiddenWorkSuspected, false) &&
      details.value(protocol::kRecheck, json::object()).value(protocol::kPassedField, true))
    return "claims_failed_sharing_the_host";
  return "";
}

void run_gpu_stages(const CompileResult& compiled, const Task& task, const GpuTools& tools,
                    Verdict& verdict) {
  fs::create_directories(tools.scratch);
  SandboxSetup sandbox = sandbox_setup(compiled, task, tools);
  // A Triton solution's kernels, compiled in its first stage's process, are found by the later ones: one
  // cache for the evaluation, removed with it (runner_call.h).
  const EvaluationFolder triton_cache(compiled.runner_track == protocol::kTrackTriton ? tools.scratch : "",
                                      "triton");
  sandbox.triton_cache = triton_cache.path();
  const json sandboxed = sandbox_details(sandbox);
  const std::string unconfined = refused_unconfined(*sandbox.status, "the solution is not run");
  StageContext context{
      .compiled = compiled, .task = task, .tools = tools, .sandbox = sandbox, .verdict = verdict};
  std::string stopped;  // why the remaining stages do not run
  for (const GpuStage& stage : kGpuStages) {
    StageResult result{.name = stage.name, .status = StageStatus::skipped};
    bool says_sandbox = true;  // what confined it: a stage that ran, or was not asked for
    if (!unconfined.empty()) {
      result = {.name = stage.name, .status = StageStatus::harness_error, .message = unconfined};
    } else if (!stopped.empty()) {
      result.message = stopped;
      says_sandbox = false;
    } else if (!tools.wants(stage.name)) {
      result.message = "not requested (--stages)";
    } else if (const std::string blocked = stage.blocked(verdict, tools); !blocked.empty()) {
      result.message = blocked;
      says_sandbox = false;
    } else {
      result = run_at_gate(stage, context);
      stopped = stops_the_rest(result);
    }
    if (says_sandbox) {
      if (!result.details.is_object()) result.details = json::object();
      result.details["sandbox"] = sandboxed;
    }
    verdict.stages.push_back(std::move(result));
  }
  // The proof is bound once the calls it must cover have run, whichever way the later stages ended.
  bind_proof(context, verdict.stage_mut("instructions"));
}

fs::path runner_beside_executable() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && fs::exists(self.parent_path() / "ptxbench-runner"))
    return self.parent_path() / "ptxbench-runner";
  return {};
}

}  // namespace ptxbench
