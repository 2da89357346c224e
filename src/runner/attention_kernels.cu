#include "runner/attention_kernels.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <stdexcept>
#include <string>

#include "runner/cuda_check.h"
#include "runner/device_buffer.h"

namespace ptxbench::runner {
namespace {

constexpr int kThreads = 128;  // per block; the per-thread accumulators below assume it
constexpr int kSlots = kAttentionReferenceMaxD / kThreads;  // head-dim elements each thread accumulates
constexpr int64_t kMaxGrid = 8192;

void check_launch(const char* kernel) {
  check_cuda(cudaGetLastError(), kernel, __FILE__, __LINE__);
}

// ---- indexing (include/ptxbench/abi.h)
// ----------------------------------------------------------------------

__device__ int64_t q_index(const AttentionDims& s, int b, int i, int h) {  // Q, O, dO, dQ: [B,Sq,Hq,D]
  return ((int64_t{b} * s.sq + i) * s.hq + h) * s.d;
}
__device__ int64_t kv_index(const AttentionDims& s, int b, int j, int g) {  // K, V, dK, dV: [B,Sk,Hkv,D]
  return ((int64_t{b} * s.sk + j) * s.hkv + g) * s.d;
}
__device__ int64_t lse_index(const AttentionDims& s, int b, int h, int i) {  // LSE, Delta: [B,Hq,Sq]
  return (int64_t{b} * s.hq + h) * s.sq + i;
}
// Keys 0 .. visible_keys - 1 are visible to query row i (causal: j <= i + Sk - Sq, bottom-right aligned).
__device__ int visible_keys(const AttentionDims& s, int i) {
  if (!s.causal) return s.sk;
  return max(0, min(s.sk, i + (s.sk - s.sq) + 1));
}
// The row a block works on: blocks are numbered position fastest, then head, then batch.
struct BlockRow {
  int b, head, position;
};
__device__ BlockRow block_row(int positions, int heads) {
  const int64_t block = blockIdx.x;
  return {static_cast<int>(block / positions / heads), static_cast<int>(block / positions % heads),
          static_cast<int>(block % positions)};
}
// Query rows first_query .. Sq - 1 see key j.
__device__ int first_query(const AttentionDims& s, int j) {
  return s.causal ? max(0, j - (s.sk - s.sq)) : 0;
}

__device__ float dot_bf16(const float* x, const __nv_bfloat16* y, int n) {
  float acc = 0;
  for (int d = 0; d < n; ++d) acc += x[d] * __bfloat162float(y[d]);
  return acc;
}

// Block-wide reductions for kThreads threads; every thread gets the result. `scratch` holds 32 floats.
__device__ float block_reduce(float value, float* scratch, bool is_max) {
  for (int offset = 16; offset > 0; offset /= 2) {
    const float other = __shfl_xor_sync(0xFFFFFFFFu, value, offset);
    value = is_max ? fmaxf(value, other) : value + other;
  }
  __syncthreads();  // scratch may still be read by a previous reduction
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = value;
  __syncthreads();
  value = scratch[0];
  for (int w = 1; w < kThreads / 32; ++w) value = is_max ? fmaxf(value, scratch[w]) : value + scratch[w];
  return value;
}

__device__ void load_row(float* out, const __nv_bfloat16* row, int n) {
  for (int d = threadIdx.x; d < n; d += kThreads) out[d] = __bfloat162float(row[d]);
}

// ---- forward: one block per (b, h, i)
// ---------------------------------------------------------------------- Shared memory: q (D floats), the
// row's scores then exponentials (Sk floats), reduction scratch (32).

__global__ void __launch_bounds__(kThreads)
    forward_kernel(AttentionDims s, const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                   float* o, float* lse) {
  extern __shared__ float smem[];
  float* scratch = smem;
  float* q_row = smem + 32;
  float* p = q_row + s.d;
  const auto [b, h, i] = block_row(s.sq, s.hq);
  const int g = h / (s.hq / s.hkv);
  const int n = visible_keys(s, i);
  load_row(q_row, q + q_index(s, b, i, h), s.d);
  __syncthreads();

  float row_max = -INFINITY;
  for (int j = threadIdx.x; j < n; j += kThreads) {
    p[j] = s.scale * dot_bf16(q_row, k + kv_index(s, b, j, g), s.d);
    row_max = fmaxf(row_max, p[j]);
  }
  row_max = block_reduce(row_max, scratch, true);
  float row_sum = 0;
  for (int j = threadIdx.x; j < n; j += kThreads) {
    p[j] = expf(p[j] - row_max);
    row_sum += p[j];
  }
  row_sum = block_reduce(row_sum, scratch, false);  // also orders the writes of p before the reads below

  if (threadIdx.x == 0) lse[lse_index(s, b, h, i)] = n > 0 ? row_max + logf(row_sum) : -INFINITY;
  for (int d = threadIdx.x; d < s.d; d += kThreads) {
    float acc = 0;
    for (int j = 0; j < n; ++j) acc += p[j] * __bfloat162float(v[kv_index(s, b, j, g) + d]);
    o[q_index(s, b, i, h) + d] = n > 0 ? acc / row_sum : 0.0f;
  }
}

// ---- backward, dQ and Delta: one block per (b, h, i)
// ------------------------------------------------------- Shared memory: q, dO (D floats each), dS of the row
// (Sk floats), scratch (32).

__global__ void __launch_bounds__(kThreads)
    backward_dq_kernel(AttentionDims s, const __nv_bfloat16* q, const __nv_bfloat16* k,
                       const __nv_bfloat16* v, const __nv_bfloat16* o, const float* lse,
                       const __nv_bfloat16* d_o, float* dq, float* delta) {
  extern __shared__ float smem[];
  float* scratch = smem;
  float* q_row = smem + 32;
  float* do_row = q_row + s.d;
  float* ds = do_row + s.d;
  const auto [b, h, i] = block_row(s.sq, s.hq);
  const int g = h / (s.hq / s.hkv);
  const int n = visible_keys(s, i);
  const int64_t row = q_index(s, b, i, h);
  load_row(q_row, q + row, s.d);
  load_row(do_row, d_o + row, s.d);
  float partial = 0;
  for (int d = threadIdx.x; d < s.d; d += kThreads)
    partial += __bfloat162float(d_o[row + d]) * __bfloat162float(o[row + d]);
  const float row_delta = block_reduce(partial, scratch, false);  // also makes q_row and do_row visible
  if (threadIdx.x == 0) delta[lse_index(s, b, h, i)] = row_delta;
  const float row_lse = lse[lse_index(s, b, h, i)];

  for (int j = threadIdx.x; j < n; j += kThreads) {
    const float p = expf(s.scale * dot_bf16(q_row, k + kv_index(s, b, j, g), s.d) - row_lse);
    const float dp = dot_bf16(do_row, v + kv_index(s, b, j, g), s.d);
    ds[j] = p * (dp - row_delta);
  }
  __syncthreads();
  for (int d = threadIdx.x; d < s.d; d += kThreads) {
    float acc = 0;
    for (int j = 0; j < n; ++j) acc += ds[j] * __bfloat162float(k[kv_index(s, b, j, g) + d]);
    dq[row + d] = s.scale * acc;
  }
}

// ---- backward, dK and dV: one block per (b, g, j), over the query heads of group g
// ------------------------- Shared memory: k, v (D floats each), P and dS of column j for one head (Sq floats
// each). Needs Delta from backward_dq_kernel.

__global__ void __launch_bounds__(kThreads)
    backward_dkdv_kernel(AttentionDims s, const __nv_bfloat16* q, const __nv_bfloat16* k,
                         const __nv_bfloat16* v, const float* lse, const __nv_bfloat16* d_o,
                         const float* delta, float* dk, float* dv) {
  extern __shared__ float smem[];
  float* k_row = smem;
  float* v_row = k_row + s.d;
  float* p = v_row + s.d;
  float* ds = p + s.sq;
  const auto [b, g, j] = block_row(s.sk, s.hkv);
  const int group = s.hq / s.hkv;
  const int i0 = first_query(s, j);
  const int64_t row = kv_index(s, b, j, g);
  load_row(k_row, k + row, s.d);
  load_row(v_row, v + row, s.d);
  float dk_acc[kSlots] = {}, dv_acc[kSlots] = {};
  for (int h = g * group; h < (g + 1) * group; ++h) {
    __syncthreads();  // k_row, v_row loaded; the previous head's p and ds read
    for (int i = i0 + threadIdx.x; i < s.sq; i += kThreads) {
      const int64_t qi = q_index(s, b, i, h);
      const float pij = expf(s.scale * dot_bf16(k_row, q + qi, s.d) - lse[lse_index(s, b, h, i)]);
      const float dp = dot_bf16(v_row, d_o + qi, s.d);
      p[i] = pij;
      ds[i] = pij * (dp - delta[lse_index(s, b, h, i)]);
    }
    __syncthreads();
    for (int slot = 0; slot < kSlots; ++slot) {
      const int d = threadIdx.x + slot * kThreads;
      if (d >= s.d) break;
      for (int i = i0; i < s.sq; ++i) {
        const int64_t qi = q_index(s, b, i, h);
        dv_acc[slot] += p[i] * __bfloat162float(d_o[qi + d]);
        dk_acc[slot] += ds[i] * __bfloat162float(q[qi + d]);
      }
    }
  }
  for (int slot = 0; slot < kSlots; ++slot) {
    const int d = threadIdx.x + slot * kThreads;
    if (d >= s.d) break;
    dk[row + d] = s.scale * dk_acc[slot];
    dv[row + d] = dv_acc[slot];
  }
}

__global__ void round_kernel(const float* in, __nv_bfloat16* out, __nv_bfloat16* copy, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    out[i] = copy[i] = __float2bfloat16(in[i]);
  }
}

unsigned grid_for(int64_t items) {
  return static_cast<unsigned>(std::clamp<int64_t>((items + 255) / 256, 1, kMaxGrid));
}

void check_dims(const AttentionDims& s) {
  if (s.b <= 0 || s.hq <= 0 || s.hkv <= 0 || s.sq <= 0 || s.sk <= 0 || s.d <= 0 || s.hq % s.hkv != 0 ||
      s.d > kAttentionReferenceMaxD) {
    throw std::invalid_argument("attention reference: dimensions out of range");
  }
}

// Lets `kernel` use `bytes` of dynamic shared memory, or throws when the device has less.
template <typename Kernel>
void allow_shared(Kernel kernel, size_t bytes) {
  int device = 0, limit = 0;
  PTXBENCH_CUDA(cudaGetDevice(&device));
  PTXBENCH_CUDA(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (bytes > static_cast<size_t>(limit)) {
    throw std::invalid_argument("attention reference: a sequence this long needs " + std::to_string(bytes) +
                                " bytes of shared memory per block; the device has " + std::to_string(limit));
  }
  PTXBENCH_CUDA(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
}

size_t forward_shared(const AttentionDims& s) {
  return sizeof(float) * (32 + static_cast<size_t>(s.d) + static_cast<size_t>(s.sk));
}
size_t dq_shared(const AttentionDims& s) {
  return sizeof(float) * (32 + 2 * static_cast<size_t>(s.d) + static_cast<size_t>(s.sk));
}
size_t dkdv_shared(const AttentionDims& s) {
  return sizeof(float) * (2 * static_cast<size_t>(s.d) + 2 * static_cast<size_t>(s.sq));
}

unsigned blocks(int64_t count) {
  if (count > INT_MAX) throw std::invalid_argument("attention reference: too many rows for one grid");
  return static_cast<unsigned>(count);
}

}  // namespace

size_t attention_reference_shared_bytes(const AttentionDims& dims) {
  return std::max({forward_shared(dims), dq_shared(dims), dkdv_shared(dims)});
}

void attention_forward_reference(const AttentionDims& dims, const __nv_bfloat16* q, const __nv_bfloat16* k,
                                 const __nv_bfloat16* v, float* o, float* lse, cudaStream_t stream) {
  check_dims(dims);
  const size_t shared = forward_shared(dims);
  allow_shared(forward_kernel, shared);
  forward_kernel<<<blocks(int64_t{dims.b} * dims.hq * dims.sq), kThreads, shared, stream>>>(dims, q, k, v, o,
                                                                                            lse);
  check_launch("forward_kernel");
}

void attention_backward_reference(const AttentionDims& dims, const __nv_bfloat16* q, const __nv_bfloat16* k,
                                  const __nv_bfloat16* v, const __nv_bfloat16* o, const float* lse,
                                  const __nv_bfloat16* d_o, float* dq, float* dk, float* dv, float* delta,
                                  cudaStream_t stream) {
  check_dims(dims);
  const size_t shared_dq = dq_shared(dims), shared_dkdv = dkdv_shared(dims);
  allow_shared(backward_dq_kernel, shared_dq);
  allow_shared(backward_dkdv_kernel, shared_dkdv);
  backward_dq_kernel<<<blocks(int64_t{dims.b} * dims.hq * dims.sq), kThreads, shared_dq, stream>>>(
      dims, q, k, v, o, lse, d_o, dq, delta);
  check_launch("backward_dq_kernel");
  backward_dkdv_kernel<<<blocks(int64_t{dims.b} * dims.hkv * dims.sk), kThreads, shared_dkdv, stream>>>(
      dims, q, k, v, lse, d_o, delta, dk, dv);
  check_launch("backward_dkdv_kernel");
}

void round_to_bf16(const float* in, __nv_bfloat16* out, __nv_bfloat16* copy, int64_t n, cudaStream_t stream) {
  round_kernel<<<grid_for(n), 256, 0, stream>>>(in, out, copy, n);
  check_launch("round_kernel");
}

}  // namespace ptxbench::runner
