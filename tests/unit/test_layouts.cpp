// The layouts drawn per call (runner/layouts.h): what the ABI promises of them holds for every key, and they
// are ragged, scattered and fresh per key; and the time stage's samples of the attention reference's rows.
#include <algorithm>
#include <numeric>
#include <set>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "runner/layouts.h"

namespace ptxbench::runner {
namespace {

struct LayoutCase {
  int B, L;
  int64_t T;
  int page;
};

int pages_for(int tokens, int page) {
  return (tokens + page - 1) / page;
}

TEST(PagedLayout, KeepsTheAbiPromisesForEveryKey) {
  for (const LayoutCase& c :
       {LayoutCase{5, 1000, 2100, 64}, LayoutCase{3, 77, 100, 1}, LayoutCase{1, 50, 50, 16},
        LayoutCase{4, 10, 40, 3}, LayoutCase{64, 8192, 262144, 64}}) {
    const int max_pages = pages_for(c.L, c.page);
    const int num_pages = static_cast<int>((c.T + int64_t{c.B} * (c.page - 1)) / c.page + c.B);
    for (uint64_t key = 0; key < 20; ++key) {
      SCOPED_TRACE(testing::Message() << "B=" << c.B << " L=" << c.L << " T=" << c.T << " key " << key);
      const PagedLayout layout = draw_paged_layout(c.B, c.L, c.T, c.page, max_pages, num_pages, key);
      ASSERT_EQ(layout.seq_lens.size(), static_cast<size_t>(c.B));
      ASSERT_EQ(layout.page_table.size(), static_cast<size_t>(c.B) * max_pages);
      EXPECT_EQ(std::accumulate(layout.seq_lens.begin(), layout.seq_lens.end(), int64_t{0}), c.T);
      EXPECT_EQ(*std::max_element(layout.seq_lens.begin(), layout.seq_lens.end()), c.L);
      EXPECT_GE(*std::min_element(layout.seq_lens.begin(), layout.seq_lens.end()), 1);
      std::set<int32_t> used;
      for (int b = 0; b < c.B; ++b) {
        const int pages = pages_for(layout.seq_lens[b], c.page);
        for (int p = 0; p < max_pages; ++p) {
          const int32_t entry = layout.page_table[static_cast<size_t>(b) * max_pages + p];
          if (p >= pages) {
            EXPECT_EQ(entry, -1) << "sequence " << b << " page " << p;
            continue;
          }
          EXPECT_GE(entry, 0);
          EXPECT_LT(entry, num_pages);
          EXPECT_TRUE(used.insert(entry).second) << "page " << entry << " given twice";
        }
      }
      EXPECT_GE(num_pages - static_cast<int>(used.size()), c.B) << "fewer unused pages than sequences";
    }
  }
}

TEST(PagedLayout, IsRaggedScatteredAndFreshPerKey) {
  const int B = 16, L = 4096, page = 64;
  const int64_t T = 40000;
  const int max_pages = pages_for(L, page), num_pages = static_cast<int>((T + B * (page - 1)) / page + B);
  const PagedLayout a = draw_paged_layout(B, L, T, page, max_pages, num_pages, 1);
  const PagedLayout again = draw_paged_layout(B, L, T, page, max_pages, num_pages, 1);
  const PagedLayout b = draw_paged_layout(B, L, T, page, max_pages, num_pages, 2);
  EXPECT_EQ(a.seq_lens, again.seq_lens);
  EXPECT_EQ(a.page_table, again.page_table);
  EXPECT_NE(a.seq_lens, b.seq_lens);
  EXPECT_NE(a.page_table, b.page_table);
  EXPECT_GE(std::set<int32_t>(a.seq_lens.begin(), a.seq_lens.end()).size(), 8u) << "lengths hardly vary";
  const bool partial =
      std::any_of(a.seq_lens.begin(), a.seq_lens.end(), [](int32_t n) { return n % page != 0; });
  EXPECT_TRUE(partial) << "no sequence ends inside a page";
  // Scattered: a sequence's pages are not one ascending run.
  int ascending = 0;
  for (int p = 0; p + 1 < max_pages && a.page_table[p + 1] >= 0; ++p)
    ascending += a.page_table[p + 1] == a.page_table[p] + 1;
  EXPECT_LT(ascending, 3);
}

TEST(PagedLayout, RefusesWhatNoLayoutCanBe) {
  EXPECT_THROW(draw_paged_layout(4, 10, 41, 1, 10, 100, 0), std::invalid_argument);  // T > B*L
  EXPECT_THROW(draw_paged_layout(4, 10, 12, 1, 10, 100, 0), std::invalid_argument);  // T < L + B - 1
  EXPECT_THROW(draw_paged_layout(4, 10, 20, 4, 2, 100, 0), std::invalid_argument);   // 2 pages of 4 < 10
  EXPECT_THROW(draw_paged_layout(4, 10, 40, 1, 10, 39, 0), std::invalid_argument);   // pool too small
}

TEST(RaggedLayout, OffsetsOfTheShapesLengthsInAnOrderPerKey) {
  const int B = 12, longest = 3, L = 500, S = 7;
  std::set<std::vector<int32_t>> orders;
  for (uint64_t key = 0; key < 10; ++key) {
    const std::vector<int32_t> indptr = draw_ragged_indptr(B, longest, L, S, key);
    ASSERT_EQ(indptr.size(), static_cast<size_t>(B) + 1);
    EXPECT_EQ(indptr.front(), 0);
    EXPECT_EQ(indptr.back(), longest * L + (B - longest) * S);
    int long_ones = 0;
    for (int b = 0; b < B; ++b) {
      const int32_t n = indptr[b + 1] - indptr[b];
      EXPECT_TRUE(n == L || n == S) << n;
      long_ones += n == L;
    }
    EXPECT_EQ(long_ones, longest);
    EXPECT_EQ(draw_ragged_indptr(B, longest, L, S, key), indptr);
    orders.insert(indptr);
  }
  EXPECT_GE(orders.size(), 5u) << "the order hardly changes between keys";
  EXPECT_THROW(draw_ragged_indptr(4, 5, 10, 3, 0), std::invalid_argument);
  EXPECT_THROW(draw_ragged_indptr(4, 1, 10, 11, 0), std::invalid_argument);
  EXPECT_THROW(draw_ragged_indptr(4, 0, 10, 3, 0), std::invalid_argument);
}

// The values the descriptor derives for a shape (attention-prefill-paged): the pool and the table size.
TEST(PagedPrefillLayout, NewTokensAfterThePrefixOnScatteredPages) {
  const int B = 6, longest = 2, L = 300, S = 77, P = 130, page = 64;
  const int max_pages = (L + P + page - 1) / page;
  const int total = longest * L + (B - longest) * S;
  const int num_pages = (total + B * P + B * (page - 1)) / page + B;
  std::set<std::vector<int32_t>> orders;
  for (uint64_t key = 0; key < 10; ++key) {
    const PagedPrefillLayout layout =
        draw_paged_prefill_layout(B, longest, L, S, P, page, max_pages, num_pages, key);
    ASSERT_EQ(layout.qo_indptr.size(), static_cast<size_t>(B) + 1);
    ASSERT_EQ(layout.kv_lens.size(), static_cast<size_t>(B));
    ASSERT_EQ(layout.page_table.size(), static_cast<size_t>(B) * max_pages);
    EXPECT_EQ(layout.qo_indptr.front(), 0);
    EXPECT_EQ(layout.qo_indptr.back(), total);
    std::set<int32_t> used;
    for (int b = 0; b < B; ++b) {
      const int32_t n = layout.qo_indptr[b + 1] - layout.qo_indptr[b];
      EXPECT_TRUE(n == L || n == S) << n;
      EXPECT_EQ(layout.kv_lens[b], n + P) << "the cache holds the prefix and the new tokens";
      const int pages = (layout.kv_lens[b] + page - 1) / page;
      for (int p = 0; p < max_pages; ++p) {
        const int32_t entry = layout.page_table[b * max_pages + p];
        if (p < pages) {
          EXPECT_GE(entry, 0);
          EXPECT_LT(entry, num_pages);
          EXPECT_TRUE(used.insert(entry).second) << "page " << entry << " given twice";
        } else {
          EXPECT_EQ(entry, -1);
        }
      }
    }
    EXPECT_LE(used.size() + B, static_cast<size_t>(num_pages)) << "the pool keeps B pages unused";
    const PagedPrefillLayout again =
        draw_paged_prefill_layout(B, longest, L, S, P, page, max_pages, num_pages, key);
    EXPECT_EQ(again.page_table, layout.page_table);
    EXPECT_EQ(again.qo_indptr, layout.qo_indptr);
    orders.insert(layout.qo_indptr);
  }
  EXPECT_GE(orders.size(), 3u) << "the order hardly changes between keys";
  // No prefix: the cache holds the new tokens alone.
  const PagedPrefillLayout bare = draw_paged_prefill_layout(3, 1, 130, 1, 0, 16, 9, 20, 5);
  EXPECT_EQ(std::set<int32_t>(bare.kv_lens.begin(), bare.kv_lens.end()), (std::set<int32_t>{1, 130}));
  EXPECT_THROW(draw_paged_prefill_layout(4, 1, 10, 3, -1, 16, 4, 100, 0), std::invalid_argument);  // P < 0
  EXPECT_THROW(draw_paged_prefill_layout(4, 1, 10, 3, 20, 16, 1, 100, 0), std::invalid_argument);  // 30 > 16
  EXPECT_THROW(draw_paged_prefill_layout(4, 1, 10, 3, 20, 16, 2, 5, 0), std::invalid_argument);    // pool
}

// The time stage's sample of an attention reference's rows: one block in kSampleShare of each batch's (and
// head position's) query blocks and key blocks, at least one, distinct and in order, the last block's start
// among them (a partial block at the end is drawn like the others), and another sample for another key.
TEST(AttentionSample, OneBlockInSixteenOfEachBatchAndHeadPositionAtRandom) {
  const AttentionSample sample = draw_attention_sample(4, 2, 4096, 4096, true, {.key = 7});
  ASSERT_EQ(sample.query.size(), 4u * 2 * 4);  // 64 blocks of 64 rows: 4 each
  ASSERT_EQ(sample.keys.size(), 4u * 4);
  for (int b = 0; b < 4; ++b) {
    for (int r = 0; r < 2; ++r) {
      std::vector<int> starts;
      for (const auto& rows : sample.query)
        if (rows.b == b && rows.r == r) starts.push_back(rows.i0);
      ASSERT_EQ(starts.size(), 4u) << "b " << b << " r " << r;
      EXPECT_TRUE(std::is_sorted(starts.begin(), starts.end()));
      EXPECT_EQ(std::adjacent_find(starts.begin(), starts.end()), starts.end()) << "distinct";
      for (const int i0 : starts) {
        EXPECT_EQ(i0 % kSampleRows, 0);
        EXPECT_LT(i0, 4096);
      }
    }
  }
  EXPECT_EQ(draw_attention_sample(4, 2, 4096, 4096, false, {.key = 7}).keys.size(), 0u)
      << "no keys for the forward";
  // The same key, the same sample; other keys, others, each block's start drawn about uniformly.
  const AttentionSample again = draw_attention_sample(4, 2, 4096, 4096, true, {.key = 7});
  std::vector<int> first, first_again;
  for (const auto& rows : sample.query) first.push_back(rows.i0);
  for (const auto& rows : again.query) first_again.push_back(rows.i0);
  EXPECT_EQ(first, first_again);
  std::vector<int> hits(64, 0);
  std::set<std::vector<int>> samples;
  for (uint64_t key = 0; key < 400; ++key) {
    std::vector<int> starts;
    for (const auto& rows : draw_attention_sample(1, 1, 4096, 4096, false, {.key = key}).query) {
      starts.push_back(rows.i0);
      ++hits[static_cast<size_t>(rows.i0 / kSampleRows)];
    }
    samples.insert(starts);
  }
  EXPECT_GE(samples.size(), 390u) << "samples repeat across keys";
  // 400 draws of 4 blocks in 64: 25 a block on average; every block drawn, none more than twice as often.
  for (const int count : hits) {
    EXPECT_GT(count, 5);
    EXPECT_LT(count, 50);
  }
}

// A larger share of the blocks for a stage of fewer calls (timing_rules.h): one in `share`, at least one.
TEST(AttentionSample, TheShareSetsTheBlocksDrawn) {
  for (const int share : {1, 4, 13, 16, 64, 1000}) {
    const AttentionSample sample = draw_attention_sample(2, 1, 4096, 1000, true, {.key = 5, .share = share});
    EXPECT_EQ(sample.query.size(), 2u * ((64 + share - 1) / share)) << share;  // 64 query blocks a batch
    EXPECT_EQ(sample.keys.size(), 2u * ((16 + share - 1) / share))
        << share;  // 16 key blocks, the last partial
  }
  EXPECT_THROW(draw_attention_sample(1, 1, 64, 64, false, {.key = 0, .share = 0}), std::invalid_argument);
}

TEST(AttentionSample, SmallAndOddShapes) {
  // One block in all (one block of rows, fewer than 64): it is drawn.
  const AttentionSample one = draw_attention_sample(1, 1, 40, 17, true, {.key = 3});
  ASSERT_EQ(one.query.size(), 1u);
  EXPECT_EQ(one.query[0].i0, 0);
  ASSERT_EQ(one.keys.size(), 1u);
  EXPECT_EQ(one.keys[0].j0, 0);
  // 17 blocks (the last partial): two drawn, and the partial one among the candidates.
  bool last_drawn = false;
  for (uint64_t key = 0; key < 200; ++key) {
    const AttentionSample s = draw_attention_sample(1, 1, 16 * 64 + 5, 64, false, {.key = key});
    ASSERT_EQ(s.query.size(), 2u);
    last_drawn = last_drawn || s.query.back().i0 == 16 * 64;
  }
  EXPECT_TRUE(last_drawn);
  EXPECT_THROW(draw_attention_sample(0, 1, 64, 64, false, {.key = 0}), std::invalid_argument);
  EXPECT_THROW(draw_attention_sample(1, 1, 64, 0, true, {.key = 0}), std::invalid_argument);
}

}  // namespace
}  // namespace ptxbench::runner
