#include "eval/runner_call.h"

#include <unistd.h>

#include <openssl/rand.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <map>
#include <random>
#include <sstream>

#include "arch/profile.h"
#include "eval/python_bytecode.h"
#include "runner/protocol.h"
#include "runner/result_mac.h"
#include "util/files.h"

namespace ptxbench {
namespace fs = std::filesystem;
using nlohmann::json;
namespace proto = protocol;

namespace {

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

// The module of the task's baseline that the runner runs in python (the attention tasks' vendor baseline), as an
// absolute path; empty when its baseline is none such, or the project root is unknown.
fs::path baseline_module(const Task& task, const GpuTools& tools) {
  const BaselineSpec* baseline = task.family_spec().baseline(task.baseline);
  if (baseline == nullptr || baseline->module.empty() || tools.project_root.empty()) return {};
  return fs::absolute(tools.project_root / baseline->module);
}

}  // namespace

SandboxSetup sandbox_setup(const CompileResult& compiled, const Task& task, const GpuTools& tools) {
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
  // The attention tasks' vendor baseline, a module of the project's, wherever the project is (a home folder
  // is hidden).
  const fs::path module = baseline_module(task, tools);
  if (!module.empty()) policy.readable.push_back(module);
  // A Triton solution, and that baseline, run in python: its installation (a virtual environment, the python
  // it was made from).
  if (compiled.runner_track == proto::kTrackTriton || !module.empty()) {
    const auto search_path = tools.sandbox.environment.find("PATH");
    if (const std::string python = find_program(
            tools.python, search_path == tools.sandbox.environment.end() ? "" : search_path->second);
        !python.empty()) {
      std::error_code ec;
      policy.readable.push_back(fs::path(python).parent_path().parent_path());
      if (const fs::path real = fs::canonical(python, ec); !ec)
        policy.readable.push_back(real.parent_path().parent_path());
      setup.python_bytecode = python_bytecode(python, tools.python_bytecode);
      if (!setup.python_bytecode.empty()) policy.readable.push_back(setup.python_bytecode);
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
      {proto::kEntryPoint, task.family_spec().entry_point},
      {proto::kShapes, shapes},
      {proto::kTolerance, {{proto::kRtol, task.tolerance.rtol}, {proto::kAtol, task.tolerance.atol}}},
      {proto::kTrials, tools.trials},
      {proto::kSeed, fresh_seed()},
      {proto::kWarmup, tools.warmup},
      {proto::kRepetitions, tools.repetitions}};
  if (!tolerances.empty()) request[proto::kTolerances] = tolerances;
  if (!task.parameters.empty()) request[proto::kParameters] = task.parameters;
  // The architecture's dense tensor rate: the time stage's physics floor (runner/timing_rules.h).
  const ArchProfile* arch = find_arch(task.arch);
  const bool times = mode == proto::kModeTime || mode == proto::kModeCheckThenTime;
  if (times && arch != nullptr)
    request[proto::kDenseFlopsPerSmPerClock] = arch->dense_bf16_flops_per_sm_per_clock;
  if (mode == proto::kModeCheckThenTime) {
    request[proto::kCheckLimitS] = tools.correct_limit_s;
    request[proto::kTimeLimitS] = tools.time_limit_s;
    if (!tools.cuda_gdb.empty()) request[proto::kDebugger] = tools.cuda_gdb.string();
  }
  if (const fs::path module = baseline_module(task, tools); times && !module.empty()) {
    request[proto::kBaselineModule] = module.string();
    request[proto::kPython] = tools.python;
  }
  if (compiled.runner_track != proto::kTrackCuda) {
    request[proto::kTrack] = compiled.runner_track;
    request[proto::kPython] = tools.python;
    // The instruction stage holds the profiled launches to the kernels Triton compiled: call_runner names
    // the folder they are kept in.
    if (mode == proto::kModeProfile) request[proto::kKernelsDir] = "";
  }
  return request;
}

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

RunnerCall call_runner(const GpuTools& tools, const SandboxSetup& sandbox, const json& request,
                       double limit_s, const RunnerTool* tool) {
  std::mt19937_64 rng{std::random_device{}()};
  const fs::path dir = fs::absolute(tools.scratch) / fmt::format("call-{:016x}", rng());
  fs::create_directories(dir);
  std::vector<std::string> command = {fs::absolute(tools.runner).string()};
  json sent = request;
  if (tool) sent[proto::kSolutionWrapper] = tool->command(dir);
  // The judge's own folders for its Python processes: the bytecode they read, and the kernel cache that a
  // Triton solution's processes of one evaluation share.
  const bool python = request.contains(proto::kPython);
  const bool triton = request.value(proto::kTrack, std::string(proto::kTrackCuda)) == proto::kTrackTriton;
  if (python && !sandbox.python_bytecode.empty())
    sent[proto::kPythonBytecode] = sandbox.python_bytecode.string();
  if (triton && !sandbox.triton_cache.empty()) sent[proto::kTritonCache] = sandbox.triton_cache.string();
  if (sandbox.status->requested) {
    SandboxPolicy policy = sandbox.policy;
    policy.writable = {dir};
    if (triton && !sandbox.triton_cache.empty()) policy.writable.push_back(sandbox.triton_cache);
    policy.limits.cpu_s = static_cast<uint64_t>(4 * limit_s) + 60;
    policy.keep_admin_capability = tool && tool->profiling && sandbox.profiling_admin;
    if (!tools.visible_device.empty()) policy.environment["CUDA_VISIBLE_DEVICES"] = tools.visible_device;
    command = sandboxed_command(*sandbox.status, policy, command);
  }
  std::map<std::string, std::string> environment;
  if (!tools.visible_device.empty()) environment["CUDA_VISIBLE_DEVICES"] = tools.visible_device;
  const bool keeps_kernels = request.contains(proto::kKernelsDir);
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
  if (tool && fs::is_regular_file(fs::symlink_status(dir / tool->log_name, ec)))
    call.tool_log = read_file(dir / tool->log_name);
  if (keeps_kernels && fs::is_directory(dir / "kernels", ec)) {
    call.kernels_dir = fs::absolute(tools.scratch) / fmt::format("kernels-{:016x}", rng());
    fs::rename(dir / "kernels", call.kernels_dir, ec);
    if (ec) call.kernels_dir.clear();
  }
  fs::remove_all(dir, ec);
  return call;
}

std::string tail(const std::string& text, size_t max_chars) {
  return text.size() <= max_chars ? text : "..." + text.substr(text.size() - max_chars);
}

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

std::string runtime_error_text(const json& result) {
  return result.value(proto::kMessage, std::string("runtime error"));
}

StageStatus status_of(const json& result) {
  const std::string s = result.value(proto::kStatus, std::string(proto::kHarnessError));
  if (s == proto::kPassed) return StageStatus::passed;
  if (s == proto::kFailed) return StageStatus::failed;
  if (s == proto::kRuntimeErrorStatus) return StageStatus::runtime_error;
  if (s == proto::kTimeoutStatus) return StageStatus::timeout;
  return StageStatus::harness_error;
}

json runner_part(const json& result, const char* part) {
  json own = result;
  own.erase(proto::kCheckPart);
  own.erase(proto::kTimePart);
  if (const auto it = result.find(part); it != result.end() && it->is_object()) own.update(*it);
  return own;
}

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

}  // namespace ptxbench
