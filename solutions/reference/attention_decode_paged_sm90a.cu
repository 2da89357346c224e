// Reference solution for the Hopper paged-decode tasks: one query token per sequence over a paged KV cache,
// grouped-query heads, bf16 in and out, fp32 softmax (include/ptxbench/abi.h). Written with the kit's shared
// part (kits/common/ptx); the rules it relies on are in kits/common/contracts.md ("tensor maps", "swizzle",
// "bulk copies", "expect_tx accounting", "mbarrier phases", "mma.sync", "ldmatrix and stmatrix", "proxy
// fences", "setmaxnreg").
//
// A decode reads its KV cache once and does 2 FLOPs per byte of it: the time is the cache's bytes over the
// HBM bandwidth, and the design is about keeping HBM busy.
//   - Split-KV (flash decoding): one CTA per (chunk of kChunk tokens, KV head, sequence), so that a batch of
//     ragged lengths spreads evenly over the SMs; the CTAs past a sequence's length exit at once. A second,
//     small kernel merges a row's chunks (their maxima, sums and unnormalised outputs, in the workspace). Two
//     CTAs fit an SM, so one's start and end overlap the other's copies.
//   - Each CTA serves the G = Hq / Hkv query heads of its KV head, so each K and V row is read once for all
//     of them.
//   - Four producer warps (a warpgroup, its registers lowered by setmaxnreg and the consumers' raised) gather
//     the chunk's token rows through the page table, tile by tile (kTile tokens), into a ring of kStages
//     stages that complete on mbarriers.
//       - Pages of 64 tokens (kTile): a tile is one page, loaded by tensor-map copies (cp.async.bulk.tensor),
//         one per page, KV head and 64 columns of D for K and for V, into 128B-swizzled boxes: 4 copies a
//         tile at D = 128. The page's rows past the sequence's end come with it.
//       - Any other page size: one bulk copy (cp.async.bulk, no tensor map) per K row and per V row, a table
//         lookup per token, each producer warp kTile / kProducers rows of the tile, one a lane. The rows land
//         at a padded pitch (D * 2 + 16 bytes), so the 8 rows an ldmatrix reads start in different banks,
//         free of conflicts without a swizzle.
//     On the H100, as shares of a plain read of the same bytes: with one warp's per-row copies for every page
//     size, 0.49-0.55 (bench/harness/h200-2026-12-06d/: one warp's copies, issued one after another, left the
//     SM's copies idle); with the tensor-map copies, 0.91-0.93 for pages of 64; for pages of one token, 0.73-
//     0.75 from two producer warps, 0.87-0.89 from four, 0.88-0.90 from four with the registers moved
//     (bench/harness/h200-2026-12-06e/, call T, one run each).
//   - Four consumer warps, each a quarter of every tile's tokens, on the tensor cores with mma.sync m16n8k16:
//     the G heads are the 16 rows of A (zeros below G: G < 64 is too narrow for wgmma, and the MMA's cost is
//     the copies' shadow anyway). Scores S = Q K^T with K's fragments from ldmatrix; an online softmax in
//     base 2 per warp (its own running maxima and sums); O += P V with P the scores' fragments packed to bf16
//     and V's fragments from ldmatrix.trans. The four warps' states merge once, at the chunk's end.
//   - A tile's tokens past the chunk's end have P = 0, but their V rows are read by the MMA. With per-row
//     copies, the ring's V rows are zeroed once at the start, so each holds zeros or an earlier tile's row;
//     with a page's copy, the consumers zero the rows past the end after it lands: never a NaN that 0 * NaN
//     would carry into O. Scores past the end are masked by a select, never a product.
//
// Shapes: D = 64 or 128 and G in {1, 2, 4, 8, 16} (the tasks have D = 128, G = 4 and 8); others return 1.
#include <math.h>

#include <hopper.cuh>

#include "ptxbench/abi.h"

using namespace ptxkit::hopper;

