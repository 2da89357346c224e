// Reference solution for the Hopper bf16 GEMM tasks: C[M,N] = A[M,K] * B[N,K]^T, fp32 accumulation, bf16 out.
// Written with the kit (kits/hopper/ptx, kits/common/ptx); the rules it relies on are in their contracts.md.
//
// Design
//   - One CTA per SM, persistent: it walks output tiles of 128 x 256 in a grouped order (16 tile-rows of M per
//     group, so the CTAs working at one time share A rows and B columns in L2).
//   - Three warpgroups. Warpgroup 0 is the producer: one thread issues TMA loads of 128 x 64 A and 256 x 64 B
//     tiles (128B swizzle) into a 4-stage ring, each stage completing on a "full" mbarrier. Warpgroups 1 and 2
//     are consumers: each multiplies its 64 rows of A by the whole B tile with four wgmma m64n256k16 per stage,
//     keeps one wgmma group in flight, and releases a stage (its "empty" mbarrier) once the wgmmas that read it
//     have completed. setmaxnreg gives the consumers 232 registers and the producer 40 (232 + 232 + 40 = 3 x 168).
//   - Optionally (GEMM_CLUSTER_M=2) two CTAs with adjacent M tiles form a cluster and share B: each loads half
//     of the B tile and multicasts it to both; a stage is then refilled only after the consumers of both CTAs
//     released it (remote mbarrier arrives). These arrives use CTA-scope release and the producer a CTA-scope
//     wait: the arrivals only say "done reading". With cluster-scope release/acquire there the kernel ran at
//     0.58x of cuBLASLt. On the H200 both cluster settings measured within 1% of cuBLASLt; 1 is the default as
//     the simpler of the two (figures in bench/reference-gemm.md).
//   - Epilogue: accumulators -> bf16 -> shared memory (stmatrix, 128B-swizzled 64 x 64 chunks, double-buffered
//     per warpgroup) -> TMA store, which clips rows past M. The producer meanwhile fills the ring for the next
//     tile. (GEMM_EPILOGUE_TMA=0 stores straight from registers instead, bounds-checked: 0.93x of cuBLASLt
//     against 1.00x for the TMA epilogue, H200.)
//   - Partial tiles: TMA loads zero-fill rows past M or N and columns past K, so every tile runs the same code.
// Limits: K and N must be multiples of 8 (TMA needs 16-byte row pitches); any M >= 1.
#include <ptxbench/abi.h>

#include <hopper.cuh>

using namespace ptxkit::hopper;

