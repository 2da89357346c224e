// A GEMM that does not compile: the wgmma accumulator is declared with the wrong type and a helper is called
// that does not exist. Its verdict must be a compile failure whose message points at both lines.
#include <ptxbench/abi.h>

__global__ void gemm_kernel(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N, int K) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= M || col >= N) return;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc += __bfloat162float(A[row * K + k]) * __bfloat162float(B[col * K + k]);
  __nv_bfloat16* out = acc;  // error: a float is not a pointer
  C[row * N + col] = __float2bfloat16(load_accumulator(out));  // error: no such function
}

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N,
                                  int K, cudaStream_t stream) {
  dim3 block(16, 16), grid((N + 15) / 16, (M + 15) / 16);
  gemm_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
  return 0;
}
