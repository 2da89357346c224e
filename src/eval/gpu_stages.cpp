#include "eval/gpu_stages.h"

#include <unistd.h>

#include <openssl/rand.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <functional>
#include <map>
#include <random>
#include <sstream>

#include "eval/instruction_check.h"
#include "eval/launch_binding.h"
#include "eval/ncu_report.h"
#include "eval/sandbox.h"
#include "eval/sanitizer_report.h"
#include "eval/sass_inventory.h"
#include "runner/protocol.h"
#include "runner/result_mac.h"
#include "task/catalog.h"
#include "util/files.h"
#include "util/subprocess.h"

namespace ptxbench {
namespace fs = std::filesystem;
using nlohmann::json;
namespace proto = protocol;

namespace {

// What one runner process left behind: how it ended, its result document (if it wrote one with a valid tag),
// what was wrong with the result channel (if anything) and a tool's log.
struct RunnerCall {
  ProcessResult process;
  std::optional<json> result;
  std::string tampered;  // non-empty: the channel held something other than one authenticated document
  std::string tool_log;
  // A Triton solution's kernels as Triton compiled them in the call (the request's kernels_dir), moved out of
  // the call's folder; the caller removes it.
  fs::path kernels_dir;
};

// The sandbox every runner process of one evaluation starts in (sandbox.h).
struct SandboxSetup {
  const SandboxStatus* status = nullptr;
  SandboxPolicy policy;  // hidden and readable paths, limits; the writable folder is added per call
  bool profiling_admin = false;
};

uint64_t fresh_seed() {
  std::random_device device;
  // 53 bits: exact in a JSON number whatever reads it.
  return ((uint64_t{device()} << 32) | device()) & ((uint64_t{1} << 53) - 1);
}

// 32 random bytes as hex: the one-time key of one runner process's result channel.
std::string fresh_key() {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) throw std::runtime_error("RAND_bytes failed");
  return mac::to_hex(bytes, sizeof(bytes));
}

SandboxSetup sandbox_setup(const CompileResult& compiled, const GpuTools& tools) {
  SandboxSetup setup{.status = &tools.sandbox};
  SandboxPolicy& policy = setup.policy;
  policy.hidden = default_hidden_paths(tools.sandbox);
  // The harness's data folder (store, compile cache with every other submission, scratch of other
  // evaluations): hidden whole when the standard layout (<data>/scratch/<pid>) shows where it is, and the
  // compile cache and the scratch root in any case.
  const fs::path library = fs::absolute(compiled.library), scratch = fs::absolute(tools.scratch);
  if (scratch.parent_path().filename() == "scratch")
    policy.hidden.push_back(scratch.parent_path().parent_path());
  policy.hidden.push_back(scratch.parent_path());
  policy.hidden.push_back(library.parent_path().parent_path());
  std::sort(policy.hidden.begin(), policy.hidden.end());
  policy.hidden.erase(std::unique(policy.hidden.begin(), policy.hidden.end()), policy.hidden.end());
  // What the runner needs back inside hidden folders: the library, the runner, its libraries.
  policy.readable = {library, fs::absolute(tools.runner).parent_path()};
  // A Triton solution runs in python: its installation (a virtual environment, the python it was made from).
  if (compiled.runner_track == proto::kTrackTriton) {
    const auto search_path = tools.sandbox.environment.find("PATH");
    if (const std::string python = find_program(
            tools.python, search_path == tools.sandbox.environment.end() ? "" : search_path->second);
        !python.empty()) {
      std::error_code ec;
      policy.readable.push_back(fs::path(python).parent_path().parent_path());
      if (const fs::path real = fs::canonical(python, ec); !ec)
        policy.readable.push_back(real.parent_path().parent_path());
    }
  }
  if (const auto paths = tools.sandbox.environment.find("LD_LIBRARY_PATH");
      paths != tools.sandbox.environment.end()) {
    std::istringstream in(paths->second);
    for (std::string dir; std::getline(in, dir, ':');)
      if (!dir.empty() && fs::path(dir).is_absolute()) policy.readable.emplace_back(dir);
  }
  // Memory: RLIMIT_DATA (private writable mappings), not RLIMIT_AS: CUDA reserves far more address space than
  // it uses. PTXBENCH_SANDBOX_DATA_GB=0 lifts it.
  policy.limits.data_bytes = tools.sandbox_data_bytes;
  setup.profiling_admin = profiling_needs_admin() && geteuid() == 0;
  return setup;
}

json request_for(const Task& task, const CompileResult& compiled, const std::string& mode,
                 const GpuTools& tools) {
  json shapes = json::array();
  for (const Shape& shape : task.all_shapes()) {
    json s = shape.dims;
    s[proto::kLabel] = shape.label;
    shapes.push_back(s);
  }
  // Per-output tolerances and the family's parameters travel only when the task has them, so a GEMM request
  // is byte for byte what it was.
  json tolerances = json::object();
  for (const auto& [output, t] : task.tolerances)
    tolerances[output] = {{proto::kRtol, t.rtol}, {proto::kAtol, t.atol}};
  json request = {
      {proto::kMode, mode},
      {proto::kLibrary, fs::absolute(compiled.library).string()},
      {proto::kFamily, task.family},
      {proto::kEntryPoint, find_family(task.family)->entry_point},
      {proto::kShapes, shapes},
      {proto::kTolerance, {{proto::kRtol, task.tolerance.rtol}, {proto::kAtol, task.tolerance.atol}}},
      {proto::kTrials, tools.trials},
      {proto::kSeed, fresh_seed()},
      {proto::kWarmup, tools.warmup},
      {proto::kRepetitions, tools.repetitions}};
  if (!tolerances.empty()) request[proto::kTolerances] = tolerances;
  if (!task.parameters.empty()) request[proto::kParameters] = task.parameters;
  // The architecture's dense tensor rate: the time stage's physics floor (runner/timing_rules.h).
  const ArchInfo* arch = find_arch(task.arch);
  if (mode == proto::kModeTime && arch != nullptr)
    request[proto::kDenseFlopsPerSmPerClock] = arch->dense_bf16_flops_per_sm_per_clock;
  if (compiled.runner_track != proto::kTrackCuda) {
    request[proto::kTrack] = compiled.runner_track;
    request[proto::kPython] = tools.python;
    // The instruction stage holds the profiled launches to the kernels Triton compiled: call_runner names
    // the folder they are kept in.
    if (mode == proto::kModeProfile) request[proto::kKernelsDir] = "";
  }
  return request;
}

}  // namespace

