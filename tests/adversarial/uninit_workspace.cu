// Defect: accumulates into its workspace without zeroing it first. An honest SIMT attention backward in the
// manner of solutions/examples/attention_backward_simt.cu, with the keys of each query row split four ways:
// one warp per (query row, quarter of the keys) adds its part of dQ into an fp32 accumulator in the workspace
// with atomicAdd, and a last kernel converts the accumulator to bf16 into dQ. dK and dV are computed per key
// row as in the example, reading Delta from the workspace too. The accumulator is never set to zero before
// the first atomicAdd, as if the workspace came zeroed.
// Why it must fail: the ABI says the workspace's contents are undefined on entry ("initialise what you
// use"). The harness fills the workspace with 0xFF bytes before each call, so dQ comes out NaN. Stopped by:
// correct (failed). (compute-sanitizer's initcheck would report the reads, but it takes every access to the
// judge's IPC-mapped buffers for an uninitialised one, so the sanitize stage does not run it.)
#include <math.h>

#include "ptxbench/abi.h"

namespace {

constexpr int kWarps = 4;
constexpr int kMaxD = 128;
constexpr int kSlots = kMaxD / 32;
constexpr int kSplits = 4;  // parts of the keys of a query row, one warp each, summed into the accumulator

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

// One warp per (b, h, i) and part of the keys: Delta_i = dO_i . O_i (the first part stores it), then this
// part's sum of dS_ij K_j over chunks of 32 keys (each lane one key), added into dq_acc.
__global__ void __launch_bounds__(kWarps * 32)
    dq_kernel(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V, const __nv_bfloat16* O,
              const float* LSE, const __nv_bfloat16* dO, float* dq_acc, float* delta, int B, int Hq, int Hkv,
              int Sq, int Sk, int D, float scale, int causal) {
  __shared__ float q_rows[kWarps][kMaxD], do_rows[kWarps][kMaxD];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const long long task = static_cast<long long>(blockIdx.x) * kWarps + warp;
  const long long row = task / kSplits;
  const int part = static_cast<int>(task % kSplits);
  if (row >= static_cast<long long>(B) * Hq * Sq) return;
  const int i = static_cast<int>(row % Sq), h = static_cast<int>(row / Sq % Hq),
            b = static_cast<int>(row / Sq / Hq);
  const int g = h / (Hq / Hkv);
  const int n = causal ? max(0, min(Sk, i + (Sk - Sq) + 1)) : Sk;
  const int per_part = (n + kSplits - 1) / kSplits;
  const int j_begin = min(n, part * per_part), j_end = min(n, j_begin + per_part);
  const long long at = q_at(b, i, h, Sq, Hq, D);
  float partial = 0;
  for (int d = lane; d < D; d += 32) {
    q_rows[warp][d] = __bfloat162float(Q[at + d]);
    do_rows[warp][d] = __bfloat162float(dO[at + d]);
    partial += do_rows[warp][d] * __bfloat162float(O[at + d]);
  }
  const float row_delta = warp_sum(partial);  // also a warp barrier for the shared rows
  __syncwarp();
  if (part == 0 && lane == 0) delta[row] = row_delta;
  const float lse = LSE[row];

  float acc[kSlots] = {};
  for (int j0 = j_begin; j0 < j_end; j0 += 32) {
    const int j = j0 + lane;
    float ds = 0;
    if (j < j_end) {
      const long long kv = kv_at(b, j, g, Sk, Hkv, D);
      const float p = expf(scale * dot(q_rows[warp], K + kv, D) - lse);
      ds = p * (dot(do_rows[warp], V + kv, D) - row_delta);
    }
    const int count = min(32, j_end - j0);
    for (int jj = 0; jj < count; ++jj) {
      const float ds_j = __shfl_sync(0xFFFFFFFFu, ds, jj);
      const __nv_bfloat16* k = K + kv_at(b, j0 + jj, g, Sk, Hkv, D);
      for (int t = 0; t < kSlots; ++t)
        if (lane + 32 * t < D) acc[t] += ds_j * __bfloat162float(k[lane + 32 * t]);
    }
  }
  // The planted defect: dq_acc was never zeroed, so these add to whatever the workspace held.
  for (int t = 0; t < kSlots; ++t)
    if (lane + 32 * t < D) atomicAdd(&dq_acc[at + lane + 32 * t], scale * acc[t]);
}

__global__ void dq_convert_kernel(const float* dq_acc, __nv_bfloat16* dQ, long long count) {
  for (long long x = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; x < count;
       x += static_cast<long long>(gridDim.x) * blockDim.x)
    dQ[x] = __float2bfloat16(dq_acc[x]);
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

unsigned blocks_for(long long warps) {
  return static_cast<unsigned>((warps + kWarps - 1) / kWarps);
}

// The workspace: Delta (one fp32 per query row and head), then the fp32 dQ accumulator at a 256-byte boundary.
size_t delta_bytes(int B, int Hq, int Sq) {
  const size_t bytes = static_cast<size_t>(B) * static_cast<size_t>(Hq) * static_cast<size_t>(Sq) * sizeof(float);
  return (bytes + 255) / 256 * 256;
}
size_t dq_elements(int B, int Hq, int Sq, int D) {
  return static_cast<size_t>(B) * static_cast<size_t>(Sq) * static_cast<size_t>(Hq) * static_cast<size_t>(D);
}

}  // namespace

extern "C" size_t ptxbench_attention_backward_workspace_bytes(int B, int Hq, int, int Sq, int, int D, int) {
  return delta_bytes(B, Hq, Sq) + dq_elements(B, Hq, Sq, D) * sizeof(float);
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
  float* dq_acc = reinterpret_cast<float*>(static_cast<char*>(workspace) + delta_bytes(B, Hq, Sq));
  const long long rows = static_cast<long long>(B) * Hq * Sq;
  dq_kernel<<<blocks_for(rows * kSplits), kWarps * 32, 0, stream>>>(Q, K, V, O, LSE, dO, dq_acc, delta, B, Hq,
                                                                     Hkv, Sq, Sk, D, scale, causal);
  dkdv_kernel<<<blocks_for(static_cast<long long>(B) * Hkv * Sk), kWarps * 32, 0, stream>>>(
      Q, K, V, LSE, dO, delta, dK, dV, B, Hq, Hkv, Sq, Sk, D, scale, causal);
  const long long count = static_cast<long long>(dq_elements(B, Hq, Sq, D));
  dq_convert_kernel<<<static_cast<unsigned>(min(count / 256 + 1, 1LL << 16)), 256, 0, stream>>>(dq_acc, dQ,
                                                                                                count);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
