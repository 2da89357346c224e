// How a GPU stage runs ptxbench-runner: the sandbox every runner process of one evaluation starts in, the
// request a stage sends, one runner process in a fresh scratch folder of its own, and what its result
// document and its end say. The stages (gpu_stage.h) are made of these.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compile/compile.h"
#include "eval/gpu_stages.h"
#include "eval/sandbox.h"
#include "eval/verdict.h"
#include "task/task.h"
#include "util/subprocess.h"

namespace ptxbench {

// What one runner process left behind: how it ended, its result document (if it wrote one with a valid tag),
// what was wrong with the result channel (if anything) and a tool's log.
struct RunnerCall {
  ProcessResult process;
  std::optional<nlohmann::json> result;
  std::string tampered;  // non-empty: the channel held something other than one authenticated document
  std::string tool_log;
  // A Triton solution's kernels as Triton compiled them in the call (the request's kernels_dir), moved out of
  // the call's folder; the caller removes it.
  std::filesystem::path kernels_dir;
};

// The sandbox every runner process of one evaluation starts in (sandbox.h).
struct SandboxSetup {
  const SandboxStatus* status = nullptr;
  SandboxPolicy policy;  // hidden and readable paths, limits; the writable folder is added per call
  bool profiling_admin = false;
  // The judge's Python processes' bytecode (python_bytecode.h), readable; empty: none.
  std::filesystem::path python_bytecode;
  // A Triton solution's kernel cache, shared by the evaluation's runner processes (writable in each): the
  // stages after the first find the kernels Triton compiled in it. Made and removed by run_gpu_stages; empty:
  // each process keeps its own in its /tmp.
  std::filesystem::path triton_cache;
};

SandboxSetup sandbox_setup(const CompileResult& compiled, const Task& task, const GpuTools& tools);

// The runner's request for one mode (protocol.h) of this task and compiled solution, with a fresh seed.
nlohmann::json request_for(const Task& task, const CompileResult& compiled, const std::string& mode,
                           const GpuTools& tools);

// A tool a runner process runs with (compute-sanitizer, ncu): `command(dir)` is its command line, up to the
// program it starts, with its log `log_name` in the call's folder `dir`. The tool starts the solution process
// alone (the request's solution_wrapper, protocol.h): what it checks or profiles is the solution's, and the
// runner's own kernels (inputs, guards, references) neither cost its instrumentation nor show in its log.
// `profiling`: the tool reads the GPU's counters (the sandbox keeps what that needs).
struct RunnerTool {
  std::function<std::vector<std::string>(const std::filesystem::path& dir)> command;
  std::string log_name;
  bool profiling = false;
};

// One runner process, in the sandbox, in a fresh scratch folder of its own, with `tool` if there is one.
RunnerCall call_runner(const GpuTools& tools, const SandboxSetup& sandbox, const nlohmann::json& request,
                       double limit_s, const RunnerTool* tool = nullptr);

// A stage result for a runner that did not produce its document: killed at the limit, crashed or exited
// early, or its channel tampered with.
StageResult process_failure(const std::string& stage, const RunnerCall& call, double limit_s);

// A runner result's status as a stage status (a missing or unknown one is the harness's error).
StageStatus status_of(const nlohmann::json& result);

// One part ("check" or "time") of a check_then_time result (protocol.h) as a result of its own: what the
// parts share, then the part's own fields. A result without that part (the process failed before it) is
// returned as it is.
nlohmann::json runner_part(const nlohmann::json& result, const char* part);

// What went wrong in a runner result with a fault (its "runtime_error" object): the runner's message, which
// says where (the shape and the call, or loading the library) and quotes the CUDA error.
std::string runtime_error_text(const nlohmann::json& result);

// The buffers whose guards a runner result's trials found changed ("C (129 bytes), ..."), or "".
std::string written_outside(const std::optional<nlohmann::json>& result);

// The end of a long text, for a message.
std::string tail(const std::string& text, size_t max_chars = 800);

}  // namespace ptxbench