ChannelRead read_result_channel(const std::string& out, const std::string& key) {
  ChannelRead read;
  if (out.empty()) return read;
  const size_t tag_at = out.rfind(mac::kTagPrefix);
  const bool shaped = tag_at != std::string::npos && tag_at > 0 && out[tag_at - 1] == '\n' &&
                      out.size() == tag_at + mac::kTagPrefix.size() + 64 + 1 && out.back() == '\n';
  if (!shaped) {
    read.tampered = fmt::format(
        "the result channel held {} bytes without the runner's closing tag: something other than the runner "
        "wrote to it, or the one-time key was read before the runner could use it",
        out.size());
    return read;
  }
  const std::string document = out.substr(0, tag_at);
  const std::string tag = out.substr(tag_at + mac::kTagPrefix.size(), 64);
  if (mac::hmac_sha256_hex(key, document) != tag) {
    read.tampered = fmt::format(
        "the result channel's {} bytes do not carry a valid tag: a forged or altered "
        "result (written by something other than the runner)",
        out.size());
    return read;
  }
  try {
    read.document = json::parse(document);
  } catch (const json::exception& e) {
    read.tampered = std::string("the authenticated result is not JSON: ") + e.what();
  }
  return read;
}

namespace {

// One runner process, in the sandbox, in a fresh scratch folder of its own: `wrapper(dir)` gives the tool's
// command line (compute-sanitizer, ncu) with its log in `dir`, or nothing; `log_name` is that log's name.
RunnerCall call_runner(const GpuTools& tools, const SandboxSetup& sandbox, const json& request,
                       const std::function<std::vector<std::string>(const fs::path&)>& wrapper,
                       double limit_s, const std::string& log_name = "", bool profiling = false) {
  std::mt19937_64 rng{std::random_device{}()};
  const fs::path dir = fs::absolute(tools.scratch) / fmt::format("call-{:016x}", rng());
  fs::create_directories(dir);
  std::vector<std::string> command = wrapper ? wrapper(dir) : std::vector<std::string>{};
  command.push_back(fs::absolute(tools.runner).string());
  if (sandbox.status->requested) {
    SandboxPolicy policy = sandbox.policy;
    policy.writable = {dir};
    policy.limits.cpu_s = static_cast<uint64_t>(4 * limit_s) + 60;
    policy.keep_admin_capability = profiling && sandbox.profiling_admin;
    if (!tools.visible_device.empty()) policy.environment["CUDA_VISIBLE_DEVICES"] = tools.visible_device;
    command = sandboxed_command(*sandbox.status, policy, command);
  }
  std::map<std::string, std::string> environment;
  if (!tools.visible_device.empty()) environment["CUDA_VISIBLE_DEVICES"] = tools.visible_device;
  const bool keeps_kernels = request.contains(proto::kKernelsDir);
  json sent = request;
  if (keeps_kernels) sent[proto::kKernelsDir] = (dir / "kernels").string();
  const std::string key = fresh_key();
  std::string input = sent.dump();
  input += '\0';
  input += key;
  input += '\n';
  RunnerCall call;
  call.process = run_process({.argv = command,
                              .time_limit = std::chrono::milliseconds(static_cast<long>(limit_s * 1000)),
                              .env_overrides = environment,
                              .stdin_data = input});
  // The result is the runner's stdout, authenticated; whatever else printed went to stderr or the tool's log.
  ChannelRead read = read_result_channel(call.process.out, key);
  call.result = std::move(read.document);
  call.tampered = std::move(read.tampered);
  std::error_code ec;
  if (!log_name.empty() && fs::is_regular_file(fs::symlink_status(dir / log_name, ec)))
    call.tool_log = read_file(dir / log_name);
  if (keeps_kernels && fs::is_directory(dir / "kernels", ec)) {
    call.kernels_dir = fs::absolute(tools.scratch) / fmt::format("kernels-{:016x}", rng());
    fs::rename(dir / "kernels", call.kernels_dir, ec);
    if (ec) call.kernels_dir.clear();
  }
  fs::remove_all(dir, ec);
  return call;
}

std::string tail(const std::string& text, size_t max_chars = 800) {
  return text.size() <= max_chars ? text : "..." + text.substr(text.size() - max_chars);
}

// A stage result for a runner that did not produce its document: killed at the limit, crashed or exited
// early.
StageResult process_failure(const std::string& stage, const RunnerCall& call, double limit_s) {
  StageResult r{.name = stage, .wall_s = call.process.wall_s};
  r.details = {{"process", call.process.describe()}, {"stderr", tail(call.process.err)}};
  if (!call.tampered.empty()) {
    r.status = StageStatus::failed;
    r.message = "the verdict channel was tampered with: " + call.tampered;
  } else if (call.process.timed_out) {
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

// What went wrong in a runner result with a fault (its "runtime_error" object): the runner's message, which
// says where (the shape and the call, or loading the library) and quotes the CUDA error.
std::string runtime_error_text(const json& result) {
  return result.value(proto::kMessage, std::string("runtime error"));
}

StageStatus status_of(const json& result) {
  const std::string s = result.value(proto::kStatus, std::string(proto::kHarnessError));
  if (s == proto::kPassed) return StageStatus::passed;
  if (s == proto::kFailed) return StageStatus::failed;
  if (s == proto::kRuntimeErrorStatus) return StageStatus::runtime_error;
  return StageStatus::harness_error;
}

// The buffers whose guards a runner result's trials found changed ("C (129 bytes), ..."), or "".
std::string written_outside(const std::optional<json>& result) {
  if (!result) return "";
  std::vector<std::string> names;
  const json shapes = result->value(proto::kShapeResults, json::array());
  for (const json& shape : shapes) {
    const json trials = shape.value(proto::kTrialList, json::array());
    for (const json& trial : trials) {
      const json past_end = trial.value(proto::kWrittenPastEnd, json::object());
      for (const auto& [name, count] : past_end.items())
        names.push_back(fmt::format("{} ({} bytes)", name, count.dump()));
    }
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

// The compute-sanitizer tools the sanitize stage runs, in order: out-of-bounds and misaligned accesses,
// barrier misuse, shared-memory races. Not initcheck: the solution's buffers are the judge's, mapped through
// CUDA IPC, and initcheck takes every access to such memory for an uninitialised one (the reference GEMM on
// the H200: 1,605,632 errors, bench/anti-cheat.md). A kernel that reads the backward's workspace before it
// writes it reads NaN instead (it is poisoned before every call), which the correct stage fails.
inline constexpr const char* kSanitizerTools[] = {"memcheck", "synccheck", "racecheck"};

// Sanitize: each tool of kSanitizerTools in its own process, one call on the smallest shape. A hazard a tool
// reports fails the stage; so does a call that fails under a tool that found nothing (a runtime error in any
// stage fails the verdict, whatever a later stage sees) or that breaks a rule the runner checks.
StageResult sanitize_stage(const CompileResult& compiled, const Task& task, const GpuTools& tools,
                           const SandboxSetup& sandbox) {
  StageResult stage{.name = "sanitize", .status = StageStatus::passed};
  const json request = request_for(task, compiled, proto::kModeSanitize, tools);
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
  for (const std::string tool : kSanitizerTools) {
    const std::string log_name = tool + ".log";
    auto wrapper = [&](const fs::path& dir) {
      return std::vector<std::string>{tools.compute_sanitizer.string(), "--tool", tool,
                                      // the solution runs in a child of the runner
                                      "--target-processes", "all", "--log-file", (dir / log_name).string(),
                                      "--print-limit", "20", "--error-exitcode", "99"};
    };
    RunnerCall call = call_runner(tools, sandbox, request, wrapper, tools.sanitize_limit_s, log_name);
    stage.wall_s += call.process.wall_s;
    if (call.process.timed_out || call.process.spawn_failed || !call.tampered.empty()) {
      StageResult failure = process_failure("sanitize", call, tools.sanitize_limit_s);
      failure.message = tool + ": " + failure.message;
      return end_with(std::move(failure));
    }
    const SanitizerReport report = parse_sanitizer_report(call.tool_log);
    stage.details[tool] = to_json(report);
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
    } else if (const StageStatus status = status_of(*call.result);
               status == StageStatus::runtime_error || status == StageStatus::failed ||
               status == StageStatus::harness_error) {
      // The tool found nothing, but the call failed (or could not be made, or broke a rule the runner
      // checks, such as state kept between calls): the later tools would see the same.
      const bool never_ran = call.result->value(proto::kShapeResults, json::array()).empty();
      StageResult failure{.name = "sanitize", .status = status};
      failure.message = fmt::format(
          "{}: no error found by the tool, but {}{}", tool,
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

// The vendor baseline of an attention task ("baseline": "vendor-attention"), measured after the runner timed
// the solution (or taken from earlier in this process) and put into the runner's timing beside the
// solution's Series, as the runner puts cuBLASLt's for GEMM. Only a passed timing gets one: a failed one has
// no speed to compare. Returns the seconds the measurement took.
double with_attention_baseline(json& result, const Task& task, const GpuTools& tools,
                               const std::string& host) {
  if (task.baseline != kBaselineVendorAttention || status_of(result) != StageStatus::passed) return 0;
  json& timing = result[proto::kTiming];
  if (!timing.is_object() || !timing.value(proto::kBaseline, json()).is_null()) return 0;
  AttentionBaselineRun run{.warmup = tools.warmup,
                           .repetitions = tools.repetitions,
                           .gpu = host,
                           .visible_device = tools.visible_device};
  const json device = result.value(proto::kDeviceInfo, json());
  if (device.is_object() && device.value(proto::kName, json()).is_string())
    run.gpu = device[proto::kName].get<std::string>();
  if (const json flush = timing.value(proto::kL2FlushBytes, json()); flush.is_number_integer())
    run.l2_flush_bytes = flush.get<int64_t>();
  const AttentionBaseline baseline = measure_attention_baseline(task, tools.attention_baseline, run);
  add_attention_baseline(timing, baseline);
  return baseline.wall_s;
}

}  // namespace

// What the first mismatches of a wrong output have in common, as a hint at the fault: all of them a fixed
// multiple of the expected value (a missing or extra factor), or, for a causal attention LSE, all of them
// larger (keys outside the mask counted). "" when nothing stands out.
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
  if (proportional) {
    std::string known;
    const auto near = [&](double value) { return std::abs(ratio - value) <= 0.01 * value; };
    const auto dim = task.main_shape.dims.find("D");
    const std::optional<int64_t> d =
        dim == task.main_shape.dims.end() ? std::nullopt : std::optional<int64_t>(dim->second);
    if (near(1 / std::log(2.0)))
      known = " (1/ln 2: a base-2 logarithm where the natural one is asked for?)";
    else if (near(std::log(2.0)))
      known = " (ln 2: a natural logarithm where base 2 is asked for?)";
    else if (d && near(1 / std::sqrt(static_cast<double>(*d))))
      known = " (1/sqrt(D): the softmax scale applied where it does not belong?)";
    else if (d && near(std::sqrt(static_cast<double>(*d))))
      known = " (sqrt(D): the softmax scale missing?)";
    return fmt::format(" Each of the first {} mismatches of {} is {:.4g}x the expected value{}.",
                       pairs.size(), name, ratio, known);
  }
  const auto causal = task.parameters.find("causal");
  if (name == "LSE" && causal != task.parameters.end() && causal->second &&
      std::all_of(pairs.begin(), pairs.end(), [](const auto& p) { return p.second > p.first; }))
    return fmt::format(
        " Each of the first {} mismatches of LSE is larger than expected: keys the causal mask "
        "hides were counted?",
        pairs.size());
  return "";
}

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
    if (stage.status == StageStatus::runtime_error)
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
  // The host's note on the baseline, when it added one (attention_baseline.h): why there is none, or that it
  // was measured earlier in this run.
  const json note = timing.value(kBaselineNote, json());
  if (baseline.is_object() && speedup.is_number())
    stage.message += fmt::format(" against {} {:.1f} us ({:.0f} TFLOP/s): {:.3f}x{}",
                                 baseline.value(proto::kName, std::string("baseline")), median_us(baseline),
                                 baseline.value(proto::kTflops, 0.0), speedup.get<double>(),
                                 note.is_string() ? " (" + note.get<std::string>() + ")" : "");
  else if (note.is_string())
    stage.message += fmt::format("; {}, so no speedup", note.get<std::string>());
  else if (task.baseline == kBaselineNone)
    stage.message += "; this task has no baseline (\"baseline\": \"none\"), so no speedup";
  else
    stage.message += "; this task family has no baseline yet, so no speedup";
  return stage;
}

fs::path runner_beside_executable() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && fs::exists(self.parent_path() / "ptxbench-runner"))
    return self.parent_path() / "ptxbench-runner";
  return {};
}

namespace {

// The instruction stage and the profiled call's launches, which bind_proof holds the other stages' calls to.
struct Proof {
  StageResult stage;
  std::optional<NcuReport> profiled;  // when ncu's report was read
};

Proof instructions_stage(const CompileResult& compiled, const Task& task, const GpuTools& tools,
                         const SandboxSetup& sandbox, Verdict& verdict);

// The launches the runner recorded for a stage's calls (launch_log.h), when it ran them.
void add_launches(std::vector<std::pair<std::string, json>>& logs, const std::string& stage,
                  const std::optional<json>& result) {
  if (result && result->contains(proto::kLaunches)) logs.emplace_back(stage, (*result)[proto::kLaunches]);
}

// Holds the calls the correct and time stages made to the profiled call's launches and counts
// (launch_binding.h): a proof that does not cover them fails the instruction stage; one that cannot be bound
// (a recorder was unavailable) is a harness error, never a pass. Returns false when it could not be bound.
bool bind_proof(StageResult& instructions, const NcuReport& profiled,
                const std::vector<std::pair<std::string, json>>& logs) {
  if (logs.empty()) return true;
  const LaunchBinding binding = bind_launches(profiled, logs);
  if (!instructions.details.is_object()) instructions.details = json::object();
  instructions.details["binding"] = binding.details;
  instructions.details["binding"]["status"] = to_string(binding.status);
  if (binding.status == StageStatus::passed) return true;
  if (instructions.status == StageStatus::passed) {
    instructions.status = binding.status;
    instructions.message = binding.message;
  } else {
    instructions.message += " (also: " + binding.message + ")";
  }
  return false;
}

}  // namespace

void run_gpu_stages(const CompileResult& compiled, const Task& task, const GpuTools& tools,
                    Verdict& verdict) {
  fs::create_directories(tools.scratch);
  const SandboxSetup sandbox = sandbox_setup(compiled, tools);
  json sandbox_details = sandbox.status->to_json();
  if (sandbox.status->requested) {
    sandbox_details["hidden"] = json::array();
    for (const auto& p : sandbox.policy.hidden) sandbox_details["hidden"].push_back(p.string());
    sandbox_details["data_limit_bytes"] = sandbox.policy.limits.data_bytes;
    sandbox_details["profiling_keeps_cap_sys_admin"] = sandbox.profiling_admin;
  }

  // Untrusted code never runs unconfined unless someone said so.
  if (sandbox.status->requested && !sandbox.status->available) {
    for (const char* name : {"sanitize", "correct", "instructions", "time"})
      verdict.stages.push_back(
          {.name = name,
           .status = StageStatus::harness_error,
           .message = "the sandbox is not available, so the solution is not run: " + sandbox.status->reason +
                      ". Fix that, or set PTXBENCH_SANDBOX=off for trusted code.",
           .details = {{"sandbox", sandbox_details}}});
    return;
  }
  auto push = [&](StageResult stage) {
    if (!stage.details.is_object()) stage.details = json::object();
    stage.details["sandbox"] = sandbox_details;
    verdict.stages.push_back(std::move(stage));
  };

  // A solution that never finishes would hang every later stage as well: after a time-out, stop. After a
  // harness error, stop too: what a later stage saw of the solution could not be told from the host's
  // failure, and the verdict is the harness's error, never the solution's failure.
  auto stop_after_timeout = [&](const StageResult& stage, std::initializer_list<const char*> rest) {
    if (stage.status != StageStatus::timeout && stage.status != StageStatus::harness_error) return false;
    const std::string reason =
        stage.status == StageStatus::timeout
            ? fmt::format("not run: the {} stage timed out", stage.name)
            : fmt::format("not run: the {} stage could not be judged (a harness error)", stage.name);
    for (const char* name : rest)
      verdict.stages.push_back({.name = name, .status = StageStatus::skipped, .message = reason});
    return true;
  };

  const auto not_requested = [](const char* name) {
    return StageResult{.name = name, .status = StageStatus::skipped, .message = "not requested (--stages)"};
  };

  push(tools.wants("sanitize") ? sanitize_stage(compiled, task, tools, sandbox) : not_requested("sanitize"));
  if (stop_after_timeout(verdict.stages.back(), {"correct", "instructions", "time"})) return;

  StageResult correct = not_requested("correct");
  std::vector<std::pair<std::string, json>> launches;  // each stage's calls, for bind_proof
  if (tools.wants("correct")) {
    RunnerCall check = call_runner(tools, sandbox, request_for(task, compiled, proto::kModeCheck, tools), {},
                                   tools.correct_limit_s);
    correct = check.result ? correct_stage_from(*check.result, task)
                           : process_failure("correct", check, tools.correct_limit_s);
    correct.wall_s = check.process.wall_s;
    if (correct.status == StageStatus::passed) add_launches(launches, "correct", check.result);
  }
  push(correct);
  if (stop_after_timeout(correct, {"instructions", "time"})) return;
  std::optional<Proof> proof;
  if (tools.wants("instructions")) {
    proof = instructions_stage(compiled, task, tools, sandbox, verdict);
    push(proof->stage);
    if (stop_after_timeout(proof->stage, {"time"})) return;
  } else {
    push(not_requested("instructions"));
  }
  const size_t instructions_index = verdict.stages.size() - 1;
  // The proof is bound once the calls it must cover have run, whichever way the time stage ends.
  const auto bind = [&] {
    // A coverage measured on code that was not the timed code describes nothing the verdict stands for.
    if (proof && proof->profiled &&
        !bind_proof(verdict.stages[instructions_index], *proof->profiled, launches))
      verdict.coverage.reset();
  };

  if (!tools.wants("time")) {
    push(not_requested("time"));
    return bind();
  }
  if (correct.status != StageStatus::passed) {
    verdict.stages.push_back({.name = "time",
                              .status = StageStatus::skipped,
                              .message = tools.wants("correct")
                                             ? "the solution is not correct: its speed is not measured"
                                             : "not run: the time stage needs the correct stage (--stages)"});
    return bind();
  }
  RunnerCall timed = call_runner(tools, sandbox, request_for(task, compiled, proto::kModeTime, tools), {},
                                 tools.time_limit_s);
  const double baseline_s =
      timed.result ? with_attention_baseline(*timed.result, task, tools, verdict.host) : 0;
  StageResult time = timed.result ? time_stage_from(*timed.result, task)
                                  : process_failure("time", timed, tools.time_limit_s);
  time.wall_s = timed.process.wall_s + baseline_s;
  if (time.status == StageStatus::passed) add_launches(launches, "time", timed.result);
  if (time.status == StageStatus::passed && time.details.value(proto::kSpeedup, json()).is_number())
    verdict.speedup = time.details[proto::kSpeedup].get<double>();
  push(time);
  bind();
}

namespace {

// The stage decided by the compiled code alone (decide_from_compiled_code): no profile ran, so no coverage.
StageResult decided_from_compiled_code(const StaticDecision& decision, const SassInventory& static_sass,
                                       const CompileResult& compiled, double wall_s) {
  StageResult stage{.name = "instructions",
                    .status = decision.status,
                    .wall_s = wall_s,
                    .message = decision.message,
                    .details = to_json(decision)};
  stage.details["static_sass"] = to_json(static_sass);
  stage.details["ptx_counts"] = compiled.inventory.required_counts;
  return stage;
}

// `cuobjdump -sass` of compiled code: the submission's cubin, or the kernels Triton compiled in the profiled
// run. `problem` says why there is none.
struct Disassembly {
  SassInventory sass;
  std::string problem;
  double wall_s = 0;
  bool ok() const { return problem.empty(); }
};

Disassembly disassemble(const std::vector<fs::path>& cubins, const GpuTools& tools) {
  Disassembly disassembly;
  std::string text;
  for (const fs::path& cubin : cubins) {
    const ProcessResult sass = run_process({.argv = {tools.cuobjdump.string(), "-sass", cubin.string()},
                                            .time_limit = std::chrono::seconds(60)});
    disassembly.wall_s += sass.wall_s;
    if (!sass.ok()) {
      disassembly.problem =
          fmt::format("cuobjdump could not read the submission's compiled code ({})",
                      sass.spawn_failed ? "not found: " + tools.cuobjdump.string() : sass.describe());
      return disassembly;
    }
    text += sass.out;
  }
  disassembly.sass = parse_cuobjdump_sass(text);
  return disassembly;
}

// The cubins the runner kept of a Triton solution's profiled run (the result's "compiled_kernels").
Disassembly disassemble_triton_kernels(const RunnerCall& profile, const GpuTools& tools) {
  std::vector<fs::path> cubins;
  if (!profile.kernels_dir.empty())
    for (const json& name : profile.result->value(proto::kCompiledKernels, json::array()))
      if (name.is_string()) cubins.push_back(profile.kernels_dir / name.get<std::string>());
  if (cubins.empty())
    return {.problem =
                "Triton compiled no kernel in the solution's process, so there is no compiled code to "
                "hold the launches to"};
  return disassemble(cubins, tools);
}

// Instructions: the static SASS, which decides alone when a required family is not in it; else one profiled
// call under Nsight Compute, judged with the static SASS beside it. A Triton solution's kernels are compiled
// in that call, so their SASS is read after it, and nothing is decided before.
Proof instructions_stage(const CompileResult& compiled, const Task& task, const GpuTools& tools,
                         const SandboxSetup& sandbox, Verdict& verdict) {
  Disassembly compiled_code;
  if (compiled.compiles_kernels) {
    compiled_code = disassemble({compiled.cubin}, tools);
    if (compiled_code.ok())
      if (const auto decision = decide_from_compiled_code(task, compiled_code.sass))
        return {.stage = decided_from_compiled_code(*decision, compiled_code.sass, compiled,
                                                    compiled_code.wall_s)};
  }
  const std::string ncu_log = "ncu.csv";
  auto ncu = [&](const fs::path& dir) {
    return std::vector<std::string>{
        tools.ncu.string(),
        "--target-processes",
        "all",  // the solution runs in a child of the runner
        "--clock-control",
        "none",
        "--profile-from-start",
        "off",
        "--print-kernel-base",
        "mangled",  // the symbols cuobjdump lists, with no spelling to reconcile
        "--metrics",
        std::string("sass__inst_executed_per_opcode_with_modifier_all,") + kLaunchMetrics,
        "--print-metric-instances",
        "details",
        "--csv",
        "--page",
        "raw",
        "--log-file",
        (dir / ncu_log).string()};
  };
  RunnerCall profile = call_runner(tools, sandbox, request_for(task, compiled, proto::kModeProfile, tools),
                                   ncu, tools.profile_limit_s, ncu_log, /*profiling=*/true);
  StageResult instructions;
  std::optional<NcuReport> profiled;
  if (!profile.result) {
    instructions = process_failure("instructions", profile, tools.profile_limit_s);
  } else if (status_of(*profile.result) == StageStatus::runtime_error ||
             profile.result->contains(proto::kRuntimeError)) {
    // A failed call, or a rule it broke (state kept between calls).
    instructions = {.name = "instructions",
                    .status = status_of(*profile.result),
                    .message = runtime_error_text(*profile.result)};
  } else if (status_of(*profile.result) == StageStatus::failed) {
    // The proof must be made on code that computes the task: a wrong profiled output voids it.
    const json trial = profile.result->value(proto::kProfile, json::object()).value(proto::kTrial, json());
    instructions = {.name = "instructions",
                    .status = StageStatus::failed,
                    .message = "the profiled call's output was wrong, so its instructions prove nothing: " +
                               describe_failed_trial({{proto::kLabel, task.main_shape.label},
                                                      {proto::kTrialList, json::array({trial})}},
                                                     task),
                    .details = {{"profiled_trial", trial}}};
  } else {
    InstructionCheckInput input;
    for (const auto& k : compiled.kernels) input.submission_kernels.push_back(k.mangled);
    if (!compiled.compiles_kernels) {
      compiled_code = disassemble_triton_kernels(profile, tools);
      for (const SassFunction& function : compiled_code.sass.functions)
        input.submission_kernels.push_back(function.name);
    }
    const json& p = profile.result->value(proto::kProfile, json::object());
    if (p.contains(proto::kStreamId) && p[proto::kStreamId].is_number_integer())
      input.solution_stream = p[proto::kStreamId].get<int64_t>();
    if (compiled_code.ok()) input.static_sass = &compiled_code.sass;
    profiled = parse_ncu_report(profile.tool_log);
    const InstructionCheck checked = check_instructions(*profiled, task, task.main_shape, input);
    instructions = {.name = "instructions",
                    .status = checked.status,
                    .message = checked.message,
                    .details = to_json(checked)};
    instructions.details["ptx_counts"] = compiled.inventory.required_counts;
    // What the solution process's own recorder saw under the profiler (it may be unavailable there).
    instructions.details["profiled_call_recorder"] = profile.result->value(proto::kLaunches, json());
    if (!compiled.compiles_kernels)
      instructions.details["compiled_kernels"] = profile.result->value(proto::kCompiledKernels, json());
    if (compiled_code.ok()) {
      instructions.details["static_sass"] = to_json(compiled_code.sass);
    } else {
      // Without the compiled code a launch is the submission's by its name alone, which a copied name (a
      // library kernel's) passes: no pass on that ground.
      const std::string problem = compiled_code.problem + ", so launches were matched by kernel name only";
      instructions.details["static_sass_problem"] = problem;
      if (instructions.status == StageStatus::passed) {
        instructions.status = StageStatus::harness_error;
        instructions.message = problem + "; " + instructions.message;
      } else {
        instructions.message += " (also: " + problem + ")";
      }
    }
    verdict.coverage = checked.coverage.coverage;
  }
  instructions.wall_s = profile.process.wall_s;
  std::error_code ec;
  if (!profile.kernels_dir.empty()) fs::remove_all(profile.kernels_dir, ec);
  return {.stage = std::move(instructions), .profiled = std::move(profiled)};
}

}  // namespace

}  // namespace ptxbench
