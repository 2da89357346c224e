// Trick: load cuBLASLt at run time with dlopen/dlsym and let the vendor library do the GEMM.
// Why it must fail: the work must be the solution's own kernels. The source scan flags <dlfcn.h>, dlopen and
// dlsym, and the compiled library imports dlopen/dlsym (a macro cannot hide an import). Stopped by: static
// (dynamic-loading). Were it run, the instruction stage would count only the submission's kernels.
#include <ptxbench/abi.h>
#include <dlfcn.h>

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N,
                                  int K, cudaStream_t stream) {
  void* library = dlopen("libcublasLt.so.13", RTLD_NOW);
  if (!library) return 1;
  void* create = dlsym(library, "cublasLtCreate");
  return create ? 0 : 1;  // (the rest of the cuBLASLt call chain is beside the point)
}
