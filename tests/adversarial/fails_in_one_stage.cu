// Defect: fails only in a process whose first call is smaller than the task's main shape. The GEMM is the
// plain, correct SIMT kernel of solutions/examples/gemm_simt.cu; the host code notes on its first call
// whether M is below 8192 (the main shape's M) and from then on, after launching the kernel, returns a
// non-zero error code if it was (as host code whose first call picks a configuration for the process might).
// Why it must fail: a runtime failure in any stage fails the verdict. Only the sanitize stage's process
// starts with the smallest shape (M = 128, one call); the correct stage's process starts with the main shape
// (then M = 128 and M = 1999, every call returning 0), and so do the instruction and time stages. Stopped by:
// sanitize (runtime_error: the call's error code), although correct and time pass.
// The kernel and its launch: simt/gemm.cuh, the manifest's prelude.

namespace {

// The planted defect: a flag set by the process's first call.
int first_m = 0;

}  // namespace

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N,
                                  int K, cudaStream_t stream) {
  if (first_m == 0) first_m = M;
  if (!simt::launch(A, B, C, M, N, K, stream)) return 1;
  return first_m < 8192 ? 7 : 0;
}
