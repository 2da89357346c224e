// Owning handles for device memory, streams and events.
#pragma once

#include <cstddef>
#include <utility>

#include <cuda_runtime.h>

#include "runner/cuda_check.h"

namespace ptxbench::runner {

// Device memory from cudaMalloc (256-byte aligned, which cuBLASLt and vector loads want).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) {
    if (bytes > 0) PTXBENCH_CUDA(cudaMalloc(&ptr_, bytes));
  }
  ~DeviceBuffer() {
    // Not checked: a destructor cannot throw, and after a kernel fault cudaFree fails anyway.
    if (ptr_ != nullptr) (void)cudaFree(ptr_);
  }
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(bytes_, other.bytes_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  void* get() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// A stream that does not synchronise with the legacy default stream, so that work a solution puts on stream 0
// is not silently ordered before the runner's next step.
class Stream {
 public:
  Stream() { PTXBENCH_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~Stream() {
    if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

class Event {
 public:
  Event() { PTXBENCH_CUDA(cudaEventCreate(&event_)); }
  ~Event() {
    if (event_ != nullptr) (void)cudaEventDestroy(event_);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace ptxbench::runner