namespace {

constexpr int kTile = 64;        // tokens per stage of the ring
constexpr int kChunk = 1024;     // tokens per CTA
constexpr int kStages = 3;       // the ring's depth
constexpr int kConsumers = 128;  // four warps
constexpr int kWarps = kConsumers / 32;
constexpr int kWarpTokens = kTile / kWarps;  // each consumer warp's tokens of a tile
constexpr int kProducers = 4;                // warps: one warpgroup
constexpr int kThreads = kConsumers + 32 * kProducers;
// Registers per thread (setmaxnreg, per warpgroup): the producers need few, the consumers' fragments many.
// Two CTAs an SM share its 64K registers.
constexpr int kProducerRegisters = 40, kConsumerRegisters = 216;
static_assert(kConsumers % 128 == 0 && (32 * kProducers) % 128 == 0, "setmaxnreg sets a whole warpgroup's");
static_assert(2 * (kConsumers * kConsumerRegisters + 32 * kProducers * kProducerRegisters) <= 65536,
              "two CTAs' registers do not fit an SM");
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;
constexpr uint32_t kConsumerBarrier = 1;  // named barrier of the consumer warps
static_assert(kTile == 64 && kChunk % kTile == 0,
              "pages of 64 are one tile each, and chunks start on a page");
static_assert(kWarpTokens % 16 == 0, "a warp's tokens are whole k-steps of P V");
constexpr int kProducerRows = kTile / kProducers;  // each producer warp's rows of a tile, one a lane
static_assert(kTile % kProducers == 0 && kProducerRows <= 32, "a producer's rows of a tile are one a lane");

template <int D, int G, bool kPages64 = false>
struct Layout {
  // Rows at a padded pitch for the per-row copies; for the tensor-map copies, D / 64 boxes of 64 rows x 128
  // bytes each, 128B-swizzled (kits/common/contracts.md "swizzle"), 1024-byte aligned.
  static constexpr int kPitch = kPages64 ? D * 2 : D * 2 + 16;  // bytes per token row in shared memory
  static constexpr int kKSteps = D / 16;                        // k-steps of S = Q K^T
  static constexpr int kDTiles = D / 8;                         // n-tiles of O
  static constexpr int kHigh = G > 8;                           // rows 8-15 of the MMA's A hold heads too
  // Shared memory: the ring (K then V per stage), barriers. The chunk's end reuses the ring, from stage 0 on,
  // for the warps' states: [kWarps][G] maxima and sums, [kWarps][G][D] outputs.
  static constexpr int kStageBytes = 2 * kTile * kPitch;
  static constexpr int kBarrierOffset = kStages * kStageBytes;
  static constexpr int kBytes = kBarrierOffset + 2 * kStages * 8 + (kPages64 ? 1024 : 0);  // + the alignment
  static_assert(kWarps * G * (D + 2) * 4 <= kStages * kStageBytes,
                "the warps' states do not fit in the ring");
  static_assert(2 * (kBytes + 1024) <= 228 * 1024, "two CTAs do not fit an SM");
};

// The shared address of 16-byte chunk `chunk` (D / 8 of them) of token row `row` of a stage's K or V: at the
// padded pitch, or in the 128B-swizzled boxes of 64 columns (chunk c of row r at c XOR r % 8 within its box).
template <int D, bool kPages64>
__device__ __forceinline__ const uint8_t* row_chunk(const uint8_t* rows, int row, int chunk) {
  if constexpr (kPages64)
    return rows + (chunk / 8) * (64 * 128) + row * 128 + (((chunk % 8) ^ (row % 8)) * 16);
  else
    return rows + row * (D * 2 + 16) + chunk * 16;
}

template <int D, int G, bool kPages64>
__global__ void __launch_bounds__(kThreads, 2)
    split_kernel(const __nv_bfloat16* __restrict__ Q, const __nv_bfloat16* __restrict__ K_cache,
                 const __nv_bfloat16* __restrict__ V_cache, const int* __restrict__ page_table,
                 const int* __restrict__ seq_lens, float* __restrict__ partial_o,
                 float* __restrict__ partial_ml, int Hq, int Hkv, int page_size, int max_pages, int splits,
                 float scale, const __grid_constant__ CUtensorMap k_map,
                 const __grid_constant__ CUtensorMap v_map) {
  using L = Layout<D, G, kPages64>;
  extern __shared__ __align__(128) uint8_t smem_raw[];
  uint8_t* smem =
      kPages64 ? reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t{1023})
               : smem_raw;
  const int split = blockIdx.x, g = blockIdx.y, b = blockIdx.z;
  const int n = seq_lens[b];
  const int begin = split * kChunk;
  if (begin >= n) return;  // the whole CTA, before any barrier exists
  const int end = min(n, begin + kChunk);
  const int tiles = (end - begin + kTile - 1) / kTile;
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + L::kBarrierOffset);
  uint64_t* empty = full + kStages;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  // The ring's V rows zeroed, by the generic proxy before the async proxy (the bulk copies) writes them; not
  // for pages of 64, whose copies write every row of every tile (the consumers zero those past the end).
  if constexpr (!kPages64) {
    for (int k = threadIdx.x; k < kStages * kTile * L::kPitch / 16; k += kThreads) {
      const int stage = k / (kTile * L::kPitch / 16), within = k % (kTile * L::kPitch / 16);
      reinterpret_cast<uint4*>(smem + stage * L::kStageBytes + kTile * L::kPitch)[within] =
          make_uint4(0, 0, 0, 0);
    }
  }
  fence_proxy_async_shared();
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(&full[s], kPages64 ? 1 : kProducers);
      mbarrier_init(&empty[s], kWarps);
    }
    fence_barrier_init();
  }
  __syncthreads();

  if (warp >= kWarps) {
    // The producers: tile i into stage i % kStages once the consumers have released it.
    setmaxnreg_dec<kProducerRegisters>();
    const int producer = warp - kWarps;
    const int* pages = page_table + static_cast<long long>(b) * max_pages;
    if constexpr (kPages64) {
      // A tile is one page (chunks start on a page, kTile = 64 = the page size): its K and V rows of KV
      // head g, each in D / 64 boxes. Rows past the sequence's end come too; the consumers zero V's.
      if (producer != 0) return;
      for (int i = 0; i < tiles; ++i) {
        const int stage = i % kStages;
        const int page = pages[(begin + i * kTile) / kTile];
        mbarrier_wait(&empty[stage], ((i / kStages) & 1) ^ 1);
        if (lane == 0) {
          mbarrier_arrive_expect_tx(&full[stage], 2u * kTile * D * 2);
          uint8_t* k_stage = smem + stage * L::kStageBytes;
          uint8_t* v_stage = k_stage + kTile * L::kPitch;
#pragma unroll
          for (int h = 0; h < D / 64; ++h) {
            tma_load_4d(k_stage + h * 64 * 128, &k_map, &full[stage], 64 * h, g, 0, page);
            tma_load_4d(v_stage + h * 64 * 128, &v_map, &full[stage], 64 * h, g, 0, page);
          }
        }
        __syncwarp();
      }
    } else {
      // Per-row copies: producer p copies the tile's rows p * kProducerRows ... + kProducerRows - 1, one a
      // lane, and announces those rows' bytes itself before its copies (the full barrier counts one arrival
      // a producer), so that the barrier's transaction count never goes below zero. With producer 0
      // announcing the whole tile, the others' copies could land first; the PTX ISA allows that, but under
      // Nsight Compute such a kernel on pages of one token never ended (H100, 2026-12-07).
      for (int i = 0; i < tiles; ++i) {
        const int stage = i % kStages, t0 = begin + i * kTile, rows = min(kTile, end - t0);
        const int own_rows = max(0, min(kProducerRows, rows - producer * kProducerRows));
        const int r = producer * kProducerRows + lane, t = t0 + r;
        const bool copies = lane < kProducerRows && r < rows;
        const long long offset =
            copies
                ? ((static_cast<long long>(pages[t / page_size]) * page_size + t % page_size) * Hkv + g) * D
                : 0;
        mbarrier_wait(&empty[stage], ((i / kStages) & 1) ^ 1);
        if (lane == 0) mbarrier_arrive_expect_tx(&full[stage], static_cast<uint32_t>(own_rows) * D * 2 * 2);
        __syncwarp();
        uint8_t* k_stage = smem + stage * L::kStageBytes;
        uint8_t* v_stage = k_stage + kTile * L::kPitch;
        if (copies) {
          bulk_load(k_stage + r * L::kPitch, K_cache + offset, D * 2, &full[stage]);
          bulk_load(v_stage + r * L::kPitch, V_cache + offset, D * 2, &full[stage]);
        }
      }
    }
    return;
  }

  setmaxnreg_inc<kConsumerRegisters>();
  // The consumers. Lane l holds row r = l / 4 (and r + 8 when kHigh) of the MMA's fragments, columns c
  // and c + 1.
  const int r = lane / 4, c = 2 * (lane % 4);
  const int h0 = g * G;
  const float score_scale = scale * kLog2e;  // scores in the log2 domain
  // Q's A fragments, every k-step of D: rows h0 + r (and + 8), zeros for rows past G.
  uint32_t q[L::kKSteps][4];
  {
    const auto pair = [&](int row, int col) -> uint32_t {
      if (row >= G) return 0;
      return *reinterpret_cast<const uint32_t*>(Q + (static_cast<long long>(b) * Hq + h0 + row) * D + col);
    };
#pragma unroll
    for (int k = 0; k < L::kKSteps; ++k) {
      q[k][0] = pair(r, 16 * k + c);
      q[k][1] = pair(r + 8, 16 * k + c);
      q[k][2] = pair(r, 16 * k + c + 8);
      q[k][3] = pair(r + 8, 16 * k + c + 8);
    }
  }
  float o[L::kDTiles][4] = {};
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};  // rows r and r + 8: running maximum, own sum

  for (int i = 0; i < tiles; ++i) {
    const int stage = i % kStages, rows = min(kTile, end - (begin + i * kTile));
    const uint8_t* k_stage = smem + stage * L::kStageBytes;
    const uint8_t* v_stage = k_stage + kTile * L::kPitch;
    const int first = warp * kWarpTokens;  // this warp's tokens of the tile
    mbarrier_wait(&full[stage], (i / kStages) & 1);

    // S = Q K^T over this warp's tokens: n-tile j is tokens first + 8 j ... + 7. ldmatrix_x4 gives the B
    // fragments of two k-steps: lane l addresses token first + 8 j + l % 8 at column 16 kk + 8 (l / 8).
    float s[kWarpTokens / 8][4];
#pragma unroll
    for (int j = 0; j < kWarpTokens / 8; ++j) {
      s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.0f;
      const int row = first + 8 * j + lane % 8;
#pragma unroll
      for (int kk = 0; kk < L::kKSteps; kk += 2) {
        uint32_t frag[4];
        ldmatrix_x4(frag, row_chunk<D, kPages64>(k_stage, row, 2 * kk + lane / 8));
        mma_m16n8k16_bf16(s[j], q[kk], {frag[0], frag[1]});
        mma_m16n8k16_bf16(s[j], q[kk + 1], {frag[2], frag[3]});
      }
    }
    // The online softmax, per row: the tile's maximum over the warp's tokens (the quad's lanes), then P.
    float correction[2];
#pragma unroll
    for (int h = 0; h < 1 + L::kHigh; ++h) {
      float tile_max = -INFINITY;
#pragma unroll
      for (int j = 0; j < kWarpTokens / 8; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          // A select, never a product with a mask: a stale or unwritten K row can make the score NaN.
          const bool visible = first + 8 * j + c + e < rows;
          s[j][2 * h + e] = visible ? s[j][2 * h + e] * score_scale : -INFINITY;
          tile_max = fmaxf(tile_max, s[j][2 * h + e]);
        }
      tile_max = fmaxf(tile_max, __shfl_xor_sync(0xFFFFFFFFu, tile_max, 1));
      tile_max = fmaxf(tile_max, __shfl_xor_sync(0xFFFFFFFFu, tile_max, 2));
      const float m_new = fmaxf(m[h], tile_max);
      const float base = m_new == -INFINITY ? 0.0f : m_new;  // no visible token yet: nothing to scale
      correction[h] = exp2_approx(m[h] - base);              // 0 while m is -inf, and O and l are 0 then
      m[h] = m_new;
      float sum = 0.0f;
#pragma unroll
      for (int j = 0; j < kWarpTokens / 8; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          s[j][2 * h + e] = exp2_approx(s[j][2 * h + e] - base);  // 0 past the rows
          sum += s[j][2 * h + e];
        }
      l[h] = l[h] * correction[h] + sum;
    }
#pragma unroll
    for (int d = 0; d < L::kDTiles; ++d) {
      o[d][0] *= correction[0];
      o[d][1] *= correction[0];
      if constexpr (L::kHigh) {
        o[d][2] *= correction[1];
        o[d][3] *= correction[1];
      }
    }
    if constexpr (kPages64) {
      // The page's rows past the sequence's end came with it: zeros in place of this warp's, so that P = 0
      // never meets a NaN there. Generic writes where the copies write next: fenced for the async proxy.
      if (rows < kTile) {
        for (int k = lane; k < kWarpTokens * D / 8; k += 32) {
          const int row = first + k / (D / 8);
          if (row >= rows)
            *reinterpret_cast<uint4*>(const_cast<uint8_t*>(row_chunk<D, true>(v_stage, row, k % (D / 8)))) =
                make_uint4(0, 0, 0, 0);
        }
        fence_proxy_async_shared();
        __syncwarp();
      }
    }
    // O += P V: k-step t is tokens first + 16 t ... + 15, P's A fragment the scores of n-tiles 2t and 2t + 1.
    // ldmatrix_x4_trans gives the B fragments of two n-tiles of D: lane l addresses token
    // first + 16 t + l % 8 + 8 ((l / 8) % 2) at column 8 dd + 8 (l / 16).
#pragma unroll
    for (int t = 0; t < kWarpTokens / 16; ++t) {
      // Rows 8-15 of P are heads only when kHigh; otherwise zeros (their raw scores are unmasked).
      const uint32_t p[4] = {pack_bf16x2(s[2 * t][0], s[2 * t][1]),
                             L::kHigh ? pack_bf16x2(s[2 * t][2], s[2 * t][3]) : 0u,
                             pack_bf16x2(s[2 * t + 1][0], s[2 * t + 1][1]),
                             L::kHigh ? pack_bf16x2(s[2 * t + 1][2], s[2 * t + 1][3]) : 0u};
      const int row = first + 16 * t + lane % 8 + 8 * ((lane / 8) % 2);
#pragma unroll
      for (int dd = 0; dd < L::kDTiles; dd += 2) {
        uint32_t frag[4];
        ldmatrix_x4_trans(frag, row_chunk<D, kPages64>(v_stage, row, dd + lane / 16));
        mma_m16n8k16_bf16(o[dd], p, {frag[0], frag[1]});
        mma_m16n8k16_bf16(o[dd + 1], p, {frag[2], frag[3]});
      }
    }
    __syncwarp();
    if (lane == 0) mbarrier_arrive(&empty[stage]);
  }

  // The warps' states into the ring from stage 0 on, into stage 1 for G = 16 (every tile has been consumed,
  // and every copy has landed): row sums over the quads, then maxima, sums and outputs per warp; then each
  // row's merge over the warps.
  float* m_s = reinterpret_cast<float*>(smem);  // [kWarps][G]
  float* l_s = m_s + kWarps * G;                // [kWarps][G]
  float* o_s = l_s + kWarps * G;                // [kWarps][G][D]
  bar_sync(kConsumerBarrier, kConsumers);
