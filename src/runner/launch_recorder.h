// The kernels a call of the solution launched, as CUPTI's activity API saw them in the solution process:
// name, grid, block, cluster, dynamic shared memory and GPU duration of each. The judge binds the instruction
// proof (made on one profiled call) to the calls it checks and times by requiring the same launches in every
// one.
//
// The recorder runs in every mode, profiled or not, so that its presence tells the solution nothing; where a
// tool holds CUPTI itself (Nsight Compute, compute-sanitizer) it may be unavailable, and the reply says so.
#pragma once

#include <cstdint>
#include <string>

#include "runner/solution_protocol.h"

namespace ptxbench::runner {

class LaunchRecorder {
 public:
  // Enables kernel records on this process's CUDA work; never throws.
  LaunchRecorder();
  ~LaunchRecorder();
  LaunchRecorder(const LaunchRecorder&) = delete;
  LaunchRecorder& operator=(const LaunchRecorder&) = delete;

  bool available() const { return problem_.empty(); }
  const std::string& problem() const { return problem_; }

  // Marks the start of a call: only kernels that start on the GPU after this count.
  void begin();
  // Flushes CUPTI's buffers (the call's work has finished: the worker synchronised the device) and writes the
  // launches since begin() into `reply`, in the order they started.
  void end(solution::Reply& reply);

 private:
  std::string problem_;
  uint64_t since_ = 0;
};

}  // namespace ptxbench::runner
