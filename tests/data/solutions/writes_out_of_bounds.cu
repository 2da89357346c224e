// A correct SIMT GEMM that also writes one element past the end of C. The output it was asked for is right, so
// only the memory-safety stage can catch it.
#include <ptxbench/abi.h>

__global__ void gemm_kernel(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N, int K) {
  int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= M || col >= N) return;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc += __bfloat162float(A[(size_t)row * K + k]) * __bfloat162float(B[(size_t)col * K + k]);
  C[(size_t)row * N + col] = __float2bfloat16(acc);
  if (row == M - 1 && col == N - 1) C[(size_t)M * N + 64] = __float2bfloat16(acc);  // out of bounds
}

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N,
                                  int K, cudaStream_t stream) {
  dim3 block(16, 16), grid((N + 15) / 16, (M + 15) / 16);
  gemm_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
  return 0;
}
