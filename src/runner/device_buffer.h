// Owning handles for device memory, streams and events.
#pragma once

#include <cstddef>
#include <optional>
#include <utility>

#include <cuda_runtime.h>

#include "runner/cuda_check.h"
#include "runner/placement.h"

namespace ptxbench::runner {

// Device memory from cudaMalloc (256-byte aligned, which cuBLASLt and vector loads want).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) {
    if (bytes > 0) PTXBENCH_CUDA(cudaMalloc(&base_, bytes));
  }

  // A buffer the solution process maps and the solution reads or writes: an input or output of the entry
  // point. CUDA IPC maps a whole allocation, so it gets whole 2 MiB pages of its own (no small buffer of the
  // runner's, a reference or a pristine copy, can share them). It holds two disjoint places for the
  // buffer's bytes and a tail after the second (placement.h); move() puts the buffer in the other place, at a
  // random offset there, so that no call finds its arguments where the previous call of its shape had them
  // (a solution that keeps pointers, descriptors or tensor maps between calls reads stale memory and leaves
  // its output unwritten). Every byte of the allocation outside the buffer is a guard the runner fills with
  // a pattern and checks after each call, which catches a write outside the buffer whatever tool runs, or
  // none.
  static DeviceBuffer shared(size_t bytes) {
    DeviceBuffer buffer = exported(2 * placement::place_bytes(bytes));
    buffer.bytes_ = bytes;
    buffer.movable_ = true;
    return buffer;
  }
  // A buffer the solution process maps and writes itself (an output's snapshot): it never moves.
  static DeviceBuffer exported(size_t bytes) {
    DeviceBuffer buffer;
    buffer.bytes_ = bytes;
    buffer.allocated_ = placement::allocation_bytes(bytes);
    PTXBENCH_CUDA(cudaMalloc(&buffer.base_, buffer.allocated_));
    return buffer;
  }
  // A shared() buffer to its other place, at the offset `random` picks there (placement.h).
  void move(uint64_t random) {
    if (!movable_) return;
    place_ = 1 - place_;
    offset_ = placement::offset(bytes_, place_, random);
  }
  // Where the buffer starts within its allocation (what the solution process adds to its mapping).
  size_t offset() const { return offset_; }
  // The allocation's bytes before and after the buffer (empty for a plain buffer).
  struct Span {
    void* start;
    size_t bytes;
  };
  Span head() const { return {base_, offset_}; }
  Span tail() const {
    return {static_cast<char*>(get()) + bytes_, allocated_ > 0 ? allocated_ - offset_ - bytes_ : 0};
  }
  ~DeviceBuffer() {
    // Not checked: a destructor cannot throw, and after a kernel fault cudaFree fails anyway.
    if (base_ != nullptr) (void)cudaFree(base_);
  }
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : base_(std::exchange(other.base_, nullptr)),
        bytes_(std::exchange(other.bytes_, 0)),
        allocated_(std::exchange(other.allocated_, 0)),
        offset_(std::exchange(other.offset_, 0)),
        place_(std::exchange(other.place_, 0)),
        movable_(std::exchange(other.movable_, false)),
        ipc_(std::exchange(other.ipc_, std::nullopt)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(base_, other.base_);
    std::swap(bytes_, other.bytes_);
    std::swap(allocated_, other.allocated_);
    std::swap(offset_, other.offset_);
    std::swap(place_, other.place_);
    std::swap(movable_, other.movable_);
    std::swap(ipc_, other.ipc_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  template <typename T>
  T* as() const {
    return static_cast<T*>(get());
  }
  void* get() const { return base_ == nullptr ? nullptr : static_cast<char*>(base_) + offset_; }
  size_t bytes() const { return bytes_; }

  // The allocation's IPC handle, made once (the solution process maps each handle once).
  const cudaIpcMemHandle_t& ipc_handle() const {
    if (!ipc_) {
      cudaIpcMemHandle_t handle{};
      PTXBENCH_CUDA(cudaIpcGetMemHandle(&handle, base_));
      ipc_ = handle;
    }
    return *ipc_;
  }

 private:
  void* base_ = nullptr;
  size_t bytes_ = 0;
  size_t allocated_ = 0;  // shared() and exported() buffers: their places rounded up to pages, plus the tail
  size_t offset_ = 0;     // where the buffer starts in its allocation
  int place_ = 0;
  bool movable_ = false;  // shared(): move() takes it to its other place
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
