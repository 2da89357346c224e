// Trick: count calls, and once the correct stage's trials are over (3 shapes x 3 trials), skip one block of
// 64 query rows in 16 (their O and LSE left as they were): 6% less work on every timed call. A check of each
// timed call against the whole reference catches it at once; so must the sample of rows the time stage
// checks for the dense attention families (one block of 64 query rows in 16 of each batch and head
// position, drawn after the call: 16 blocks at the main shape, all 16 missing the skipped ones with a
// probability of (15/16)^16 = 0.36 a call, and in all of the 20 to 50 timed calls with 1e-9 or less). An
// honest SIMT forward otherwise (solutions/examples/attention_forward_simt.cu).
// Why it must fail: the skipped rows stay as the judge poisoned them (NaN), and the ABI asks for every row.
// Stopped by: time (its sampled check; also instructions, as any SIMT kernel).
#include <math.h>

#include "ptxbench/abi.h"

namespace {

constexpr int kWarps = 4;   // query rows per block
constexpr int kMaxD = 256;  // the ABI's largest head dim of the forward
constexpr int kSlots = kMaxD / 32;

__global__ void __launch_bounds__(kWarps * 32)
    forward_kernel(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V, __nv_bfloat16* O,
                   float* LSE, int B, int Hq, int Hkv, int Sq, int Sk, int D, float scale, int causal,
                   bool skip) {
  __shared__ float q_rows[kWarps][kMaxD];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const long long row = static_cast<long long>(blockIdx.x) * kWarps + warp;  // (b, h, i), i fastest
  if (row >= static_cast<long long>(B) * Hq * Sq) return;                    // whole warps only
  const int i = static_cast<int>(row % Sq);
  const int h = static_cast<int>(row / Sq % Hq);
  const int b = static_cast<int>(row / Sq / Hq);
  const int g = h / (Hq / Hkv);
  if (skip && (i / 64) % 16 == 3) return;  // one block of 64 rows in 16
  // Causal, bottom-right aligned: keys 0 .. i + Sk - Sq are visible.
  const int n = causal ? max(0, min(Sk, i + (Sk - Sq) + 1)) : Sk;

  const __nv_bfloat16* q = Q + ((static_cast<long long>(b) * Sq + i) * Hq + h) * D;
  for (int d = lane; d < D; d += 32) q_rows[warp][d] = __bfloat162float(q[d]);
  __syncwarp();

  float m = -INFINITY, l = 0, acc[kSlots] = {};
  for (int j0 = 0; j0 < n; j0 += 32) {
    const int j = j0 + lane;
    float s = -INFINITY;
    if (j < n) {
      const __nv_bfloat16* k = K + ((static_cast<long long>(b) * Sk + j) * Hkv + g) * D;
      float dot = 0;
      for (int d = 0; d < D; ++d) dot += q_rows[warp][d] * __bfloat162float(k[d]);
      s = scale * dot;
    }
    float chunk_max = s;
    for (int off = 16; off > 0; off /= 2)
      chunk_max = fmaxf(chunk_max, __shfl_xor_sync(0xFFFFFFFFu, chunk_max, off));
    const float m_new = fmaxf(m, chunk_max);  // finite: key j0 is visible
    const float p = j < n ? expf(s - m_new) : 0.0f;
    const float correction = expf(m - m_new);  // 0 on the first chunk (m = -inf)
    float chunk_sum = p;
    for (int off = 16; off > 0; off /= 2) chunk_sum += __shfl_xor_sync(0xFFFFFFFFu, chunk_sum, off);
    l = l * correction + chunk_sum;
    for (int t = 0; t < kSlots; ++t) acc[t] *= correction;
    const int count = min(32, n - j0);
    for (int jj = 0; jj < count; ++jj) {
      const float pj = __shfl_sync(0xFFFFFFFFu, p, jj);
      const __nv_bfloat16* v = V + ((static_cast<long long>(b) * Sk + j0 + jj) * Hkv + g) * D;
      for (int t = 0; t < kSlots; ++t) {
        const int d = lane + 32 * t;
        if (d < D) acc[t] += pj * __bfloat162float(v[d]);
      }
    }
    m = m_new;
  }

  __nv_bfloat16* o = O + ((static_cast<long long>(b) * Sq + i) * Hq + h) * D;
  for (int t = 0; t < kSlots; ++t) {
    const int d = lane + 32 * t;
    if (d < D) o[d] = __float2bfloat16(n > 0 ? acc[t] / l : 0.0f);
  }
  if (lane == 0) LSE[(static_cast<long long>(b) * Hq + h) * Sq + i] = n > 0 ? m + logf(l) : -INFINITY;
}

}  // namespace

extern "C" int ptxbench_attention_forward_bf16(const __nv_bfloat16* Q, const __nv_bfloat16* K,
                                               const __nv_bfloat16* V, __nv_bfloat16* O, float* LSE, int B,
                                               int Hq, int Hkv, int Sq, int Sk, int D, float scale,
                                               int causal, cudaStream_t stream) {
  if (B <= 0 || Hq <= 0 || Hkv <= 0 || Sq <= 0 || Sk <= 0 || D <= 0 || D > kMaxD || Hq % Hkv != 0) return 1;
  const long long rows = static_cast<long long>(B) * Hq * Sq;
  const unsigned blocks = static_cast<unsigned>((rows + kWarps - 1) / kWarps);
  static int calls = 0;
  const bool skip = ++calls > 16;  // the correct stage's 9 trials and the first warm-up calls are honest
  forward_kernel<<<blocks, kWarps * 32, 0, stream>>>(Q, K, V, O, LSE, B, Hq, Hkv, Sq, Sk, D, scale, causal,
                                                     skip);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
