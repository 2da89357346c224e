// The runner's side of the solution process (solution_protocol.h): starts the worker, shares buffers with it
// and asks it to call the solution. Everything the worker answers is checked for shape here; what it claims
// about its call (return code, errors, times) is reported as its claim.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runner/device_buffer.h"
#include "runner/solution_protocol.h"

namespace ptxbench::runner {

// One call of the entry point as a family describes it: the buffers passed as pointer arguments, in the
// entry point's order (nullptr for a null pointer), then its int arguments and the softmax scale.
struct SolutionCall {
  std::vector<const DeviceBuffer*> pointers;
  std::vector<int64_t> ints;
  float scale = 0;
  // Each output's snapshot buffer, by the output's index in `pointers` (solution_protocol.h, kSnapshotPoint).
  std::vector<std::pair<uint32_t, const DeviceBuffer*>> snapshots;
};

// What came back from one call, with the runner's own clock around the request.
struct CallOutcome {
  solution::Reply reply;
  double judge_us = 0;  // request sent to reply received, on the runner's clock: bounds the reply's times
};

class SolutionProcess {
 public:
  // Starts `runner_path --solution-worker FD`. Call before the runner's first CUDA call: the child is forked.
  explicit SolutionProcess(const std::string& runner_path);
  ~SolutionProcess();  // kills and reaps the worker
  SolutionProcess(const SolutionProcess&) = delete;
  SolutionProcess& operator=(const SolutionProcess&) = delete;

  // Creates the worker's CUDA context on `device`. Throws std::runtime_error when that fails.
  void open(int device);
  // One timed request for the worker's empty kernel, before the library is loaded (solution_protocol.h).
  CallOutcome calibrate();
  // Loads the library in the worker. Throws SolutionFault when that fails; returns whether the worker
  // confined its file-system writes.
  bool load(const std::string& library, solution::Entry entry);
  // The backward's workspace size for these ints (B, Hq, Hkv, Sq, Sk, D, causal). Throws SolutionFault.
  uint64_t workspace_bytes(const std::vector<int64_t>& ints);
  // One call. Throws SolutionFault when the worker is gone or answers out of protocol; a failed call is a
  // reply with `failed` set.
  CallOutcome call(const SolutionCall& call, uint32_t flags);

 private:
  void send_message(const void* message, size_t size);
  // Sends a request and waits for its reply, on this process's clock.
  CallOutcome timed_exchange(const solution::CallRequest& request);
  solution::Reply receive_reply();
  [[noreturn]] void lost(const std::string& what);
  std::string describe_end();  // "exited with status 1", "killed by signal 11 (Segmentation fault)"

  pid_t pid_ = -1;
  int socket_ = -1;
};

}  // namespace ptxbench::runner
