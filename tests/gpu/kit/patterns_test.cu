// GPU test of the Hopper kit's pattern documents (kits/hopper/patterns/*.md). Every code fragment of the documents
// appears verbatim below, between a line "// pattern-begin: <document>#<fragment>" and a line "// pattern-end"
// (tests/kit/check_patterns.py keeps the two in step), and runs inside a kernel whose result is checked against a
// host computation. Prints one PASS/FAIL line per fragment (with the tests that used it) and exits non-zero if any
// fragment failed or was never run. Build and run: tests/gpu/kit/run_patterns.sh.
#include <hopper.cuh>

#include "test_support.cuh"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

using namespace ptxkit::hopper;

// ------------------------------------------------------------------------------------------------ bookkeeping

// Every fragment of the documents; main() reports one that no test used as a failure.
static const char* const kFragments[] = {
    "tma_pipeline.md#ring_state",          "tma_pipeline.md#ring_init",
    "tma_pipeline.md#ring_producer",       "tma_pipeline.md#ring_consumer",
    "warp_specialisation.md#ws_config",    "warp_specialisation.md#ws_producer",
    "warp_specialisation.md#ws_consumer",  "warp_specialisation.md#ws_kernel",
    "cluster_multicast.md#cluster_launch", "cluster_multicast.md#multicast_tile",
    "cluster_multicast.md#multicast_ring", "attention_dataflow.md#online_softmax",
    "attention_dataflow.md#pv_accumulate", "attention_dataflow.md#bwd_p_ds",
    "attention_dataflow.md#bwd_dq_atomic",
};

static __nv_bfloat16* as_bf16(uint16_t* p) { return reinterpret_cast<__nv_bfloat16*>(p); }

template <typename T>
static T* device_copy(const std::vector<T>& h) {
  T* d;
  CUDA_CHECK(cudaMalloc(&d, h.size() * sizeof(T)));
  CUDA_CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}
template <typename T>
static std::vector<T> host_copy(const T* d, size_t n) {
  std::vector<T> h(n);
  CUDA_CHECK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

// Dynamic shared memory rounded up to 1024 bytes (it is only guaranteed 16-byte aligned), for 128B-swizzled tiles.
__device__ __forceinline__ uint8_t* smem_base_1024(uint8_t* raw) {
  return reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(raw) + 1023) & ~uintptr_t(1023));
}

// ================================================================================================ tma_pipeline.md

// pattern-begin: tma_pipeline.md#ring_state
// ring_state
// A role's place in a ring of STAGES stages: the stage it uses next and the parity of that stage's phase it
// waits for. The producer and every consumer keep their own copy and advance it once per tile.
template <int STAGES>
struct RingState {
  int stage = 0;
  uint32_t phase = 0;
  __device__ __forceinline__ void advance() {
    if (++stage == STAGES) {  // wrapped: the next pass through the ring waits for the other parity
      stage = 0;
      phase ^= 1;
    }
  }
};
// pattern-end

// pattern-begin: tma_pipeline.md#ring_init
// ring_init
// One thread initialises every barrier; fence_barrier_init() releases the inits (to the async proxy too), and
// __syncthreads() makes them visible to every thread before any wait, arrive or copy.
template <int STAGES>
__device__ __forceinline__ void ring_init(uint64_t* full, uint64_t* empty, uint32_t consumer_warps) {
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbarrier_init(&full[s], 1);                // one arrival: the producer's arrive_expect_tx
      mbarrier_init(&empty[s], consumer_warps);  // one arrival per consumer warp
    }
    fence_barrier_init();
  }
  __syncthreads();
}
// pattern-end

// pattern-begin: tma_pipeline.md#ring_producer
// ring_producer
// One thread. Tile t is the 32 x 32 fp32 box at row 32t of A and the one of B; both go into stage t % STAGES.
constexpr uint32_t kBoxBytes = 32 * 32 * sizeof(float);
template <int STAGES>
__device__ __forceinline__ void ring_producer(const CUtensorMap* map_a, const CUtensorMap* map_b, float* sa,
                                              float* sb, uint64_t* full, uint64_t* empty, int tiles) {
  RingState<STAGES> st;
  for (int t = 0; t < tiles; ++t) {
    mbarrier_wait(&empty[st.stage], st.phase ^ 1);  // pass 0 waits for parity 1: a fresh barrier passes
    mbarrier_arrive_expect_tx(&full[st.stage], 2 * kBoxBytes);  // both boxes, whole, zero-filled parts too
    tma_load_2d(sa + st.stage * 32 * 32, map_a, &full[st.stage], 0, 32 * t);
    tma_load_2d(sb + st.stage * 32 * 32, map_b, &full[st.stage], 0, 32 * t);
    st.advance();
  }
}
// pattern-end

// pattern-begin: tma_pipeline.md#ring_consumer
// ring_consumer
// Consumer warp w of `warps`: rows w, w + warps, ... of every tile, out = a + b. Each warp arrives once on
// empty[stage] (count = consumer warps), after all of its lanes have read the stage.
template <int STAGES>
__device__ __forceinline__ void ring_consumer(const float* sa, const float* sb, uint64_t* full, uint64_t* empty,
                                              int tiles, int w, int warps, float* out) {
  const int lane = threadIdx.x % 32;
  RingState<STAGES> st;
  for (int t = 0; t < tiles; ++t) {
    mbarrier_wait(&full[st.stage], st.phase);  // this pass's bytes have landed and are visible
    const float* a = sa + st.stage * 32 * 32;
    const float* b = sb + st.stage * 32 * 32;
    for (int r = w; r < 32; r += warps) out[(32 * t + r) * 32 + lane] = a[r * 32 + lane] + b[r * 32 + lane];
    __syncwarp();  // every lane's reads come before lane 0's release
    if (lane == 0) mbarrier_arrive(&empty[st.stage]);
    st.advance();
  }
}
// pattern-end

// Warp 0 produces (one thread), warps 1 .. blockDim.x / 32 - 1 consume.
template <int STAGES>
__global__ void ring_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                            int tiles, float* out) {
  __shared__ alignas(128) float sa[STAGES * 32 * 32];
  __shared__ alignas(128) float sb[STAGES * 32 * 32];
  __shared__ uint64_t full[STAGES], empty[STAGES];
  const int warp = threadIdx.x / 32, warps = blockDim.x / 32;
  ring_init<STAGES>(full, empty, warps - 1);
  if (warp == 0) {
    if (threadIdx.x == 0) ring_producer<STAGES>(&map_a, &map_b, sa, sb, full, empty, tiles);
    __syncwarp();
  } else {
    ring_consumer<STAGES>(sa, sb, full, empty, tiles, warp - 1, warps - 1, out);
  }
}

