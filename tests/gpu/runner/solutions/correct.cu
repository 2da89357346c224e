// Correct: the SIMT GEMM on the given stream. Expected: passed in every mode.
#include "simt_gemm.cuh"

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M,
                                  int N, int K, cudaStream_t stream) {
  return simt::launch(A, B, C, M, N, K, stream, M) == cudaSuccess ? 0 : 1;
}
