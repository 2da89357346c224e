// Reference solution for the Blackwell bf16 GEMM tasks: C[M,N] = A[M,K] * B[N,K]^T, fp32 accumulation, bf16 out.
// Written with the kit (kits/blackwell/ptx, kits/common/ptx); the rules it relies on are in their contracts.md
// (kits/blackwell/contracts.md and kits/common/contracts.md), named in the comments below by section.
//
// Status: not yet run. It compiles for sm_100a and has been checked statically only (the PTX holds the required
// instruction families); it has never run on a GPU, so neither its results nor its speed have been observed. The
// first B200 run is the test of every layout and protocol below.
//
// Design (a plain single-CTA kernel: no clusters, no CTA pairs, no multicast)
//   - One CTA per SM, persistent: it walks output tiles of 128 x 256 in a grouped order (16 tile-rows of M per
//     group, so the CTAs working at one time share A rows and B columns in L2), tile t, t + grid, t + 2 grid, ...
//   - Six warps, one role each:
//       warps 0-3  the epilogue (one warpgroup). Warp w reads TMEM lanes 32 (w % 4) .. 32 (w % 4) + 31, which hold
//                  rows 32 (w % 4) .. + 31 of the tile (the lane-quarter rule).
//       warp 4     the producer: one thread issues TMA loads of a 128 x 64 A box and a 256 x 64 B box (128B
//                  swizzle, 48 KB) into a 4-stage ring, each stage completing on its "full" mbarrier.
//       warp 5     owns tensor memory (allocates all 512 columns, frees them at the end) and issues the MMAs: one
//                  thread, per stage four tcgen05.mma.cta_group::1.kind::f16 of 128 x 256 x 16 (A and B from
//                  shared memory, K-major), then tcgen05.commit onto the stage's "empty" mbarrier, which arrives
//                  when those MMAs have read it; after a tile's last stage, tcgen05.commit onto "acc_full".
//   - The fp32 accumulator lives in TMEM, double-buffered: two 128 x 256 buffers (columns 0-255 and 256-511), so
//     the MMAs of tile i + 1 run while the epilogue drains tile i. acc_full[b] completes with the MMA thread's
//     commit (count 1); acc_empty[b] with one arrive from each of the 128 epilogue threads after its last
//     tcgen05.ld of buffer b (count 128).
//   - Epilogue, per warp and 64-column chunk: tcgen05.ld.32x32b.x64 (thread = row, register j = column j),
//     cvt to bf16x2, st.shared into a 32-row x 64-column 128B-swizzled staging buffer of the warp (two per warp,
//     alternating), then one lane issues a TMA store of the box, which clips rows past M and columns past N.
//   - Partial tiles: TMA loads zero-fill rows past M or N and columns past K, so every tile runs the same MMAs;
//     a K that is not a multiple of 64 ends with a zero-padded box (zeros add nothing). Chunks that lie wholly
//     past M or N are not stored.
//   - Shared memory: 4 x (16 + 32) KB ring + 4 warps x 2 x 4 KB staging + barriers, plus 1 KB to align the base
//     to 1024 bytes (the 128B swizzle convention): 230,512 bytes of the 232,448 a block may have.
// Every PTX instruction goes through a kit wrapper; this file has no inline PTX.
// Limits: K and N must be multiples of 8 (TMA needs 16-byte row pitches); any M >= 1. At decode-sized M (one
// tile-row) there are only ceil(N / 256) tiles, so most SMs idle (no split-K, no smaller tile for small M).
#include <ptxbench/abi.h>

#include <blackwell.cuh>

using namespace ptxkit::blackwell;

