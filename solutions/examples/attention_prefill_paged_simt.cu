// A plain, correct paged causal prefill (include/ptxbench/abi.h) with no Hopper instructions: one warp per
// (new token, query head), its sequence found by a binary search of qo_indptr, an online softmax over chunks
// of 32 of the sequence's visible cached tokens (each lane scores one, read through the page table), fp32
// throughout. It exercises the family's whole path; its verdict is correct, and the instruction stage fails
// (no wgmma, TMA or mbarrier).
#include <math.h>

#include "ptxbench/abi.h"

namespace {

constexpr int kWarps = 4;   // rows per block
constexpr int kMaxD = 128;  // the ABI's largest head dim here
constexpr int kSlots = kMaxD / 32;

struct Cache {
  const __nv_bfloat16* k;
  const __nv_bfloat16* v;
  const int* page_table;  // [B, max_pages]
  int page_size, max_pages, hkv, d;

  // The row of KV head g of token t of sequence b, in `pool` (k or v).
  __device__ const __nv_bfloat16* row(const __nv_bfloat16* pool, int b, int t, int g) const {
    const long long page = page_table[static_cast<long long>(b) * max_pages + t / page_size];
    return pool + ((page * page_size + t % page_size) * hkv + g) * d;
  }
};

__global__ void __launch_bounds__(kWarps * 32)
    prefill_kernel(const __nv_bfloat16* Q, Cache cache, const int* qo_indptr, const int* kv_lens,
                   __nv_bfloat16* O, float* LSE, int B, int Hq, int total_q, float scale) {
  __shared__ float q_rows[kWarps][kMaxD];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, D = cache.d;
  const long long row = static_cast<long long>(blockIdx.x) * kWarps + warp;  // (token, h), h fastest
  if (row >= static_cast<long long>(total_q) * Hq) return;                   // whole warps only
  const int token = static_cast<int>(row / Hq), h = static_cast<int>(row % Hq), g = h / (Hq / cache.hkv);
  // The sequence holding `token`: the last b with qo_indptr[b] <= token.
  int lo = 0, hi = B - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (qo_indptr[mid] <= token)
      lo = mid;
    else
      hi = mid - 1;
  }
  const int new_tokens = qo_indptr[lo + 1] - qo_indptr[lo], i = token - qo_indptr[lo];
  const int n = kv_lens[lo] - new_tokens + i + 1;  // causal: the cached tokens 0 .. n - 1

  const __nv_bfloat16* q = Q + row * D;
  for (int d = lane; d < D; d += 32) q_rows[warp][d] = __bfloat162float(q[d]);
  __syncwarp();

  float m = -INFINITY, l = 0, acc[kSlots] = {};
  for (int j0 = 0; j0 < n; j0 += 32) {
    const int j = j0 + lane;
    float s = -INFINITY;
    if (j < n) {
      const __nv_bfloat16* k = cache.row(cache.k, lo, j, g);
      float dot = 0;
      for (int d = 0; d < D; ++d) dot += q_rows[warp][d] * __bfloat162float(k[d]);
      s = scale * dot;
    }
    float chunk_max = s;
    for (int off = 16; off > 0; off /= 2)
      chunk_max = fmaxf(chunk_max, __shfl_xor_sync(0xFFFFFFFFu, chunk_max, off));
    const float m_new = fmaxf(m, chunk_max);  // finite: token j0 is visible
    const float p = j < n ? expf(s - m_new) : 0.0f;
    const float correction = expf(m - m_new);  // 0 on the first chunk (m = -inf)
    float chunk_sum = p;
    for (int off = 16; off > 0; off /= 2) chunk_sum += __shfl_xor_sync(0xFFFFFFFFu, chunk_sum, off);
    l = l * correction + chunk_sum;
    for (int t = 0; t < kSlots; ++t) acc[t] *= correction;
    const int count = min(32, n - j0);
    for (int jj = 0; jj < count; ++jj) {
      const float pj = __shfl_sync(0xFFFFFFFFu, p, jj);
      const __nv_bfloat16* v = cache.row(cache.v, lo, j0 + jj, g);
      for (int t = 0; t < kSlots; ++t) {
        const int d = lane + 32 * t;
        if (d < D) acc[t] += pj * __bfloat162float(v[d]);
      }
    }
    m = m_new;
  }

  __nv_bfloat16* o = O + row * D;
  for (int t = 0; t < kSlots; ++t) {
    const int d = lane + 32 * t;
    if (d < D) o[d] = __float2bfloat16(acc[t] / l);
  }
  if (lane == 0) LSE[row] = m + logf(l);  // [total_q, Hq]: row is token * Hq + h
}

}  // namespace

extern "C" int ptxbench_attention_prefill_paged_bf16(const __nv_bfloat16* Q, const __nv_bfloat16* K_cache,
                                                     const __nv_bfloat16* V_cache, const int* qo_indptr,
                                                     const int* page_table, const int* kv_lens,
                                                     __nv_bfloat16* O, float* LSE, int B, int Hq, int Hkv,
                                                     int D, int page_size, int max_pages, int, int,
                                                     int total_q, float scale, cudaStream_t stream) {
  if (B <= 0 || Hq <= 0 || Hkv <= 0 || total_q <= 0 || D <= 0 || D > kMaxD || Hq % Hkv != 0 || page_size <= 0)
    return 1;
  const Cache cache{K_cache, V_cache, page_table, page_size, max_pages, Hkv, D};
  const long long rows = static_cast<long long>(total_q) * Hq;
  const unsigned blocks = static_cast<unsigned>((rows + kWarps - 1) / kWarps);
  prefill_kernel<<<blocks, kWarps * 32, 0, stream>>>(Q, cache, qo_indptr, kv_lens, O, LSE, B, Hq, total_q,
                                                     scale);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