#pragma unroll
  for (int h = 0; h < 1 + L::kHigh; ++h) {
    const int row = r + 8 * h;
    float sum = l[h];
    sum += __shfl_xor_sync(0xFFFFFFFFu, sum, 1);
    sum += __shfl_xor_sync(0xFFFFFFFFu, sum, 2);
    if (row < G) {
      if (lane % 4 == 0) {
        m_s[warp * G + row] = m[h];
        l_s[warp * G + row] = sum;
      }
#pragma unroll
      for (int d = 0; d < L::kDTiles; ++d) {
        o_s[(warp * G + row) * D + 8 * d + c] = o[d][2 * h];
        o_s[(warp * G + row) * D + 8 * d + c + 1] = o[d][2 * h + 1];
      }
    }
  }
  bar_sync(kConsumerBarrier, kConsumers);
  const int tid = threadIdx.x;
  for (int k = tid; k < G * D; k += kConsumers) {
    const int j = k / D, d = k % D;
    float m_all = -INFINITY;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) m_all = fmaxf(m_all, m_s[w * G + j]);  // finite: the chunk has a token
    float sum = 0.0f, l_all = 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      const float weight = exp2_approx(m_s[w * G + j] - m_all);  // 0 for a warp that saw no token
      sum += o_s[(w * G + j) * D + d] * weight;
      l_all += l_s[w * G + j] * weight;
    }
    const long long out_row = (static_cast<long long>(b) * Hq + h0 + j) * splits + split;
    partial_o[out_row * D + d] = sum;
    if (d == 0) {
      partial_ml[2 * out_row] = m_all;
      partial_ml[2 * out_row + 1] = l_all;
    }
  }
}

