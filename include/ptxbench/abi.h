/*
 * ptxbench solution ABI.
 *
 * A solution is one .cu file that defines, with C linkage, the entry point of its task's family.
 *
 * Rules that hold for every entry point:
 *   - All pointers are device pointers to contiguous, row-major tensors.
 *   - All GPU work is enqueued on `stream`. The call must not synchronise the device or a stream, allocate or
 *     free memory, create streams or events, or keep state between calls: the harness may call it with other
 *     shapes, other buffers or the same buffers again, in any order.
 *   - Inputs are read-only; only the outputs may be written.
 *   - The return value is 0 on success; any other value is reported as a runtime error.
 *
 * The harness compiles the solution with
 *   nvcc -gencode arch=compute_XXa,code=sm_XXa -std=c++20 -O3 -shared -cudart shared
 * with this folder and the architecture's kit (kits/<arch>/ptx) on the include path.
 */
#ifndef PTXBENCH_ABI_H
#define PTXBENCH_ABI_H

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * GEMM, bf16 inputs, fp32 accumulation, bf16 output:  C[M,N] = A[M,K] * B[N,K]^T  (a linear layer, y = x W^T).
 * A is M x K, B is N x K (both K-contiguous), C is M x N (N-contiguous). M, N and K are positive; M may be any
 * value (tasks check odd and small M), N and K are those of the task.
 */
int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N, int K,
                       cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* PTXBENCH_ABI_H */