namespace {

#ifndef GEMM_CLUSTER_M
#define GEMM_CLUSTER_M 1
#endif
#ifndef GEMM_EPILOGUE_TMA
#define GEMM_EPILOGUE_TMA 1
#endif
constexpr int kClusterM = GEMM_CLUSTER_M;      // CTAs per cluster along M (1 or 2), sharing B by multicast
constexpr bool kEpilogueTma = GEMM_EPILOGUE_TMA;

constexpr int kBM = 128, kBN = 256, kBK = 64;  // CTA tile; kBK = 64 bf16 = one 128-byte swizzle row
constexpr int kStages = 4;
constexpr int kConsumers = 2;                   // consumer warpgroups, 64 rows of the tile each
constexpr int kThreads = 128 * (kConsumers + 1);
#ifndef GEMM_GROUP_M
#define GEMM_GROUP_M 16
#endif
constexpr int kGroupM = GEMM_GROUP_M;           // M tiles per group of the tile order

constexpr int kABytes = kBM * kBK * 2;          // 16 KB
constexpr int kBBytes = kBN * kBK * 2;          // 32 KB
constexpr int kCChunk = 64 * 64 * 2;            // one 64 x 64 bf16 epilogue chunk, 8 KB
constexpr int kCBytes = kEpilogueTma ? kConsumers * 2 * kCChunk : 0;  // two chunks per consumer warpgroup

constexpr int kOffA = 0;
constexpr int kOffB = kOffA + kStages * kABytes;
constexpr int kOffC = kOffB + kStages * kBBytes;
constexpr int kOffBar = kOffC + kCBytes;
constexpr int kSmemBytes = kOffBar + 2 * kStages * 8 + 1024;  // + slack to align the base to 1024 bytes
static_assert(kSmemBytes <= 227 * 1024, "shared memory budget");

// Tile t of the grouped order -> (unit of kClusterM M tiles, N tile).
__device__ __forceinline__ void tile_coords(int t, int units_m, int tiles_n, int& unit_m, int& tile_n) {
  constexpr int kGroupUnits = kGroupM / kClusterM;
  const int per_group = kGroupUnits * tiles_n;
  const int group = t / per_group, first = group * kGroupUnits;
  const int size = min(units_m - first, kGroupUnits);
  const int r = t - group * per_group;
  unit_m = first + r % size;
  tile_n = r / size;
}

__global__ void __launch_bounds__(kThreads, 1)
    gemm_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                const __grid_constant__ CUtensorMap map_c, __nv_bfloat16* __restrict__ C, int M, int N, int K) {
  extern __shared__ uint8_t smem_raw[];
  // Same offset in every CTA, as multicast requires (it writes to the issuing CTA's offsets in each target).
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + kOffBar);
  uint64_t* empty = full + kStages;

  const int warpgroup = threadIdx.x / 128;
  const uint32_t rank = kClusterM > 1 ? cluster_ctarank() : 0;
  const int cluster = blockIdx.x / kClusterM, clusters = gridDim.x / kClusterM;
  const int tiles_m = (M + kBM - 1) / kBM, tiles_n = (N + kBN - 1) / kBN;
  const int units_m = (tiles_m + kClusterM - 1) / kClusterM;
  const int tiles = units_m * tiles_n;
  const int k_tiles = (K + kBK - 1) / kBK;

  if (threadIdx.x == 0) {
    prefetch_tensormap(&map_a);
    prefetch_tensormap(&map_b);
    if (kEpilogueTma) prefetch_tensormap(&map_c);
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(&full[s], 1);                         // the producer's arrive_expect_tx
      mbarrier_init(&empty[s], kConsumers * 4 * kClusterM);  // one arrive per consumer warp of each CTA
    }
    fence_barrier_init();
  }
  if (kClusterM > 1)
    cluster_sync();  // the peer's multicasts and arrives target our barriers: they must be initialised
  else
    __syncthreads();

  if (warpgroup == 0) {
    // ------------------------------------------------------------------------------------------ producer
    setmaxnreg_dec<40>();
    if (threadIdx.x == 0) {
      int stage = 0;
      uint32_t phase = 0;
      for (int t = cluster; t < tiles; t += clusters) {
        int unit_m, tile_n;
        tile_coords(t, units_m, tiles_n, unit_m, tile_n);
        const int m0 = (unit_m * kClusterM + rank) * kBM, n0 = tile_n * kBN;
        for (int kt = 0; kt < k_tiles; ++kt) {
          // Wait until every consumer (of every CTA that our multicast writes to) freed the stage. The first
          // pass waits on parity 1, which a fresh barrier reports complete. No data flows back with these
          // arrivals (they only say "done reading"), so CTA-scope ordering is enough.
          mbarrier_wait(&empty[stage], phase ^ 1);
          // Full tiles always: bytes past M, N or K are zero-filled and still counted.
          mbarrier_arrive_expect_tx(&full[stage], kABytes + kBBytes);
          tma_load_2d(smem + kOffA + stage * kABytes, &map_a, &full[stage], kt * kBK, m0);
          if (kClusterM > 1) {
            constexpr int kHalf = kBN / kClusterM;
            tma_load_2d_multicast(smem + kOffB + stage * kBBytes + rank * kHalf * kBK * 2, &map_b, &full[stage],
                                  (1u << kClusterM) - 1, kt * kBK, n0 + rank * kHalf);
          } else {
            tma_load_2d(smem + kOffB + stage * kBBytes, &map_b, &full[stage], kt * kBK, n0);
          }
          if (++stage == kStages) {
            stage = 0;
            phase ^= 1;
          }
        }
      }
    }
    __syncwarp();  // lanes 1-31 waited here: reconverge before the .aligned cluster barrier below
  } else {
    // ------------------------------------------------------------------------------------------ consumers
    setmaxnreg_inc<232>();
    const int wg = warpgroup - 1;  // which 64 rows of the tile
    const int tid = threadIdx.x % 128, warp = tid / 32, lane = tid % 32;
    float acc[kBN / 2];
    int stage = 0;
    uint32_t phase = 0;
    int chunk_count = 0;  // epilogue chunks issued by this warpgroup, for the double buffer

    auto release = [&](int s) {
      if (lane == 0) {
        if (kClusterM > 1) {
          for (int r = 0; r < kClusterM; ++r) mbarrier_arrive_cluster(mapa(smem_addr(&empty[s]), r));
        } else {
          mbarrier_arrive(&empty[s]);
        }
      }
    };

    for (int t = cluster; t < tiles; t += clusters) {
      int unit_m, tile_n;
      tile_coords(t, units_m, tiles_n, unit_m, tile_n);
      const int m0 = (unit_m * kClusterM + rank) * kBM, n0 = tile_n * kBN;

      int prev = 0;
      for (int kt = 0; kt < k_tiles; ++kt) {
        mbarrier_wait(&full[stage], phase);
        const uint64_t desc_a = make_desc_k128(smem + kOffA + stage * kABytes + wg * 64 * kBK * 2);
        const uint64_t desc_b = make_desc_k128(smem + kOffB + stage * kBBytes);
        wgmma_fence_operand(acc);  // no access to acc moves into the asynchronous window
        wgmma_fence();
#pragma unroll
        for (int k = 0; k < kBK / 16; ++k)  // K advances 32 bytes inside the 128-byte swizzle row
          wgmma_bf16_ss<kBN>(acc, desc_advance(desc_a, 32 * k), desc_advance(desc_b, 32 * k), kt > 0 || k > 0);
        wgmma_commit();
        wgmma_wait<1>();  // the previous stage's wgmmas are done: hand that stage back
        wgmma_fence_operand(acc);
        if (kt > 0) release(prev);
        prev = stage;
        if (++stage == kStages) {
          stage = 0;
          phase ^= 1;
        }
      }
      wgmma_wait<0>();
      wgmma_fence_operand(acc);  // the epilogue reads acc only after this wait
      release(prev);

      const int row0 = m0 + wg * 64;  // this warpgroup's 64 rows
      if constexpr (kEpilogueTma) {
        uint8_t* cbuf = smem + kOffC + wg * 2 * kCChunk;
#pragma unroll
        for (int c = 0; c < kBN / 64; ++c) {
          uint8_t* buf = cbuf + (chunk_count & 1) * kCChunk;
          // The store issued two chunks ago read this buffer: wait for that (one may stay in flight).
          if (tid == 0) tma_store_wait_read<1>();
          bar_sync(1 + wg, 128);
          // Each warp writes its 16 rows x 64 columns as 4 stmatrix.x4; matrix q of an x4 is column block
          // j + q / 2 (8 columns) and row half q % 2. Layout: 128B swizzle, like the tensor map of C.
#pragma unroll
          for (int jj = 0; jj < 8; jj += 2) {
            const int j = c * 8 + jj;  // accumulator column block (8 columns)
            uint32_t r[4] = {pack_bf16x2(acc[4 * j + 0], acc[4 * j + 1]), pack_bf16x2(acc[4 * j + 2], acc[4 * j + 3]),
                             pack_bf16x2(acc[4 * j + 4], acc[4 * j + 5]), pack_bf16x2(acc[4 * j + 6], acc[4 * j + 7])};
            const int q = lane / 8;
            const int row = warp * 16 + (q % 2) * 8 + lane % 8;
            const int col16 = jj + q / 2;  // 16-byte column chunk in the 128-byte row
            stmatrix_x4(buf + row * 128 + ((col16 ^ (row % 8)) * 16), r);
          }
          fence_proxy_async_shared();  // generic-proxy writes, read next by the TMA engine
          bar_sync(1 + wg, 128);
          if (tid == 0) {
            tma_store_2d(&map_c, buf, n0 + c * 64, row0);  // rows past M are clipped
            tma_store_commit();
          }
          ++chunk_count;
        }
      } else {
        // Straight from registers: thread holds (row, 2 columns) pairs; bounds-checked on M and N.
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int row = row0 + warp * 16 + lane / 4 + 8 * h;
          if (row < M) {
            __nv_bfloat16* crow = C + static_cast<size_t>(row) * N + n0 + 2 * (lane % 4);
#pragma unroll
            for (int j = 0; j < kBN / 8; ++j)
              if (n0 + 8 * j + 2 * (lane % 4) < N)
                *reinterpret_cast<uint32_t*>(crow + 8 * j) = pack_bf16x2(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
          }
        }
      }
    }
    if (kEpilogueTma && tid == 0) tma_store_wait<0>();  // shared memory must outlive the last store's reads
  }

  if (kClusterM > 1) cluster_sync();  // no CTA exits while its peer may still multicast or arrive into it
}

}  // namespace

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N,
                                  int K, cudaStream_t stream) {
  if (M <= 0 || N <= 0 || K <= 0) return 1;
  if (K % 8 != 0 || N % 8 != 0) return 2;  // TMA needs 16-byte aligned row pitches
  CUtensorMap map_a, map_b, map_c;
  if (make_tensor_map_2d_bf16(&map_a, A, M, K, kBM, kBK) != cudaSuccess) return 3;
  if (make_tensor_map_2d_bf16(&map_b, B, N, K, kBN / kClusterM, kBK) != cudaSuccess) return 3;
  if (make_tensor_map_2d_bf16(&map_c, C, M, N, 64, 64) != cudaSuccess) return 3;

  if (cudaFuncSetAttribute(gemm_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes) != cudaSuccess)
    return 4;
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
    return 4;

  const int tiles_m = (M + kBM - 1) / kBM, tiles_n = (N + kBN - 1) / kBN;
  const int units = (tiles_m + kClusterM - 1) / kClusterM * tiles_n;  // work items, one per cluster

  cudaLaunchConfig_t config = {};
  cudaLaunchAttribute attr[1];
  config.blockDim = dim3(kThreads);
  config.dynamicSmemBytes = kSmemBytes;
  config.stream = stream;
  config.numAttrs = 0;
  int clusters = sms;
  if (kClusterM > 1) {
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = kClusterM;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    config.attrs = attr;
    config.numAttrs = 1;
    // How many clusters fit at once depends on how the SMs split into GPCs: ask rather than assume sms / 2.
    config.gridDim = dim3(kClusterM * (sms / kClusterM));
    if (cudaOccupancyMaxActiveClusters(&clusters, gemm_kernel, &config) != cudaSuccess || clusters < 1)
      clusters = sms / kClusterM;
  }
  clusters = clusters < units ? clusters : units;
  config.gridDim = dim3(clusters * kClusterM);
  return cudaLaunchKernelEx(&config, gemm_kernel, map_a, map_b, map_c, C, M, N, K) == cudaSuccess ? 0 : 5;
}
