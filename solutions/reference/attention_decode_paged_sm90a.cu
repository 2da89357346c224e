// Reference solution for the Hopper paged-decode tasks: one query token per sequence over a paged KV cache,
// grouped-query heads, bf16 in and out, fp32 softmax (include/ptxbench/abi.h). Written with the kit's shared
// part (kits/common/ptx); the rules it relies on are in kits/common/contracts.md ("bulk copies", "expect_tx
// accounting", "mbarrier phases").
//
// A decode reads its KV cache once and does 2 FLOPs per byte of it: the time is the cache's bytes over the
// HBM bandwidth, and the design is about keeping HBM busy.
//   - Split-KV (flash decoding): one CTA per (chunk of kChunk tokens, KV head, sequence), so that a batch of
//     ragged lengths spreads evenly over the SMs; the CTAs past a sequence's length exit at once. A second,
//     small kernel merges a row's chunks (their maxima, sums and unnormalised outputs, in the workspace).
//   - Each CTA serves the G = Hq / Hkv query heads of its KV head, so each K and V row is read once for all
//   of
//     them.
//   - One producer warp gathers the chunk's token rows through the page table, tile by tile (kTile tokens),
//   with
//     one bulk copy (cp.async.bulk, no tensor map) per K row and per V row, into a ring of kStages stages
//     that complete on mbarriers. A page of any size is only a table lookup per token: pages of 1 token and
//     of 64 take the same path. The rows land at a padded pitch (D * 2 + 16 bytes), so consecutive rows start
//     in different shared-memory banks and the reads below are free of conflicts without a swizzle.
//   - Four consumer warps. Scores: a thread per token, the G dot products against the queries (pre-scaled by
//     scale * log2 e, in shared memory, read as broadcasts). The online softmax is in base 2 (ex2.approx),
//     with the tile's row maxima combined over the warps through shared memory. P V: each thread owns up to 4
//     rows x 8 features of the output for a slice of the tile's tokens; the slices are summed once, at the
//     end.
//
// Shapes: D = 64 or 128 and G in {1, 2, 4, 8, 16} (the tasks have D = 128, G = 4 and 8); others return 1.
#include <math.h>

#include <hopper.cuh>

#include "ptxbench/abi.h"

using namespace ptxkit::hopper;

