#include <fmt/format.h>
#include <fmt/ranges.h>

#include "arch/profile.h"
#include "eval/gpu_monitor.h"
#include "eval/gpu_stage.h"
#include "runner/protocol.h"

namespace ptxbench {
using nlohmann::json;
namespace proto = protocol;

namespace {

// How close a median came to the task's roofline on this GPU (the runner's "roofline", timing_rules.h): the
// share of the measured read bandwidth that reading the call's inputs once took ("bandwidth": what a
// memory-bound task, a decode-sized GEMM, is judged by), and the share of the dense tensor peak its FLOPs
// took ("peak"); each null when the runner could not give its floor.
json roofline_shares(const json& roofline, double median_us) {
  const auto share = [&](const char* floor) {
    const json value = roofline.value(floor, json());
    return value.is_number() && median_us > 0 ? json(value.get<double>() / median_us) : json();
  };
  return {{"bandwidth", share(proto::kBytesFloorUs)}, {"peak", share(proto::kFlopsFloorUs)}};
}

}  // namespace

StageResult time_stage_from(const json& result, const Task& task) {
  StageResult stage{.name = "time", .status = status_of(result)};
  const json timing = result.value(proto::kTiming, json::object());
  stage.details = timing;
  if (result.contains(proto::kPhasesS)) stage.details[proto::kPhasesS] = result[proto::kPhasesS];
  if (stage.status != StageStatus::passed || timing.empty()) {
    if (stage.status == StageStatus::runtime_error || stage.status == StageStatus::timeout)
      stage.message = runtime_error_text(result);
    else if (stage.status == StageStatus::failed &&
             !timing.value(proto::kRecheck, json::object()).value(proto::kPassedField, true))
      stage.message =
          "the output of the timed calls was wrong: " +
          describe_failed_trial(
              {{proto::kLabel, "main"}, {proto::kTrialList, {timing.value(proto::kRecheck, json())}}}, task);
    else  // work outside the stream, times that do not fit the runner's clock, or (harness_error) a time
          // below the task's roofline: the runner says which
      stage.message = result.value(proto::kMessage, std::string("no timing"));
    return stage;
  }
  const json& solution = timing[proto::kSolution];
  // Without a baseline (none measured, or "baseline": "none") "baseline" and "speedup" are null: the
  // solution's time, no ratio.
  const json baseline = timing.value(proto::kBaseline, json());
  const json speedup = timing.value(proto::kSpeedup, json());
  auto median_us = [](const json& series) { return series[proto::kEventUs][proto::kMedian].get<double>(); };
  stage.message =
      fmt::format("{:.1f} us ({:.0f} TFLOP/s, p10-p90 {:.1f}-{:.1f} us)", median_us(solution),
                  solution.value(proto::kTflops, 0.0), solution[proto::kEventUs][proto::kP10].get<double>(),
                  solution[proto::kEventUs][proto::kP90].get<double>());
  if (baseline.is_object() && speedup.is_number())
    stage.message += fmt::format(" against {} {:.1f} us ({:.0f} TFLOP/s): {:.3f}x",
                                 baseline.value(proto::kName, std::string("baseline")), median_us(baseline),
                                 baseline.value(proto::kTflops, 0.0), speedup.get<double>());
  else if (task.baseline == kNoBaseline)
    stage.message += "; this task has no baseline (\"baseline\": \"none\"), so no speedup";
  else
    stage.message += "; this task family has no baseline yet, so no speedup";
  if (const json roofline = timing.value(proto::kRoofline, json()); roofline.is_object()) {
    json shares = {{"solution", roofline_shares(roofline, median_us(solution))}};
    if (baseline.is_object()) shares["baseline"] = roofline_shares(roofline, median_us(baseline));
    stage.details["roofline_share"] = shares;
    const json& mine = shares["solution"];
    if (mine["bandwidth"].is_number())
      stage.message +=
          fmt::format("; {:.0f}% of the measured read bandwidth", 100 * mine["bandwidth"].get<double>());
    if (mine["peak"].is_number())
      stage.message += fmt::format(", {:.0f}% of the dense tensor peak", 100 * mine["peak"].get<double>());
  }
  // The GPU slowing itself during the calls, by the driver's account (gpu_monitor.h): said, with its reasons.
  if (const json during = timing.value(proto::kGpuDuring, json()); during.is_object()) {
    const std::vector<std::string> reasons = during.value("slowdown_reasons", std::vector<std::string>());
    if (!reasons.empty())
      stage.message +=
          fmt::format("; the GPU slowed itself during the timed calls ({})", fmt::join(reasons, ", "));
  }
  // A GPU held below its maximum clock during the calls (timing_rules.h, clock_below_max): said, since every
  // figure above was measured on it.
  if (timing.value(proto::kSmClockBelowMax, false)) {
    const json during = timing.value(proto::kSmClockDuringMhz, json());
    const json most = timing.value(proto::kRoofline, json::object()).value(proto::kSmClockMhz, json());
    if (during.is_object() && most.is_number())
      stage.message += fmt::format("; the SM clock ran at {:.0f} MHz (median) of its {:.0f} MHz maximum",
                                   during.value(proto::kMedian, 0.0), most.get<double>());
  }
  return stage;
}

// Time: the main shape's timed calls and the baseline's, alternating in one runner process (an attention
// task's vendor baseline in a process of the runner's own, beside the solution's): those the correct stage's
// process made after its check (context.timed), or, when it made none (or this stage runs again alone), a
// process of this stage's own.
StageResult time_stage(StageContext& context) {
  const GpuTools& tools = context.tools;
  std::optional<json> result = std::move(context.timed);
  context.timed.reset();
  double wall_s = 0;
  StageResult time;
  if (result) {
    time = time_stage_from(*result, context.task);
    wall_s = result->value(proto::kWallS, 0.0);
  } else {
    GpuMonitor monitor(tools.nvidia_smi);
    RunnerCall timed =
        call_runner(tools, context.sandbox,
                    request_for(context.task, context.compiled, proto::kModeTime, tools), tools.time_limit_s);
    result = timed.result;
    if (result) note_gpu_during(*result, monitor.samples());
    time =
        result ? time_stage_from(*result, context.task) : process_failure("time", timed, tools.time_limit_s);
    wall_s = timed.process.wall_s;
  }
  time.wall_s = wall_s;
  if (result) add_hang_report(time, *result);
  if (time.status == StageStatus::passed) add_launches(context, "time", result);
  if (time.status == StageStatus::passed && time.details.value(proto::kSpeedup, json()).is_number())
    context.verdict.speedup = time.details[proto::kSpeedup].get<double>();
  return time;
}

}  // namespace ptxbench
