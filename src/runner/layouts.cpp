#include "runner/layouts.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

namespace ptxbench::runner {
namespace {

// SplitMix64: a portable generator (the standard library's distributions differ between implementations).
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in 0..n-1 (n > 0), with a bias below 2^-40 for the n used here.
  uint64_t below(uint64_t n) { return next() % n; }

 private:
  uint64_t state_;
};

// The page table of sequences of these lengths: the pages of each (ceil(length / page) of them) taken in turn
// from a random permutation of the pool, -1 past its last page.
std::vector<int32_t> page_table(const std::vector<int32_t>& lens, int page, int max_pages, int num_pages,
                                Random& random) {
  std::vector<int32_t> pool(static_cast<size_t>(num_pages));
  for (size_t p = 0; p < pool.size(); ++p) pool[p] = static_cast<int32_t>(p);
  for (size_t p = pool.size(); p > 1; --p) std::swap(pool[p - 1], pool[random.below(p)]);
  std::vector<int32_t> table(lens.size() * static_cast<size_t>(max_pages), -1);
  size_t next = 0;
  for (size_t b = 0; b < lens.size(); ++b) {
    const int pages = (lens[b] + page - 1) / page;
    if (pages > max_pages)
      throw std::invalid_argument("paged layout: max_pages pages cannot hold a sequence");
    if (next + static_cast<size_t>(pages) > pool.size())
      throw std::invalid_argument("paged layout: the pool of " + std::to_string(num_pages) +
                                  " pages is too small for the batch");
    for (int p = 0; p < pages; ++p) table[b * static_cast<size_t>(max_pages) + p] = pool[next++];
  }
  return table;
}

// The lengths of B sequences, `longest` of them L and the others S, in an order drawn from `random`.
std::vector<int32_t> two_lengths(int B, int longest, int L, int S, Random& random) {
  std::vector<int32_t> lens(static_cast<size_t>(B), S);
  std::fill(lens.begin(), lens.begin() + longest, L);
  for (size_t b = lens.size(); b > 1; --b) std::swap(lens[b - 1], lens[random.below(b)]);
  return lens;
}

// One in `share` of the blocks of kSampleRows rows that cut `length` rows, at least one: their distinct
// starts, in increasing order (a partial Fisher-Yates shuffle of the blocks).
std::vector<int> block_starts(int length, int share, Random& random) {
  const int blocks = (length + kSampleRows - 1) / kSampleRows;
  const int count = (blocks + share - 1) / share;
  std::vector<int> order(static_cast<size_t>(blocks));
  for (int k = 0; k < blocks; ++k) order[static_cast<size_t>(k)] = k;
  for (int k = 0; k < count; ++k)
    std::swap(order[static_cast<size_t>(k)],
              order[static_cast<size_t>(k) + random.below(static_cast<uint64_t>(blocks - k))]);
  std::vector<int> starts(order.begin(), order.begin() + count);
  std::sort(starts.begin(), starts.end());
  for (int& start : starts) start *= kSampleRows;
  return starts;
}

// The B + 1 offsets of sequences of these lengths packed token after token.
std::vector<int32_t> offsets(const std::vector<int32_t>& lens) {
  std::vector<int32_t> indptr(lens.size() + 1, 0);
  for (size_t b = 0; b < lens.size(); ++b) {
    if (int64_t{indptr[b]} + lens[b] > INT32_MAX)
      throw std::invalid_argument("ragged layout: over 2^31 tokens");
    indptr[b + 1] = indptr[b] + lens[b];
  }
  return indptr;
}

}  // namespace