// One block per (query head, sequence): the row's chunks merged; O in bf16, LSE in natural log.
template <int D>
__global__ void __launch_bounds__(D)
    merge_kernel(const float* __restrict__ partial_o, const float* __restrict__ partial_ml,
                 const int* __restrict__ seq_lens, __nv_bfloat16* __restrict__ O, float* __restrict__ LSE,
                 int Hq, int splits) {
  const int h = blockIdx.x, b = blockIdx.y, d = threadIdx.x;
  const int used = (seq_lens[b] + kChunk - 1) / kChunk;
  const long long row = static_cast<long long>(b) * Hq + h;
  const float* ml = partial_ml + 2 * row * splits;
  float m_all = -INFINITY;
  for (int c = 0; c < used; ++c) m_all = fmaxf(m_all, ml[2 * c]);
  float l_all = 0.0f, o = 0.0f;
  for (int c = 0; c < used; ++c) {
    const float weight = exp2f(ml[2 * c] - m_all);
    l_all += ml[2 * c + 1] * weight;
    o += partial_o[(row * splits + c) * D + d] * weight;
  }
  O[row * D + d] = __float2bfloat16(o / l_all);
  if (d == 0) LSE[row] = (m_all + log2f(l_all)) * kLn2;
}

int splits_for(int page_size, int max_pages) {
  return static_cast<int>((static_cast<long long>(page_size) * max_pages + kChunk - 1) / kChunk);
}

