// A plain, correct attention backward (include/ptxbench/abi.h) with no Hopper instructions, fp32 throughout:
//   1. one warp per query row (b, h, i): Delta_i = dO_i . O_i into the workspace, then dQ_i over chunks of 32
//      keys (each lane handles one key: p = exp(s - LSE), dS = p (dO_i . v_j - Delta_i)).
//   2. one warp per key row (b, g, j): dK_j and dV_j over the query heads of KV group g and their rows,
//   chunks
//      of 32 rows (each lane one row), reading Delta from the workspace.
// It exercises the whole evaluation path, the workspace included; its verdict is correct, and the instruction
// stage fails (no wgmma, TMA or mbarrier).
#include <math.h>

#include "ptxbench/abi.h"

namespace {

constexpr int kWarps = 4;
constexpr int kMaxD = 128;
constexpr int kSlots = kMaxD / 32;

__device__ long long q_at(int b, int i, int h, int Sq, int Hq, int D) {
  return ((static_cast<long long>(b) * Sq + i) * Hq + h) * D;
}
__device__ long long kv_at(int b, int j, int g, int Sk, int Hkv, int D) {
  return ((static_cast<long long>(b) * Sk + j) * Hkv + g) * D;
}
__device__ float warp_sum(float v) {
  for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(0xFFFFFFFFu, v, off);
  return v;
}
__device__ float dot(const float* x, const __nv_bfloat16* y, int D) {
  float acc = 0;
  for (int d = 0; d < D; ++d) acc += x[d] * __bfloat162float(y[d]);
  return acc;
}

__global__ void __launch_bounds__(kWarps * 32)
    dq_kernel(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V, const __nv_bfloat16* O,
              const float* LSE, const __nv_bfloat16* dO, __nv_bfloat16* dQ, float* delta, int B, int Hq,
              int Hkv, int Sq, int Sk, int D, float scale, int causal) {
  __shared__ float q_rows[kWarps][kMaxD], do_rows[kWarps][kMaxD];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const long long row = static_cast<long long>(blockIdx.x) * kWarps + warp;
  if (row >= static_cast<long long>(B) * Hq * Sq) return;
  const int i = static_cast<int>(row % Sq), h = static_cast<int>(row / Sq % Hq),
            b = static_cast<int>(row / Sq / Hq);
  const int g = h / (Hq / Hkv);
  const int n = causal ? max(0, min(Sk, i + (Sk - Sq) + 1)) : Sk;
  const long long at = q_at(b, i, h, Sq, Hq, D);
  float partial = 0;
  for (int d = lane; d < D; d += 32) {
    q_rows[warp][d] = __bfloat162float(Q[at + d]);
    do_rows[warp][d] = __bfloat162float(dO[at + d]);
    partial += do_rows[warp][d] * __bfloat162float(O[at + d]);
  }
  const float row_delta = warp_sum(partial);  // also a warp barrier for the shared rows
  __syncwarp();
  if (lane == 0) delta[row] = row_delta;
  const float lse = LSE[row];

  float acc[kSlots] = {};
  for (int j0 = 0; j0 < n; j0 += 32) {
    const int j = j0 + lane;
    float ds = 0;
    if (j < n) {
      const long long kv = kv_at(b, j, g, Sk, Hkv, D);
      const float p = expf(scale * dot(q_rows[warp], K + kv, D) - lse);
      ds = p * (dot(do_rows[warp], V + kv, D) - row_delta);
    }
    const int count = min(32, n - j0);
    for (int jj = 0; jj < count; ++jj) {
      const float ds_j = __shfl_sync(0xFFFFFFFFu, ds, jj);
      const __nv_bfloat16* k = K + kv_at(b, j0 + jj, g, Sk, Hkv, D);
      for (int t = 0; t < kSlots; ++t)
        if (lane + 32 * t < D) acc[t] += ds_j * __bfloat162float(k[lane + 32 * t]);
    }
  }
  for (int t = 0; t < kSlots; ++t)
    if (lane + 32 * t < D) dQ[at + lane + 32 * t] = __float2bfloat16(scale * acc[t]);
}

__global__ void __launch_bounds__(kWarps * 32)
    dkdv_kernel(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V, const float* LSE,
                const __nv_bfloat16* dO, const float* delta, __nv_bfloat16* dK, __nv_bfloat16* dV, int B,
                int Hq, int Hkv, int Sq, int Sk, int D, float scale, int causal) {
  __shared__ float k_rows[kWarps][kMaxD], v_rows[kWarps][kMaxD];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const long long row = static_cast<long long>(blockIdx.x) * kWarps + warp;  // (b, g, j), j fastest
  if (row >= static_cast<long long>(B) * Hkv * Sk) return;
  const int j = static_cast<int>(row % Sk), g = static_cast<int>(row / Sk % Hkv),
            b = static_cast<int>(row / Sk / Hkv);
  const int group = Hq / Hkv;
  const int first = causal ? max(0, j - (Sk - Sq)) : 0;  // query rows first .. Sq-1 see key j
  const long long at = kv_at(b, j, g, Sk, Hkv, D);
  for (int d = lane; d < D; d += 32) {
    k_rows[warp][d] = __bfloat162float(K[at + d]);
    v_rows[warp][d] = __bfloat162float(V[at + d]);
  }
  __syncwarp();

  float dk[kSlots] = {}, dv[kSlots] = {};
  for (int h = g * group; h < (g + 1) * group; ++h) {
    for (int i0 = first; i0 < Sq; i0 += 32) {
      const int i = i0 + lane;
      float p = 0, ds = 0;
      if (i < Sq) {
        const long long qa = q_at(b, i, h, Sq, Hq, D);
        const long long stat = (static_cast<long long>(b) * Hq + h) * Sq + i;
        p = expf(scale * dot(k_rows[warp], Q + qa, D) - LSE[stat]);
        ds = p * (dot(v_rows[warp], dO + qa, D) - delta[stat]);
      }
      const int count = min(32, Sq - i0);
      for (int ii = 0; ii < count; ++ii) {
        const float p_i = __shfl_sync(0xFFFFFFFFu, p, ii), ds_i = __shfl_sync(0xFFFFFFFFu, ds, ii);
        const long long qa = q_at(b, i0 + ii, h, Sq, Hq, D);
        for (int t = 0; t < kSlots; ++t) {
          const int d = lane + 32 * t;
          if (d < D) {
            dv[t] += p_i * __bfloat162float(dO[qa + d]);
            dk[t] += ds_i * __bfloat162float(Q[qa + d]);
          }
        }
      }
    }
  }
  for (int t = 0; t < kSlots; ++t) {
    const int d = lane + 32 * t;
    if (d < D) {
      dK[at + d] = __float2bfloat16(scale * dk[t]);
      dV[at + d] = __float2bfloat16(dv[t]);
    }
  }
}

unsigned blocks_for(long long rows) {
  return static_cast<unsigned>((rows + kWarps - 1) / kWarps);
}

}  // namespace

