// Defect: a shared-memory race. The plain SIMT GEMM of solutions/examples/gemm_simt.cu (64x16 slices of A
// and B staged through shared memory) without the __syncthreads() between the inner product over a slice
// and the loading of the next: a warp that finishes its products overwrites a_tile and b_tile while other
// warps still read them (a write-after-read hazard on every slice but the last).
// Why it must fail: the result depends on how the warps happen to be scheduled. Its output may still be
// right by luck (warps of a block often run in step), so nothing is expected of the correct stage. Stopped
// by: sanitize (racecheck reports the shared-memory hazards: failed).
#include <ptxbench/abi.h>

namespace {

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
    // 64 x 16 elements of each operand, 4 per thread; rows past M or N and columns past K load as zero.
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
    // The planted defect: no __syncthreads() here, so a thread may start loading the next slice into
    // a_tile and b_tile while others still read this one.
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

}  // namespace

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N,
                                  int K, cudaStream_t stream) {
  dim3 grid((N + kTile - 1) / kTile, (M + kTile - 1) / kTile);
  gemm_simt_kernel<<<grid, 256, 0, stream>>>(A, B, C, M, N, K);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
