// A plain, correct paged decode (include/ptxbench/abi.h) with no Hopper instructions: one block per (query
// head, sequence), each warp taking every fourth token through the page table with an online softmax of its
// own (each lane holds D / 32 features of the query and of the output), the warps' partial rows merged at the
// end; fp32 throughout. It exercises the family's whole path; its verdict is correct, and the instruction
// stage fails (no bulk copies or mbarriers).
#include <math.h>

#include "ptxbench/abi.h"

namespace {

constexpr int kWarps = 4;
constexpr int kMaxD = 256;  // the ABI's largest head dim
constexpr int kSlots = kMaxD / 32;

__global__ void __launch_bounds__(kWarps * 32)
    decode_kernel(const __nv_bfloat16* Q, const __nv_bfloat16* K_cache, const __nv_bfloat16* V_cache,
                  const int* page_table, const int* seq_lens, __nv_bfloat16* O, float* LSE, int Hq, int Hkv,
                  int D, int page_size, int max_pages, float scale) {
  __shared__ float partial_o[kWarps][kMaxD];
  __shared__ float partial_m[kWarps], partial_l[kWarps];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int h = blockIdx.x, b = blockIdx.y, g = h / (Hq / Hkv);
  const int n = seq_lens[b];
  const long long row = static_cast<long long>(b) * Hq + h;
  const int slots = D / 32;  // features per lane: lane + 32 * s

  float q[kSlots], o[kSlots];
  for (int s = 0; s < slots; ++s) {
    q[s] = __bfloat162float(Q[row * D + lane + 32 * s]);
    o[s] = 0.0f;
  }
  float m = -INFINITY, l = 0.0f;
  for (int t = warp; t < n; t += kWarps) {
    const long long page = page_table[static_cast<long long>(b) * max_pages + t / page_size];
    const long long offset = ((page * page_size + t % page_size) * Hkv + g) * D;
    float dot = 0.0f;
    for (int s = 0; s < slots; ++s) dot += q[s] * __bfloat162float(K_cache[offset + lane + 32 * s]);
    for (int step = 16; step > 0; step /= 2) dot += __shfl_xor_sync(0xFFFFFFFFu, dot, step);
    const float score = dot * scale;
    const float m_new = fmaxf(m, score);
    const float correction = expf(m - m_new), p = expf(score - m_new);
    l = l * correction + p;
    for (int s = 0; s < slots; ++s)
      o[s] = o[s] * correction + p * __bfloat162float(V_cache[offset + lane + 32 * s]);
    m = m_new;
  }
  for (int s = 0; s < slots; ++s) partial_o[warp][lane + 32 * s] = o[s];
  if (lane == 0) {
    partial_m[warp] = m;
    partial_l[warp] = l;
  }
  __syncthreads();
  if (warp != 0) return;
  // Merge the warps' rows: a warp that saw no token has m = -inf and weighs nothing.
  float m_all = -INFINITY;
  for (int w = 0; w < kWarps; ++w) m_all = fmaxf(m_all, partial_m[w]);
  float l_all = 0.0f, weight[kWarps];
  for (int w = 0; w < kWarps; ++w) {
    weight[w] = partial_l[w] > 0.0f ? expf(partial_m[w] - m_all) : 0.0f;
    l_all += partial_l[w] * weight[w];
  }
  for (int s = 0; s < slots; ++s) {
    float acc = 0.0f;
    for (int w = 0; w < kWarps; ++w) acc += partial_o[w][lane + 32 * s] * weight[w];
    O[row * D + lane + 32 * s] = __float2bfloat16(acc / l_all);
  }
  if (lane == 0) LSE[row] = m_all + logf(l_all);
}

}  // namespace

extern "C" size_t ptxbench_attention_decode_paged_workspace_bytes(int, int, int, int, int, int, int) {
  return 0;
}

extern "C" int ptxbench_attention_decode_paged_bf16(const __nv_bfloat16* Q, const __nv_bfloat16* K_cache,
                                                    const __nv_bfloat16* V_cache, const int* page_table,
                                                    const int* seq_lens, __nv_bfloat16* O, float* LSE, void*,
                                                    int B, int Hq, int Hkv, int D, int page_size,
                                                    int max_pages, int, float scale, cudaStream_t stream) {
  if (D % 32 != 0 || D > kMaxD || Hq % Hkv != 0 || B > 65535) return 1;
  decode_kernel<<<dim3(Hq, B), kWarps * 32, 0, stream>>>(Q, K_cache, V_cache, page_table, seq_lens, O, LSE,
                                                         Hq, Hkv, D, page_size, max_pages, scale);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
