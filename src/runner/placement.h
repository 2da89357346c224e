// Where a buffer the solution sees lies within its allocation (device_buffer.h, DeviceBuffer::shared): two
// disjoint places of the buffer's size, each with kOffsets starting offsets kAlignment apart, then at least
// kTailBytes to the end. Before every checked call (session.cpp's Placement) the buffer moves to the other
// place, at a random offset there, so that no such call finds its arguments where the previous call had them.
// Plain arithmetic, tested on the CPU
// (tests/unit/test_placement.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace ptxbench::runner::placement {

inline constexpr size_t kAlignment = 256;         // what include/ptxbench/abi.h promises of every pointer
inline constexpr size_t kOffsets = 256;           // starting offsets a place offers, kAlignment apart
inline constexpr size_t kPage = size_t{2} << 20;  // CUDA IPC maps whole allocations: whole pages of their own
inline constexpr size_t kTailBytes = size_t{2} << 20;  // at least this much guard after the second place

// One place: the buffer's bytes rounded up to kAlignment, and the offsets it may start at.
constexpr size_t place_bytes(size_t bytes) {
  return (bytes + kAlignment - 1) / kAlignment * kAlignment + kOffsets * kAlignment;
}

// An allocation of `bytes` in whole pages, followed by the tail.
constexpr size_t allocation_bytes(size_t bytes) {
  return (bytes + kPage - 1) / kPage * kPage + kTailBytes;
}

// Where a buffer of `bytes` starts in place `place` (0 or 1), at the offset `random` picks.
constexpr size_t offset(size_t bytes, int place, uint64_t random) {
  return static_cast<size_t>(place) * place_bytes(bytes) +
         static_cast<size_t>(random % kOffsets) * kAlignment;
}

}  // namespace ptxbench::runner::placement
