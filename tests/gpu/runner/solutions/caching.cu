// Breaks the ABI: keeps state, and skips the work when called again with the same pointers and sizes.
// Expected: passed in check mode, where the buffers move before every call and the cache never hits; failed in
// time mode, whose calls keep their buffers (fresh inputs, poisoned outputs): the skipped calls' outputs are
// wrong.
#include "simt_gemm.cuh"

namespace {
const void* last_call[3] = {nullptr, nullptr, nullptr};
}

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M,
                                  int N, int K, cudaStream_t stream) {
  if (last_call[0] == A && last_call[1] == B && last_call[2] == C) return 0;
  last_call[0] = A;
  last_call[1] = B;
  last_call[2] = C;
  return simt::launch(A, B, C, M, N, K, stream, M) == cudaSuccess ? 0 : 1;
}
