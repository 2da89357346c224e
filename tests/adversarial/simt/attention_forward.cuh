// Prelude of the corpus entries whose defect is in which rows they compute: the plain SIMT attention forward
// of solutions/examples/attention_forward_simt.cu (a warp a query row, keys in chunks of 32 with an online
// softmax, fp32 accumulation) and its launch, which can leave one block of 64 query rows in `skip_period`
// unwritten (0: none).
#include <math.h>

#include <ptxbench/abi.h>

namespace simt {

constexpr int kWarps = 4;   // query rows per block
constexpr int kMaxD = 256;  // the ABI's largest head dim of the forward
constexpr int kSlots = kMaxD / 32;

__global__ void __launch_bounds__(kWarps * 32)
    forward_kernel(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V, __nv_bfloat16* O,
                   float* LSE, int B, int Hq, int Hkv, int Sq, int Sk, int D, float scale, int causal,
                   int skip_period) {
  __shared__ float q_rows[kWarps][kMaxD];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const long long row = static_cast<long long>(blockIdx.x) * kWarps + warp;  // (b, h, i), i fastest
  if (row >= static_cast<long long>(B) * Hq * Sq) return;                    // whole warps only
  const int i = static_cast<int>(row % Sq);
  const int h = static_cast<int>(row / Sq % Hq);
  const int b = static_cast<int>(row / Sq / Hq);
  const int g = h / (Hq / Hkv);
  if (skip_period > 0 && (i / 64) % skip_period == 3) return;  // one block of 64 rows in skip_period
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

inline int launch_forward(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V,
                          __nv_bfloat16* O, float* LSE, int B, int Hq, int Hkv, int Sq, int Sk, int D,
                          float scale, int causal, int skip_period, cudaStream_t stream) {
  if (B <= 0 || Hq <= 0 || Hkv <= 0 || Sq <= 0 || Sk <= 0 || D <= 0 || D > kMaxD || Hq % Hkv != 0) return 1;
  const long long rows = static_cast<long long>(B) * Hq * Sq;
  const unsigned blocks = static_cast<unsigned>((rows + kWarps - 1) / kWarps);
  forward_kernel<<<blocks, kWarps * 32, 0, stream>>>(Q, K, V, O, LSE, B, Hq, Hkv, Sq, Sk, D, scale, causal,
                                                     skip_period);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}

}  // namespace simt
