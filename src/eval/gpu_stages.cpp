// The GPU stages' registry: their order, and what each needs of the ones before it. Each stage is a unit of
// its own (gpu_stage.h); this file alone decides which of them run.
#include "eval/gpu_stages.h"

#include <fmt/format.h>
#include <functional>
#include <future>
#include <map>
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
  // How the stage uses the GPU beside other work (gpu_gate.h), given the tools.
  GpuGate::Use (*use)(const GpuTools&);
  StageResult (*run)(StageContext&);
  // Why the stage cannot run after the stages before it, or "" when it can.
  std::string (*blocked)(const Verdict&, const GpuTools&);
  // The earlier stage whose processes this one's start with, when its use is not alone: its work needs
  // nothing of the stages before it (it runs_always), and the two share the GPU without changing what either
  // sees. It still stands in its own place: a stage between the two that stops the rest sets its result
  // aside, and `set_aside` undoes what it left in the context.
  const char* starts_with = nullptr;
  void (*set_aside)(StageContext&) = nullptr;
};

GpuGate::Use shared(const GpuTools&) {
  return GpuGate::Use::shared;
}
GpuGate::Use alone(const GpuTools&) {
  return GpuGate::Use::alone;
}
// Nsight Compute counts the executed opcodes by patching the kernels, which another process's work on the
// GPU does not change. The sections of --profile (throughputs, stalls, durations) read the GPU's counters,
// and another process's kernels would show in them: then the stage has the GPU alone.
GpuGate::Use profiler(const GpuTools& tools) {
  return tools.profile_sections ? GpuGate::Use::alone : GpuGate::Use::profiler;
}

std::string runs_always(const Verdict&, const GpuTools&) {
  return "";
}

// A speed is measured only for a correct solution.
std::string needs_correct(const Verdict& verdict, const GpuTools& tools) {
  if (verdict.stage("correct")->status == StageStatus::passed) return "";
  return tools.wants("correct") ? "the solution is not correct: its speed is not measured"
                                : "not run: the time stage needs the correct stage (--stages)";
}

// The sanitize stage runs beside other evaluations' work: what the tools report is the solution process's
// own, which another process's context on the GPU does not change, and most of its time is the tools' work on
// the host. The instruction stage's profile starts with it (a reference's two stages took 2.1-2.5 s and
// 2.3-3.0 s, 3.1-3.2 s together, on an H100: bench/harness/h200-2026-12-07d). The correct stage reads the
// device's tensor counter (CUPTI_ERROR_HARDWARE_BUSY when another process holds it), and the timed calls and
// their overhead checks are measured on a host and a GPU that do nothing else.
constexpr GpuStage kGpuStages[] = {
    {"sanitize", shared, sanitize_stage, runs_always},
    {"correct", alone, correct_stage, runs_always},
    {"instructions", profiler, instructions_stage, runs_always, "sanitize", set_aside_instructions},
    {"time", alone, time_stage, needs_correct},
};

constexpr bool registry_matches_names() {
  if (std::size(kGpuStages) != std::size(kGpuStageNames)) return false;
  for (size_t i = 0; i < std::size(kGpuStages); ++i)
    if (std::string_view(kGpuStages[i].name) != kGpuStageNames[i]) return false;
  return true;
}
static_assert(registry_matches_names(), "kGpuStageNames (gpu_stages.h) lists the registry's stages in order");

// A stage that starts early starts with one before it, and needs nothing of the verdict so far.
constexpr bool early_stages_are_independent() {
  for (size_t i = 0; i < std::size(kGpuStages); ++i) {
    if (!kGpuStages[i].starts_with) continue;
    bool earlier = false;
    for (size_t j = 0; j < i; ++j)
      earlier = earlier || std::string_view(kGpuStages[j].name) == kGpuStages[i].starts_with;
    if (!earlier || kGpuStages[i].blocked != runs_always || !kGpuStages[i].set_aside) return false;
  }
  return true;
}
static_assert(early_stages_are_independent(),
              "a stage that starts early starts with an earlier one, runs always and can be set aside");

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

// A stage's result, and whether another evaluation's stage held the gate beside it.
struct Ran {
  StageResult result;
  bool overlapped = false;
};

