// Where the runner puts a buffer the solution sees (src/runner/placement.h): every call finds its arguments
// somewhere the previous call did not have them, aligned as the ABI promises, inside the allocation with its
// guard after.
#include <gtest/gtest.h>

#include <random>

#include "runner/placement.h"

namespace ptxbench::runner::placement {
namespace {

TEST(Placement, ConsecutiveCallsNeverOverlapAndStayAlignedWithinTheAllocation) {
  std::mt19937_64 random(7);
  // A GEMM's C at M = 1999 (odd), an LSE of a few rows, a 470 MB output, an empty workspace.
  for (const size_t bytes :
       {size_t{1999} * 4096 * 2, size_t{4} * 1000, size_t{8192} * 28672 * 2, size_t{0}}) {
    const size_t allocated = allocation_bytes(2 * place_bytes(bytes));
    size_t previous = 0;
    for (int call = 0; call < 1000; ++call) {
      const int place = (call + 1) % 2;  // as DeviceBuffer::move: the other place each time
      const size_t at = offset(bytes, place, random());
      EXPECT_EQ(at % kAlignment, 0u) << bytes;
      EXPECT_GE(allocated - (at + bytes), kTailBytes) << bytes;  // the guard after the buffer
      if (call > 0) {
        // The two calls' byte ranges are disjoint: no pointer of the one lies in the other.
        EXPECT_TRUE(at >= previous + bytes || previous >= at + bytes) << bytes << " call " << call;
        EXPECT_NE(at, previous);
      }
      previous = at;
    }
  }
}

TEST(Placement, EveryOffsetOfAPlaceCanBeChosen) {
  const size_t bytes = 4096;
  for (uint64_t r = 0; r < kOffsets; ++r) EXPECT_EQ(offset(bytes, 0, r), r * kAlignment);
  EXPECT_EQ(offset(bytes, 1, 0), place_bytes(bytes));
  EXPECT_EQ(offset(bytes, 0, kOffsets), 0u);  // the random value is taken modulo the offsets
}

TEST(Placement, AllocationsAreWholePagesAndATail) {
  EXPECT_EQ(allocation_bytes(1), kPage + kTailBytes);
  EXPECT_EQ(allocation_bytes(kPage), kPage + kTailBytes);
  EXPECT_EQ(allocation_bytes(kPage + 1), 2 * kPage + kTailBytes);
}

}  // namespace
}  // namespace ptxbench::runner::placement