// Delta, one fp32 per query row and head.
extern "C" size_t ptxbench_attention_backward_workspace_bytes(int B, int Hq, int, int Sq, int, int, int) {
  return static_cast<size_t>(B) * static_cast<size_t>(Hq) * static_cast<size_t>(Sq) * sizeof(float);
}

extern "C" int ptxbench_attention_backward_bf16(const __nv_bfloat16* Q, const __nv_bfloat16* K,
                                                const __nv_bfloat16* V, const __nv_bfloat16* O,
                                                const float* LSE, const __nv_bfloat16* dO, __nv_bfloat16* dQ,
                                                __nv_bfloat16* dK, __nv_bfloat16* dV, void* workspace, int B,
                                                int Hq, int Hkv, int Sq, int Sk, int D, float scale,
                                                int causal, cudaStream_t stream) {
  if (B <= 0 || Hq <= 0 || Hkv <= 0 || Sq <= 0 || Sk <= 0 || D <= 0 || D > kMaxD || Hq % Hkv != 0 ||
      workspace == nullptr)
    return 1;
  float* delta = static_cast<float*>(workspace);
  dq_kernel<<<blocks_for(static_cast<long long>(B) * Hq * Sq), kWarps * 32, 0, stream>>>(
      Q, K, V, O, LSE, dO, dQ, delta, B, Hq, Hkv, Sq, Sk, D, scale, causal);
  dkdv_kernel<<<blocks_for(static_cast<long long>(B) * Hkv * Sk), kWarps * 32, 0, stream>>>(
      Q, K, V, LSE, dO, delta, dK, dV, B, Hq, Hkv, Sq, Sk, D, scale, causal);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
