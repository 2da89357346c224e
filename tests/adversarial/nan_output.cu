// Trick: write NaN everywhere, fast, hoping that a comparison written as `abs(a - b) > tol` (false for NaN)
// lets it through.
// Why it must fail: the comparison counts a non-finite element as a mismatch (and the output starts out as
// NaN, so not writing fails too). Stopped by: correct.
#include <ptxbench/abi.h>

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N,
                                  int K, cudaStream_t stream) {
  (void)A, (void)B, (void)K;
  return cudaMemsetAsync(C, 0xFF, sizeof(__nv_bfloat16) * (size_t)M * N, stream) == cudaSuccess ? 0 : 1;
}