// A and B are [408][32] fp32: 13 tiles of 32 rows, the last one 8 rows past the end (zero-filled, still counted
// in full by expect_tx). Every element of the output is checked, the zero-filled rows included.
template <int STAGES>
static void test_ring(int threads) {
  const int rows = 13 * 32 - 8, tiles = 13;
  std::vector<float> a(rows * 32), b(rows * 32);
  for (int i = 0; i < rows * 32; ++i) {
    a[i] = static_cast<float>(i % 1000) * 0.25f;
    b[i] = static_cast<float>((i / 7) % 513);
  }
  float *d_a = device_copy(a), *d_b = device_copy(b), *d_out;
  CUDA_CHECK(cudaMalloc(&d_out, tiles * 32 * 32 * sizeof(float)));
  CUDA_CHECK(cudaMemset(d_out, 0xFF, tiles * 32 * 32 * sizeof(float)));  // NaN: unwritten elements fail
  const uint64_t dims[2] = {32, static_cast<uint64_t>(rows)}, strides[1] = {32 * sizeof(float)};
  const uint32_t box[2] = {32, 32};
  CUtensorMap map_a, map_b;
  bool ok = make_tensor_map(&map_a, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, d_a, dims, strides, box,
                            CU_TENSOR_MAP_SWIZZLE_NONE) == cudaSuccess &&
            make_tensor_map(&map_b, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, d_b, dims, strides, box,
                            CU_TENSOR_MAP_SWIZZLE_NONE) == cudaSuccess;
  if (!ok) std::printf("    make_tensor_map failed\n");
  if (ok) {
    ring_kernel<STAGES><<<1, threads>>>(map_a, map_b, tiles, d_out);
    sync_or_die("ring_kernel");
    const std::vector<float> out = host_copy(d_out, tiles * 32 * 32);
    int bad = 0;
    for (int i = 0; i < tiles * 32 * 32; ++i) {
      const float want = i < rows * 32 ? a[i] + b[i] : 0.0f;
      if (!(out[i] == want) && bad++ < 5) std::printf("    ring element %d: got %g want %g\n", i, out[i], want);
    }
    ok = bad == 0;
  }
  CUDA_CHECK(cudaFree(d_a));
  CUDA_CHECK(cudaFree(d_b));
  CUDA_CHECK(cudaFree(d_out));
  char name[96];
  std::snprintf(name, sizeof name, "ring of %d stage(s), %d consumer warp(s), 13 tiles", STAGES, threads / 32 - 1);
  record(name, ok,
         {"tma_pipeline.md#ring_state", "tma_pipeline.md#ring_init", "tma_pipeline.md#ring_producer",
          "tma_pipeline.md#ring_consumer"});
}

// ========================================================================================= warp_specialisation.md

// pattern-begin: warp_specialisation.md#ws_config
// ws_config
// 384 threads: warpgroup 0 produces, 1 and 2 consume 64 rows each. __launch_bounds__(384, 1) caps a thread at
// 65536 / 384 rounded down to a multiple of 8 = 168: the CTA's pool is 384 x 168 registers.
constexpr int kWsThreads = 384, kWsRegCap = 65536 / kWsThreads / 8 * 8;
constexpr int kProducerRegs = 40, kConsumerRegs = 232;
static_assert(kProducerRegs % 8 == 0 && kConsumerRegs % 8 == 0, "setmaxnreg takes multiples of 8");
static_assert(kProducerRegs >= 24 && kConsumerRegs <= 256, "setmaxnreg takes 24 .. 256");
static_assert(kProducerRegs <= kWsRegCap && kConsumerRegs >= kWsRegCap, "dec lowers the cap, inc raises it");
static_assert(kProducerRegs + 2 * kConsumerRegs <= 3 * kWsRegCap, "over the pool: setmaxnreg_inc never returns");
// A stage: A 128 x 64 and B kWsN x 64 bf16 (K-major boxes, 128B swizzle), each 1024-byte aligned.
constexpr int kWsStages = 3, kWsN = 128;
constexpr uint32_t kWsABytes = 128 * 64 * 2, kWsStageBytes = kWsABytes + kWsN * 64 * 2;
// pattern-end

// pattern-begin: warp_specialisation.md#ws_producer
// ws_producer
// Warpgroup 0, after setmaxnreg_dec: warps 1-3 return; all 32 lanes of warp 0 run elect_one(), one drives the ring.
__device__ __forceinline__ void ws_producer(const CUtensorMap* map_a, const CUtensorMap* map_b, uint8_t* smem,
                                            uint64_t* full, uint64_t* empty, int m0, int k_tiles) {
  if (threadIdx.x / 32 != 0) return;
  if (elect_one()) {
    RingState<kWsStages> st;
    for (int kt = 0; kt < k_tiles; ++kt) {
      uint8_t* stage = smem + st.stage * kWsStageBytes;
      mbarrier_wait(&empty[st.stage], st.phase ^ 1);
      mbarrier_arrive_expect_tx(&full[st.stage], kWsStageBytes);
      tma_load_2d(stage, map_a, &full[st.stage], 64 * kt, m0);             // A rows m0 .. m0 + 127
      tma_load_2d(stage + kWsABytes, map_b, &full[st.stage], 64 * kt, 0);  // B rows 0 .. kWsN - 1
      st.advance();
    }
  }
  __syncwarp();  // reconverge warp 0 after the one-lane branch
}
// pattern-end