// One call's arguments, as the entry point takes them.
struct Call {
  const __nv_bfloat16 *Q, *K_cache, *V_cache;
  const int *page_table, *seq_lens;
  __nv_bfloat16* O;
  float* LSE;
  void* workspace;
  int B, Hq, Hkv, page_size, max_pages, num_pages;
  float scale;
  cudaStream_t stream;
};

template <int D, int G, bool kPages64>
int launch(const Call& c) {
  using L = Layout<D, G, kPages64>;
  // Pages of 64: the caches as [num_pages][64][Hkv][D], boxes of 64 rows x 64 columns of one KV head.
  CUtensorMap k_map{}, v_map{};
  if (kPages64 &&
      (make_tensor_map_bshd_bf16(&k_map, c.K_cache, c.num_pages, kTile, c.Hkv, D, kTile) != cudaSuccess ||
       make_tensor_map_bshd_bf16(&v_map, c.V_cache, c.num_pages, kTile, c.Hkv, D, kTile) != cudaSuccess))
    return 1;
  // Two CTAs an SM: all of the SM's unified memory as shared memory.
  if (cudaFuncSetAttribute(split_kernel<D, G, kPages64>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           L::kBytes) != cudaSuccess ||
      cudaFuncSetAttribute(split_kernel<D, G, kPages64>, cudaFuncAttributePreferredSharedMemoryCarveout,
                           cudaSharedmemCarveoutMaxShared) != cudaSuccess)
    return 1;
  const int splits = splits_for(c.page_size, c.max_pages);
  float* partial_o = static_cast<float*>(c.workspace);
  float* partial_ml = partial_o + static_cast<long long>(c.B) * c.Hq * splits * D;
  split_kernel<D, G, kPages64><<<dim3(splits, c.Hkv, c.B), kThreads, L::kBytes, c.stream>>>(
      c.Q, c.K_cache, c.V_cache, c.page_table, c.seq_lens, partial_o, partial_ml, c.Hq, c.Hkv, c.page_size,
      c.max_pages, splits, c.scale, k_map, v_map);
  merge_kernel<D>
      <<<dim3(c.Hq, c.B), D, 0, c.stream>>>(partial_o, partial_ml, c.seq_lens, c.O, c.LSE, c.Hq, splits);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

// The kernels for the query heads per KV head, G = Hq / Hkv; 1 for a G they are not built for.
template <int D, bool kPages64>
int launch_for_group(int G, const Call& c) {
  switch (G) {
    case 1:
      return launch<D, 1, kPages64>(c);
    case 2:
      return launch<D, 2, kPages64>(c);
    case 4:
      return launch<D, 4, kPages64>(c);
    case 8:
      return launch<D, 8, kPages64>(c);
    case 16:
      return launch<D, 16, kPages64>(c);
    default:
      return 1;
  }
}

template <int D>
int launch_for_pages(int G, const Call& c) {
  return c.page_size == kTile ? launch_for_group<D, true>(G, c) : launch_for_group<D, false>(G, c);
}

}  // namespace

