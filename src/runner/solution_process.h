// The runner's side of the solution process (solution_protocol.h): starts the worker, shares buffers with it
// and asks it to call the solution. Everything the worker answers is checked for shape here; what it claims
// about its call (return code, errors, times) is reported as its claim.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "runner/device_buffer.h"
#include "runner/landlock.h"
#include "runner/solution_binding.h"
#include "runner/solution_protocol.h"

namespace ptxbench::runner {

// The solution failed at run time: it returned non-zero, or a CUDA error showed up around its call, or its
// process ended or broke the protocol. The result's status is runtime_error; `details()` (session.cpp) is its
// "runtime_error" object. A fault that is a rule broken rather than a failure (state kept between calls,
// solution::Phase::state) makes the status failed, with the same object.
struct SolutionFault : std::runtime_error {
  SolutionFault(const std::string& message, std::string shape_label, int trial_index, std::string where_text,
                std::optional<int> return_code, std::optional<cudaError_t> cuda_error,
                bool broke_rule = false)
      : std::runtime_error(message),
        shape(std::move(shape_label)),
        trial(trial_index),
        where(std::move(where_text)),
        code(return_code),
        error(cuda_error),
        rule(broke_rule) {}
  nlohmann::ordered_json details() const;

  std::string shape;
  int trial;
  std::string where;
  std::optional<int> code;
  std::optional<cudaError_t> error;
  bool rule;
  // The process did not answer before its deadline (SolutionProcess::set_deadline) and was killed: the
  // result's status is then timeout.
  bool timed_out = false;
  std::string debugger_output;  // with timed_out: what the debugger said of the process before the kill
  std::string debugger_failure;  // or why the debugger said nothing ("cuda-gdb could not be run")
};

// One call of the entry point as its family describes it (src/family): its tensors, each a buffer (nullptr for
// a null pointer) with its element type and extents, then its int and its float arguments, each kind in the
// entry point's order.
struct CallTensor {
  const DeviceBuffer* buffer = nullptr;
  uint8_t dtype = 0;  // family.h's DType
  std::vector<int64_t> extents;
};
struct SolutionCall {
  std::vector<CallTensor> tensors;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  // Each output's snapshot buffer, by the output's index in `tensors` (solution_protocol.h, kSnapshotPoint).
  std::vector<std::pair<uint32_t, const DeviceBuffer*>> snapshots;
};

// What came back from one call, with the runner's own clock around the request.
struct CallOutcome {
  solution::Reply reply;
  double judge_us = 0;  // request sent to reply received, on the runner's clock: bounds the reply's times
};

// How to start the worker: its command line, to which the socket's descriptor number is appended, and the
// variables it gets beyond the runner's environment. With a `wrapper` (a tool such as compute-sanitizer,
// whose command line ends where the worker's begins), the tool starts the worker, and the worker is ended
// by closing its socket rather than by a signal, so that the tool sees it end and finishes its report.
struct WorkerCommand {
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> environment;
  std::vector<std::string> wrapper;
  bool for_debugger = false;  // a rerun for the debugger: its confinement keeps /proc writable (landlock.h)
};

// How long a wrapped worker's tool gets to finish its report once the worker's socket is closed.
inline constexpr int kWrapperGraceSeconds = 60;

// A CUDA solution's worker: `runner_path --solution-worker FD`.
WorkerCommand cuda_worker(const std::string& runner_path);
// A Triton solution's worker: `python -I -B -c <triton_worker.py> <worker_library> FD`, its kernels compiled
// into `triton_cache` (the only folder outside /tmp it may write to), its packages' bytecode read from
// `bytecode` when that is not empty (-X pycache_prefix).
WorkerCommand python_worker(const std::string& python, const std::string& worker_library,
                            const std::string& triton_cache, const std::string& bytecode);

class SolutionProcess {
 public:
  // Starts the worker. Call before the runner's first CUDA call: the child is forked.
  explicit SolutionProcess(const WorkerCommand& command);
  ~SolutionProcess();  // kills and reaps the worker
  SolutionProcess(const SolutionProcess&) = delete;
  SolutionProcess& operator=(const SolutionProcess&) = delete;

  // Creates the worker's CUDA context on `device`, with its recorders unless `recorded` is false (a process
  // for the debugger, solution_protocol.h). Throws std::runtime_error when that fails.
  void open(int device, bool recorded = true);
  // open() in two steps, the request now and its reply at await_open(), so that the worker's start (a Python
  // worker's imports, its CUDA context) goes on while the runner does other work: the baseline process's, in
  // the check part of check_then_time. Nothing else may be asked in between. A request that could not be sent
  // throws at await_open().
  void request_open(int device, bool recorded = true);
  void await_open();
  // One timed request for a kernel of the worker's own that runs for `call_us`, before the library is loaded
  // (solution_protocol.h).
  CallOutcome calibrate(double call_us);
  // Loads the library in the worker. Throws SolutionFault when that fails; returns how the worker confined
  // its file-system writes.
  Confinement load(const std::string& library, const EntrySpec& entry);
  // The workspace function's answer for these ints (its family's WorkspaceSpec). Throws SolutionFault.
  uint64_t workspace_bytes(const std::vector<int64_t>& ints);
  // One call. Throws SolutionFault when the worker is gone or answers out of protocol; a failed call is a
  // reply with `failed` set.
  CallOutcome call(const SolutionCall& call, uint32_t flags);
  // Makes the GPU switch to the worker's context (an empty kernel of its own, synchronised), so that a timed
  // request that follows does not pay for the switch. Throws SolutionFault when that fails.
  void switch_in();
  // What the recorders saw of an earlier call (its reply's call_index): launches, and counts if it was
  // kCounted. Ask once the calls are over (launch_recorder.h). Throws SolutionFault like call().
  solution::Reply recorded(uint32_t call_index);
  // From now on, a reply that has not come by `deadline` ends the worker: the exchange throws a SolutionFault
  // with timed_out set, its message saying that `limit` ran out ("the correct stage's 120 s"). The runner's
  // own limits for the parts of one process (protocol.h, check_then_time), which the parent's limit on the
  // whole process could not tell apart.
  void set_deadline(std::chrono::steady_clock::time_point deadline, std::string limit);
  // A debugger (cuda-gdb) to attach to the worker when its deadline runs out, before it is killed: where its
  // threads wait (eval/hang_report.h reads what it prints).
  void set_debugger(std::string program) { debugger_ = std::move(program); }

 private:
  // Sends a request under a fresh nonce and returns its reply; throws SolutionFault when the worker is gone,
  // answers out of turn or sends anything but one well-formed reply.
  template <typename Request>
  solution::Reply exchange(Request& request);
  // The same, on this process's clock.
  CallOutcome timed_exchange(solution::CallRequest& request);
  void send_message(const void* message, size_t size);
  solution::Reply receive_reply(uint64_t nonce);
  [[noreturn]] void lost(const std::string& what);
  [[noreturn]] void timed_out();
  struct Debugged {
    std::string output, failure;
  };
  Debugged debug_hang();
  std::string describe_end();  // "exited with status 1", "killed by signal 11 (Segmentation fault)"

  pid_t pid_ = -1;  // the worker, or the tool that started it
  bool wrapped_ = false;
  int pidfd_ = -1;  // readable once the worker has ended, even while a process it started holds the socket
  int socket_ = -1;
  std::mt19937_64 nonces_{std::random_device{}()};
  std::optional<uint64_t> pending_open_;  // the nonce of the open request sent and not yet answered
  std::exception_ptr open_not_sent_;      // why it could not be sent
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  std::string limit_;
  std::string debugger_;
};

}  // namespace ptxbench::runner