namespace {

constexpr int kTile = 128;       // tokens per stage of the ring
constexpr int kChunk = 1024;     // tokens per CTA
constexpr int kStages = 3;       // the ring's depth
constexpr int kConsumers = 128;  // four warps
constexpr int kThreads = kConsumers + 32;
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;
constexpr uint32_t kConsumerBarrier = 1;  // named barrier of the consumer warps

template <int D, int G>
struct Layout {
  static constexpr int kPitch = D * 2 + 16;    // bytes per token row in shared memory
  static constexpr int kRows = G < 4 ? G : 4;  // output rows per thread in P V
  static constexpr int kRowGroups = G / kRows;
  static constexpr int kDimGroups = D / 8;  // 8 features (16 bytes) per thread
  static constexpr int kSlices = kConsumers / (kDimGroups * kRowGroups);
  static constexpr int kSliceTokens = kTile / kSlices;
  static_assert(kSlices >= 1 && kTile % kSlices == 0, "this D and G leave no token slices");
  // Shared memory: the ring (K then V per stage), the scaled queries, P, the warps' tile maxima, barriers.
  static constexpr int kStageBytes = 2 * kTile * kPitch;
  static constexpr int kQueryOffset = kStages * kStageBytes;
  static constexpr int kPOffset = kQueryOffset + G * D * 4;
  static constexpr int kMaxOffset = kPOffset + kTile * G * 4;
  static constexpr int kBarrierOffset = (kMaxOffset + 4 * G * 4 + 7) / 8 * 8;
  static constexpr int kBytes = kBarrierOffset + 2 * kStages * 8;
  // The end's sum of the token slices reuses stage 0.
  static_assert(kSlices * G * D * 4 <= kStageBytes, "the slices' sum does not fit in a stage");
};

// Eight bf16 (16 bytes of shared memory) as floats.
__device__ __forceinline__ void load8(const uint8_t* source, float (&out)[8]) {
  const uint4 raw = *reinterpret_cast<const uint4*>(source);
  const uint32_t words[4] = {raw.x, raw.y, raw.z, raw.w};
  for (int k = 0; k < 4; ++k) {
    out[2 * k] = __uint_as_float(words[k] << 16);
    out[2 * k + 1] = __uint_as_float(words[k] & 0xFFFF0000u);
  }
}

template <int D, int G>
__global__ void __launch_bounds__(kThreads, 1)
    split_kernel(const __nv_bfloat16* __restrict__ Q, const __nv_bfloat16* __restrict__ K_cache,
                 const __nv_bfloat16* __restrict__ V_cache, const int* __restrict__ page_table,
                 const int* __restrict__ seq_lens, float* __restrict__ partial_o,
                 float* __restrict__ partial_ml, int Hq, int Hkv, int page_size, int max_pages, int splits,
                 float scale) {
  using L = Layout<D, G>;
  extern __shared__ __align__(128) uint8_t smem[];
  const int split = blockIdx.x, g = blockIdx.y, b = blockIdx.z;
  const int n = seq_lens[b];
  const int begin = split * kChunk;
  if (begin >= n) return;  // the whole CTA, before any barrier exists
  const int end = min(n, begin + kChunk);
  const int tiles = (end - begin + kTile - 1) / kTile;
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + L::kBarrierOffset);
  uint64_t* empty = full + kStages;
  float* q_s = reinterpret_cast<float*>(smem + L::kQueryOffset);  // [G][D], scaled
  float* p_s = reinterpret_cast<float*>(smem + L::kPOffset);      // [kTile][G]
  float* max_s = reinterpret_cast<float*>(smem + L::kMaxOffset);  // [4 warps][G]
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(&full[s], 1);
      mbarrier_init(&empty[s], kConsumers / 32);
    }
    fence_mbarrier_init();
  }
  __syncthreads();

  if (warp == kConsumers / 32) {
    // The producer: tile i into stage i % kStages once the consumers have released it.
    const int* pages = page_table + static_cast<long long>(b) * max_pages;
    for (int i = 0; i < tiles; ++i) {
      const int stage = i % kStages, t0 = begin + i * kTile, rows = min(kTile, end - t0);
      long long offsets[kTile / 32];
#pragma unroll
      for (int k = 0; k < kTile / 32; ++k) {
        const int t = t0 + lane + 32 * k;
        offsets[k] =
            t < end
                ? ((static_cast<long long>(pages[t / page_size]) * page_size + t % page_size) * Hkv + g) * D
                : 0;
      }
      mbarrier_wait(&empty[stage], ((i / kStages) & 1) ^ 1);
      if (lane == 0) mbarrier_arrive_expect_tx(&full[stage], static_cast<uint32_t>(rows) * D * 2 * 2);
      __syncwarp();
      uint8_t* k_stage = smem + stage * L::kStageBytes;
      uint8_t* v_stage = k_stage + kTile * L::kPitch;
#pragma unroll
      for (int k = 0; k < kTile / 32; ++k) {
        const int r = lane + 32 * k;
        if (r < rows) {
          bulk_load(k_stage + r * L::kPitch, K_cache + offsets[k], D * 2, &full[stage]);
          bulk_load(v_stage + r * L::kPitch, V_cache + offsets[k], D * 2, &full[stage]);
        }
      }
    }
    return;
  }

  // The consumers.
  const int tid = threadIdx.x;
  const int h0 = g * G;
  const float q_scale = scale * kLog2e;
  for (int k = tid; k < G * D; k += kConsumers)
    q_s[k] = __bfloat162float(Q[(static_cast<long long>(b) * Hq + h0) * D + k]) * q_scale;
  bar_sync(kConsumerBarrier, kConsumers);

  // P V ownership: features dg*8 .. dg*8+7 of rows rg*kRows .. +kRows, for the tokens of slice ts.
  const int dg = tid % L::kDimGroups, rg = tid / L::kDimGroups % L::kRowGroups,
            ts = tid / (L::kDimGroups * L::kRowGroups);
  float acc[L::kRows][8] = {};
  float m[G], l_part[G];  // the running maxima (every thread, every row); this thread's tokens' sums
  for (int j = 0; j < G; ++j) {
    m[j] = -INFINITY;
    l_part[j] = 0.0f;
  }

  for (int i = 0; i < tiles; ++i) {
    const int stage = i % kStages, rows = min(kTile, end - (begin + i * kTile));
    const uint8_t* k_stage = smem + stage * L::kStageBytes;
    const uint8_t* v_stage = k_stage + kTile * L::kPitch;
    mbarrier_wait(&full[stage], (i / kStages) & 1);

    // Scores of token `tid` (log2 domain), -inf past the tile's rows.
    float s[G];
    for (int j = 0; j < G; ++j) s[j] = 0.0f;
    if (tid < rows) {
      for (int c = 0; c < D / 8; ++c) {
        float kv[8];
        load8(k_stage + tid * L::kPitch + c * 16, kv);
        for (int j = 0; j < G; ++j) {
          const float4 qa = *reinterpret_cast<const float4*>(q_s + j * D + c * 8);
          const float4 qb = *reinterpret_cast<const float4*>(q_s + j * D + c * 8 + 4);
          s[j] += qa.x * kv[0] + qa.y * kv[1] + qa.z * kv[2] + qa.w * kv[3] + qb.x * kv[4] + qb.y * kv[5] +
                  qb.z * kv[6] + qb.w * kv[7];
        }
      }
    } else {
      for (int j = 0; j < G; ++j) s[j] = -INFINITY;
    }
    // The tile's row maxima: over the warp, then over the four warps.
    for (int j = 0; j < G; ++j) {
      float v = s[j];
      for (int step = 16; step > 0; step /= 2) v = fmaxf(v, __shfl_xor_sync(0xFFFFFFFFu, v, step));
      if (lane == 0) max_s[warp * G + j] = v;
    }
    bar_sync(kConsumerBarrier, kConsumers);
    float correction[G];
    for (int j = 0; j < G; ++j) {
      const float tile_max = fmaxf(fmaxf(max_s[j], max_s[G + j]), fmaxf(max_s[2 * G + j], max_s[3 * G + j]));
      const float m_new = fmaxf(m[j], tile_max);  // finite: the tile has a token
      correction[j] = exp2_approx(m[j] - m_new);  // 0 on the first tile (m = -inf)
      m[j] = m_new;
      const float p = exp2_approx(s[j] - m_new);  // 0 past the rows
      l_part[j] = l_part[j] * correction[j] + p;
      p_s[tid * G + j] = p;
    }
    bar_sync(kConsumerBarrier, kConsumers);

    for (int r = 0; r < L::kRows; ++r) {
      float c = 0.0f;  // correction[rg * kRows + r], picked without indexing registers at run time
#pragma unroll
      for (int j = 0; j < G; ++j) c = j == rg * L::kRows + r ? correction[j] : c;
      for (int e = 0; e < 8; ++e) acc[r][e] *= c;
    }
    const int first = ts * L::kSliceTokens, last = min(rows, first + L::kSliceTokens);
    for (int t = first; t < last; ++t) {
      float v[8];
      load8(v_stage + t * L::kPitch + dg * 16, v);
      for (int r = 0; r < L::kRows; ++r) {
        const float p = p_s[t * G + rg * L::kRows + r];
        for (int e = 0; e < 8; ++e) acc[r][e] += p * v[e];
      }
    }
    __syncwarp();
    if (lane == 0) mbarrier_arrive(&empty[stage]);
  }

  // The chunk's row sums (over the consumers) and outputs (over the token slices), into the workspace. Every
  // tile has been consumed, so stage 0 is free for the slices' sum.
  bar_sync(kConsumerBarrier, kConsumers);
  for (int j = 0; j < G; ++j) {
    float v = l_part[j];
    for (int step = 16; step > 0; step /= 2) v += __shfl_xor_sync(0xFFFFFFFFu, v, step);
    if (lane == 0) max_s[warp * G + j] = v;  // the tile maxima are no longer needed
  }
  float* slices = reinterpret_cast<float*>(smem);  // [kSlices][G][D]
  for (int r = 0; r < L::kRows; ++r)
    for (int e = 0; e < 8; ++e) slices[(ts * G + rg * L::kRows + r) * D + dg * 8 + e] = acc[r][e];
  bar_sync(kConsumerBarrier, kConsumers);
  for (int k = tid; k < G * D; k += kConsumers) {
    float sum = 0.0f;
    for (int slice = 0; slice < L::kSlices; ++slice) sum += slices[slice * G * D + k];
    const int j = k / D, d = k % D;
    partial_o[((static_cast<long long>(b) * Hq + h0 + j) * splits + split) * D + d] = sum;
  }
