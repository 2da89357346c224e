#include "eval/gpu_stages.h"

#include <unistd.h>

#include <fmt/format.h>
#include <random>

#include "eval/instruction_check.h"
#include "eval/ncu_report.h"
#include "eval/sanitizer_report.h"
#include "eval/sass_inventory.h"
#include "runner/protocol.h"
#include "task/catalog.h"
#include "util/files.h"
#include "util/subprocess.h"

namespace ptxbench {
namespace fs = std::filesystem;
using nlohmann::json;
namespace proto = protocol;

namespace {

// What one runner process left behind: how it ended, its result document (if it wrote one) and a tool's log.
struct RunnerCall {
  ProcessResult process;
  std::optional<json> result;
  std::string tool_log;
};

uint64_t fresh_seed() {
  std::random_device device;
  // 53 bits: exact in a JSON number whatever reads it.
  return ((uint64_t{device()} << 32) | device()) & ((uint64_t{1} << 53) - 1);
}

json request_for(const Task& task, const CompileResult& compiled, const std::string& mode, const GpuTools& tools) {
  json shapes = json::array();
  for (const Shape& shape : task.all_shapes()) {
    json s = shape.dims;
    s[proto::kLabel] = shape.label;
    shapes.push_back(s);
  }
  return {{proto::kMode, mode},
          {proto::kLibrary, fs::absolute(compiled.library).string()},
          {proto::kFamily, task.family},
          {proto::kEntryPoint, find_family(task.family)->entry_point},
          {proto::kShapes, shapes},
          {proto::kTolerance, {{proto::kRtol, task.tolerance.rtol}, {proto::kAtol, task.tolerance.atol}}},
          {proto::kTrials, tools.trials},
          {proto::kSeed, fresh_seed()},
          {proto::kWarmup, tools.warmup},
          {proto::kRepetitions, tools.repetitions}};
}

RunnerCall call_runner(const GpuTools& tools, const json& request, std::vector<std::string> wrapper, double limit_s,
                       const fs::path& log = {}) {
  std::vector<std::string> argv = std::move(wrapper);
  argv.push_back(tools.runner.string());
  if (!log.empty()) fs::remove(log);
  RunnerCall call;
  call.process = run_process({.argv = argv,
                              .time_limit = std::chrono::milliseconds(static_cast<long>(limit_s * 1000)),
                              .stdin_data = request.dump()});
  // The result is the runner's stdout; whatever else printed went to stderr or the tool's log.
  try {
    if (!call.process.out.empty()) call.result = json::parse(call.process.out);
  } catch (const json::exception&) {
  }
  if (!log.empty() && fs::exists(log)) call.tool_log = read_file(log);
  return call;
}

std::string tail(const std::string& text, size_t max_chars = 800) {
  return text.size() <= max_chars ? text : "..." + text.substr(text.size() - max_chars);
}

// A stage result for a runner that did not produce its document: killed at the limit, crashed or exited early.
StageResult process_failure(const std::string& stage, const RunnerCall& call, double limit_s) {
  StageResult r{.name = stage, .wall_s = call.process.wall_s};
  r.details = {{"process", call.process.describe()}, {"stderr", tail(call.process.err)}};
  if (call.process.timed_out) {
    r.status = StageStatus::timeout;
    r.message = fmt::format("the solution did not finish within {:.0f} s and was killed", limit_s);
  } else if (call.process.spawn_failed) {
    r.status = StageStatus::harness_error;
    r.message = "could not start the runner: " + call.process.describe();
  } else {
    r.status = StageStatus::runtime_error;
    r.message = fmt::format("the process running the solution ended without a result ({}); last output:\n{}",
                            call.process.describe(), tail(call.process.err, 400));
  }
  return r;
}

std::string runtime_error_text(const json& result) {
  const json& e = result.value(proto::kRuntimeError, json::object());
  std::string text = e.value(proto::kWhere, result.value(proto::kMessage, std::string("runtime error")));
  if (e.contains(proto::kCudaError) && e[proto::kCudaError].is_string())
    text += fmt::format(": {} ({})", e[proto::kCudaError].get<std::string>(),
                        e.value(proto::kCudaErrorString, std::string()));
  return text;
}

StageStatus status_of(const json& result) {
  const std::string s = result.value(proto::kStatus, std::string(proto::kHarnessError));
  if (s == proto::kPassed) return StageStatus::passed;
  if (s == proto::kFailed) return StageStatus::failed;
  if (s == proto::kRuntimeErrorStatus) return StageStatus::runtime_error;
  return StageStatus::harness_error;
}

// Sanitize: memcheck, then synccheck, each in its own process on the smallest shape.
StageResult sanitize_stage(const CompileResult& compiled, const Task& task, const GpuTools& tools) {
  StageResult stage{.name = "sanitize", .status = StageStatus::passed};
  const json request = request_for(task, compiled, proto::kModeSanitize, tools);
  std::vector<std::string> problems;
  for (const std::string tool : {"memcheck", "synccheck"}) {
    const fs::path log = tools.scratch / (tool + ".log");
    std::vector<std::string> wrapper = {tools.compute_sanitizer.string(), "--tool", tool, "--log-file", log.string(),
                                        "--print-limit", "20", "--error-exitcode", "99"};
    RunnerCall call = call_runner(tools, request, wrapper, tools.sanitize_limit_s, log);
    stage.wall_s += call.process.wall_s;
    if (call.process.timed_out || call.process.spawn_failed) {
      StageResult failure = process_failure("sanitize", call, tools.sanitize_limit_s);
      failure.message = tool + ": " + failure.message;
      failure.wall_s = stage.wall_s;
      return failure;
    }
    const SanitizerReport report = parse_sanitizer_report(call.tool_log);
    stage.details[tool] = to_json(report);
    if (report.tool_failed) {
      stage.status = StageStatus::harness_error;
      problems.push_back(fmt::format("{} could not run: {}", tool, report.tool_failure));
    } else if (report.found_errors()) {
      stage.status = StageStatus::failed;
      std::string first;
      for (const auto& e : report.errors) first += "\n  " + e.summary();
      problems.push_back(fmt::format("{}: {} error(s){}", tool, report.error_count.value_or(report.errors_printed),
                                     first));
    } else if (call.result && status_of(*call.result) == StageStatus::runtime_error &&
               stage.status == StageStatus::passed) {
      // No memory error, but the solution failed at run time: that is the correct stage's to report; say it.
      problems.push_back(fmt::format("{}: no memory error found; the call itself failed: {}", tool,
                                     runtime_error_text(*call.result)));
    }
  }
  stage.message = fmt::format("{}", fmt::join(problems, "\n"));
  return stage;
}

}  // namespace

std::string describe_failed_trial(const json& shape, const Task& task) {
  std::string dims = "?";
  for (const Shape& s : task.all_shapes())
    if (s.label == shape.value(proto::kLabel, std::string())) dims = s.to_string();
  for (const auto& trial : shape.value(proto::kTrialList, json::array())) {
    if (trial.value(proto::kPassedField, true)) continue;
    std::string text = fmt::format("shape {} ({}), trial {}:", shape.value(proto::kLabel, std::string("?")), dims,
                                   trial.value(proto::kTrial, 0));
    if (!trial.value(proto::kInputsUnchanged, true))
      text += fmt::format(" the solution modified its inputs ({});", trial.value(proto::kChangedInputs, json()).dump());
    if (!trial.value(proto::kOutputStable, true))
      text += " the output changed after the stream was synchronised: work outside `stream`;";
    for (const auto& out : trial.value(proto::kOutputs, json::array())) {
      if (out.value(proto::kPassedField, true)) continue;
      text += fmt::format(" {}: {} of {} elements wrong ({} NaN/Inf), max abs error {:.4g}, max rel error {:.4g}.",
                          out.value(proto::kName, std::string("output")), out.value(proto::kMismatches, 0LL),
                          out.value(proto::kElements, 0LL), out.value(proto::kNonFinite, 0LL),
                          out.value(proto::kMaxAbsError, 0.0), out.value(proto::kMaxRelError, 0.0));
      std::vector<std::string> firsts;
      for (const auto& m : out.value(proto::kFirstMismatches, json::array())) {
        if (firsts.size() == 5) break;
        firsts.push_back(fmt::format("[{},{}] expected {} got {}", m.value(proto::kRow, 0LL), m.value(proto::kCol, 0LL),
                                     m[proto::kExpected].dump(), m[proto::kActual].dump()));
      }
      if (!firsts.empty()) text += fmt::format(" First: {}", fmt::join(firsts, "; "));
    }
    return text;
  }
  return "";
}

StageResult correct_stage_from(const json& result, const Task& task) {
  StageResult stage{.name = "correct", .status = status_of(result)};
  stage.details = {{"shapes", result.value(proto::kShapeResults, json::array())},
                   {"device", result.value(proto::kDeviceInfo, json::object())}};
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
      stage.message = fmt::format("{} of {} shapes wrong. {}", failed, shapes, first_failure);
      break;
    case StageStatus::runtime_error:
      stage.message = runtime_error_text(result);
      break;
    default:
      stage.message = "the runner could not judge: " + result.value(proto::kMessage, std::string());
  }
  return stage;
}

