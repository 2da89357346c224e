// Compile test of the Blackwell kit (kits/blackwell/ptx and the shared kits/common/ptx it includes): every wrapper,
// and every instantiation of a templated one, is called once in a kernel of its own, so that ptxas checks the PTX of
// each for sm_100a and a SASS dump (tests/kit/sass_inventory.sh) can be read per wrapper. The kernels are
// `extern "C"` so their names stay readable: bw_<function>[_<variant>] for the Blackwell wrappers, common_<function>
// for the shared ones. Nothing here is meant to run: the values only keep each instruction alive (every result goes
// to `out`). Build: tests/kit/compile.sh.
#include <blackwell.cuh>

using namespace ptxkit::blackwell;

// ------------------------------------------------------------------------------------------------ compile-time

// Descriptor bit fields against the PTX ISA tables (tcgen05 shared memory descriptor; instruction descriptor for
// .kind::f16), computed by hand.
static_assert(make_tcgen05_smem_desc(0x400, 16, 1024, Tcgen05Swizzle::b128) == 0x4000404000010040ull,
              "smem descriptor: start 0x400, LBO 16, SBO 1024, version 0b001, 128B swizzle");
static_assert(make_tcgen05_smem_desc(0x400, 16, 1024, Tcgen05Swizzle::b128, 3) == (0x4000404000010040ull | 3ull << 49),
              "smem descriptor: base offset in bits 49-51");
static_assert(tcgen05_desc_advance(make_tcgen05_smem_desc(0x400, 16, 1024, Tcgen05Swizzle::b32), 32) ==
                  make_tcgen05_smem_desc(0x420, 16, 1024, Tcgen05Swizzle::b32),
              "advancing the start address by 32 bytes");
static_assert(make_idesc_bf16_f32<128, 256>() == 0x08400490u, "idesc: F32 D, BF16 A/B, K-major, N 256, M 128");
static_assert(make_idesc_bf16_f32<64, 64, false, true>() == 0x04110490u, "idesc: MN-major B, N 64, M 64");
static_assert(make_idesc_bf16_f32<256, 256, false, false, 2>() == 0x10400490u, "idesc: cta_group::2, M 256");
static_assert(tmem_addr(32, 7).raw == 0x00200007u && tmem_addr(32, 7).lane() == 32 && tmem_addr(32, 7).column() == 7,
              "TMEM address: lane in bits 31-16, column in bits 15-0");
static_assert(tmem_addr(0, 64).offset(96, 8).raw == tmem_addr(96, 72).raw, "TmemAddr::offset");

// ------------------------------------------------------------------------------------------------ helpers

// This warp's lane quarter of a TMEM allocation at `base` (contract "lane quarters").
__device__ __forceinline__ TmemAddr quarter(uint32_t base) {
  return TmemAddr{base}.offset(32 * ((threadIdx.x / 32) % 4), 0);
}

// ------------------------------------------------------------------------------------------------ tmem.cuh

#define ALLOC_KERNELS(CG, ATTR)                                                                       \
  extern "C" __global__ void ATTR bw_tmem_alloc_cg##CG(uint32_t* out) {                               \
    __shared__ uint32_t slot;                                                                         \
    if (threadIdx.x < 32) tmem_alloc<128, CG>(&slot);                                                 \
    __syncthreads();                                                                                  \
    out[threadIdx.x] = tmem_base(&slot).raw;                                                          \
  }                                                                                                   \
  extern "C" __global__ void ATTR bw_tmem_dealloc_cg##CG(uint32_t base) {                             \
    if (threadIdx.x < 32) tmem_dealloc<128, CG>(TmemAddr{base});                                      \
  }                                                                                                   \
  extern "C" __global__ void ATTR bw_tmem_relinquish_alloc_permit_cg##CG() {                          \
    if (threadIdx.x < 32) tmem_relinquish_alloc_permit<CG>();                                         \
  }
ALLOC_KERNELS(1, )
ALLOC_KERNELS(2, __cluster_dims__(2, 1, 1))
#undef ALLOC_KERNELS

// tmem_ld_32x32b<N> then tmem_wait_ld and tmem_fence_operand: one kernel per N.
#define LD32(N)                                                                                      \
  extern "C" __global__ void bw_tmem_ld_32x32b_x##N(uint32_t* out, uint32_t base) {                  \
    uint32_t r[N];                                                                                   \
    tmem_ld_32x32b(r, quarter(base));                                                                \
    tmem_wait_ld();                                                                                  \
    tmem_fence_operand(r);                                                                           \
    uint32_t s = 0;                                                                                  \
    _Pragma("unroll") for (int i = 0; i < N; ++i) s += r[i] * (i + 1);                               \
    out[threadIdx.x] = s;                                                                            \
  }
