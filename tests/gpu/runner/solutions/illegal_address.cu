// Writes far outside C. Expected: runtime_error with cuda_error cudaErrorIllegalAddress; under
// compute-sanitizer memcheck, an "Invalid __global__ write" report.
#include "ptxbench/abi.h"

__global__ void write_out_of_bounds(__nv_bfloat16* C, size_t offset) {
  C[offset + threadIdx.x] = __float2bfloat16(1.0f);
}

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16*, const __nv_bfloat16*, __nv_bfloat16* C, int, int, int,
                                  cudaStream_t stream) {
  write_out_of_bounds<<<1, 32, 0, stream>>>(C, size_t{1} << 40);  // 2 TiB past C: no allocation there
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