namespace {

constexpr int kBM = 128, kBN = 256, kBK = 64;  // CTA tile; kBK = 64 bf16 = one 128-byte swizzle row
constexpr int kMmaK = 16;                       // K of one kind::f16 MMA
constexpr int kStages = 4;
constexpr int kAccBuffers = 2;                  // TMEM accumulators (double buffer)
constexpr int kEpilogueWarps = 4;               // warps 0-3: one per TMEM lane quarter
constexpr int kProducerWarp = 4, kMmaWarp = 5;
constexpr int kThreads = 32 * (kEpilogueWarps + 2);
constexpr int kEpilogueThreads = 32 * kEpilogueWarps;
constexpr int kGroupM = 16;                     // M tiles per group of the tile order

constexpr int kABytes = kBM * kBK * 2;          // 16 KB
constexpr int kBBytes = kBN * kBK * 2;          // 32 KB
constexpr int kCRows = 32, kCCols = 64;         // epilogue TMA box: one warp's rows x one 128-byte swizzle row
constexpr int kCChunk = kCRows * kCCols * 2;    // 4 KB
constexpr uint32_t kTmemCols = kAccBuffers * kBN;  // 512: the whole of TMEM (one CTA per SM)

constexpr int kOffA = 0;
constexpr int kOffB = kOffA + kStages * kABytes;
constexpr int kOffC = kOffB + kStages * kBBytes;
constexpr int kOffBar = kOffC + kEpilogueWarps * 2 * kCChunk;
constexpr int kBarriers = 2 * kStages + 2 * kAccBuffers;
constexpr int kOffTmemSlot = kOffBar + kBarriers * 8;
constexpr int kSmemBytes = kOffTmemSlot + 16 + 1024;  // + slack to align the base to 1024 bytes
static_assert(kSmemBytes <= 232448, "shared memory budget of one block");
static_assert(kABytes % 1024 == 0 && kBBytes % 1024 == 0 && kCChunk % 1024 == 0 && kOffBar % 1024 == 0,
              "every tile 1024-byte aligned (swizzle)");
static_assert(kTmemCols == 512, "a power of two, 32..512");
static_assert(kBK / kMmaK == 4 && kBK * 2 == 128, "four MMAs per 128-byte swizzle row");

// Dense bf16 x bf16 -> fp32, M = 128, N = 256, A and B K-major. Contract: "instruction descriptor".
constexpr uint32_t kIdesc = make_idesc_bf16_f32<kBM, kBN>();

// Tile t of the grouped order -> (M tile, N tile): kGroupM M tiles per group, walked down M first.
__device__ __forceinline__ void tile_coords(int t, int tiles_m, int tiles_n, int& tile_m, int& tile_n) {
  const int per_group = kGroupM * tiles_n;
  const int group = t / per_group, first = group * kGroupM;
  const int size = min(tiles_m - first, kGroupM);
  const int r = t - group * per_group;
  tile_m = first + r % size;
  tile_n = r / size;
}

__global__ void __launch_bounds__(kThreads, 1)
    gemm_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                const __grid_constant__ CUtensorMap map_c, int M, int N, int K) {
  extern __shared__ uint8_t smem_raw[];
  // Align the tiles to 1024 bytes in the shared window (the swizzle works on shared addresses). Offsetting
  // smem_raw, rather than rounding an integer, keeps the pointer known to be shared: st.shared, not generic st.
  uint8_t* smem = smem_raw + ((1024u - (smem_addr(smem_raw) & 1023u)) & 1023u);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + kOffBar);
  uint64_t* empty = full + kStages;
  uint64_t* acc_full = empty + kStages;
  uint64_t* acc_empty = acc_full + kAccBuffers;
  uint32_t* tmem_slot = reinterpret_cast<uint32_t*>(smem + kOffTmemSlot);

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int tiles_m = (M + kBM - 1) / kBM, tiles_n = (N + kBN - 1) / kBN;
  const int tiles = tiles_m * tiles_n;
  const int k_tiles = (K + kBK - 1) / kBK;  // >= 1 since K >= 1: every tile's first MMA has accumulate = 0

  // ---------------------------------------------------------------------------------------------- set-up
  if (warp == kProducerWarp && lane == 0) {
    prefetch_tensormap(&map_a);
    prefetch_tensormap(&map_b);
    prefetch_tensormap(&map_c);
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(&full[s], 1);   // the producer's arrive_expect_tx (+ the TMA bytes)
      mbarrier_init(&empty[s], 1);  // the MMA thread's tcgen05.commit
    }
    for (int b = 0; b < kAccBuffers; ++b) {
      mbarrier_init(&acc_full[b], 1);                   // the MMA thread's tcgen05.commit
      mbarrier_init(&acc_empty[b], kEpilogueThreads);  // every epilogue thread, after its last tcgen05.ld
    }
    fence_barrier_init();
  }
  if (warp == kMmaWarp) {
    // Whole warp, converged (warp-uniform branch at the top of the kernel). Contract: "tensor memory allocation".
    tmem_alloc<kTmemCols>(tmem_slot);
    tmem_relinquish_alloc_permit();  // this CTA allocates nothing more
    tcgen05_fence_before_thread_sync();
  }
  __syncthreads();  // barriers initialised, TMEM address published
  tcgen05_fence_after_thread_sync();
  const TmemAddr tmem = tmem_base(tmem_slot);

  if (warp == kProducerWarp) {
    // ---------------------------------------------------------------------------------------- producer
    if (lane == 0) {
      int stage = 0;
      uint32_t phase = 0;
      for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
        int tile_m, tile_n;
        tile_coords(t, tiles_m, tiles_n, tile_m, tile_n);
        const int m0 = tile_m * kBM, n0 = tile_n * kBN;
        for (int kt = 0; kt < k_tiles; ++kt) {
          // The MMAs that read this stage last time have completed (their commit arrived). The first pass waits
          // on parity 1, which a fresh barrier reports complete.
          mbarrier_wait(&empty[stage], phase ^ 1);
          // Whole boxes always: bytes past M, N or K are zero-filled and still counted.
          mbarrier_arrive_expect_tx(&full[stage], kABytes + kBBytes);
          tma_load_2d(smem + kOffA + stage * kABytes, &map_a, &full[stage], kt * kBK, m0);
          tma_load_2d(smem + kOffB + stage * kBBytes, &map_b, &full[stage], kt * kBK, n0);
          if (++stage == kStages) {
            stage = 0;
            phase ^= 1;
          }
        }
      }
      // Drain: wait for the commits of the last fills (as if to fill each stage once more), so that no
      // tcgen05.commit arrival is still on its way to this CTA's shared memory when the CTA exits.
      for (int i = 0; i < kStages; ++i) {
        mbarrier_wait(&empty[stage], phase ^ 1);
        if (++stage == kStages) {
          stage = 0;
          phase ^= 1;
        }
      }
    }
    __syncwarp();  // lanes 1-31 waited here: reconverge before the barrier below
  } else if (warp == kMmaWarp) {
    // ---------------------------------------------------------------------------------------- MMA issuer
    if (lane == 0) {  // one thread issues every MMA and every commit (contract "issue granularity")
      int stage = 0;
      uint32_t phase = 0;
      int buf = 0;
      uint32_t acc_phase = 0;
      for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
        // The epilogue has read this accumulator buffer (tile t - 2 grid); fresh barriers pass on parity 1.
        mbarrier_wait(&acc_empty[buf], acc_phase ^ 1);
        tcgen05_fence_after_thread_sync();
        const TmemAddr d = tmem.offset(0, buf * kBN);
        for (int kt = 0; kt < k_tiles; ++kt) {
          mbarrier_wait(&full[stage], phase);  // TMA bytes of this stage have landed
          tcgen05_fence_after_thread_sync();
          const uint64_t desc_a = make_tcgen05_desc_k128(smem + kOffA + stage * kABytes);
          const uint64_t desc_b = make_tcgen05_desc_k128(smem + kOffB + stage * kBBytes);
#pragma unroll
          for (int k = 0; k < kBK / kMmaK; ++k)  // K advances 32 bytes inside the 128-byte swizzle row
            tcgen05_mma_bf16_ss(d, tcgen05_desc_advance(desc_a, 32 * k), tcgen05_desc_advance(desc_b, 32 * k),
                                kIdesc, (kt > 0 || k > 0) ? 1u : 0u);
          tcgen05_commit(&empty[stage]);  // arrives once these MMAs have completed: the stage may be refilled
          if (++stage == kStages) {
            stage = 0;
            phase ^= 1;
          }
        }
        tcgen05_commit(&acc_full[buf]);  // arrives once every MMA of the tile has completed
        if (++buf == kAccBuffers) {
          buf = 0;
          acc_phase ^= 1;
        }
      }
    }
    __syncwarp();  // reconverge before the barrier and the warp-wide tmem_dealloc below
  } else {
    // ---------------------------------------------------------------------------------------- epilogue
    const int quarter = warp % 4;  // TMEM lanes (tile rows) 32 * quarter .. + 31: contract "lane quarters"
    uint8_t* const staging = smem + kOffC + warp * 2 * kCChunk;
    int buf = 0;
    uint32_t acc_phase = 0;
    uint32_t stores = 0;  // TMA stores this warp has issued: the staging buffer is stores % 2
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
      int tile_m, tile_n;
      tile_coords(t, tiles_m, tiles_n, tile_m, tile_n);
      const int row0 = tile_m * kBM + 32 * quarter, n0 = tile_n * kBN;

      mbarrier_wait(&acc_full[buf], acc_phase);
      tcgen05_fence_after_thread_sync();
      __syncwarp();  // the lanes left the wait loop one by one: reconverge before the warp-wide tcgen05.ld
      if (row0 < M) {  // warp-uniform: a warp whose 32 rows all lie past M has nothing to store
#pragma unroll 1
        for (int c = 0; c < kBN / kCCols; ++c) {
          const int col0 = n0 + c * kCCols;
          if (col0 >= N) break;  // warp-uniform: the rest of the tile lies past N

          uint32_t r[kCCols];  // r[j] = row (row0 + lane), column col0 + j, fp32 bits
          tmem_ld_32x32b<kCCols>(r, tmem.offset(32 * quarter, buf * kBN + c * kCCols));
          tmem_wait_ld();
          tmem_fence_operand(r);

          uint8_t* const out = staging + (stores & 1) * kCChunk;
          if (lane == 0) tma_store_wait_read<1>();  // the store issued two stores ago has finished reading `out`
          __syncwarp();
          // Row `lane` of the box, 128B-swizzled as the tensor map of C: 16-byte chunk j (columns 8j..8j+7) at
          // chunk position j ^ (row % 8); `out` is 1024-byte aligned, so row % 8 = lane % 8.
          uint8_t* const row = out + lane * 128;
#pragma unroll
          for (int j = 0; j < kCCols / 8; ++j) {
            uint4 v;
            v.x = pack_bf16x2(__uint_as_float(r[8 * j + 0]), __uint_as_float(r[8 * j + 1]));
            v.y = pack_bf16x2(__uint_as_float(r[8 * j + 2]), __uint_as_float(r[8 * j + 3]));
            v.z = pack_bf16x2(__uint_as_float(r[8 * j + 4]), __uint_as_float(r[8 * j + 5]));
            v.w = pack_bf16x2(__uint_as_float(r[8 * j + 6]), __uint_as_float(r[8 * j + 7]));
            *reinterpret_cast<uint4*>(row + ((j ^ (lane % 8)) * 16)) = v;
          }
          fence_proxy_async_shared();  // generic-proxy writes, read next by the TMA engine
          __syncwarp();
          if (lane == 0) {
            tma_store_2d(&map_c, out, col0, row0);  // rows past M, columns past N are clipped
            tma_store_commit();
          }
          __syncwarp();  // reconverge before the next chunk's warp-wide tcgen05.ld
          ++stores;
        }
      }
      // Every tcgen05.ld of this buffer has completed (tmem_wait_ld above): hand it back to the MMA thread.
      tcgen05_fence_before_thread_sync();
      mbarrier_arrive(&acc_empty[buf]);
      if (++buf == kAccBuffers) {
        buf = 0;
        acc_phase ^= 1;
      }
    }
    if (lane == 0) tma_store_wait<0>();  // shared memory must outlive the last store's reads
    __syncwarp();
  }

  // ---------------------------------------------------------------------------------------------- teardown
  // Every MMA has completed (the epilogue waited on each tile's acc_full, the producer on the last empties) and
  // every tcgen05.ld has been waited on and fenced: the allocating warp frees the columns.
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  if (warp == kMmaWarp) {
    tcgen05_fence_after_thread_sync();
    tmem_dealloc<kTmemCols>(tmem);
  }
}

}  // namespace

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N,
                                  int K, cudaStream_t stream) {
  if (M <= 0 || N <= 0 || K <= 0) return 1;
  if (K % 8 != 0 || N % 8 != 0) return 2;  // TMA needs 16-byte aligned row pitches
  CUtensorMap map_a, map_b, map_c;
  if (make_tensor_map_2d_bf16(&map_a, A, M, K, kBM, kBK) != cudaSuccess) return 3;
  if (make_tensor_map_2d_bf16(&map_b, B, N, K, kBN, kBK) != cudaSuccess) return 3;
  if (make_tensor_map_2d_bf16(&map_c, C, M, N, kCRows, kCCols) != cudaSuccess) return 3;

  if (cudaFuncSetAttribute(gemm_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes) != cudaSuccess)
    return 4;
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
    return 4;

  const int tiles = ((M + kBM - 1) / kBM) * ((N + kBN - 1) / kBN);
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(sms < tiles ? sms : tiles);  // persistent: at most one CTA per SM (its shared memory)
  config.blockDim = dim3(kThreads);
  config.dynamicSmemBytes = kSmemBytes;
  config.stream = stream;
  config.numAttrs = 0;
  return cudaLaunchKernelEx(&config, gemm_kernel, map_a, map_b, map_c, M, N, K) == cudaSuccess ? 0 : 5;
}