LD32(1) LD32(2) LD32(4) LD32(8) LD32(16) LD32(32) LD32(64) LD32(128)
#undef LD32

// tmem_st_32x32b<N> then tmem_wait_st: one kernel per N.
#define ST32(N)                                                                                      \
  extern "C" __global__ void bw_tmem_st_32x32b_x##N(const uint32_t* in, uint32_t base) {             \
    uint32_t v[N];                                                                                   \
    _Pragma("unroll") for (int i = 0; i < N; ++i) v[i] = in[threadIdx.x * N + i];                    \
    tmem_st_32x32b(quarter(base), v);                                                                \
    tmem_wait_st();                                                                                  \
  }
ST32(1) ST32(2) ST32(4) ST32(8) ST32(16) ST32(32) ST32(64) ST32(128)
#undef ST32

// tmem_ld_16x256b<X> / tmem_st_16x256b<X>: one kernel per X (4 X registers per thread).
#define LD256(X)                                                                                     \
  extern "C" __global__ void bw_tmem_ld_16x256b_x##X(uint32_t* out, uint32_t base) {                 \
    uint32_t r[4 * X];                                                                               \
    tmem_ld_16x256b<X>(r, quarter(base));                                                            \
    tmem_wait_ld();                                                                                  \
    tmem_fence_operand(r);                                                                           \
    uint32_t s = 0;                                                                                  \
    _Pragma("unroll") for (int i = 0; i < 4 * X; ++i) s += r[i] * (i + 1);                           \
    out[threadIdx.x] = s;                                                                            \
  }                                                                                                  \
  extern "C" __global__ void bw_tmem_st_16x256b_x##X(const uint32_t* in, uint32_t base) {            \
    uint32_t v[4 * X];                                                                               \
    _Pragma("unroll") for (int i = 0; i < 4 * X; ++i) v[i] = in[threadIdx.x * 4 * X + i];            \
    tmem_st_16x256b<X>(quarter(base), v);                                                            \
    tmem_wait_st();                                                                                  \
  }
LD256(1) LD256(2) LD256(4) LD256(8) LD256(16) LD256(32)
#undef LD256

extern "C" __global__ void bw_tmem_wait_ld() { tmem_wait_ld(); }
extern "C" __global__ void bw_tmem_wait_st() { tmem_wait_st(); }

// ------------------------------------------------------------------------------------------------ tcgen05_desc.cuh

extern "C" __global__ void bw_tcgen05_descriptors(uint64_t* out) {
  __shared__ alignas(1024) uint8_t tile[8192];
  out[0] = make_tcgen05_desc_k128(tile);
  out[1] = make_tcgen05_desc_mn128(tile, 8192);
  out[2] = tcgen05_desc_advance(make_tcgen05_desc_k128(tile), 32 * threadIdx.x);
  out[3] = make_tcgen05_smem_desc(smem_addr(tile), 16, 256, Tcgen05Swizzle::b32);
  out[4] = make_idesc_bf16_f32(blockDim.x, 256, threadIdx.x & 1, threadIdx.x & 2);
}

// ------------------------------------------------------------------------------------------------ tcgen05.cuh

#define MMA_KERNELS(CG, ATTR)                                                                                  \
  extern "C" __global__ void ATTR bw_tcgen05_mma_bf16_ss_cg##CG(uint32_t d, uint64_t a, uint64_t b, int k) { \
    if (threadIdx.x == 0)                                                                                    \
      tcgen05_mma_bf16_ss<CG>(TmemAddr{d}, a, b, make_idesc_bf16_f32<128 * CG, 256, false, false, CG>(), k); \
  }                                                                                                          \
  extern "C" __global__ void ATTR bw_tcgen05_mma_bf16_ts_cg##CG(uint32_t d, uint32_t a, uint64_t b, int k) { \
    if (threadIdx.x == 0)                                                                                    \
      tcgen05_mma_bf16_ts<CG>(TmemAddr{d}, TmemAddr{a}, b, make_idesc_bf16_f32<128 * CG, 128, false, true, CG>(), \
                              k);                                                                            \
  }                                                                                                          \
  extern "C" __global__ void ATTR bw_tcgen05_cp_128x256b_cg##CG(uint32_t d, uint64_t src) {                 \
    if (threadIdx.x == 0) tcgen05_cp_128x256b<CG>(TmemAddr{d}, src);                                         \
  }                                                                                                          \
  extern "C" __global__ void ATTR bw_tcgen05_commit_cg##CG() {                                               \
    __shared__ uint64_t bar;                                                                                 \
    if (threadIdx.x == 0) tcgen05_commit<CG>(&bar);                                                          \
  }                                                                                                          \
  extern "C" __global__ void ATTR bw_tcgen05_commit_multicast_cg##CG(uint16_t mask) {                       \
    __shared__ uint64_t bar;                                                                                 \
    if (threadIdx.x == 0) tcgen05_commit_multicast<CG>(&bar, mask);                                          \
  }