StageResult time_stage_from(const json& result, const Task& task) {
  StageResult stage{.name = "time", .status = status_of(result)};
  const json timing = result.value(proto::kTiming, json::object());
  stage.details = timing;
  if (stage.status != StageStatus::passed || timing.empty()) {
    if (stage.status == StageStatus::runtime_error) stage.message = runtime_error_text(result);
    else if (stage.status == StageStatus::failed)
      stage.message = "the output of the timed calls was wrong: " +
                      describe_failed_trial({{proto::kLabel, "main"}, {proto::kTrialList, {timing.value(proto::kRecheck, json())}}},
                                            task);
    else stage.message = result.value(proto::kMessage, std::string("no timing"));
    return stage;
  }
  const json& solution = timing[proto::kSolution];
  const json& baseline = timing[proto::kBaseline];
  auto median_us = [](const json& series) { return series[proto::kEventUs][proto::kMedian].get<double>(); };
  stage.message = fmt::format(
      "{:.1f} us ({:.0f} TFLOP/s, p10-p90 {:.1f}-{:.1f} us) against {} {:.1f} us ({:.0f} TFLOP/s): {:.3f}x",
      median_us(solution), solution.value(proto::kTflops, 0.0), solution[proto::kEventUs][proto::kP10].get<double>(),
      solution[proto::kEventUs][proto::kP90].get<double>(), baseline.value(proto::kName, std::string("baseline")),
      median_us(baseline), baseline.value(proto::kTflops, 0.0), timing.value(proto::kSpeedup, 0.0));
  if (timing.value(proto::kHiddenWorkSuspected, false)) {
    stage.status = StageStatus::failed;
    stage.message += fmt::format(
        "; but the wall-clock time ({:.1f} us) exceeds the stream time by far more than the baseline's: work "
        "outside `stream`",
        solution[proto::kWallUs][proto::kMedian].get<double>());
  }
  return stage;
}

