// The layout of a paged KV cache for one call of the paged decode family (include/ptxbench/abi.h): the
// batch's sequence lengths and the pages each sequence's tokens lie in, drawn afresh from each call's key, so
// that a solution cannot key anything on the layout and no two calls share it. Plain C++: the CPU tests check
// it.
#pragma once

#include <cstdint>
#include <vector>

namespace ptxbench::runner {

struct PagedLayout {
  std::vector<int32_t> seq_lens;    // [B]
  std::vector<int32_t> page_table;  // [B, max_pages]; -1 past each sequence's last page
};

// B lengths, each in 1..L, one of them L, summing to T, spread at random (ragged); the pages of each sequence
// (ceil(length / page) of them) taken in turn from a random permutation of the pool's num_pages, so that a
// sequence's pages are scattered and out of order and the pages left over belong to no sequence. The same
// arguments and key give the same layout on every host. Throws std::invalid_argument when no such layout
// exists (T outside L + B - 1 .. B * L, max_pages below ceil(L / page), a pool too small).
PagedLayout draw_paged_layout(int B, int L, int64_t T, int page, int max_pages, int num_pages, uint64_t key);

}  // namespace ptxbench::runner