MMA_KERNELS(1, )
MMA_KERNELS(2, __cluster_dims__(2, 1, 1))
#undef MMA_KERNELS

extern "C" __global__ void bw_tcgen05_fence_before_thread_sync() { tcgen05_fence_before_thread_sync(); }
extern "C" __global__ void bw_tcgen05_fence_after_thread_sync() { tcgen05_fence_after_thread_sync(); }

// ------------------------------------------------------------------------------------------------ cta_pair.cuh

extern "C" __global__ void __cluster_dims__(2, 1, 1) bw_cta_pair_ranks(uint32_t* out) {
  __shared__ uint64_t bar;
  out[0] = cta_pair_rank();
  out[1] = cta_pair_is_leader();
  out[2] = cta_pair_peer_rank();
  out[3] = cta_pair_leader_rank();
  out[4] = peer_smem_addr(&bar);
  out[5] = leader_smem_addr(&bar);
}

extern "C" __global__ void __cluster_dims__(2, 1, 1) bw_tma_load_2d_cta_pair(const __grid_constant__ CUtensorMap map,
                                                                             int c0, int c1) {
  __shared__ alignas(1024) uint8_t tile[8192];
  __shared__ uint64_t bar;
  if (threadIdx.x == 0) tma_load_2d_cta_pair(tile, &map, leader_smem_addr(&bar), c0, c1);
}

// ------------------------------------------------------------------------------------------------ an MMA pipeline

// The canonical single-CTA sequence of kits/blackwell/contracts.md in one kernel (allocate, publish the address,
// MMA, commit, wait, load the accumulator, free): the one place the wrappers meet, so that ptxas sees them together.
extern "C" __global__ void __launch_bounds__(128, 1) bw_pipeline_cg1(const __grid_constant__ CUtensorMap map_a,
                                                                     const __grid_constant__ CUtensorMap map_b,
                                                                     float* out, int k_tiles) {
  __shared__ alignas(1024) uint8_t a_tile[128 * 128];  // 128 rows (M) x 64 bf16 (K), 128B swizzle
  __shared__ alignas(1024) uint8_t b_tile[128 * 128];  // 128 rows (N) x 64 bf16 (K)
  __shared__ uint64_t full, done;
  __shared__ uint32_t slot;
  const uint32_t warp = threadIdx.x / 32;
  if (threadIdx.x == 0) {
    mbarrier_init(&full, 1);
    mbarrier_init(&done, 1);
    fence_barrier_init();
  }
  if (warp == 0) {
    tmem_alloc<128>(&slot);
    tmem_relinquish_alloc_permit();
  }
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  const TmemAddr acc = tmem_base(&slot);
  constexpr uint32_t idesc = make_idesc_bf16_f32<128, 128>();
  for (int kt = 0; kt < k_tiles; ++kt) {
    if (threadIdx.x == 0) {
      mbarrier_arrive_expect_tx(&full, 2 * 128 * 128);  // two boxes of 128 rows x 64 bf16
      tma_load_2d(a_tile, &map_a, &full, 64 * kt, 0);
      tma_load_2d(b_tile, &map_b, &full, 64 * kt, 0);
      mbarrier_wait(&full, kt & 1);
      tcgen05_fence_after_thread_sync();
      for (int k = 0; k < 4; ++k)
        tcgen05_mma_bf16_ss(acc, tcgen05_desc_advance(make_tcgen05_desc_k128(a_tile), 32 * k),
                            tcgen05_desc_advance(make_tcgen05_desc_k128(b_tile), 32 * k), idesc, kt > 0 || k > 0);
      tcgen05_commit(&done);
      mbarrier_wait(&done, kt & 1);
    }
    __syncwarp();
  }
  mbarrier_wait(&done, (k_tiles - 1) & 1);
  tcgen05_fence_after_thread_sync();
  uint32_t r[32];
  tmem_ld_32x32b(r, acc.offset(32 * warp, 0));
  tmem_wait_ld();
  tmem_fence_operand(r);
#pragma unroll
  for (int i = 0; i < 32; ++i) out[threadIdx.x * 32 + i] = __uint_as_float(r[i]);
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  if (warp == 0) {
    tcgen05_fence_after_thread_sync();
    tmem_dealloc<128>(acc);
  }
}

