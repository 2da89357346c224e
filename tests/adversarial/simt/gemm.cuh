// Prelude of the corpus entries whose defect is in their host code: the plain, correct SIMT GEMM of
// solutions/examples/gemm_simt.cu (a 64 x 64 tile per block of 256 threads, 4 x 4 outputs each, 16-deep
// slices of A and B in shared memory, fp32 accumulation) and its launch.
#include <ptxbench/abi.h>

namespace simt {

constexpr int kTile = 64;
constexpr int kSlice = 16;

__global__ void __launch_bounds__(256) gemm_simt_kernel(const __nv_bfloat16* __restrict__ A,
                                                        const __nv_bfloat16* __restrict__ B,
                                                        __nv_bfloat16* __restrict__ C, int M, int N, int K) {
  __shared__ float a_tile[kSlice][kTile + 1];  // [k][m], padded against bank conflicts
  __shared__ float b_tile[kSlice][kTile + 1];  // [k][n]
  const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;
  const int tr = threadIdx.x / 16, tc = threadIdx.x % 16;  // this thread's 4x4 block
  float acc[4][4] = {};

  for (int k0 = 0; k0 < K; k0 += kSlice) {
    for (int i = threadIdx.x; i < kTile * kSlice; i += blockDim.x) {
      int r = i / kSlice, k = i % kSlice;
      int ga = row0 + r, gb = col0 + r, gk = k0 + k;
      a_tile[k][r] = ga < M && gk < K ? __bfloat162float(A[(size_t)ga * K + gk]) : 0.f;
      b_tile[k][r] = gb < N && gk < K ? __bfloat162float(B[(size_t)gb * K + gk]) : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kSlice; ++k) {
      float a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) a[i] = a_tile[k][tr * 4 + i], b[i] = b_tile[k][tc * 4 + i];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < 4; ++i) {
    int r = row0 + tr * 4 + i;
    if (r >= M) continue;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      int c = col0 + tc * 4 + j;
      if (c < N) C[(size_t)r * N + c] = __float2bfloat16(acc[i][j]);
    }
  }
}

// The kernel over C's tiles, on `stream`; whether the launch went in.
inline bool launch(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N, int K,
                   cudaStream_t stream) {
  const dim3 grid((N + kTile - 1) / kTile, (M + kTile - 1) / kTile);
  gemm_simt_kernel<<<grid, 256, 0, stream>>>(A, B, C, M, N, K);
  return cudaGetLastError() == cudaSuccess;
}

}  // namespace simt