// Runs `stages` at once (each but the first in a thread of its own), each through the gate under its own use
// when the GPU is shared: the profiler is held only while the instruction stage runs, and a sanitize stage
// beside it still runs beside the other evaluations' (a SIMT solution's takes up to two minutes).
std::vector<Ran> run_together(const std::vector<const GpuStage*>& stages, StageContext& context) {
  const auto run = [&context](const GpuStage* stage) {
    GpuGate* gate = context.tools.gate;
    if (!gate) return Ran{stage->run(context)};
    const GpuGate::Pass pass = gate->enter(stage->use(context.tools), &context);
    Ran ran{stage->run(context)};
    ran.overlapped = pass.overlapped();
    return ran;
  };
  std::vector<std::future<Ran>> beside;
  for (size_t i = 1; i < stages.size(); ++i) beside.push_back(std::async(std::launch::async, run, stages[i]));
  std::vector<Ran> ran{run(stages[0])};
  for (auto& result : beside) ran.push_back(result.get());
  return ran;
}

// A result that the sharing with another evaluation may have caused (rerun_alone_because) is set aside, and
// the stage run again with the GPU alone decides. The stages of one evaluation started together are no
// reason to run again (the gate does not count them: GpuGate::Pass::overlapped): neither's work slows the
// other's for longer than its own few seconds, and a solution that hangs under both tools hangs alone as
// well.
StageResult settled(const GpuStage& stage, StageResult result, bool overlapped, StageContext& context) {
  const std::string because = rerun_alone_because(result, overlapped);
  if (because.empty() || !context.tools.gate) return result;
  const std::string first = result.message;
  const GpuGate::Pass pass = context.tools.gate->enter(GpuGate::Use::alone);
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
  // The result of a stage that does not run, saying why (and what confined it, where the sandbox is the
  // reason or the stage was not asked for), or nothing when it runs.
  const auto not_run = [&](const GpuStage& stage) -> std::optional<StageResult> {
    const auto confined = [&](StageResult result) {
      result.details = {{"sandbox", sandboxed}};
      return result;
    };
    if (!unconfined.empty())
      return confined({.name = stage.name, .status = StageStatus::harness_error, .message = unconfined});
    if (!stopped.empty())
      return StageResult{.name = stage.name, .status = StageStatus::skipped, .message = stopped};
    if (!tools.wants(stage.name))
      return confined(
          {.name = stage.name, .status = StageStatus::skipped, .message = "not requested (--stages)"});
    if (std::string blocked = stage.blocked(verdict, tools); !blocked.empty())
      return StageResult{.name = stage.name, .status = StageStatus::skipped, .message = std::move(blocked)};
    return std::nullopt;
  };
  // The stages that started with an earlier one, until their place in the order.
  std::map<std::string, Ran> early;
  for (const GpuStage& stage : kGpuStages) {
    std::optional<StageResult> result = not_run(stage);
    const auto started = early.find(stage.name);
    if (result) {
      // A stage since its start stopped the rest: as if it had never run, so that the verdict is the one of
      // an evaluation that runs its stages one by one.
      if (started != early.end()) stage.set_aside(context);
      verdict.stages.push_back(std::move(*result));
      continue;
    }
    if (started != early.end()) {
      Ran& ran = started->second;
      if (!ran.result.details.is_object()) ran.result.details = json::object();
      ran.result.details["started_with"] = stage.starts_with;  // their seconds overlap (a rerun alone: not)
      result = settled(stage, std::move(ran.result), ran.overlapped, context);
    } else {
      std::vector<const GpuStage*> together{&stage};
      for (const GpuStage& later : kGpuStages)
        if (later.starts_with && later.starts_with == std::string_view(stage.name) &&
            later.use(tools) != GpuGate::Use::alone && !not_run(later))
          together.push_back(&later);
      std::vector<Ran> ran = run_together(together, context);
      result = settled(stage, std::move(ran[0].result), ran[0].overlapped, context);
      for (size_t i = 1; i < together.size(); ++i) early.emplace(together[i]->name, std::move(ran[i]));
    }
    stopped = stops_the_rest(*result);
    if (!result->details.is_object()) result->details = json::object();
    result->details["sandbox"] = sandboxed;
    verdict.stages.push_back(std::move(*result));
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
