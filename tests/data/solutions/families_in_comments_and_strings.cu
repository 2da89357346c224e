// Names every required instruction family, but only in comments, strings and PTX comments:
// wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16, cp.async.bulk.tensor.2d, mbarrier.try_wait.parity
// None of it is code, so the static inventory must find none of them.
#include <ptxbench/abi.h>
#include <cstdio>

/* asm volatile("wgmma.fence.sync.aligned;"); */
static const char* kClaim = "wgmma.mma_async cp.async.bulk.tensor mbarrier.try_wait";

__global__ void gemm_kernel(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N, int K) {
  asm volatile("// wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 is only a comment here\n");
  asm volatile("/* cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes */\n");
  int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= M || col >= N) return;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc += __bfloat162float(A[(size_t)row * K + k]) * __bfloat162float(B[(size_t)col * K + k]);
  C[(size_t)row * N + col] = __float2bfloat16(acc);
}

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N,
                                  int K, cudaStream_t stream) {
  if (M < 0) std::printf("%s\n", kClaim);
  dim3 block(16, 16), grid((N + 15) / 16, (M + 15) / 16);
  gemm_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
  return 0;
}
