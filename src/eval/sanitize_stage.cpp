#include <fmt/format.h>
#include <fmt/ranges.h>
#include <chrono>
#include <future>

#include "eval/gpu_stage.h"
#include "eval/sanitizer_report.h"
#include "runner/protocol.h"

namespace ptxbench {
namespace fs = std::filesystem;
using nlohmann::json;
namespace proto = protocol;

namespace {

// The compute-sanitizer tools the sanitize stage runs, in order: out-of-bounds and misaligned accesses,
// barrier misuse, shared-memory races. Not initcheck: the solution's buffers are the judge's, mapped through
// CUDA IPC, and initcheck takes every access to such memory for an uninitialised one (the reference GEMM on
// the H200: 1,605,632 errors, bench/harness/h200-2026-12-02). A kernel that reads the backward's workspace
// before it writes it reads NaN instead (it is poisoned before every call), which the correct stage fails.
constexpr const char* kSanitizerTools[] = {"memcheck", "synccheck", "racecheck"};

}  // namespace

RunnerCall run_sanitizer(StageContext& context, const json& request, const std::string& tool) {
  const GpuTools& tools = context.tools;
  const std::string log_name = tool + ".log";
  auto command = [&](const fs::path& dir) {
    return std::vector<std::string>{tools.compute_sanitizer.string(), "--tool", tool,
                                    // the solution process and any process it starts
                                    "--target-processes", "all", "--log-file", (dir / log_name).string(),
                                    "--print-limit", "20", "--error-exitcode", "99"};
  };
  const RunnerTool sanitizer{.command = command, .log_name = log_name};
  return call_runner(tools, context.sandbox, request, tools.sanitize_limit_s, &sanitizer);
}

// Sanitize: each tool of kSanitizerTools in its own process, one call on the smallest shape. A hazard a tool
// reports fails the stage; so does a call that fails under a tool that found nothing (a runtime error in any
// stage fails the verdict, whatever a later stage sees) or that breaks a rule the runner checks.
// The tools run at once, each in a process of its own (nothing of one tool's run reaches another's), and
// their results are read in kSanitizerTools' order: the stage's wall time is its slowest tool's, not the sum.
// A tool that timed out beside the others is run again alone, and only that run decides (as a stage that
// timed out sharing the GPU, gpu_stages.cpp): a solution that hangs costs two limits, not four.
StageResult sanitize_stage(StageContext& context) {
  const GpuTools& tools = context.tools;
  StageResult stage{.name = "sanitize", .status = StageStatus::passed};
  const json request = request_for(context.task, context.compiled, proto::kModeSanitize, tools);
  const auto run_tool = [&context, &request](const std::string& tool) {
    return run_sanitizer(context, request, tool);
  };
  const auto started = std::chrono::steady_clock::now();
  std::vector<std::future<RunnerCall>> running;
  for (const std::string tool : kSanitizerTools)
    running.push_back(std::async(std::launch::async, run_tool, tool));
  std::vector<RunnerCall> calls;
  for (auto& call : running) calls.push_back(call.get());
  stage.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::vector<std::string> problems;
  // A later tool's trouble (a time-out, no result, a failed call) ends the stage, but never hides what an
  // earlier one found.
  auto end_with = [&](StageResult failure) {
    failure.wall_s = stage.wall_s;
    if (stage.status != StageStatus::failed) {
      if (stage.details.is_object())
        for (const auto& [tool, report] : stage.details.items())
          if (!failure.details.contains(tool)) failure.details[tool] = report;
      return failure;
    }
    problems.push_back(failure.message);
    stage.message = fmt::format("{}", fmt::join(problems, "\n"));
    return stage;
  };
  for (size_t i = 0; i < calls.size(); ++i) {
    const std::string tool = kSanitizerTools[i];
    RunnerCall& call = calls[i];
    std::string timed_out_beside;  // what the run beside the other tools said, when it timed out
    if (call.process.timed_out && calls.size() > 1) {
      timed_out_beside = process_failure("sanitize", call, tools.sanitize_limit_s).message;
      call = run_tool(tool);
      stage.wall_s += call.process.wall_s;
    }
    if (call.process.timed_out || call.process.spawn_failed || !call.tampered.empty()) {
      StageResult failure = process_failure("sanitize", call, tools.sanitize_limit_s);
      failure.message = tool + ": " + failure.message;
      if (!timed_out_beside.empty()) failure.details["timed_out_beside_the_other_tools"] = timed_out_beside;
      return end_with(std::move(failure));
    }
    const SanitizerReport report = parse_sanitizer_report(call.tool_log);
    stage.details[tool] = to_json(report);
    stage.details[tool]["wall_s"] = call.process.wall_s;
    // The solution process ended badly under the tool: the ends of what the tool and the runner said, for the
    // verdict's reader; the runner's result still decides, below.
    if (report.target_ended_abnormally)
      stage.details[tool]["ended"] = {{"tool_log", tail(call.tool_log)},
                                      {"runner_stderr", tail(call.process.err)}};
    if (!timed_out_beside.empty()) stage.details[tool]["timed_out_beside_the_other_tools"] = timed_out_beside;
    if (report.tool_failed) {
      // The tool could not judge; an error an earlier tool found still fails the stage.
      if (stage.status == StageStatus::passed) stage.status = StageStatus::harness_error;
      problems.push_back(fmt::format("{} could not run: {}", tool, report.tool_failure));
    } else if (report.found_errors()) {
      stage.status = StageStatus::failed;
      std::string first;
      for (const auto& e : report.errors) first += "\n  " + e.summary();
      problems.push_back(
          fmt::format("{}: {} error(s){}", tool, report.error_count.value_or(report.errors_printed), first));
    } else if (const std::string outside = written_outside(call.result); !outside.empty()) {
      // The runner's own bounds check: a write outside a buffer that lands inside its allocation, where the
      // tool cannot see it.
      stage.status = StageStatus::failed;
      problems.push_back(
          fmt::format("{}: no error reported by the tool, but the solution wrote outside {} (bytes changed "
                      "in the guards the runner checks before and after each buffer)",
                      tool, outside));
    } else if (!call.result) {
      // No memory error, but the process ended without its result (exit in the call, a crash, a kill): the
      // run did not finish, so nothing was checked.
      StageResult failure = process_failure("sanitize", call, tools.sanitize_limit_s);
      failure.message = tool + ": no error found by the tool, but " + failure.message;
      failure.details[tool] = stage.details[tool];
      return end_with(std::move(failure));
    } else if (const StageStatus status = status_of(*call.result); status == StageStatus::runtime_error ||
                                                                   status == StageStatus::failed ||
                                                                   status == StageStatus::harness_error) {
      // The tool found nothing, but the call failed (or could not be made, or broke a rule the runner
      // checks, such as state kept between calls): the later tools would see the same.
      const bool never_ran = call.result->value(proto::kShapeResults, json::array()).empty();
      StageResult failure{.name = "sanitize", .status = status};
      failure.message = fmt::format("{}: no error found by the tool, but {}{}", tool,
                                    status == StageStatus::harness_error ? "the runner could not judge: "
                                    : never_ran                          ? "the solution never ran: "
                                                                         : "the call failed: ",
                                    runtime_error_text(*call.result));
      failure.details[tool] = stage.details[tool];
      return end_with(std::move(failure));
    }
  }
  stage.message = fmt::format("{}", fmt::join(problems, "\n"));
  return stage;
}

}  // namespace ptxbench