#pragma unroll
  for (int j = 0; j < G; ++j)  // thread j writes row j's (m, l); j is known at compile time
    if (tid == j) {
      const long long row = (static_cast<long long>(b) * Hq + h0 + j) * splits + split;
      partial_ml[2 * row] = m[j];
      partial_ml[2 * row + 1] = max_s[j] + max_s[G + j] + max_s[2 * G + j] + max_s[3 * G + j];
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
  int B, Hq, Hkv, page_size, max_pages;
  float scale;
  cudaStream_t stream;
};

template <int D, int G>
int launch(const Call& c) {
  using L = Layout<D, G>;
  if (cudaFuncSetAttribute(split_kernel<D, G>, cudaFuncAttributeMaxDynamicSharedMemorySize, L::kBytes) !=
      cudaSuccess)
    return 1;
  const int splits = splits_for(c.page_size, c.max_pages);
  float* partial_o = static_cast<float*>(c.workspace);
  float* partial_ml = partial_o + static_cast<long long>(c.B) * c.Hq * splits * D;
  split_kernel<D, G><<<dim3(splits, c.Hkv, c.B), kThreads, L::kBytes, c.stream>>>(
      c.Q, c.K_cache, c.V_cache, c.page_table, c.seq_lens, partial_o, partial_ml, c.Hq, c.Hkv, c.page_size,
      c.max_pages, splits, c.scale);
  merge_kernel<D>
      <<<dim3(c.Hq, c.B), D, 0, c.stream>>>(partial_o, partial_ml, c.seq_lens, c.O, c.LSE, c.Hq, splits);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

// The kernels for the query heads per KV head, G = Hq / Hkv; 1 for a G they are not built for.
template <int D>
int launch_for_group(int G, const Call& c) {
  switch (G) {
    case 1:
      return launch<D, 1>(c);
    case 2:
      return launch<D, 2>(c);
    case 4:
      return launch<D, 4>(c);
    case 8:
      return launch<D, 8>(c);
    case 16:
      return launch<D, 16>(c);
    default:
      return 1;
  }
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
                                                    int page_size, int max_pages, int, float scale,
                                                    cudaStream_t stream) {
  if (Hkv <= 0 || Hq % Hkv != 0 || B > 65535 || Hkv > 65535 || workspace == nullptr) return 1;
  const Call call{Q, K_cache, V_cache, page_table, seq_lens,  O,     LSE,   workspace,
                  B, Hq,      Hkv,     page_size,  max_pages, scale, stream};
  if (D == 64) return launch_for_group<64>(Hq / Hkv, call);
  if (D == 128) return launch_for_group<128>(Hq / Hkv, call);
  return 1;
}