// ------------------------------------------------------------------------------------------------ common: sync.cuh

extern "C" __global__ void common_fence_proxy_async_shared() { fence_proxy_async_shared(); }
extern "C" __global__ void common_fence_mbarrier_init() { fence_mbarrier_init(); }
extern "C" __global__ void common_fence_barrier_init() { fence_barrier_init(); }
extern "C" __global__ void common_elect_one(uint32_t* out) { out[threadIdx.x] = elect_one(); }
extern "C" __global__ void common_bar_sync(uint32_t n) { bar_sync(1, n); }
extern "C" __global__ void common_bar_arrive(uint32_t n) { bar_arrive(2, n); }
extern "C" __global__ void __launch_bounds__(256, 1) common_setmaxnreg(float* out) {
  if (threadIdx.x < 128) {
    setmaxnreg_dec<40>();
  } else {
    setmaxnreg_inc<232>();
    out[threadIdx.x] = 1.0f;
  }
}
extern "C" __global__ void __cluster_dims__(2, 1, 1) common_cluster_ranks(uint32_t* out) {
  out[0] = cluster_ctarank();
  out[1] = cluster_nctarank();
}
extern "C" __global__ void __cluster_dims__(2, 1, 1) common_cluster_barrier() {
  cluster_arrive_relaxed();
  cluster_wait();
  cluster_arrive();
  cluster_wait();
  cluster_sync();
}
extern "C" __global__ void __cluster_dims__(2, 1, 1) common_mapa_ld_st_shared_cluster(uint32_t* out) {
  __shared__ uint32_t word;
  const uint32_t remote = mapa(smem_addr(&word), cluster_ctarank() ^ 1u);
  st_shared_cluster(remote, threadIdx.x);
  out[threadIdx.x] = ld_shared_cluster(remote);
}

// ------------------------------------------------------------------------------------------------ common: mbarrier.cuh

extern "C" __global__ void common_mbarrier_init_inval() {
  __shared__ uint64_t bar;
  mbarrier_init(&bar, 1);
  mbarrier_inval(&bar);
}
extern "C" __global__ void common_mbarrier_arrive() {
  __shared__ uint64_t bar;
  mbarrier_arrive(&bar);
}
extern "C" __global__ void common_mbarrier_arrive_expect_tx(uint32_t bytes) {
  __shared__ uint64_t bar;
  mbarrier_arrive_expect_tx(&bar, bytes);
}
extern "C" __global__ void common_mbarrier_expect_tx(uint32_t bytes) {
  __shared__ uint64_t bar;
  mbarrier_expect_tx(&bar, bytes);
}
extern "C" __global__ void __cluster_dims__(2, 1, 1) common_mbarrier_arrive_cluster() {
  __shared__ uint64_t bar;
  mbarrier_arrive_cluster(mapa(smem_addr(&bar), cluster_ctarank() ^ 1u));
}
extern "C" __global__ void __cluster_dims__(2, 1, 1) common_mbarrier_arrive_cluster_release() {
  __shared__ uint64_t bar;
  mbarrier_arrive_cluster_release(mapa(smem_addr(&bar), cluster_ctarank() ^ 1u));
}
extern "C" __global__ void common_mbarrier_try_wait_parity(uint32_t* out, uint32_t parity) {
  __shared__ uint64_t bar;
  out[threadIdx.x] = mbarrier_try_wait_parity(&bar, parity);
}
extern "C" __global__ void common_mbarrier_try_wait_parity_cluster(uint32_t* out, uint32_t parity) {
  __shared__ uint64_t bar;
  out[threadIdx.x] = mbarrier_try_wait_parity_cluster(&bar, parity);
}
extern "C" __global__ void common_mbarrier_wait(uint32_t parity) {
  __shared__ uint64_t bar;
  mbarrier_wait(&bar, parity);
}
extern "C" __global__ void common_mbarrier_wait_cluster(uint32_t parity) {
  __shared__ uint64_t bar;
  mbarrier_wait_cluster(&bar, parity);
}

