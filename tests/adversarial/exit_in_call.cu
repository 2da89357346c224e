// Trick: end the process inside the call with exit(0), hoping a harness reads exit code 0 as success.
// Why it must fail: the source scan flags exit(); at run time a process that ends without its authenticated
// result is a runtime_error ("ended without a result"; exit_in_static_ctor.cu tests that path). Stopped by:
// static (process).
#include <ptxbench/abi.h>
#include <cstdlib>

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N,
                                  int K, cudaStream_t stream) {
  (void)A, (void)B, (void)C, (void)M, (void)N, (void)K, (void)stream;
  exit(0);
}