PagedLayout draw_paged_layout(int B, int L, int64_t T, int page, int max_pages, int num_pages, uint64_t key) {
  if (B <= 0 || L <= 0 || page <= 0 || T < int64_t{L} + B - 1 || T > int64_t{B} * L)
    throw std::invalid_argument(
        "paged layout: no B lengths in 1..L with one of them L sum to T (B=" + std::to_string(B) +
        " L=" + std::to_string(L) + " T=" + std::to_string(T) + ")");
  if (int64_t{max_pages} * page < L)
    throw std::invalid_argument("paged layout: max_pages pages cannot hold L tokens");
  Random random(key);
  PagedLayout layout;
  std::vector<int32_t>& lens = layout.seq_lens;
  lens.assign(static_cast<size_t>(B), 1);
  const auto longest = static_cast<size_t>(random.below(static_cast<uint64_t>(B)));
  lens[longest] = L;
  // The tokens beyond one per sequence: shared out by random weights, each length capped at L, and what the
  // caps and the rounding leave given out in turn from a random sequence on.
  int64_t left = T - L - (B - 1);
  std::vector<uint64_t> weights(static_cast<size_t>(B), 0);
  uint64_t total_weight = 0;
  for (size_t b = 0; b < lens.size(); ++b)
    if (b != longest) total_weight += weights[b] = 1 + random.below(1024);
  const int64_t to_share = left;
  for (size_t b = 0; b < lens.size() && total_weight > 0; ++b) {
    const int64_t share =
        std::min<int64_t>(to_share * static_cast<int64_t>(weights[b]) / static_cast<int64_t>(total_weight),
                          int64_t{L} - lens[b]);
    lens[b] += static_cast<int32_t>(share);
    left -= share;
  }
  for (size_t b = random.below(static_cast<uint64_t>(B)); left > 0; b = (b + 1) % lens.size()) {
    const int64_t add = std::min<int64_t>(left, int64_t{L} - lens[b]);
    lens[b] += static_cast<int32_t>(add);
    left -= add;
  }

  layout.page_table = page_table(lens, page, max_pages, num_pages, random);
  return layout;
}

std::vector<int32_t> draw_ragged_indptr(int B, int longest, int L, int S, uint64_t key) {
  if (B <= 0 || longest < 1 || longest > B || S < 1 || S > L)
    throw std::invalid_argument("ragged layout: needs 1 <= longest <= B and 1 <= S <= L");
  Random random(key);
  return offsets(two_lengths(B, longest, L, S, random));
}

PagedPrefillLayout draw_paged_prefill_layout(int B, int longest, int L, int S, int P, int page, int max_pages,
                                             int num_pages, uint64_t key) {
  if (B <= 0 || longest < 1 || longest > B || S < 1 || S > L || P < 0 || page <= 0)
    throw std::invalid_argument("paged prefill layout: needs 1 <= longest <= B, 1 <= S <= L and P >= 0");
  if (int64_t{L} + P > INT32_MAX) throw std::invalid_argument("paged prefill layout: over 2^31 tokens");
  Random random(key);
  const std::vector<int32_t> new_tokens = two_lengths(B, longest, L, S, random);
  PagedPrefillLayout layout;
  layout.qo_indptr = offsets(new_tokens);
  for (int32_t n : new_tokens) layout.kv_lens.push_back(n + P);
  layout.page_table = page_table(layout.kv_lens, page, max_pages, num_pages, random);
  return layout;
}

AttentionSample draw_attention_sample(int B, int group, int Sq, int Sk, bool with_keys, SampleDraw draw) {
  if (B < 1 || group < 1 || Sq < 1 || Sk < 1 || draw.share < 1)
    throw std::invalid_argument("attention sample: a dimension or the share below 1");
  Random random(draw.key);
  AttentionSample sample;
  for (int b = 0; b < B; ++b)
    for (int r = 0; r < group; ++r)
      for (const int i0 : block_starts(Sq, draw.share, random)) sample.query.push_back({b, r, i0});
  if (with_keys)
    for (int b = 0; b < B; ++b)
      for (const int j0 : block_starts(Sk, draw.share, random)) sample.keys.push_back({b, j0});
  return sample;
}

}  // namespace ptxbench::runner