fs::path find_runner() {
  if (const char* env = std::getenv("PTXBENCH_RUNNER"); env && *env) return env;
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && fs::exists(self.parent_path() / "ptxbench-runner")) return self.parent_path() / "ptxbench-runner";
  return {};
}

void run_gpu_stages(const CompileResult& compiled, const Task& task, const GpuTools& tools, Verdict& verdict) {
  fs::create_directories(tools.scratch);

  // A solution that never finishes would hang every later stage as well: after a time-out, stop.
  auto stop_after_timeout = [&](const StageResult& stage, std::initializer_list<const char*> rest) {
    if (stage.status != StageStatus::timeout) return false;
    for (const char* name : rest)
      verdict.stages.push_back({.name = name, .status = StageStatus::skipped,
                                .message = fmt::format("not run: the {} stage timed out", stage.name)});
    return true;
  };

  verdict.stages.push_back(sanitize_stage(compiled, task, tools));
  if (stop_after_timeout(verdict.stages.back(), {"correct", "instructions", "time"})) return;

  RunnerCall check = call_runner(tools, request_for(task, compiled, proto::kModeCheck, tools), {}, tools.correct_limit_s);
  StageResult correct = check.result ? correct_stage_from(*check.result, task)
                                     : process_failure("correct", check, tools.correct_limit_s);
  correct.wall_s = check.process.wall_s;
  verdict.stages.push_back(correct);
  if (stop_after_timeout(correct, {"instructions", "time"})) return;

  // Instructions: one profiled call under Nsight Compute, and the static SASS beside it.
  const fs::path ncu_log = tools.scratch / "ncu.csv";
  std::vector<std::string> ncu = {tools.ncu.string(), "--clock-control", "none", "--profile-from-start", "off",
                                  "--metrics", "sass__inst_executed_per_opcode_with_modifier_all",
                                  "--print-metric-instances", "details", "--csv", "--page", "raw",
                                  "--log-file", ncu_log.string()};
  RunnerCall profile = call_runner(tools, request_for(task, compiled, proto::kModeProfile, tools), ncu,
                                   tools.profile_limit_s, ncu_log);
  StageResult instructions;
  if (!profile.result) {
    instructions = process_failure("instructions", profile, tools.profile_limit_s);
  } else if (status_of(*profile.result) == StageStatus::runtime_error) {
    instructions = {.name = "instructions", .status = StageStatus::runtime_error,
                    .message = runtime_error_text(*profile.result)};
  } else {
    InstructionCheckInput input;
    for (const auto& k : compiled.kernels) input.submission_kernels.push_back(k.mangled);
    const json& p = profile.result->value(proto::kProfile, json::object());
    if (p.contains(proto::kStreamId) && p[proto::kStreamId].is_number_integer())
      input.solution_stream = p[proto::kStreamId].get<int64_t>();
    ProcessResult sass = run_process({.argv = {tools.cuobjdump.string(), "-sass", compiled.cubin.string()},
                                      .time_limit = std::chrono::seconds(60)});
    SassInventory static_sass;
    if (sass.ok()) {
      static_sass = parse_cuobjdump_sass(sass.out);
      input.static_sass = &static_sass;
    }
    const InstructionCheck checked = check_instructions(parse_ncu_report(profile.tool_log), task, task.main_shape, input);
    instructions = {.name = "instructions", .status = checked.status, .message = checked.message,
                    .details = to_json(checked)};
    instructions.details["ptx_counts"] = compiled.inventory.required_counts;
    if (sass.ok()) instructions.details["static_sass"] = to_json(static_sass);
    verdict.coverage = checked.coverage.coverage;
  }
  instructions.wall_s = profile.process.wall_s;
  verdict.stages.push_back(instructions);

  if (correct.status != StageStatus::passed) {
    verdict.stages.push_back({.name = "time", .status = StageStatus::skipped,
                              .message = "the solution is not correct: its speed is not measured"});
    return;
  }
  RunnerCall timed = call_runner(tools, request_for(task, compiled, proto::kModeTime, tools), {}, tools.time_limit_s);
  StageResult time = timed.result ? time_stage_from(*timed.result, task) : process_failure("time", timed, tools.time_limit_s);
  time.wall_s = timed.process.wall_s;
  if (time.status == StageStatus::passed) verdict.speedup = time.details.value(proto::kSpeedup, 0.0);
  verdict.stages.push_back(time);
}

}  // namespace ptxbench
