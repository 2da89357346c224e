// Trick: do half the work: sum only over the first K/2 products (twice as fast, plausible-looking output).
// Why it must fail: the result is wrong by far more than the tolerance (the inputs are scaled so that every
// element of C is ~N(0,1)). Stopped by: correct.
#include <ptxbench/abi.h>

namespace {
__global__ void half_k_kernel(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N, int K) {
  const int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K / 2; ++k)
    acc += __bfloat162float(A[(size_t)row * K + k]) * __bfloat162float(B[(size_t)col * K + k]);
  C[(size_t)row * N + col] = __float2bfloat16(acc);
}
}  // namespace

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N,
                                  int K, cudaStream_t stream) {
  const dim3 grid((N + 15) / 16, (M + 15) / 16), block(16, 16);
  half_k_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
