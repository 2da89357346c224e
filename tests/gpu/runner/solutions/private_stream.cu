// Breaks the ABI: runs the GEMM on a stream of its own, created per call, and returns at once. Expected:
// failed (output not complete when `stream` is done, output_stable false); in time mode
// hidden_work_suspected.
#include "simt_gemm.cuh"

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M,
                                  int N, int K, cudaStream_t) {
  cudaStream_t own = nullptr;
  if (cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking) != cudaSuccess) return 1;
  return simt::launch(A, B, C, M, N, K, own, M) == cudaSuccess ? 0 : 1;  // the stream is leaked on purpose
}