// pattern-begin: warp_specialisation.md#ws_consumer
// ws_consumer
// Consumer wg (0 or 1): its 64 rows of A times B; a stage is released once the wgmmas that read it retired.
__device__ __forceinline__ void ws_consumer(uint8_t* smem, uint64_t* full, uint64_t* empty, int k_tiles,
                                            float (&acc)[kWsN / 2]) {
  const int wg = threadIdx.x / 128 - 1;
  RingState<kWsStages> st;
  int prev = -1;
  for (int kt = 0; kt < k_tiles; ++kt) {
    mbarrier_wait(&full[st.stage], st.phase);
    const uint8_t* stage = smem + st.stage * kWsStageBytes;
    const uint64_t da = make_desc_k128(stage + wg * 64 * 128), db = make_desc_k128(stage + kWsABytes);
    wgmma_fence_operand(acc);
    wgmma_fence();
#pragma unroll
    for (int k = 0; k < 4; ++k)  // k-steps of 16 inside the 128-byte swizzled rows: +32 bytes each
      wgmma_bf16_ss<kWsN>(acc, desc_advance(da, 32 * k), desc_advance(db, 32 * k), kt > 0 || k > 0);
    wgmma_commit();
    wgmma_wait<1>();  // the previous stage's group has retired; this one may still run
    wgmma_fence_operand(acc);
    if (prev >= 0 && threadIdx.x % 32 == 0) mbarrier_arrive(&empty[prev]);  // 4 warps x 2 consumers
    prev = st.stage;
    st.advance();
  }
  wgmma_wait<0>();
  wgmma_fence_operand(acc);
  if (prev >= 0 && threadIdx.x % 32 == 0) mbarrier_arrive(&empty[prev]);
}
// pattern-end

// pattern-begin: warp_specialisation.md#ws_kernel
// ws_kernel
// C[128 blockIdx.x .. + 127][0 .. kWsN - 1] = A B^T over K = 64 k_tiles (A [M][K], B [kWsN][K], bf16).
__global__ void __launch_bounds__(kWsThreads, 1)
    ws_gemm_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                   int k_tiles, float* c) {
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + kWsStages * kWsStageBytes);
  uint64_t* empty = full + kWsStages;
  ring_init<kWsStages>(full, empty, 2 * 4);  // 8 consumer warps; the last __syncthreads() of the kernel
  const int m0 = 128 * blockIdx.x;
  if (threadIdx.x / 128 == 0) {
    setmaxnreg_dec<kProducerRegs>();  // all 128 threads of the warpgroup, converged, the same value
    ws_producer(&map_a, &map_b, smem, full, empty, m0, k_tiles);
  } else {
    setmaxnreg_inc<kConsumerRegs>();  // waits until the producer's registers are back in the pool
    float acc[kWsN / 2];
    ws_consumer(smem, full, empty, k_tiles, acc);
    const int t = threadIdx.x % 128, row0 = m0 + 64 * (threadIdx.x / 128 - 1);
#pragma unroll
    for (int i = 0; i < kWsN / 2; ++i) c[(row0 + wgmma_acc_row(i, t)) * kWsN + wgmma_acc_col(i, t)] = acc[i];
  }
}
// pattern-end

