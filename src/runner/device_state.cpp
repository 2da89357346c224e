#include "runner/device_state.h"

namespace ptxbench::runner {
namespace {

// A query that fails reads as a value no real state has, so that a failure after the call that did not
// happen before it still shows as a change.
constexpr uint64_t kUnreadable = ~uint64_t{0};

uint64_t limit(cudaLimit which) {
  size_t value = 0;
  return cudaDeviceGetLimit(&value, which) == cudaSuccess ? value : kUnreadable;
}

}  // namespace

DeviceState read_device_state() {
  cudaFuncCache cache = cudaFuncCachePreferNone;
  const bool cache_read = cudaDeviceGetCacheConfig(&cache) == cudaSuccess;
  return {{{"the persisting L2 limit", limit(cudaLimitPersistingL2CacheSize)},
           {"the stack size limit", limit(cudaLimitStackSize), /*driver_raises=*/true},
           {"the malloc heap size limit", limit(cudaLimitMallocHeapSize)},
           {"the printf FIFO size limit", limit(cudaLimitPrintfFifoSize)},
           {"the cache configuration", cache_read ? static_cast<uint64_t>(cache) : kUnreadable}}};
}

StreamState read_stream_state(cudaStream_t stream) {
  cudaStreamAttrValue window{}, policy{};
  const bool window_read =
      cudaStreamGetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &window) == cudaSuccess;
  const bool policy_read =
      cudaStreamGetAttribute(stream, cudaStreamAttributeSynchronizationPolicy, &policy) == cudaSuccess;
  int priority = 0;
  const bool priority_read = cudaStreamGetPriority(stream, &priority) == cudaSuccess;
  unsigned int flags = 0;
  const bool flags_read = cudaStreamGetFlags(stream, &flags) == cudaSuccess;
  const cudaAccessPolicyWindow& w = window.accessPolicyWindow;
  return {{{"the stream's access-policy window base",
            window_read ? reinterpret_cast<uintptr_t>(w.base_ptr) : kUnreadable},
           {"the stream's access-policy window size", window_read ? w.num_bytes : kUnreadable},
           {"the stream's access-policy hit property",
            window_read ? static_cast<uint64_t>(w.hitProp) : kUnreadable},
           {"the stream's priority",
            priority_read ? static_cast<uint64_t>(static_cast<int64_t>(priority)) : kUnreadable},
           {"the stream's synchronisation policy",
            policy_read ? static_cast<uint64_t>(policy.syncPolicy) : kUnreadable},
           {"the stream's flags", flags_read ? flags : kUnreadable}}};
}

}  // namespace ptxbench::runner
