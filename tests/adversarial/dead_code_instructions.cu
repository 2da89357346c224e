// Trick: put every required Hopper instruction (TMA load, mbarrier wait, wgmma) in a branch that never runs,
// and do the math with plain FMA: a scan of the PTX finds every family.
// Why it must fail: the requirement is that they execute. Stopped by: instructions (Nsight Compute's
// executed counts are zero for every family).
#include <ptxbench/abi.h>
#include <cstdint>

// A plain SIMT GEMM (no tensor cores): 64 x 64 tile per 16 x 16 block, 4 x 4 elements per thread.
namespace simt {
constexpr int kTile = 64, kSlice = 16;
template <typename Acc>
__global__ void gemm_kernel(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N, int K,
                            int rows_to_write) {
  __shared__ float a_tile[kSlice][kTile + 1];
  __shared__ float b_tile[kSlice][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
  const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;
  Acc acc[4][4];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) acc[i][j] = Acc(0.0f);
  for (int k0 = 0; k0 < K; k0 += kSlice) {
    for (int i = tid; i < kTile * kSlice; i += 256) {
      const int r = i / kSlice, kk = i % kSlice, k = k0 + kk;
      a_tile[kk][r] = (row0 + r < M && k < K) ? __bfloat162float(A[(size_t)(row0 + r) * K + k]) : 0.0f;
      b_tile[kk][r] = (col0 + r < N && k < K) ? __bfloat162float(B[(size_t)(col0 + r) * K + k]) : 0.0f;
    }
    __syncthreads();
    for (int kk = 0; kk < kSlice; ++kk)
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
          acc[i][j] = Acc(float(acc[i][j]) + a_tile[kk][ty + 16 * i] * b_tile[kk][tx + 16 * j]);
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const int row = row0 + ty + 16 * i, col = col0 + tx + 16 * j;
      if (row < M && row < rows_to_write && col < N) C[(size_t)row * N + col] = __float2bfloat16(float(acc[i][j]));
    }
}
inline int launch(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N, int K,
                  cudaStream_t stream, int rows_to_write = 1 << 30) {
  const dim3 grid((N + kTile - 1) / kTile, (M + kTile - 1) / kTile), block(16, 16);
  gemm_kernel<float><<<grid, block, 0, stream>>>(A, B, C, M, N, K, rows_to_write);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
}  // namespace simt

namespace {
__device__ void never_runs(float* out, const void* tensor_map, int scale) {
  __shared__ alignas(1024) __nv_bfloat16 tile[64 * 64];
  __shared__ uint64_t barrier;
  const uint32_t tile_addr = static_cast<uint32_t>(__cvta_generic_to_shared(tile));
  const uint32_t barrier_addr = static_cast<uint32_t>(__cvta_generic_to_shared(&barrier));
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
               :: "r"(tile_addr), "l"(tensor_map), "r"(0), "r"(0), "r"(barrier_addr) : "memory");
  asm volatile("{\n .reg .pred done;\n mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n}\n"
               :: "r"(barrier_addr), "r"(0) : "memory");
  float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
  const uint64_t descriptor = (tile_addr & 0x3FFFF) >> 4;
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %6, 0;\n"
               " wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%0, %1, %2, %3}, %4, %5, p, 1, 1, 0, 0;\n}\n"
               : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) : "l"(descriptor), "l"(descriptor), "r"(scale));
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  out[threadIdx.x] = d0 + d1 + d2 + d3;
}
__global__ void decoy(float* out, const void* map, int K) {
  if (K < 0) never_runs(out, map, K);  // K is never negative
}
}  // namespace

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N,
                                  int K, cudaStream_t stream) {
  decoy<<<1, 128, 0, stream>>>(reinterpret_cast<float*>(C), A, K);
  return simt::launch(A, B, C, M, N, K, stream);
}