// M = 256 (two CTAs), N = kWsN, K = 448 (7 k-tiles through 3 stages: the ring wraps twice, parity flips).
static void test_ws_gemm(std::mt19937& rng) {
  const int M = 256, N = kWsN, k_tiles = 7, K = 64 * k_tiles;
  std::normal_distribution<float> nd;
  std::vector<uint16_t> a(M * K), b(N * K);
  for (auto& x : a) x = bf16_bits(nd(rng));
  for (auto& x : b) x = bf16_bits(nd(rng));
  uint16_t *d_a = device_copy(a), *d_b = device_copy(b);
  float* d_c;
  CUDA_CHECK(cudaMalloc(&d_c, M * N * sizeof(float)));
  CUDA_CHECK(cudaMemset(d_c, 0xFF, M * N * sizeof(float)));
  CUtensorMap map_a, map_b;
  bool ok = make_tensor_map_2d_bf16(&map_a, as_bf16(d_a), M, K, 128, 64) == cudaSuccess &&
            make_tensor_map_2d_bf16(&map_b, as_bf16(d_b), N, K, N, 64) == cudaSuccess;
  if (!ok) std::printf("    make_tensor_map_2d_bf16 failed\n");
  double max_err = 0;
  if (ok) {
    const int smem = kWsStages * kWsStageBytes + 2 * kWsStages * 8 + 1024;
    CUDA_CHECK(cudaFuncSetAttribute(ws_gemm_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    ws_gemm_kernel<<<M / 128, kWsThreads, smem>>>(map_a, map_b, k_tiles, d_c);
    sync_or_die("ws_gemm_kernel");
    const std::vector<float> c = host_copy(d_c, M * N);
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) {
        double ref = 0;
        for (int k = 0; k < K; ++k) ref += double(bf16_value(a[m * K + k])) * bf16_value(b[n * K + k]);
        const double err = std::fabs(c[m * N + n] - ref);
        if (!(err <= 1e-3 + 1e-3 * std::fabs(ref))) ok = false;
        if (!(err <= max_err)) max_err = err;  // NaN propagates
      }
    if (!ok) std::printf("    ws gemm: max abs error %g\n", max_err);
  }
  CUDA_CHECK(cudaFree(d_a));
  CUDA_CHECK(cudaFree(d_b));
  CUDA_CHECK(cudaFree(d_c));
  record("warp-specialised GEMM 256x128x448, 3 stages", ok,
         {"warp_specialisation.md#ws_config", "warp_specialisation.md#ws_producer",
          "warp_specialisation.md#ws_consumer", "warp_specialisation.md#ws_kernel", "tma_pipeline.md#ring_state",
          "tma_pipeline.md#ring_init"});
}

// ========================================================================================= cluster_multicast.md

// pattern-begin: cluster_multicast.md#cluster_launch
// cluster_launch
// Host: `clusters` clusters of 2 CTAs, the cluster shape given at launch (the kernel needs no __cluster_dims__).
// The grid is a multiple of the cluster size; CTAs 2c and 2c + 1 form cluster c, ranks 0 and 1.
template <typename... Params, typename... Args>
cudaError_t launch_cluster_pairs(void (*kernel)(Params...), int clusters, int threads, size_t smem_bytes,
                                 Args&&... args) {
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim = {2, 1, 1};
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(2 * clusters);
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = smem_bytes;
  config.attrs = attr;
  config.numAttrs = 1;
  return cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}
// pattern-end

// pattern-begin: cluster_multicast.md#multicast_tile
// multicast_tile
// Cluster c loads the 64 x 64 bf16 tile at row 64c once: CTA r fetches the 32-row half r (half_map's box is
// 32 x 64, 128B swizzle) and multicasts it into both CTAs (mask 0b11).
__global__ void multicast_tile_kernel(const __grid_constant__ CUtensorMap half_map, uint16_t* out) {
  __shared__ alignas(1024) uint16_t tile[64 * 64];  // the same shared offset in both CTAs
  __shared__ uint64_t bar;
  const uint32_t rank = cluster_ctarank();
  const int row0 = 64 * (blockIdx.x / 2);
  if (threadIdx.x == 0) {
    mbarrier_init(&bar, 1);
    fence_barrier_init();  // release the init at cluster scope: the peer's copy completes on this barrier
  }
  cluster_sync();  // both barriers initialised before either CTA issues its copy
  if (threadIdx.x == 0) {
    mbarrier_arrive_expect_tx(&bar, sizeof(tile));  // the whole tile lands here: our half and the peer's
    tma_load_2d_multicast(tile + rank * 32 * 64, &half_map, &bar, 0b11, 0, row0 + 32 * rank);
  }
  mbarrier_wait(&bar, 0);
  for (int i = threadIdx.x; i < 64 * 64; i += blockDim.x) out[blockIdx.x * 64 * 64 + i] = tile[i];
  cluster_sync();  // no CTA exits while the peer's copy or arrivals may still target its shared memory
}
// pattern-end

// pattern-begin: cluster_multicast.md#multicast_ring
// multicast_ring
// Cluster c streams `tiles` 64 x 64 tiles from row 64 tiles c through 2 stages; warp 0 produces, warps 1 and 2
// copy each tile out. empty[s] counts the consumer warps of both CTAs: 2 x 2.
constexpr int kMcStages = 2;
__global__ void multicast_ring_kernel(const __grid_constant__ CUtensorMap half_map, int tiles, uint16_t* out) {
  __shared__ alignas(1024) uint16_t stage[kMcStages][64 * 64];
  __shared__ uint64_t full[kMcStages], empty[kMcStages];
  const uint32_t rank = cluster_ctarank();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, row0 = 64 * tiles * (blockIdx.x / 2);
  if (threadIdx.x == 0) {
    for (int s = 0; s < kMcStages; ++s) {
      mbarrier_init(&full[s], 1);
      mbarrier_init(&empty[s], 2 * 2);  // 2 consumer warps x 2 CTAs
    }
    fence_barrier_init();
  }
  cluster_sync();
  RingState<kMcStages> st;
  if (warp == 0) {
    if (lane == 0)
      for (int t = 0; t < tiles; ++t, st.advance()) {
        mbarrier_wait(&empty[st.stage], st.phase ^ 1);  // both CTAs have released this stage
        mbarrier_arrive_expect_tx(&full[st.stage], sizeof(stage[0]));  // both halves land here
        tma_load_2d_multicast(stage[st.stage] + rank * 32 * 64, &half_map, &full[st.stage], 0b11, 0,
                              row0 + 64 * t + 32 * rank);
      }
    __syncwarp();
  } else {
    for (int t = 0; t < tiles; ++t, st.advance()) {
      mbarrier_wait(&full[st.stage], st.phase);
      for (int i = 32 * (warp - 1) + lane; i < 64 * 64; i += 64)
        out[(static_cast<size_t>(blockIdx.x) * tiles + t) * 64 * 64 + i] = stage[st.stage][i];
      __syncwarp();
      if (lane == 0)  // "done reading": no data flows back, so the CTA-scope remote arrive is enough
        for (uint32_t r = 0; r < 2; ++r) mbarrier_arrive_cluster(mapa(smem_addr(&empty[st.stage]), r));
    }
  }
  cluster_sync();  // the peer's last arrivals target our barriers: stay until it is done
}
// pattern-end

// Two clusters; the tensor is [rows][64] uint16 with distinct values, loaded through a bf16 map (bits copied).
static void test_multicast(bool ring) {
  const int clusters = 2, tiles = ring ? 7 : 1, rows = 64 * tiles * clusters;
  std::vector<uint16_t> h(rows * 64);
  for (int i = 0; i < rows * 64; ++i) h[i] = static_cast<uint16_t>(i * 7 + 1);
  uint16_t *d = device_copy(h), *d_out;
  const size_t out_elems = size_t(2 * clusters) * tiles * 64 * 64;
  CUDA_CHECK(cudaMalloc(&d_out, out_elems * 2));
  CUDA_CHECK(cudaMemset(d_out, 0, out_elems * 2));
  CUtensorMap half_map;
  bool ok = make_tensor_map_2d_bf16(&half_map, as_bf16(d), rows, 64, 32, 64) == cudaSuccess;
  if (!ok) std::printf("    make_tensor_map_2d_bf16 failed\n");
  if (ok) {
    const cudaError_t e = ring ? launch_cluster_pairs(multicast_ring_kernel, clusters, 96, 0, half_map, tiles, d_out)
                               : launch_cluster_pairs(multicast_tile_kernel, clusters, 128, 0, half_map, d_out);
    CUDA_CHECK(e);
    sync_or_die(ring ? "multicast_ring_kernel" : "multicast_tile_kernel");
    const std::vector<uint16_t> out = host_copy(d_out, out_elems);
    int bad = 0;
    for (int cta = 0; cta < 2 * clusters; ++cta)
      for (int t = 0; t < tiles; ++t)
        for (int r = 0; r < 64; ++r)
          for (int c = 0; c < 64; ++c) {
            const uint16_t want = h[(64 * tiles * (cta / 2) + 64 * t + r) * 64 + c];
            const uint16_t got = out[(size_t(cta) * tiles + t) * 64 * 64 + swizzled128(r, c, 2)];
            if (got != want && bad++ < 5)
              std::printf("    multicast cta %d tile %d (%d,%d): got %u want %u\n", cta, t, r, c, got, want);
          }
    ok = bad == 0;
  }
  CUDA_CHECK(cudaFree(d));
  CUDA_CHECK(cudaFree(d_out));
  if (ring)
    record("multicast ring, 2 clusters of 2, 7 tiles, 2 stages", ok,
           {"cluster_multicast.md#cluster_launch", "cluster_multicast.md#multicast_ring",
            "tma_pipeline.md#ring_state"});
  else
    record("multicast tile, 2 clusters of 2", ok,
           {"cluster_multicast.md#cluster_launch", "cluster_multicast.md#multicast_tile"});
}

// ======================================================================================== attention_dataflow.md

// pattern-begin: attention_dataflow.md#online_softmax
// online_softmax
// s: scores (masked: -inf) -> P. m, l: running max of the raw scores and partial sum of the thread's two rows.
template <int N>
__device__ __forceinline__ void online_softmax(float (&s)[N / 2], float (&m)[2], float (&l)[2], float scale_log2,
                                               float (&correction)[2]) {
  float m_new[2] = {m[0], m[1]}, shift[2];
  acc_row_max<N>(s, m_new);  // the whole row: the thread's elements, then the quad
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    shift[h] = m_new[h] == -INFINITY ? 0.0f : m_new[h] * scale_log2;  // no visible key yet: avoid -inf - -inf
    correction[h] = exp2_approx(m[h] * scale_log2 - shift[h]);       // 2^-inf = 0 while m was -inf
    l[h] *= correction[h];
    m[h] = m_new[h];
  }
#pragma unroll
  for (int i = 0; i < N / 2; ++i) s[i] = exp2_approx(fmaf(s[i], scale_log2, -shift[(i / 2) % 2]));
  acc_row_sum_partial<N>(s, l);  // the quad's four partial sums are combined once, at the end
}
// pattern-end