// ------------------------------------------------------------------------------------------------ common: tma.cuh

extern "C" __global__ void common_fence_tensormap_acquire(const CUtensorMap* map) { fence_tensormap_acquire(map); }
extern "C" __global__ void common_prefetch_tensormap(const __grid_constant__ CUtensorMap map) {
  prefetch_tensormap(&map);
}
extern "C" __global__ void common_bulk_load(const uint8_t* src, uint32_t bytes) {
  __shared__ alignas(128) uint8_t buf[4096];
  __shared__ uint64_t bar;
  bulk_load(buf, src, bytes, &bar);
}
extern "C" __global__ void common_tma_load_1d_to_5d(const __grid_constant__ CUtensorMap map, int c) {
  __shared__ alignas(1024) uint8_t buf[8192];
  __shared__ uint64_t bar;
  tma_load_1d(buf, &map, &bar, c);
  tma_load_2d(buf, &map, &bar, c, c);
  tma_load_3d(buf, &map, &bar, c, c, c);
  tma_load_4d(buf, &map, &bar, c, c, c, c);
  tma_load_5d(buf, &map, &bar, c, c, c, c, c);
}
extern "C" __global__ void __cluster_dims__(2, 1, 1) common_tma_load_2d_multicast(const __grid_constant__ CUtensorMap map,
                                                                                  uint16_t mask, int c) {
  __shared__ alignas(1024) uint8_t buf[8192];
  __shared__ uint64_t bar;
  tma_load_2d_multicast(buf, &map, &bar, mask, c, c);
}
extern "C" __global__ void common_tma_store_1d_to_5d(const __grid_constant__ CUtensorMap map, int c) {
  __shared__ alignas(1024) uint8_t buf[8192];
  tma_store_1d(&map, buf, c);
  tma_store_2d(&map, buf, c, c);
  tma_store_3d(&map, buf, c, c, c);
  tma_store_4d(&map, buf, c, c, c, c);
  tma_store_5d(&map, buf, c, c, c, c, c);
  tma_store_commit();
  tma_store_wait_read<1>();
  tma_store_wait<0>();
}
extern "C" __global__ void common_tma_reduce_add_2d_to_4d(const __grid_constant__ CUtensorMap map, int c) {
  __shared__ alignas(1024) uint8_t buf[8192];
  tma_reduce_add_2d(&map, buf, c, c);
  tma_reduce_add_3d(&map, buf, c, c, c);
  tma_reduce_add_4d(&map, buf, c, c, c, c);
  tma_store_commit();
  tma_store_wait<0>();
}
extern "C" __global__ void common_tma_prefetch_2d(const __grid_constant__ CUtensorMap map, int c) {
  tma_prefetch_2d(&map, c, c);
}

// Host side of tma.cuh: referenced so that it compiles here too (never called).
cudaError_t host_tensor_maps(CUtensorMap* map, const __nv_bfloat16* p) {
  if (tensor_map_encoder() == nullptr) return cudaErrorInvalidValue;
  cudaError_t e = make_tensor_map_2d_bf16(map, p, 128, 128, 64, 64);
  if (e != cudaSuccess) return e;
  return make_tensor_map_bshd_bf16(map, p, 1, 128, 8, 128, 64);
}

// ------------------------------------------------------------------------------------------------ common:
// mma.cuh

extern "C" __global__ void common_mma_m16n8k16(float* out, uint32_t x) {
  float d[4] = {};
  const uint32_t a[4] = {x, x + 1, x + 2, x + 3}, b[2] = {x ^ 5u, x ^ 9u};
  mma_m16n8k16_bf16(d, a, b);
  out[threadIdx.x] = d[0] + d[1] + d[2] + d[3];
}

// ------------------------------------------------------------------------------------------------ common: matrix.cuh

extern "C" __global__ void common_ldmatrix_stmatrix(uint32_t* out, float x) {
  __shared__ alignas(128) uint8_t buf[4096];
  uint32_t r[4], t[4];
  ldmatrix_x4(r, buf + 16 * (threadIdx.x % 32));
  ldmatrix_x4_trans(t, buf + 16 * (threadIdx.x % 32));
  r[0] += pack_bf16x2(x, 2.0f * x);
  stmatrix_x4(buf + 16 * (threadIdx.x % 32), t);
  stmatrix_x4_trans(buf + 2048 + 16 * (threadIdx.x % 32), r);
  out[threadIdx.x] = r[1] ^ t[2];
}
