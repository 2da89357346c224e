// Owning handles for device memory, streams and events.
#pragma once

#include <cstddef>
#include <optional>
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

  // A buffer the solution process will map. CUDA IPC maps a whole allocation, so it gets whole 2 MiB pages
  // of its own (no small buffer of the runner's, a reference or a pristine copy, can share them), and at
  // least kTailBytes past its end: a tail the runner fills with a pattern and checks after each call, which
  // catches a write past the end whatever tool runs, or none.
  static constexpr size_t kTailBytes = size_t{2} << 20;
  static DeviceBuffer shared(size_t bytes) {
    constexpr size_t kPage = size_t{2} << 20;
    DeviceBuffer buffer;
    buffer.bytes_ = bytes;
    buffer.allocated_ = (bytes + kPage - 1) / kPage * kPage + kTailBytes;
    PTXBENCH_CUDA(cudaMalloc(&buffer.ptr_, buffer.allocated_));
    return buffer;
  }
  // The tail of a shared() buffer (empty for others).
  void* tail() const { return static_cast<char*>(ptr_) + bytes_; }
  size_t tail_bytes() const { return allocated_ > bytes_ ? allocated_ - bytes_ : 0; }
  ~DeviceBuffer() {
    // Not checked: a destructor cannot throw, and after a kernel fault cudaFree fails anyway.
    if (ptr_ != nullptr) (void)cudaFree(ptr_);
  }
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)),
        bytes_(std::exchange(other.bytes_, 0)),
        allocated_(std::exchange(other.allocated_, 0)),
        ipc_(std::exchange(other.ipc_, std::nullopt)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(bytes_, other.bytes_);
    std::swap(allocated_, other.allocated_);
    std::swap(ipc_, other.ipc_);
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

  // The allocation's IPC handle, made once (the solution process maps each handle once).
  const cudaIpcMemHandle_t& ipc_handle() const {
    if (!ipc_) {
      cudaIpcMemHandle_t handle{};
      PTXBENCH_CUDA(cudaIpcGetMemHandle(&handle, ptr_));
      ipc_ = handle;
    }
    return *ipc_;
  }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
  size_t allocated_ = 0;  // shared() buffers: bytes_ rounded up, plus the tail
  mutable std::optional<cudaIpcMemHandle_t> ipc_;
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