// pattern-begin: attention_dataflow.md#pv_accumulate
// pv_accumulate
// O += P V: P (64 x N accumulator) as bf16 A fragments; V ([N][NO], boxes of N rows x 64 columns) MN-major B.
template <int N, int NO>
__device__ __forceinline__ void pv_accumulate(float (&o)[NO / 2], const float (&p)[N / 2], const void* v_tile) {
  uint32_t a[N / 16][4];
  wgmma_acc_to_a<N>(p, a);  // a[k] = P's columns 16k .. 16k + 15, the A operand of k-step k
  const uint64_t desc_v = make_desc_mn128(v_tile, N * 128);  // LBO: from one 64-column box of V to the next
  wgmma_fence_operand(o);
#pragma unroll
  for (int k = 0; k < N / 16; ++k) wgmma_fence_operand(a[k]);
  wgmma_fence();  // the register writes above (o rescaled, a packed) before the wgmmas read them
#pragma unroll
  for (int k = 0; k < N / 16; ++k) wgmma_bf16_rs<NO, 1>(o, a[k], desc_advance(desc_v, 16 * 128 * k), 1);
  wgmma_commit();
  wgmma_wait<0>();  // o and a belong to the tensor core until here
  wgmma_fence_operand(o);
#pragma unroll
  for (int k = 0; k < N / 16; ++k) wgmma_fence_operand(a[k]);
}
// pattern-end

// After the last block (attention_dataflow.md describes it): l summed over the quad, O / l, LSE = scale m + ln(l),
// the natural-log LSE the backward reads. A row with no visible key: O = 0, LSE = -inf.
template <int NO>
__device__ __forceinline__ void forward_finish(float (&o)[NO / 2], const float (&m)[2], float (&l)[2], float scale,
                                               float (&lse)[2]) {
  float inv[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    l[h] = quad_sum(l[h]);
    inv[h] = l[h] > 0.0f ? 1.0f / l[h] : 0.0f;
    lse[h] = l[h] > 0.0f ? m[h] * scale + logf(l[h]) : -INFINITY;
  }
  acc_row_scale<NO>(o, inv);
}

// pattern-begin: attention_dataflow.md#bwd_p_ds
// bwd_p_ds
// s = S^T, dp = dP^T (keys x queries). lse2[q] = LSE_q log2(e), delta[q] = rowsum(dO * O)_q, both per column.
template <int N>
__device__ __forceinline__ void bwd_p_ds(float (&s)[N / 2], float (&dp)[N / 2], const float* lse2,
                                         const float* delta, float scale_log2) {
#pragma unroll
  for (int i = 0; i < N / 2; ++i) {
    const int q = wgmma_acc_col(i, threadIdx.x % 128);
    s[i] = exp2_approx(fmaf(s[i], scale_log2, -lse2[q]));  // P^T = exp(scale S^T - LSE), normalised already
    dp[i] = s[i] * (dp[i] - delta[q]);                      // dS^T = P^T (dP^T - Delta)
  }
}
// pattern-end

// pattern-begin: attention_dataflow.md#bwd_dq_atomic
// bwd_dq_atomic
// dQ[64 queries][64] += scale dS K over this CTA's 64 keys; ds_buf: 8 KB, 1024-byte aligned.
__device__ __forceinline__ void bwd_dq_atomic(const float (&ds_t)[32], uint8_t* ds_buf, const void* k_tile,
                                              float* dq, float scale) {
  const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
  uint32_t a[4][4];
  wgmma_acc_to_a<64>(ds_t, a);  // a[j]: the stmatrix_x4 registers of columns 16j .. 16j + 15
  const int row = warp * 16 + (lane / 8 % 2) * 8 + lane % 8;  // this lane's row address of each x4
#pragma unroll
  for (int j = 0; j < 4; ++j) stmatrix_x4(ds_buf + row * 128 + (((2 * j + lane / 16) ^ (row % 8)) * 16), a[j]);
  fence_proxy_async_shared();  // generic-proxy writes, read next by wgmma (async proxy)
  bar_sync(1, 128);            // every warp's rows are written before the wgmma reads them
  float acc[32];
  const uint64_t da = make_desc_mn128(ds_buf, 64 * 128), db = make_desc_mn128(k_tile, 64 * 128);
  wgmma_fence_operand(acc);
  wgmma_fence();
#pragma unroll
  for (int k = 0; k < 4; ++k)  // K = keys: 16 rows of both MN-major tiles per step
    wgmma_bf16_ss<64, 1, 1>(acc, desc_advance(da, 2048 * k), desc_advance(db, 2048 * k), k > 0);
  wgmma_commit();
  wgmma_wait<0>();
  wgmma_fence_operand(acc);
#pragma unroll
  for (int i = 0; i < 32; ++i) atomicAdd(&dq[wgmma_acc_row(i, t) * 64 + wgmma_acc_col(i, t)], scale * acc[i]);
}
// pattern-end

// ------------------------------------------------------------------------------------------- attention forward

// One warpgroup, one 64-row query tile, D = 64, Sk = 160 keys in 3 blocks of 64 (keys 160..191 lie past the end:
// TMA zero-fills them, the mask hides them). The mask also hides keys 0..63 from the odd rows (their first block is
// all -inf, so m stays -inf through it) and every key from row 5 (O = 0, LSE = -inf).
constexpr int kFwdSk = 160, kFwdBlocks = 3, kTile = 64 * 64 * 2;
__host__ __device__ inline bool fwd_visible(int q, int k) { return k < kFwdSk && q != 5 && (q % 2 == 0 || k >= 64); }

