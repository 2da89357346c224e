// A kernel that never ends. The runner hangs in its wait for the stream; the parent's time limit ends it
// (run.sh uses `timeout 20` and expects exit code 124).
#include "ptxbench/abi.h"

__global__ void spin_forever() {
  for (;;) asm volatile("nanosleep.u32 1000;");
}

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16*, const __nv_bfloat16*, __nv_bfloat16*, int, int, int,
                                  cudaStream_t stream) {
  spin_forever<<<1, 1, 0, stream>>>();
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
