// Counts the warp-level instructions the tensor pipes executed between two points of the host code, from the
// GPU's hardware counters through CUPTI's range profiler. It patches no code and replays nothing: the two
// metrics fit one pass, so the work inside a range runs once, as it would without the counter.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "arch/profile.h"

namespace ptxbench::runner {

// What the tensor pipes executed in one range, in warp-level instructions, by the two counters of the GPU's
// architecture profile (arch/*.json). `mma` counts the architecture's own MMA, one per warp that issues it:
// on Hopper sm__inst_executed_pipe_tensor_op_gmma.sum, where one m64 wgmma of a warpgroup counts 4, as the
// per-opcode HGMMA count does. `tensor` counts every MMA of the tensor pipe, those included: on Hopper
// sm__inst_executed_pipe_tensor_op_hmma.sum, where one mma.sync of a warp counts 1 (and 0 in `mma`).
struct TensorCounts {
  uint64_t mma = 0;
  uint64_t tensor = 0;
};

// The profile's two metrics over the work of the calling thread's current CUDA context
// between begin() and end(): a user range with user replay, one range per begin()/end() pair. Nothing throws,
// nothing is printed; what failed is in problem(), named after the CUPTI or driver call and its error text.
// Set-up fails where another tool already profiles the process (under ncu, cuptiProfilerInitialize answers
// CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED). Once set up, the profiler adds about 1 us to each launch
// and synchronisation, inside a range or not (tests/gpu/runner/tensor_counter_probe.cu measures it).
class TensorCounter {
 public:
  // Sets everything up on the current context for the profile of its GPU (nullptr: none is known);
  // available() says whether it worked.
  explicit TensorCounter(const ArchProfile* arch);
  // One that counts nothing, and says `why` (never touches CUPTI).
  explicit TensorCounter(std::string why);
  ~TensorCounter();  // closes an open range, disables the profiler, releases CUPTI's objects
  TensorCounter(const TensorCounter&) = delete;
  TensorCounter& operator=(const TensorCounter&) = delete;

  bool available() const { return profiler_ != nullptr; }
  // Why the counter is not available, or why the last begin() or end() failed; empty otherwise.
  const std::string& problem() const { return problem_; }

  bool begin();                       // starts a session and opens its one range; false on failure
  std::optional<TensorCounts> end();  // closes the range, waits for its work and reads the counts

 private:
  struct Profiler;  // CUPTI's objects and images (tensor_counter.cpp); null when not available

  std::unique_ptr<Profiler> profiler_;
  std::string problem_;
  bool in_range_ = false;
};

}  // namespace ptxbench::runner
