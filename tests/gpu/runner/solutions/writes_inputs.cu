// Computes C correctly, then negates A[0]: an input written. Expected: failed, inputs_unchanged false, A
// changed.
#include "simt_gemm.cuh"

__global__ void negate_first(__nv_bfloat16* a) {
  a[0] = __hneg(a[0]);
}

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M,
                                  int N, int K, cudaStream_t stream) {
  if (simt::launch(A, B, C, M, N, K, stream, M) != cudaSuccess) return 1;
  negate_first<<<1, 1, 0, stream>>>(const_cast<__nv_bfloat16*>(A));
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
