// The layouts of the families whose inputs index others (include/ptxbench/abi.h): a paged KV cache's lengths
// and pages, a ragged batch's sequence order, a paged prefill's both. Drawn afresh from each call's key, so
// that a solution cannot key anything on the layout and no two calls share it; the same key gives the same
// layout on every host. Plain C++: the CPU tests check it.
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

// A ragged batch of B sequences, `longest` of them of L tokens and the others of S, in an order drawn from
// `key`: the B + 1 offsets of the sequences in the packed tokens (indptr[0] = 0, indptr[B] = longest * L +
// (B - longest) * S). Throws std::invalid_argument unless 1 <= longest <= B and 1 <= S <= L.
std::vector<int32_t> draw_ragged_indptr(int B, int longest, int L, int S, uint64_t key);

struct PagedPrefillLayout {
  std::vector<int32_t> qo_indptr;   // [B + 1]: the new tokens of each sequence, packed
  std::vector<int32_t> kv_lens;     // [B]: its tokens in the cache, the new ones included
  std::vector<int32_t> page_table;  // [B, max_pages]; -1 past each sequence's last page
};

// A paged prefill's batch: B sequences, `longest` of them with L new tokens and the others with S, in an
// order drawn from `key`, each after a cached prefix of P tokens (kv_lens = new tokens + P), their pages
// drawn as draw_paged_layout's. Throws std::invalid_argument unless 1 <= longest <= B, 1 <= S <= L and P >=
// 0, or when max_pages or the pool cannot hold the batch.
PagedPrefillLayout draw_paged_prefill_layout(int B, int longest, int L, int S, int P, int page, int max_pages,
                                             int num_pages, uint64_t key);

// A sample of the rows of a dense attention reference (the forward's, the backward's): what the time stage
// checks of each timed call (Reference::compute_sample), drawn after the call from a key the solution never
// sees. Blocks of kSampleRows query rows of one head position r within the KV groups, for every KV group (the
// forward's O and LSE, the backward's dQ), and blocks of kSampleRows key rows of every KV head (the
// backward's dK and dV): about one block in `share` of each batch's (and head position's), at least one.
// A call whose wrong rows make up a share f of the blocks (each block of every KV group) escapes one check
// with a probability of (1 - f)^n for n blocks drawn: 16 at kSampleShare on most dense main shapes (B x S =
// 16384 rows, 256 blocks of them), so 0.85 at f = 1% and 0.36 at f = 1/16. The time stage draws
// kSampleShare's share once it times kSettledAfter calls, and more blocks a call when it times fewer
// (timing_rules.h, time_stage_calls): at least 20 n blocks over the stage, so a wrong share f escapes them
// all with a probability of (1 - f)^(20 n) at most, 0.04 at f = 1%.
inline constexpr int kSampleRows = 64;
inline constexpr int kSampleShare = 16;

// One sample's draw: its key, and the share of the blocks it draws (about one in `share`).
struct SampleDraw {
  uint64_t key = 0;
  int share = kSampleShare;
};

struct AttentionSample {
  struct QueryRows {
    int b, r, i0;  // rows i0 .. i0 + kSampleRows - 1 (fewer at the end) of heads g G + r, every g, of batch b
  };
  struct KeyRows {
    int b, j0;  // key rows j0 .. j0 + kSampleRows - 1 (fewer at the end) of every KV head of batch b
  };
  std::vector<QueryRows> query;
  std::vector<KeyRows> keys;  // empty unless drawn `with_keys` (the backward)
};

// Distinct blocks, in increasing order, for B batches of `group` query heads per KV head, Sq query rows and
// Sk key rows. The same arguments and draw give the same sample on every host. Throws std::invalid_argument
// for a dimension or a share below 1.
AttentionSample draw_attention_sample(int B, int group, int Sq, int Sk, bool with_keys, SampleDraw draw);

}  // namespace ptxbench::runner
