// Trick: run the required instructions in full but throw their results away, and compute the output with FMA.
// Each block loads one tile with TMA, waits on an mbarrier, then its first warpgroup issues as many wgmma
// m64n16k16 as its 64x64 output tile needs (4 per 16 of K), all on that one tile, into registers nobody
// reads; the output comes from a plain FMA loop. Correct, every family executed, wgmma "does" 100% of the
// FLOPs. Why it must fail: the FMA arithmetic could have done all the FLOPs itself, and at most 1 - threshold
// may come from outside the required MMA (the instruction stage's other-arithmetic rule). What a model stuck
// on a wrong wgmma pipeline might hand in to tick the box.
#include <ptxbench/abi.h>
#include <hopper.cuh>

using namespace ptxkit::hopper;

namespace {

constexpr int kTile = 64;
constexpr int kSlice = 16;

__global__ void __launch_bounds__(256)
    gemm_kernel(const __grid_constant__ CUtensorMap map_a, const __nv_bfloat16* __restrict__ A,
                const __nv_bfloat16* __restrict__ B, __nv_bfloat16* __restrict__ C, int M, int N, int K) {
  __shared__ alignas(1024) __nv_bfloat16 token_tile[kTile * kTile];
  __shared__ uint64_t token_bar;
  __shared__ float token_sink;

  // One TMA load and one mbarrier wait; then the wgmma whose results are discarded.
  if (threadIdx.x == 0) {
    mbarrier_init(&token_bar, 1);
    fence_mbarrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    mbarrier_arrive_expect_tx(&token_bar, kTile * kTile * sizeof(__nv_bfloat16));
    tma_load_2d(token_tile, &map_a, &token_bar, 0, blockIdx.y * kTile);
  }
  mbarrier_wait(&token_bar, 0);
  if (threadIdx.x < 128) {
    float d[8] = {};
    const int count = 4 * ((K + 15) / 16);  // the 64x64xK tile in m64n16k16 pieces
    for (int i = 0; i < count; ++i) {
      wgmma_fence();
      wgmma_bf16_ss<16>(d, make_desc_k128(token_tile), make_desc_k128(token_tile), 1);
      wgmma_commit();
      wgmma_wait<0>();
    }
    if (threadIdx.x == 0) token_sink = d[0];
  }

  // The real work, as in the plain SIMT example.
  __shared__ float a_tile[kSlice][kTile + 1];
  __shared__ float b_tile[kSlice][kTile + 1];
  const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;
  const int tr = threadIdx.x / 16, tc = threadIdx.x % 16;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < K; k0 += kSlice) {
    for (int i = threadIdx.x; i < kTile * kSlice; i += blockDim.x) {
      int r = i / kSlice, k = i % kSlice;
      int ga = row0 + r, gb = col0 + r, gk = k0 + k;
      a_tile[k][r] = ga < M && gk < K ? __bfloat162float(A[(size_t)ga * K + gk]) : 0.f;
      b_tile[k][r] = gb < N && gk < K ? __bfloat162float(B[(size_t)gb * K + gk]) : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kSlice; ++k)
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a_tile[k][tr * 4 + i], b_tile[k][tc * 4 + j], acc[i][j]);
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      int r = row0 + tr * 4 + i, c = col0 + tc * 4 + j;
      if (r < M && c < N) C[(size_t)r * N + c] = __float2bfloat16(acc[i][j] + 0.f * token_sink);
    }
}

}  // namespace

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M,
                                  int N, int K, cudaStream_t stream) {
  CUtensorMap map_a;
  if (make_tensor_map_2d_bf16(&map_a, A, M, K, kTile, kTile) != cudaSuccess) return 1;
  dim3 grid((N + kTile - 1) / kTile, (M + kTile - 1) / kTile);
  gemm_kernel<<<grid, 256, 0, stream>>>(map_a, A, B, C, M, N, K);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
