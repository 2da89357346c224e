#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <cmath>

#include "eval/gpu_monitor.h"
#include "eval/gpu_stage.h"
#include "eval/hang_report.h"
#include "eval/sanitizer_report.h"
#include "runner/protocol.h"

namespace ptxbench {
using nlohmann::json;
namespace proto = protocol;

namespace {

// What the first mismatches of a wrong output have in common, as a hint at the fault: all of them a fixed
// multiple of the expected value (a missing or extra factor), or all of them larger; the family's hints
// (src/family) name known causes (a causal attention LSE that counted the keys outside the mask). "" when
// nothing stands out.
std::string mismatch_pattern(const json& output, const Task& task) {
  std::vector<std::pair<double, double>> pairs;  // (expected, actual), finite and not near zero
  for (const auto& m : output.value(proto::kFirstMismatches, json::array())) {
    if (m[proto::kExpected].is_number() && m[proto::kActual].is_number() &&
        std::abs(m[proto::kExpected].get<double>()) > 1e-3)
      pairs.emplace_back(m[proto::kExpected].get<double>(), m[proto::kActual].get<double>());
  }
  if (pairs.size() < 3) return "";
  std::vector<double> ratios;
  for (const auto& [expected, actual] : pairs) ratios.push_back(actual / expected);
  std::vector<double> sorted = ratios;
  std::sort(sorted.begin(), sorted.end());
  const double ratio = sorted[sorted.size() / 2];
  const bool proportional =
      std::abs(ratio - 1) > 0.05 && std::all_of(ratios.begin(), ratios.end(), [&](double r) {
        return std::abs(r - ratio) <= 0.02 * std::abs(ratio);
      });
  const std::string name = output.value(proto::kName, std::string());
  const Values values = values_of(task.family_spec(), task.main_shape.dims, task.parameters);
  const auto applies = [&](const MismatchHint& hint) {
    if (!hint.output.empty() && hint.output != name) return false;
    const auto when = task.parameters.find(hint.when);
    return hint.when.empty() || (when != task.parameters.end() && when->second);
  };
  if (proportional) {
    std::string known;
    for (const MismatchHint& hint : task.family_spec().hints) {
      if (hint.larger || !applies(hint)) continue;
      const double expected = evaluate_real(hint.ratio, values);
      if (std::abs(ratio - expected) <= 0.01 * std::abs(expected)) {
        known = fmt::format(" ({})", hint.text);
        break;
      }
    }
    return fmt::format(" Each of the first {} mismatches of {} is {:.4g}x the expected value{}.",
                       pairs.size(), name, ratio, known);
  }
  const bool all_larger = std::all_of(pairs.begin(), pairs.end(), [](const auto& p) { return p.second > p.first; });
  for (const MismatchHint& hint : task.family_spec().hints)
    if (hint.larger && all_larger && applies(hint))
      return fmt::format(" Each of the first {} mismatches of {} is larger than expected: {}", pairs.size(), name,
                         hint.text);
  return "";
}

}  // namespace

std::string describe_failed_trial(const json& shape, const Task& task) {
  std::string dims = "?";
  for (const Shape& s : task.all_shapes())
    if (s.label == shape.value(proto::kLabel, std::string())) dims = s.to_string();
  for (const auto& trial : shape.value(proto::kTrialList, json::array())) {
    if (trial.value(proto::kPassedField, true)) continue;
    std::string text = fmt::format("shape {} ({}), trial {}:", shape.value(proto::kLabel, std::string("?")),
                                   dims, trial.value(proto::kTrial, 0));
    if (!trial.value(proto::kInputsUnchanged, true))
      text += fmt::format(" the solution modified its inputs ({});",
                          trial.value(proto::kChangedInputs, json()).dump());
    if (const json past_end = trial.value(proto::kWrittenPastEnd, json::object()); !past_end.empty())
      text += fmt::format(
          " the solution wrote past the end of its buffers (bytes changed in the 2 MiB after "
          "each: {});",
          past_end.dump());
    if (!trial.value(proto::kOutputStable, true))
      text += " the output changed after the stream was synchronised: work outside `stream`;";
    for (const auto& out : trial.value(proto::kOutputs, json::array())) {
      if (out.value(proto::kPassedField, true)) continue;
      text += fmt::format(
          " {}: {} of {} elements wrong ({} NaN/Inf), max abs error {:.4g}, max rel error {:.4g}.",
          out.value(proto::kName, std::string("output")), out.value(proto::kMismatches, 0LL),
          out.value(proto::kElements, 0LL), out.value(proto::kNonFinite, 0LL),
          out.value(proto::kMaxAbsError, 0.0), out.value(proto::kMaxRelError, 0.0));
      std::vector<std::string> firsts;
      for (const auto& m : out.value(proto::kFirstMismatches, json::array())) {
        if (firsts.size() == 5) break;
        firsts.push_back(fmt::format("[{},{}] expected {} got {}", m.value(proto::kRow, 0LL),
                                     m.value(proto::kCol, 0LL), m[proto::kExpected].dump(),
                                     m[proto::kActual].dump()));
      }
      if (!firsts.empty()) text += fmt::format(" First: {}", fmt::join(firsts, "; "));
      text += mismatch_pattern(out, task);
    }
    return text;
  }
  return "";
}

StageResult correct_stage_from(const json& result, const Task& task) {
  StageResult stage{.name = "correct", .status = status_of(result)};
  stage.details = {{"shapes", result.value(proto::kShapeResults, json::array())},
                   {"device", result.value(proto::kDeviceInfo, json::object())},
                   {"solution_process", result.value(proto::kSolutionProcess, json())}};
  if (result.contains(proto::kPhasesS)) stage.details[proto::kPhasesS] = result[proto::kPhasesS];
  int shapes = 0, failed = 0;
  std::string first_failure;
  for (const auto& shape : result.value(proto::kShapeResults, json::array())) {
    ++shapes;
    if (shape.value(proto::kPassedField, false)) continue;
    ++failed;
    if (first_failure.empty()) first_failure = describe_failed_trial(shape, task);
  }
  switch (stage.status) {
    case StageStatus::passed:
      stage.message = "";
      break;
    case StageStatus::failed:
      // A rule broken in a call (state kept between calls) stops the run with that call's fault.
      stage.message = result.contains(proto::kRuntimeError)
                          ? runtime_error_text(result)
                          : fmt::format("{} of {} shapes wrong. {}", failed, shapes, first_failure);
      break;
    case StageStatus::runtime_error:
    case StageStatus::timeout:  // the runner's own limit (check_then_time): the call it ran out in
      stage.message = runtime_error_text(result);
      break;
    default:
      stage.message = "the runner could not judge: " + result.value(proto::kMessage, std::string());
  }
  return stage;
}

namespace {

// Where a call that faulted on the GPU failed, when the sanitize stage (one call on the smallest shape) did
// not see it: memcheck on the failing call's shape alone, whose first error gives the kernel, the source line
// (the compile passes -lineinfo), the thread and the access. Null when memcheck finds nothing there (a fault
// of another kind, or one that this call's inputs alone provoke).
json locate_fault(StageContext& context, const json& fault) {
  json request = request_for(context.task, context.compiled, proto::kModeSanitize, context.tools);
  const std::string shape = fault.value(proto::kShape, json()).is_string() ? fault[proto::kShape] : "";
  json only = json::array();
  for (const json& s : request[proto::kShapes])
    if (s.value(proto::kLabel, std::string()) == shape) only.push_back(s);
  if (only.empty()) return nullptr;
  request[proto::kShapes] = only;
  const RunnerCall call = run_sanitizer(context, request, "memcheck");
  const SanitizerReport report = parse_sanitizer_report(call.tool_log);
  if (report.errors.empty()) return nullptr;
  json located = to_json(report.errors.front());
  located["tool"] = "memcheck";
  located["shape"] = shape;
  located["summary"] = report.errors.front().summary();
  located["wall_s"] = call.process.wall_s;
  return located;
}

}  // namespace

void add_hang_report(StageResult& stage, const json& result) {
  if (stage.status != StageStatus::timeout) return;
  const json fault = result.value(proto::kRuntimeError, json::object());
  const json output = fault.is_object() ? fault.value(proto::kDebuggerOutput, json()) : json();
  const json failure = fault.is_object() ? fault.value(proto::kDebuggerFailure, json()) : json();
  if (!output.is_string() && !failure.is_string()) return;
  const HangReport report = parse_cuda_gdb_threads(output.is_string() ? output.get<std::string>() : "");
  if (!stage.details.is_object()) stage.details = json::object();
  stage.details["hang"] = to_json(report);
  if (failure.is_string()) stage.details["hang"]["debugger_failure"] = failure;
  if (const std::string where = report.summary(); !where.empty())
    stage.message += "\nwhere its threads wait (cuda-gdb, attached to the call run again): " + where;
  else if (!report.attach_failure.empty())
    stage.message += fmt::format(
        "\nwhere its threads wait is not known: cuda-gdb could not debug the GPU side on this host (\"{}\")",
        report.attach_failure);
  else if (failure.is_string())
    stage.message += "\nwhere its threads wait is not known: " + failure.get<std::string>();
}

// Correct: every shape, its trials with fresh inputs, in one runner process, and the time stage's calls after
// them when that stage is to run (gpu_stage.h). A call whose work faulted on the GPU (the runner's
// "device_fault") is then located (locate_fault), and the message says where, unless the sanitize stage's
// tools already reported what they found.
StageResult correct_stage(StageContext& context) {
  const GpuTools& tools = context.tools;
  const bool and_time = tools.wants("time");
  // With the time stage's calls, the process gets both stages' limits, which the runner keeps itself, part
  // by part; the margin is for its own start and end, and for the debugger on a call that ran out of time
  // (runner/session.cpp's debug_rerun: at most 15 s to start a process, 3 s for the call, 20 s for cuda-gdb).
  constexpr double kPartsMarginS = 60;
  const double limit_s =
      and_time ? tools.correct_limit_s + tools.time_limit_s + kPartsMarginS : tools.correct_limit_s;
  GpuMonitor monitor(and_time ? tools.nvidia_smi : std::filesystem::path());
  RunnerCall check = call_runner(tools, context.sandbox,
                                 request_for(context.task, context.compiled,
                                             and_time ? proto::kModeCheckThenTime : proto::kModeCheck, tools),
                                 limit_s);
  const std::vector<GpuSample> samples = monitor.samples();
  const std::optional<json> checked =
      check.result ? std::optional(runner_part(*check.result, proto::kCheckPart)) : std::nullopt;
  StageResult correct =
      checked ? correct_stage_from(*checked, context.task) : process_failure("correct", check, limit_s);
  correct.wall_s = checked && checked->contains(proto::kWallS) ? checked->at(proto::kWallS).get<double>()
                                                               : check.process.wall_s;
  if (correct.status == StageStatus::passed) add_launches(context, "correct", checked);
  if (checked) add_hang_report(correct, *checked);
  if (check.result && check.result->contains(proto::kTimePart)) {
    context.timed = runner_part(*check.result, proto::kTimePart);
    note_gpu_during(*context.timed, samples);
  }
  const json fault = checked ? checked->value(proto::kRuntimeError, json()) : json();
  const StageResult* sanitize = context.verdict.stage("sanitize");
  const bool sanitizer_found = sanitize != nullptr && sanitize->status == StageStatus::failed;
  if (correct.status == StageStatus::runtime_error && !sanitizer_found && fault.is_object() &&
      fault.value(proto::kDeviceFault, false)) {
    const json located = locate_fault(context, fault);
    if (located.is_object()) {
      correct.details["located"] = located;
      correct.message += "\nwhere (memcheck on that shape): " + located["summary"].get<std::string>();
    }
  }
  return correct;
}

}  // namespace ptxbench