__global__ void __launch_bounds__(128, 1)
    attention_forward_test_kernel(const __grid_constant__ CUtensorMap map_q, const __grid_constant__ CUtensorMap map_k,
                                  const __grid_constant__ CUtensorMap map_v, float scale, float* o_out,
                                  float* lse_out) {
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = smem_base_1024(smem_raw);
  uint8_t *sq = smem, *sk = smem + kTile, *sv = sk + kFwdBlocks * kTile;
  uint64_t* bar = reinterpret_cast<uint64_t*>(sv + kFwdBlocks * kTile);
  const int t = threadIdx.x;
  if (t == 0) {
    mbarrier_init(bar, 1);
    fence_barrier_init();
  }
  __syncthreads();
  if (t == 0) {
    mbarrier_arrive_expect_tx(bar, (1 + 2 * kFwdBlocks) * kTile);
    tma_load_2d(sq, &map_q, bar, 0, 0);
    for (int j = 0; j < kFwdBlocks; ++j) {
      tma_load_2d(sk + j * kTile, &map_k, bar, 0, 64 * j);
      tma_load_2d(sv + j * kTile, &map_v, bar, 0, 64 * j);
    }
  }
  mbarrier_wait(bar, 0);

  const float scale_log2 = scale * 1.4426950408889634f;
  float o[32], m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
#pragma unroll
  for (int i = 0; i < 32; ++i) o[i] = 0.0f;
  for (int j = 0; j < kFwdBlocks; ++j) {
    float s[32];
    const uint64_t desc_q = make_desc_k128(sq), desc_k = make_desc_k128(sk + j * kTile);
    wgmma_fence_operand(s);
    wgmma_fence();
#pragma unroll
    for (int k = 0; k < 4; ++k) wgmma_bf16_ss<64>(s, desc_advance(desc_q, 32 * k), desc_advance(desc_k, 32 * k), k > 0);
    wgmma_commit();
    wgmma_wait<0>();
    wgmma_fence_operand(s);
#pragma unroll
    for (int i = 0; i < 32; ++i)
      if (!fwd_visible(wgmma_acc_row(i, t), 64 * j + wgmma_acc_col(i, t))) s[i] = -INFINITY;
    float correction[2];
    online_softmax<64>(s, m, l, scale_log2, correction);
    acc_row_scale<64>(o, correction);
    pv_accumulate<64, 64>(o, s, sv + j * kTile);
  }
  float lse[2];
  forward_finish<64>(o, m, l, scale, lse);
#pragma unroll
  for (int i = 0; i < 32; ++i) o_out[wgmma_acc_row(i, t) * 64 + wgmma_acc_col(i, t)] = o[i];
  if (t % 4 == 0) {
    lse_out[wgmma_acc_row(0, t)] = lse[0];
    lse_out[wgmma_acc_row(2, t)] = lse[1];
  }
}

