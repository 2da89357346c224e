// What a call of the solution could leave behind in its process's CUDA context for the calls after it: the
// device limits, the cache configuration, and the attributes of the stream it was given (abi.h: "nor may a
// call leave a change behind it"). A persisting-L2 limit and access-policy window would let the solution's
// lines survive the judge's L2 flush; a grown stack, heap or FIFO, or a changed stream, would change what the
// next caller's kernels run under. The solution process reads this state when its context is made and around
// every call (solution_worker.cpp); a difference fails the load or the call (solution::Phase::state).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include <cuda_runtime.h>

namespace ptxbench::runner {

struct StateField {
  const char* name = "";  // "the persisting L2 limit"
  uint64_t value = 0;
  // The driver itself raises the stack size limit for a kernel that needs more, and does not lower it again
  // (CUDA Programming Guide, cudaLimitStackSize): a rise is no change of the solution's making.
  bool driver_raises = false;
};

// The context's limits and cache configuration.
using DeviceState = std::array<StateField, 5>;
DeviceState read_device_state();

// The stream's access-policy window (its base, size and hit property), priority, synchronisation policy and
// flags.
using StreamState = std::array<StateField, 6>;
StreamState read_stream_state(cudaStream_t stream);

// The fields that differ, in words ("the persisting L2 limit from 0 to 16777216"), or "" when none does (a
// field the driver raises may rise).
template <size_t N>
std::string changes(const std::array<StateField, N>& before, const std::array<StateField, N>& after) {
  std::string text;
  for (size_t i = 0; i < N; ++i)
    if (before[i].value != after[i].value && !(after[i].driver_raises && after[i].value > before[i].value))
      text += (text.empty() ? "" : ", ") + std::string(before[i].name) + " from " +
              std::to_string(before[i].value) + " to " + std::to_string(after[i].value);
  return text;
}

}  // namespace ptxbench::runner