extern "C" size_t ptxbench_attention_decode_paged_workspace_bytes(int B, int Hq, int, int D, int page_size,
                                                                  int max_pages, int) {
  const size_t rows = static_cast<size_t>(B) * static_cast<size_t>(Hq) *
                      static_cast<size_t>(splits_for(page_size, max_pages));
  return rows * (static_cast<size_t>(D) + 2) * sizeof(float);
}

extern "C" int ptxbench_attention_decode_paged_bf16(const __nv_bfloat16* Q, const __nv_bfloat16* K_cache,
                                                    const __nv_bfloat16* V_cache, const int* page_table,
                                                    const int* seq_lens, __nv_bfloat16* O, float* LSE,
                                                    void* workspace, int B, int Hq, int Hkv, int D,
                                                    int page_size, int max_pages, int num_pages, float scale,
                                                    cudaStream_t stream) {
  if (Hkv <= 0 || Hq % Hkv != 0 || B > 65535 || Hkv > 65535 || workspace == nullptr) return 1;
  const Call call{Q, K_cache, V_cache, page_table, seq_lens,  O,         LSE,   workspace,
                  B, Hq,      Hkv,     page_size,  max_pages, num_pages, scale, stream};
  if (D == 64) return launch_for_pages<64>(Hq / Hkv, call);
  if (D == 128) return launch_for_pages<128>(Hq / Hkv, call);
  return 1;
}
