// A plain SIMT GEMM for the runner's GPU tests: C[M,N] = A[M,K] * B[N,K]^T, bf16 in, fp32 accumulate, bf16
// out. Correct for any M, N, K; slow (no tensor cores), which is what the tests want: the right answer, and
// long enough calls that work hidden on another stream is still running when the runner looks.
#pragma once

#include "ptxbench/abi.h"

namespace simt {

constexpr int kTile = 64;   // C tile per block
constexpr int kSlice = 16;  // K per shared-memory step

// 16 x 16 threads, each computing 4 x 4 elements of the block's 64 x 64 tile, strided by 16 so that the
// shared-memory reads of a warp hit different banks. Rows at or past `rows_to_write` are left unwritten.
__global__ void gemm_kernel(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N,
                            int K, int rows_to_write) {
  __shared__ float a_tile[kSlice][kTile + 1];
  __shared__ float b_tile[kSlice][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
  const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < K; k0 += kSlice) {
    for (int i = tid; i < kTile * kSlice; i += 256) {
      const int r = i / kSlice, kk = i % kSlice, k = k0 + kk;
      a_tile[kk][r] =
          (row0 + r < M && k < K) ? __bfloat162float(A[static_cast<size_t>(row0 + r) * K + k]) : 0.0f;
      b_tile[kk][r] =
          (col0 + r < N && k < K) ? __bfloat162float(B[static_cast<size_t>(col0 + r) * K + k]) : 0.0f;
    }
    __syncthreads();
    for (int kk = 0; kk < kSlice; ++kk) {
      float a[4], b[4];
      for (int i = 0; i < 4; ++i) a[i] = a_tile[kk][ty + 16 * i];
      for (int j = 0; j < 4; ++j) b[j] = b_tile[kk][tx + 16 * j];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i) {
    const int row = row0 + ty + 16 * i;
    for (int j = 0; j < 4; ++j) {
      const int col = col0 + tx + 16 * j;
      if (row < M && row < rows_to_write && col < N)
        C[static_cast<size_t>(row) * N + col] = __float2bfloat16(acc[i][j]);
    }
  }
}

inline cudaError_t launch(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N,
                          int K, cudaStream_t stream, int rows_to_write) {
  const dim3 grid((N + kTile - 1) / kTile, (M + kTile - 1) / kTile), block(16, 16);
  gemm_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K, rows_to_write);
  return cudaGetLastError();
}

}  // namespace simt
