// Prelude (last) of the entries that sense the profiler by launch latency.
#include <chrono>

// ---- Sensing by launch latency. Nsight Compute's kernel replay profiles every launch in the profiled range
// before the launch returns (save and restore of memory, several passes, instrumented SASS): milliseconds,
// even for an empty kernel. Unprofiled, an empty kernel is launched and done within tens of microseconds.
namespace sense {
constexpr double kProfiledSeconds = 1e-3;

__global__ void probe() {}

// Host seconds from the launch of an empty kernel until `stream` is idle (polled, not synchronised); < 0 when
// the launch or the query failed.
double probe_seconds(cudaStream_t stream) {
  const auto start = std::chrono::steady_clock::now();
  probe<<<1, 32, 0, stream>>>();
  if (cudaGetLastError() != cudaSuccess) return -1;
  cudaError_t status;
  while ((status = cudaStreamQuery(stream)) == cudaErrorNotReady) {
  }
  if (status != cudaSuccess) return -1;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Measured on every call: one untimed launch (the module's first load), then the best of three. Any failure
// means "not profiled" (the SIMT path).
bool launches_are_slow(cudaStream_t stream) {
  if (probe_seconds(stream) < 0) return false;
  double best = 1e9;
  for (int i = 0; i < 3; ++i) {
    const double seconds = probe_seconds(stream);
    if (seconds < 0) return false;
    best = seconds < best ? seconds : best;
  }
  return best > kProfiledSeconds;
}
}  // namespace sense
