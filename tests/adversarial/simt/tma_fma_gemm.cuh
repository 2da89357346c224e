// Prelude of driver_tensor_map.cu and kept_tensor_maps.cu: a GEMM whose A and B tiles come in with TMA
// (cp.async.bulk.tensor through the kit's tma_load_2d) through tensor maps encoded by a DIRECT call of
// cuTensorMapEncodeTiled (<cuda.h>, the driver linked, no function pointer), an mbarrier per stage waiting for
// them, and plain FMA doing the math (no wgmma). Each block computes a 64x64 tile of C with 256 threads, each
// thread 4x4 outputs (rows ty + 16 i, columns tx + 16 j); 64x64 bf16 slices of A and B land in two stages of
// shared memory, 128-byte swizzled, and are read 16 bytes at a time. fp32 accumulation, bf16 output. The two
// entries differ only in when their host code encodes the maps.
#include <ptxbench/abi.h>
#include <cuda.h>
#include <hopper.cuh>

namespace tma_fma {

using namespace ptxkit::hopper;

constexpr int kTile = 64;     // rows of A and of B (columns of C) per block
constexpr int kBK = 64;       // K per stage: one 128-byte swizzled row per tile row
constexpr int kStages = 2;
constexpr uint32_t kTileBytes = kTile * kBK * sizeof(__nv_bfloat16);

struct alignas(1024) Stages {  // 128-byte swizzle repeats every 1024 bytes: each tile starts on one
  __nv_bfloat16 a[kStages][kTile * kBK];
  __nv_bfloat16 b[kStages][kTile * kBK];
};

// The 16-byte chunk `chunk` (8 values of K) of tile row `row`, as TMA's 128-byte swizzle placed it.
__device__ __forceinline__ uint4 chunk_at(const __nv_bfloat16* tile, int row, int chunk) {
  const char* base = reinterpret_cast<const char*>(tile);
  return *reinterpret_cast<const uint4*>(base + row * 128 + ((chunk ^ (row & 7)) << 4));
}

__global__ void __launch_bounds__(256) gemm_tma_fma_kernel(const __grid_constant__ CUtensorMap map_a,
                                                           const __grid_constant__ CUtensorMap map_b,
                                                           __nv_bfloat16* __restrict__ C, int M, int N, int K) {
  __shared__ Stages s;
  __shared__ alignas(8) uint64_t full[kStages];
  const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;
  const int ty = threadIdx.x / 16, tx = threadIdx.x % 16;
  const int k_tiles = (K + kBK - 1) / kBK;

  if (threadIdx.x == 0) {
    for (int i = 0; i < kStages; ++i) mbarrier_init(&full[i], 1);
    fence_barrier_init();
  }
  __syncthreads();
  auto issue = [&](int kt) {  // one thread: both tiles of K slice kt into stage kt % kStages
    const int stage = kt % kStages;
    mbarrier_arrive_expect_tx(&full[stage], 2 * kTileBytes);
    tma_load_2d(s.a[stage], &map_a, &full[stage], kt * kBK, row0);  // rows past M load as zero
    tma_load_2d(s.b[stage], &map_b, &full[stage], kt * kBK, col0);
  };
  if (threadIdx.x == 0)
    for (int kt = 0; kt < kStages && kt < k_tiles; ++kt) issue(kt);

  float acc[4][4] = {};
  for (int kt = 0; kt < k_tiles; ++kt) {
    const int stage = kt % kStages;
    mbarrier_wait(&full[stage], (kt / kStages) & 1);
    const __nv_bfloat16* a_tile = s.a[stage];
    const __nv_bfloat16* b_tile = s.b[stage];
#pragma unroll 2
    for (int chunk = 0; chunk < kBK / 8; ++chunk) {
      uint4 a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) a[i] = chunk_at(a_tile, ty + 16 * i, chunk);
#pragma unroll
      for (int j = 0; j < 4; ++j) b[j] = chunk_at(b_tile, tx + 16 * j, chunk);
#pragma unroll
      for (int p = 0; p < 4; ++p) {
        float2 af[4], bf[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) af[i] = __bfloat1622float2(reinterpret_cast<const __nv_bfloat162*>(&a[i])[p]);
#pragma unroll
        for (int j = 0; j < 4; ++j) bf[j] = __bfloat1622float2(reinterpret_cast<const __nv_bfloat162*>(&b[j])[p]);
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
          for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(af[i].y, bf[j].y, fmaf(af[i].x, bf[j].x, acc[i][j]));
      }
    }
    __syncthreads();  // every thread is done with this stage before TMA refills it
    if (threadIdx.x == 0 && kt + kStages < k_tiles) issue(kt + kStages);
  }

#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int r = row0 + ty + 16 * i;
    if (r >= M) continue;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int c = col0 + tx + 16 * j;
      if (c < N) C[(size_t)r * N + c] = __float2bfloat16(acc[i][j]);
    }
  }
}

// A row-major bf16 matrix [rows][cols] in boxes of 64 rows x 64 columns, 128-byte swizzle: a direct driver call.
bool encode(CUtensorMap* map, const __nv_bfloat16* matrix, int rows, int cols) {
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(cols) * sizeof(__nv_bfloat16)};
  const cuuint32_t box[2] = {kBK, kTile};
  const cuuint32_t element_strides[2] = {1, 1};
  return cuTensorMapEncodeTiled(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<__nv_bfloat16*>(matrix), dims,
                                strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// The kernel over C's tiles, on `stream`, with the maps of A and B; whether the launch went in.
inline bool launch(const CUtensorMap& map_a, const CUtensorMap& map_b, __nv_bfloat16* C, int M, int N, int K,
                   cudaStream_t stream) {
  const dim3 grid((N + kTile - 1) / kTile, (M + kTile - 1) / kTile);
  gemm_tma_fma_kernel<<<grid, 256, 0, stream>>>(map_a, map_b, C, M, N, K);
  return cudaGetLastError() == cudaSuccess;
}

}  // namespace tma_fma
