// The kernels a call of the solution launched, as CUPTI's activity API saw them in the solution process:
// name, grid, block, cluster, dynamic shared memory and GPU duration of each. The judge binds the instruction
// proof (made on one profiled call) to the calls it checks and times by requiring the same launches in every
// one.
//
// The recorder runs in every mode, profiled or not, so that its presence tells the solution nothing; where a
// tool holds CUPTI itself (Nsight Compute) it is unavailable, and the reply says so.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runner/solution_protocol.h"

namespace ptxbench::runner {

class LaunchRecorder {
 public:
  // Enables kernel records on this process's CUDA work; never throws.
  LaunchRecorder();
  // One that records nothing, and says `why` (never touches CUPTI).
  explicit LaunchRecorder(std::string why) : problem_(std::move(why)) {}
  ~LaunchRecorder();
  LaunchRecorder(const LaunchRecorder&) = delete;
  LaunchRecorder& operator=(const LaunchRecorder&) = delete;

  bool available() const { return problem_.empty(); }
  const std::string& problem() const { return problem_; }

  // Marks the start of a call: the kernels that start on the GPU from now until end() are its launches.
  // Returns the call's index.
  uint32_t begin();
  // Marks the end of the call: its work has finished (the worker synchronised the device).
  void end();
  // The launches of call `index`, in the order they started. CUPTI's buffers are flushed once, at the first
  // request after calls, never between calls: a forced flush takes tens of microseconds and makes CUPTI ask
  // for a new buffer at the next launch, which cost 300 us more in the next call's request on the H200.
  void launches_of(uint32_t index, solution::Reply& reply);

 private:
  struct Window {
    uint64_t begin = 0, end = 0;  // CUPTI's clock
  };
  std::string problem_;
  std::vector<Window> calls_;
  bool flushed_ = true;  // no call has ended since the last flush
};

}  // namespace ptxbench::runner
