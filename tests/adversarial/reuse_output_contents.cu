// Trick: trust what is already in C: a 64 x 64 tile whose first element is a finite number is taken to hold
// the previous call's result and is skipped (cheap when a harness reuses the output buffer untouched).
// Why it cannot gain: the runner fills C with NaN before every call (check, profile and every timed call),
// so every tile is computed, and the output check and the timing see the full work. The expected verdict is
// therefore an honest one: correct and time pass (the speedup is that of the SIMT kernel), instructions fail
// (no wgmma). If poisoning were dropped, time would show a speedup far above the SIMT kernel's.
#include <ptxbench/abi.h>

namespace {
constexpr int kTile = 64, kSlice = 16;
__global__ void gemm_skipping_kernel(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N,
                                     int K) {
  const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;
  if (!__hisnan(C[(size_t)row0 * N + col0])) return;  // "already computed"
  __shared__ float a_tile[kSlice][kTile + 1];
  __shared__ float b_tile[kSlice][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < K; k0 += kSlice) {
    for (int i = tid; i < kTile * kSlice; i += 256) {
      const int r = i / kSlice, kk = i % kSlice, k = k0 + kk;
      a_tile[kk][r] = (row0 + r < M && k < K) ? __bfloat162float(A[(size_t)(row0 + r) * K + k]) : 0.0f;
      b_tile[kk][r] = (col0 + r < N && k < K) ? __bfloat162float(B[(size_t)(col0 + r) * K + k]) : 0.0f;
    }
    __syncthreads();
    for (int kk = 0; kk < kSlice; ++kk)
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) acc[i][j] += a_tile[kk][ty + 16 * i] * b_tile[kk][tx + 16 * j];
    __syncthreads();
  }
  // Every thread has read the tile's first element before anyone writes it (the K loop synchronises).
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const int row = row0 + ty + 16 * i, col = col0 + tx + 16 * j;
      if (row < M && col < N) C[(size_t)row * N + col] = __float2bfloat16(acc[i][j]);
    }
}
}  // namespace

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N,
                                  int K, cudaStream_t stream) {
  const dim3 grid((N + kTile - 1) / kTile, (M + kTile - 1) / kTile), block(16, 16);
  gemm_skipping_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
