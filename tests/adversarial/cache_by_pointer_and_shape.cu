// Trick: remember the last call's pointers and shape and skip the work when they repeat (benchmarks that
// reuse buffers and inputs let this through).
// Why it cannot gain: the ABI forbids state between calls; the harness gives fresh inputs and a NaN-poisoned
// output on every call, so a skipped call would leave NaN, and it moves every buffer before every call, so
// the pointers never repeat and the work is never skipped (an honest SIMT verdict: the instruction stage
// fails it). A repeat would fail correct (any trial after the first) and the time stage's check of every
// timed call.
#include <ptxbench/abi.h>

// A plain SIMT GEMM (no tensor cores): 64 x 64 tile per 16 x 16 block, 4 x 4 elements per thread.
namespace simt {
constexpr int kTile = 64, kSlice = 16;
template <typename Acc>
__global__ void gemm_kernel(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N, int K,
                            int rows_to_write) {
  __shared__ float a_tile[kSlice][kTile + 1];
  __shared__ float b_tile[kSlice][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
  const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;
  Acc acc[4][4];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) acc[i][j] = Acc(0.0f);
  for (int k0 = 0; k0 < K; k0 += kSlice) {
    for (int i = tid; i < kTile * kSlice; i += 256) {
      const int r = i / kSlice, kk = i % kSlice, k = k0 + kk;
      a_tile[kk][r] = (row0 + r < M && k < K) ? __bfloat162float(A[(size_t)(row0 + r) * K + k]) : 0.0f;
      b_tile[kk][r] = (col0 + r < N && k < K) ? __bfloat162float(B[(size_t)(col0 + r) * K + k]) : 0.0f;
    }
    __syncthreads();
    for (int kk = 0; kk < kSlice; ++kk)
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
          acc[i][j] = Acc(float(acc[i][j]) + a_tile[kk][ty + 16 * i] * b_tile[kk][tx + 16 * j]);
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const int row = row0 + ty + 16 * i, col = col0 + tx + 16 * j;
      if (row < M && row < rows_to_write && col < N) C[(size_t)row * N + col] = __float2bfloat16(float(acc[i][j]));
    }
}
inline int launch(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N, int K,
                  cudaStream_t stream, int rows_to_write = 1 << 30) {
  const dim3 grid((N + kTile - 1) / kTile, (M + kTile - 1) / kTile), block(16, 16);
  gemm_kernel<float><<<grid, block, 0, stream>>>(A, B, C, M, N, K, rows_to_write);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
}  // namespace simt

namespace {
const void* last[3] = {};
int last_shape[3] = {};
}  // namespace

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N,
                                  int K, cudaStream_t stream) {
  if (last[0] == A && last[1] == B && last[2] == C && last_shape[0] == M && last_shape[1] == N && last_shape[2] == K)
    return 0;
  last[0] = A, last[1] = B, last[2] = C;
  last_shape[0] = M, last_shape[1] = N, last_shape[2] = K;
  return simt::launch(A, B, C, M, N, K, stream);
}