static void test_attention_forward(std::mt19937& rng) {
  std::normal_distribution<float> nd;
  std::vector<uint16_t> q(64 * 64), k(kFwdSk * 64), v(kFwdSk * 64);
  for (auto& x : q) x = bf16_bits(nd(rng));
  for (auto& x : k) x = bf16_bits(nd(rng));
  for (auto& x : v) x = bf16_bits(nd(rng));
  uint16_t *d_q = device_copy(q), *d_k = device_copy(k), *d_v = device_copy(v);
  float *d_o, *d_lse;
  CUDA_CHECK(cudaMalloc(&d_o, 64 * 64 * 4));
  CUDA_CHECK(cudaMalloc(&d_lse, 64 * 4));
  CUDA_CHECK(cudaMemset(d_o, 0xFF, 64 * 64 * 4));
  CUDA_CHECK(cudaMemset(d_lse, 0xFF, 64 * 4));
  CUtensorMap map_q, map_k, map_v;
  bool ok = make_tensor_map_2d_bf16(&map_q, as_bf16(d_q), 64, 64, 64, 64) == cudaSuccess &&
            make_tensor_map_2d_bf16(&map_k, as_bf16(d_k), kFwdSk, 64, 64, 64) == cudaSuccess &&
            make_tensor_map_2d_bf16(&map_v, as_bf16(d_v), kFwdSk, 64, 64, 64) == cudaSuccess;
  if (!ok) std::printf("    make_tensor_map_2d_bf16 failed\n");
  const double scale = 0.125;
  double max_err_o = 0, max_err_lse = 0;
  if (ok) {
    const int smem = (1 + 2 * kFwdBlocks) * kTile + 8 + 1024;
    CUDA_CHECK(cudaFuncSetAttribute(attention_forward_test_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    attention_forward_test_kernel<<<1, 128, smem>>>(map_q, map_k, map_v, float(scale), d_o, d_lse);
    sync_or_die("attention_forward_test_kernel");
    const std::vector<float> o = host_copy(d_o, 64 * 64), lse = host_copy(d_lse, 64);
    for (int r = 0; r < 64; ++r) {
      std::vector<double> s(kFwdSk, -INFINITY);
      double mx = -INFINITY;
      for (int j = 0; j < kFwdSk; ++j) {
        if (!fwd_visible(r, j)) continue;
        double dot = 0;
        for (int d = 0; d < 64; ++d) dot += double(bf16_value(q[r * 64 + d])) * bf16_value(k[j * 64 + d]);
        s[j] = dot * scale;
        mx = std::max(mx, s[j]);
      }
      double sum = 0;
      for (int j = 0; j < kFwdSk; ++j) sum += mx == -INFINITY ? 0.0 : std::exp(s[j] - mx);
      const double ref_lse = sum > 0 ? mx + std::log(sum) : -INFINITY;
      if (ref_lse == -INFINITY) {
        if (lse[r] != -INFINITY) ok = false;
      } else {
        const double err = std::fabs(lse[r] - ref_lse);
        if (!(err <= 1e-3 * std::max(1.0, std::fabs(ref_lse)))) ok = false;
        if (!(err <= max_err_lse)) max_err_lse = err;
      }
      for (int d = 0; d < 64; ++d) {
        double ref = 0;
        for (int j = 0; j < kFwdSk; ++j)
          if (sum > 0) ref += std::exp(s[j] - mx) / sum * bf16_value(v[j * 64 + d]);
        // P is rounded to bf16 for the P V product: a tolerance of that size.
        const double err = std::fabs(o[r * 64 + d] - ref);
        if (!(err <= 1e-2 + 1e-2 * std::fabs(ref))) ok = false;
        if (!(err <= max_err_o)) max_err_o = err;
      }
    }
    if (!ok) std::printf("    attention forward: max abs error O %g, LSE %g\n", max_err_o, max_err_lse);
  }
  for (void* p : {static_cast<void*>(d_q), static_cast<void*>(d_k), static_cast<void*>(d_v),
                  static_cast<void*>(d_o), static_cast<void*>(d_lse)})
    CUDA_CHECK(cudaFree(p));
  record("attention forward, 3 key blocks, masked rows", ok,
         {"attention_dataflow.md#online_softmax", "attention_dataflow.md#pv_accumulate"});
}

// ------------------------------------------------------------------------------------------ attention backward

// Sq = Sk = 128, D = 64. CTA n (of 2) holds keys 64n .. 64n + 63 (K, V in shared memory, dK, dV in registers) and
// loops over the two 64-row query blocks: S^T = K Q^T and dP^T = V dO^T (SS), P^T and dS^T (bwd_p_ds), dV += P^T dO
// and dK += dS^T Q (pv_accumulate, RS), dQ += dS K (bwd_dq_atomic; both CTAs add into every dQ row).
constexpr int kBwdS = 128;
__global__ void __launch_bounds__(128, 1)
    attention_backward_test_kernel(const __grid_constant__ CUtensorMap map_q,
                                   const __grid_constant__ CUtensorMap map_k,
                                   const __grid_constant__ CUtensorMap map_v,
                                   const __grid_constant__ CUtensorMap map_do, const float* lse2, const float* delta,
                                   float scale, float* dq_acc, float* dk_out, float* dv_out) {
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = smem_base_1024(smem_raw);
  uint8_t *sk = smem, *sv = smem + kTile, *sq = sv + kTile, *sdo = sq + 2 * kTile, *sds = sdo + 2 * kTile;
  uint64_t* bar = reinterpret_cast<uint64_t*>(sds + kTile);
  const int t = threadIdx.x, key0 = 64 * blockIdx.x;
  if (t == 0) {
    mbarrier_init(bar, 1);
    fence_barrier_init();
  }
  __syncthreads();
  if (t == 0) {
    mbarrier_arrive_expect_tx(bar, 6 * kTile);
    tma_load_2d(sk, &map_k, bar, 0, key0);
    tma_load_2d(sv, &map_v, bar, 0, key0);
    for (int qb = 0; qb < 2; ++qb) {
      tma_load_2d(sq + qb * kTile, &map_q, bar, 0, 64 * qb);
      tma_load_2d(sdo + qb * kTile, &map_do, bar, 0, 64 * qb);
    }
  }
  mbarrier_wait(bar, 0);

  const float scale_log2 = scale * 1.4426950408889634f;
  float dv[32], dk[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) dv[i] = dk[i] = 0.0f;
  const uint64_t desc_k = make_desc_k128(sk), desc_v = make_desc_k128(sv);
  for (int qb = 0; qb < 2; ++qb) {
    float s[32], dp[32];
    const uint64_t desc_q = make_desc_k128(sq + qb * kTile), desc_do = make_desc_k128(sdo + qb * kTile);
    wgmma_fence_operand(s);
    wgmma_fence_operand(dp);
    wgmma_fence();
#pragma unroll
    for (int k = 0; k < 4; ++k)  // S^T = K Q^T: A = K, B = Q, both K-major
      wgmma_bf16_ss<64>(s, desc_advance(desc_k, 32 * k), desc_advance(desc_q, 32 * k), k > 0);
    wgmma_commit();
#pragma unroll
    for (int k = 0; k < 4; ++k)  // dP^T = V dO^T
      wgmma_bf16_ss<64>(dp, desc_advance(desc_v, 32 * k), desc_advance(desc_do, 32 * k), k > 0);
    wgmma_commit();
    wgmma_wait<0>();
    wgmma_fence_operand(s);
    wgmma_fence_operand(dp);
    bwd_p_ds<64>(s, dp, lse2 + 64 * qb, delta + 64 * qb, scale_log2);
    pv_accumulate<64, 64>(dv, s, sdo + qb * kTile);  // dV += P^T dO
    pv_accumulate<64, 64>(dk, dp, sq + qb * kTile);  // dK += dS^T Q (times scale at the end)
    bwd_dq_atomic(dp, sds, sk, dq_acc + 64 * qb * 64, scale);
  }
#pragma unroll
  for (int i = 0; i < 32; ++i) {
    const int at = (key0 + wgmma_acc_row(i, t)) * 64 + wgmma_acc_col(i, t);
    dv_out[at] = dv[i];
    dk_out[at] = dk[i] * scale;
  }
}

static void test_attention_backward(std::mt19937& rng) {
  const int S = kBwdS, D = 64;
  const double scale = 0.125;
  std::normal_distribution<float> nd;
  std::vector<uint16_t> q(S * D), k(S * D), v(S * D), dout(S * D), o_bf(S * D);
  for (auto& x : q) x = bf16_bits(nd(rng));
  for (auto& x : k) x = bf16_bits(nd(rng));
  for (auto& x : v) x = bf16_bits(nd(rng));
  for (auto& x : dout) x = bf16_bits(nd(rng));
  auto at = [](const std::vector<uint16_t>& x, int r, int c) { return double(bf16_value(x[r * 64 + c])); };
  // Host forward (float64): P, LSE, and O rounded to bf16 as a forward kernel would store it.
  std::vector<double> p(S * S), lse(S);
  for (int i = 0; i < S; ++i) {
    double mx = -INFINITY;
    for (int j = 0; j < S; ++j) {
      double dot = 0;
      for (int d = 0; d < D; ++d) dot += at(q, i, d) * at(k, j, d);
      p[i * S + j] = dot * scale;
      mx = std::max(mx, p[i * S + j]);
    }
    double sum = 0;
    for (int j = 0; j < S; ++j) sum += std::exp(p[i * S + j] - mx);
    lse[i] = mx + std::log(sum);
    for (int j = 0; j < S; ++j) p[i * S + j] = std::exp(p[i * S + j] - lse[i]);
    for (int d = 0; d < D; ++d) {
      double o = 0;
      for (int j = 0; j < S; ++j) o += p[i * S + j] * at(v, j, d);
      o_bf[i * D + d] = bf16_bits(float(o));
    }
  }
  // The statistics the backward's prep step makes: lse2 = LSE log2(e), Delta = rowsum(dO * O).
  std::vector<float> lse2(S), delta(S);
  std::vector<double> delta_d(S);
  for (int i = 0; i < S; ++i) {
    lse2[i] = float(lse[i] * M_LOG2E);
    double dl = 0;
    for (int d = 0; d < D; ++d) dl += at(dout, i, d) * at(o_bf, i, d);
    delta_d[i] = dl;
    delta[i] = float(dl);
  }
  // Host gradients (float64).
  std::vector<double> ds(S * S), dq_ref(S * D, 0), dk_ref(S * D, 0), dv_ref(S * D, 0);
  for (int i = 0; i < S; ++i)
    for (int j = 0; j < S; ++j) {
      double dpv = 0;
      for (int d = 0; d < D; ++d) dpv += at(dout, i, d) * at(v, j, d);
      ds[i * S + j] = p[i * S + j] * (dpv - delta_d[i]);
    }
  for (int i = 0; i < S; ++i)
    for (int j = 0; j < S; ++j)
      for (int d = 0; d < D; ++d) {
        dv_ref[j * D + d] += p[i * S + j] * at(dout, i, d);
        dk_ref[j * D + d] += scale * ds[i * S + j] * at(q, i, d);
        dq_ref[i * D + d] += scale * ds[i * S + j] * at(k, j, d);
      }

  uint16_t *d_q = device_copy(q), *d_k = device_copy(k), *d_v = device_copy(v), *d_do = device_copy(dout);
  float *d_lse2 = device_copy(lse2), *d_delta = device_copy(delta), *d_dq, *d_dk, *d_dv;
  CUDA_CHECK(cudaMalloc(&d_dq, S * D * 4));
  CUDA_CHECK(cudaMalloc(&d_dk, S * D * 4));
  CUDA_CHECK(cudaMalloc(&d_dv, S * D * 4));
  CUDA_CHECK(cudaMemset(d_dq, 0, S * D * 4));  // the atomics only add
  CUDA_CHECK(cudaMemset(d_dk, 0xFF, S * D * 4));
  CUDA_CHECK(cudaMemset(d_dv, 0xFF, S * D * 4));
  CUtensorMap map_q, map_k, map_v, map_do;
  bool ok = make_tensor_map_2d_bf16(&map_q, as_bf16(d_q), S, D, 64, 64) == cudaSuccess &&
            make_tensor_map_2d_bf16(&map_k, as_bf16(d_k), S, D, 64, 64) == cudaSuccess &&
            make_tensor_map_2d_bf16(&map_v, as_bf16(d_v), S, D, 64, 64) == cudaSuccess &&
            make_tensor_map_2d_bf16(&map_do, as_bf16(d_do), S, D, 64, 64) == cudaSuccess;
  if (!ok) std::printf("    make_tensor_map_2d_bf16 failed\n");
  if (ok) {
    const int smem = 7 * kTile + 8 + 1024;
    CUDA_CHECK(cudaFuncSetAttribute(attention_backward_test_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    attention_backward_test_kernel<<<S / 64, 128, smem>>>(map_q, map_k, map_v, map_do, d_lse2, d_delta, float(scale),
                                                          d_dq, d_dk, d_dv);
    sync_or_die("attention_backward_test_kernel");
    const std::vector<float> dq = host_copy(d_dq, S * D), dk = host_copy(d_dk, S * D), dv = host_copy(d_dv, S * D);
    // P^T and dS^T are rounded to bf16 as wgmma operands: errors of ~0.4% of an element, checked against the
    // tensor's largest element.
    auto check = [&](const char* what, const std::vector<float>& got, const std::vector<double>& ref) {
      double mx = 0, err = 0;
      for (size_t i = 0; i < ref.size(); ++i) {
        mx = std::max(mx, std::fabs(ref[i]));
        const double e = std::fabs(got[i] - ref[i]);
        if (!(e <= err)) err = e;  // NaN propagates
      }
      const bool good = err <= 1e-2 * mx + 1e-4;
      if (!good) std::printf("    attention backward %s: max abs error %g, largest element %g\n", what, err, mx);
      return good;
    };
    const bool ok_dv = check("dV", dv, dv_ref), ok_dk = check("dK", dk, dk_ref), ok_dq = check("dQ", dq, dq_ref);
    ok = ok_dv && ok_dk && ok_dq;
  }
  for (void* ptr : {static_cast<void*>(d_q), static_cast<void*>(d_k), static_cast<void*>(d_v),
                    static_cast<void*>(d_do), static_cast<void*>(d_lse2), static_cast<void*>(d_delta),
                    static_cast<void*>(d_dq), static_cast<void*>(d_dk), static_cast<void*>(d_dv)})
    CUDA_CHECK(cudaFree(ptr));
  record("attention backward, 2 key blocks x 2 query blocks", ok,
         {"attention_dataflow.md#bwd_p_ds", "attention_dataflow.md#bwd_dq_atomic",
          "attention_dataflow.md#pv_accumulate"});
}

// ------------------------------------------------------------------------------------------------ main

int main() {
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s, sm_%d%d, %d SMs\n", prop.name, prop.major, prop.minor, prop.multiProcessorCount);
  if (prop.major != 9) {
    std::printf("needs a Hopper (sm_90) device\n");
    return 2;
  }
  std::mt19937 rng(4321);

  test_ring<1>(64);
  test_ring<2>(128);
  test_ring<4>(160);
  test_ws_gemm(rng);
  test_multicast(false);
  test_multicast(true);
  test_attention_forward(rng);
  test_attention_backward(rng);

  int failed = 0;
  std::printf("\nper fragment:\n");
  for (const char* name : kFragments) {
    const auto it = g_outcomes.find(name);
    const bool ok = it != g_outcomes.end() && it->second.ok;
    std::printf("%-4s %-40s (%s)\n", ok ? "PASS" : "FAIL", name,
                it != g_outcomes.end() ? it->second.tests.c_str() : "never run");
    failed += !ok;
  }
  for (const auto& [name, o] : g_outcomes) {  // a name recorded by a test but missing from kFragments
    bool listed = false;
    for (const char* f : kFragments) listed = listed || name == f;
    if (!listed) {
      std::printf("FAIL %-40s (recorded, but not in the fragment list)\n", name.c_str());
      ++failed;
    }
  }
  std::printf("\n%zu fragments, %d failed\n", sizeof(kFragments) / sizeof(kFragments[0]), failed);
  return failed ? 1 : 0;
}
