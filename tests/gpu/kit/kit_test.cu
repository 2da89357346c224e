// GPU test of the Hopper kit (kits/hopper/ptx and the shared kits/common/ptx it includes): runs every template
// function on an sm_90a device and checks what it did against a host computation. Prints one line per kit function
// (PASS/FAIL, and the tests that used it) and exits non-zero if any failed. Build and run: tests/gpu/kit/run.sh.
#include <hopper.cuh>

#include "test_support.cuh"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

using namespace ptxkit::hopper;

// Thread 0 initialises `bar` for one arrival (a TMA load's arrive_expect_tx); every thread returns once it is
// initialised and visible to the async proxy.
__device__ void init_barrier_for_one(uint64_t* bar) {
  if (threadIdx.x == 0) {
    mbarrier_init(bar, 1);
    fence_barrier_init();
  }
  __syncthreads();
}

// ------------------------------------------------------------------------------------------------ TMA, rank 1-5

// Loads one box with TMA (complete_tx on an mbarrier), copies the shared box to `raw` with ordinary loads and
// stores it back with TMA.
template <int R>
__global__ void tma_rank_kernel(const __grid_constant__ CUtensorMap in, const __grid_constant__ CUtensorMap out,
                                int4 c03, int c4, uint32_t box_bytes, uint16_t* raw) {
  __shared__ alignas(128) uint16_t box[4096];
  __shared__ uint64_t bar;
  if (threadIdx.x == 0) {
    mbarrier_init(&bar, 1);
    fence_barrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    mbarrier_arrive_expect_tx(&bar, box_bytes);
    if constexpr (R == 1) tma_load_1d(box, &in, &bar, c03.x);
    if constexpr (R == 2) tma_load_2d(box, &in, &bar, c03.x, c03.y);
    if constexpr (R == 3) tma_load_3d(box, &in, &bar, c03.x, c03.y, c03.z);
    if constexpr (R == 4) tma_load_4d(box, &in, &bar, c03.x, c03.y, c03.z, c03.w);
    if constexpr (R == 5) tma_load_5d(box, &in, &bar, c03.x, c03.y, c03.z, c03.w, c4);
  }
  mbarrier_wait(&bar, 0);
  for (uint32_t i = threadIdx.x; i < box_bytes / 2; i += blockDim.x) raw[i] = box[i];
  if (threadIdx.x == 0) {
    if constexpr (R == 1) tma_store_1d(&out, box, c03.x);
    if constexpr (R == 2) tma_store_2d(&out, box, c03.x, c03.y);
    if constexpr (R == 3) tma_store_3d(&out, box, c03.x, c03.y, c03.z);
    if constexpr (R == 4) tma_store_4d(&out, box, c03.x, c03.y, c03.z, c03.w);
    if constexpr (R == 5) tma_store_5d(&out, box, c03.x, c03.y, c03.z, c03.w, c4);
    tma_store_commit();
    tma_store_wait<0>();
  }
}

template <int R>
static void test_tma_rank(std::vector<uint64_t> dims, std::vector<uint32_t> box, std::vector<int> coord) {
  size_t total = 1;
  for (auto d : dims) total *= d;
  std::vector<uint16_t> h_in(total);
  for (size_t i = 0; i < total; ++i) h_in[i] = static_cast<uint16_t>(i * 7 + 3);
  size_t box_elems = 1;
  for (auto b : box) box_elems *= b;
  uint16_t *d_in, *d_out, *d_raw;
  CUDA_CHECK(cudaMalloc(&d_in, total * 2));
  CUDA_CHECK(cudaMalloc(&d_out, total * 2));
  CUDA_CHECK(cudaMalloc(&d_raw, box_elems * 2));
  CUDA_CHECK(cudaMemcpy(d_in, h_in.data(), total * 2, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(d_out, 0xFF, total * 2));
  CUDA_CHECK(cudaMemset(d_raw, 0xFF, box_elems * 2));
  std::vector<uint64_t> strides;
  uint64_t s = 2;
  for (int i = 0; i + 1 < R; ++i) strides.push_back(s *= dims[i]);
  CUtensorMap m_in, m_out;
  bool ok = make_tensor_map(&m_in, CU_TENSOR_MAP_DATA_TYPE_UINT16, R, d_in, dims.data(), strides.data(), box.data(),
                            CU_TENSOR_MAP_SWIZZLE_NONE) == cudaSuccess &&
            make_tensor_map(&m_out, CU_TENSOR_MAP_DATA_TYPE_UINT16, R, d_out, dims.data(), strides.data(),
                            box.data(), CU_TENSOR_MAP_SWIZZLE_NONE) == cudaSuccess;
  if (!ok) {  // say why: call the encoder directly for its CUresult
    cuuint32_t es[5] = {1, 1, 1, 1, 1};
    CUresult r = tensor_map_encoder()(&m_in, CU_TENSOR_MAP_DATA_TYPE_UINT16, R, d_in,
                                      reinterpret_cast<const cuuint64_t*>(dims.data()),
                                      reinterpret_cast<const cuuint64_t*>(strides.data()), box.data(), es,
                                      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    std::printf("    rank %d: make_tensor_map failed (cuTensorMapEncodeTiled returned %d)\n", R, int(r));
  }
  if (ok) {
    coord.resize(5, 0);
    tma_rank_kernel<R><<<1, 128>>>(m_in, m_out, make_int4(coord[0], coord[1], coord[2], coord[3]), coord[4],
                                   static_cast<uint32_t>(box_elems * 2), d_raw);
    sync_or_die("tma_rank_kernel");
    std::vector<uint16_t> h_out(total), h_raw(box_elems);
    CUDA_CHECK(cudaMemcpy(h_out.data(), d_out, total * 2, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_raw.data(), d_raw, box_elems * 2, cudaMemcpyDeviceToHost));
    int bad = 0;
    // Every element of the box: in bounds -> the input element, out of bounds -> zero.
    for (size_t b = 0; b < box_elems; ++b) {
      size_t rem = b, gidx = 0, gstride = 1;
      bool inside = true;
      for (int d = 0; d < R; ++d) {
        int64_t g = coord[d] + static_cast<int64_t>(rem % box[d]);
        rem /= box[d];
        if (g < 0 || g >= static_cast<int64_t>(dims[d])) inside = false;
        gidx += g * gstride;
        gstride *= dims[d];
      }
      uint16_t expect = inside ? h_in[gidx] : 0;
      if (h_raw[b] != expect && bad++ < 5)
        std::printf("    rank %d box elem %zu: got %u want %u\n", R, b, h_raw[b], expect);
    }
    // The store wrote exactly the in-bounds part of the box.
    for (size_t i = 0; i < total; ++i) {
      size_t rem = i;
      bool in_box = true;
      for (int d = 0; d < R; ++d) {
        int64_t g = static_cast<int64_t>(rem % dims[d]);
        rem /= dims[d];
        if (g < coord[d] || g >= coord[d] + static_cast<int64_t>(box[d])) in_box = false;
      }
      uint16_t expect = in_box ? h_in[i] : 0xFFFF;
      if (h_out[i] != expect && bad++ < 10)
        std::printf("    rank %d out elem %zu: got %u want %u\n", R, i, h_out[i], expect);
    }
    ok = bad == 0;
  }
  CUDA_CHECK(cudaFree(d_in));
  CUDA_CHECK(cudaFree(d_out));
  CUDA_CHECK(cudaFree(d_raw));
  static const char* loads[] = {"", "tma_load_1d", "tma_load_2d", "tma_load_3d", "tma_load_4d", "tma_load_5d"};
  static const char* stores[] = {"", "tma_store_1d", "tma_store_2d", "tma_store_3d", "tma_store_4d", "tma_store_5d"};
  char name[64];
  std::snprintf(name, sizeof name, "tma rank %d load+store, partly OOB", R);
  record(name, ok,
         {loads[R], stores[R], "tensor_map_encoder", "make_tensor_map", "mbarrier_init", "fence_barrier_init",
          "mbarrier_arrive_expect_tx", "mbarrier_wait", "mbarrier_try_wait_parity", "tma_store_commit",
          "tma_store_wait"});
}

// ------------------------------------------------------------------------------------------------ TMA, 128B swizzle

// Prefetches, then loads a 64 x 64 bf16 box with 128B swizzle and dumps the raw shared bytes.
__global__ void tma_swizzle_kernel(const __grid_constant__ CUtensorMap map, int c0, int c1, uint16_t* raw) {
  __shared__ alignas(1024) uint16_t tile[64 * 64];
  __shared__ uint64_t bar;
  if (threadIdx.x == 0) {
    prefetch_tensormap(&map);
    tma_prefetch_2d(&map, c0, c1);
    mbarrier_init(&bar, 1);
    fence_barrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    mbarrier_arrive_expect_tx(&bar, sizeof(tile));
    tma_load_2d(tile, &map, &bar, c0, c1);
  }
  mbarrier_wait(&bar, 0);
  for (int i = threadIdx.x; i < 64 * 64; i += blockDim.x) raw[i] = tile[i];
}

static void test_tma_swizzle() {
  const int rows = 256, cols = 192;
  std::vector<uint16_t> h(rows * cols);
  for (int i = 0; i < rows * cols; ++i) h[i] = static_cast<uint16_t>(i);
  uint16_t *d, *d_raw;
  CUDA_CHECK(cudaMalloc(&d, h.size() * 2));
  CUDA_CHECK(cudaMalloc(&d_raw, 64 * 64 * 2));
  CUDA_CHECK(cudaMemcpy(d, h.data(), h.size() * 2, cudaMemcpyHostToDevice));
  CUtensorMap map;
  bool ok = make_tensor_map_2d_bf16(&map, reinterpret_cast<__nv_bfloat16*>(d), rows, cols, 64, 64) == cudaSuccess;
  const int c0 = 64, c1 = 128;
  if (ok) {
    tma_swizzle_kernel<<<1, 128>>>(map, c0, c1, d_raw);
    sync_or_die("tma_swizzle_kernel");
    std::vector<uint16_t> raw(64 * 64);
    CUDA_CHECK(cudaMemcpy(raw.data(), d_raw, raw.size() * 2, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int r = 0; r < 64; ++r)
      for (int c = 0; c < 64; ++c) {
        uint16_t want = h[(c1 + r) * cols + c0 + c];
        uint16_t got = raw[swizzled128(r, c, 2)];
        if (got != want && bad++ < 5) std::printf("    swizzle (%d,%d): got %u want %u\n", r, c, got, want);
      }
    ok = bad == 0;
  }
  CUDA_CHECK(cudaFree(d));
  CUDA_CHECK(cudaFree(d_raw));
  record("tma 2d bf16 128B swizzle + prefetch", ok,
         {"make_tensor_map_2d_bf16", "tma_load_2d", "tma_prefetch_2d", "prefetch_tensormap", "fence_barrier_init"});
}

// ------------------------------------------------------------------------------------------ TMA, map in global memory

// Loads the 32 x 64 box at (c0, c1) through a tensor map that lives in global memory: the issuing thread acquires
// the map first (fence_tensormap_acquire), then copies the box out of shared memory with ordinary loads.
__global__ void tma_global_map_kernel(const CUtensorMap* map, int c0, int c1, uint16_t* raw) {
  __shared__ alignas(128) uint16_t box[32 * 64];
  __shared__ uint64_t bar;
  if (threadIdx.x == 0) {
    fence_tensormap_acquire(map);
    mbarrier_init(&bar, 1);
    fence_barrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    mbarrier_arrive_expect_tx(&bar, sizeof(box));
    tma_load_2d(box, map, &bar, c0, c1);
  }
  mbarrier_wait(&bar, 0);
  for (int i = threadIdx.x; i < 32 * 64; i += blockDim.x) raw[i] = box[i];
}

// Writes `src` over the map at `dst` with ordinary 16-byte global stores.
__global__ void write_map_kernel(const __grid_constant__ CUtensorMap src, CUtensorMap* dst) {
  if (threadIdx.x < sizeof(CUtensorMap) / 16)
    reinterpret_cast<uint4*>(dst)[threadIdx.x] = reinterpret_cast<const uint4*>(&src)[threadIdx.x];
}

// One map slot in global memory: first filled by cudaMemcpy with a map of X and used; then overwritten in place by
// a kernel's ordinary stores with a map of Y and used again. Each use must load the box of the current map's tensor.
static void test_tma_global_map() {
  const int rows = 128, cols = 128;
  std::vector<uint16_t> hx(rows * cols), hy(rows * cols);
  for (int i = 0; i < rows * cols; ++i) {
    hx[i] = static_cast<uint16_t>(i * 5 + 1);
    hy[i] = static_cast<uint16_t>(i * 11 + 7);
  }
  uint16_t *dx, *dy, *d_raw;
  CUtensorMap* d_map;
  CUDA_CHECK(cudaMalloc(&dx, hx.size() * 2));
  CUDA_CHECK(cudaMalloc(&dy, hy.size() * 2));
  CUDA_CHECK(cudaMalloc(&d_raw, 32 * 64 * 2));
  CUDA_CHECK(cudaMalloc(&d_map, sizeof(CUtensorMap)));
  CUDA_CHECK(cudaMemcpy(dx, hx.data(), hx.size() * 2, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dy, hy.data(), hy.size() * 2, cudaMemcpyHostToDevice));
  const uint64_t dims[2] = {cols, rows}, strides[1] = {cols * 2};
  const uint32_t box[2] = {64, 32};
  CUtensorMap mx, my;
  const bool made = make_tensor_map(&mx, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, dx, dims, strides, box,
                                    CU_TENSOR_MAP_SWIZZLE_NONE) == cudaSuccess &&
                    make_tensor_map(&my, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, dy, dims, strides, box,
                                    CU_TENSOR_MAP_SWIZZLE_NONE) == cudaSuccess;
  // Runs the load kernel at (c0, c1) and compares the box with `h`.
  auto load_and_check = [&](const std::vector<uint16_t>& h, int c0, int c1, const char* what) {
    tma_global_map_kernel<<<1, 128>>>(d_map, c0, c1, d_raw);
    sync_or_die("tma_global_map_kernel");
    std::vector<uint16_t> raw(32 * 64);
    CUDA_CHECK(cudaMemcpy(raw.data(), d_raw, raw.size() * 2, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int r = 0; r < 32; ++r)
      for (int c = 0; c < 64; ++c) {
        const uint16_t want = h[(c1 + r) * cols + c0 + c], got = raw[r * 64 + c];
        if (got != want && bad++ < 5) std::printf("    %s (%d,%d): got %u want %u\n", what, r, c, got, want);
      }
    return bad == 0;
  };
  bool ok_copied = false, ok_stored = false;
  if (made) {
    CUDA_CHECK(cudaMemcpy(d_map, &mx, sizeof(CUtensorMap), cudaMemcpyHostToDevice));
    ok_copied = load_and_check(hx, 64, 32, "map copied by cudaMemcpy");
    write_map_kernel<<<1, 32>>>(my, d_map);
    sync_or_die("write_map_kernel");
    ok_stored = load_and_check(hy, 0, 96, "map overwritten by stores");
  }
  CUDA_CHECK(cudaFree(dx));
  CUDA_CHECK(cudaFree(dy));
  CUDA_CHECK(cudaFree(d_raw));
  CUDA_CHECK(cudaFree(d_map));
  record("tma, map in global memory by cudaMemcpy", ok_copied,
         {"fence_tensormap_acquire", "tma_load_2d", "fence_barrier_init", "mbarrier_arrive_expect_tx",
          "mbarrier_wait"});
  record("tma, map in global memory by stores", ok_stored,
         {"fence_tensormap_acquire", "tma_load_2d", "fence_barrier_init"});
}

// ------------------------------------------------------------------------------------------------ TMA store paths

// Threads write a float tile with ordinary stores, fence to the async proxy, then one thread stores it with TMA
// and adds it once more with a TMA reduction: the covered global elements end up 2x the tile.
__global__ void tma_store_reduce_kernel(const __grid_constant__ CUtensorMap map, int c0, int c1) {
  __shared__ alignas(128) float tile[16 * 32];
  for (int i = threadIdx.x; i < 16 * 32; i += blockDim.x) tile[i] = static_cast<float>(i) + 0.5f;
  fence_proxy_async_shared();
  __syncthreads();
  if (threadIdx.x == 0) {
    tma_store_2d(&map, tile, c0, c1);
    tma_store_commit();
    tma_store_wait<0>();  // the store must land before the reduction adds to it
    tma_reduce_add_2d(&map, tile, c0, c1);
    tma_store_commit();
    tma_store_wait_read<0>();  // shared source no longer needed
    tma_store_wait<0>();
  }
}

static void test_tma_store_reduce() {
  const int rows = 32, cols = 64;
  float* d;
  CUDA_CHECK(cudaMalloc(&d, rows * cols * 4));
  std::vector<float> h(rows * cols, -1.0f);
  CUDA_CHECK(cudaMemcpy(d, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
  const uint64_t dims[2] = {cols, rows}, strides[1] = {cols * 4};
  const uint32_t box[2] = {32, 16};
  CUtensorMap map;
  bool ok = make_tensor_map(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, d, dims, strides, box,
                            CU_TENSOR_MAP_SWIZZLE_NONE) == cudaSuccess;
  const int c0 = 48, c1 = 24;  // clipped at both the right and the bottom edge
  if (ok) {
    tma_store_reduce_kernel<<<1, 128>>>(map, c0, c1);
    sync_or_die("tma_store_reduce_kernel");
    CUDA_CHECK(cudaMemcpy(h.data(), d, h.size() * 4, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) {
        bool in = r >= c1 && r < c1 + 16 && c >= c0 && c < c0 + 32;
        float want = in ? 2.0f * ((r - c1) * 32 + (c - c0) + 0.5f) : -1.0f;
        if (h[r * cols + c] != want && bad++ < 5)
          std::printf("    store/reduce (%d,%d): got %g want %g\n", r, c, h[r * cols + c], want);
      }
    ok = bad == 0;
  }
  CUDA_CHECK(cudaFree(d));
  record("tma store + reduce-add from generic writes", ok,
         {"fence_proxy_async_shared", "tma_store_2d", "tma_reduce_add_2d", "tma_store_commit", "tma_store_wait",
          "tma_store_wait_read"});
}

// Each of `gridDim.x` CTAs writes a 16 x 32 fp32 tile in the 128B-swizzled layout a load with the same map would
// give (chunk c of row r at chunk c ^ (r % 8)), then adds it into the same box of a 3-D or 4-D tensor with a TMA
// reduction: the box ends up holding the initial value plus every CTA's tile, and rows past the tensor are clipped.
template <int R>
__global__ void tma_reduce_nd_kernel(const __grid_constant__ CUtensorMap map, int c0, int c1, int c2, int c3) {
  __shared__ alignas(1024) float tile[16 * 32];
  for (int i = threadIdx.x; i < 16 * 32; i += blockDim.x) {
    const int r = i / 32, c = i % 32;
    tile[r * 32 + (((c / 4) ^ (r % 8)) * 4) + c % 4] = static_cast<float>(i) + 0.25f * blockIdx.x;
  }
  fence_proxy_async_shared();
  __syncthreads();
  if (threadIdx.x == 0) {
    if constexpr (R == 3)
      tma_reduce_add_3d(&map, tile, c0, c1, c2);
    else
      tma_reduce_add_4d(&map, tile, c0, c1, c2, c3);
    tma_store_commit();
    tma_store_wait<0>();
  }
}

// A [2][40][3][64] fp32 tensor filled with 1: the 4-D map is {64, 3, 40, 2}, the 3-D one views it as [80][3][64].
// Box {32, 1, 16(, 1)} at column 32 and rows 32..47 of one (batch, head): rows 40..47 lie past the end and are
// clipped. Two CTAs add into the same box.
template <int R>
static void test_tma_reduce_nd() {
  const int B = 2, S = 40, H = 3, D = 64, ctas = 2;
  const size_t n = size_t(B) * S * H * D;
  float* d;
  CUDA_CHECK(cudaMalloc(&d, n * 4));
  std::vector<float> h(n, 1.0f);
  CUDA_CHECK(cudaMemcpy(d, h.data(), n * 4, cudaMemcpyHostToDevice));
  const int c0 = 32, head = 1, row0 = 32, batch = 1;
  CUtensorMap map;
  bool ok;
  if (R == 4) {
    const uint64_t dims[4] = {uint64_t(D), uint64_t(H), uint64_t(S), uint64_t(B)};
    const uint64_t strides[3] = {uint64_t(D) * 4, uint64_t(H) * D * 4, uint64_t(S) * H * D * 4};
    const uint32_t box[4] = {32, 1, 16, 1};
    ok = make_tensor_map(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, d, dims, strides, box,
                         CU_TENSOR_MAP_SWIZZLE_128B) == cudaSuccess;
  } else {
    const uint64_t dims[3] = {uint64_t(D), uint64_t(H), uint64_t(B) * S};
    const uint64_t strides[2] = {uint64_t(D) * 4, uint64_t(H) * D * 4};
    const uint32_t box[3] = {32, 1, 16};
    ok = make_tensor_map(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, d, dims, strides, box,
                         CU_TENSOR_MAP_SWIZZLE_128B) == cudaSuccess;
  }
  if (ok) {
    if (R == 4)
      tma_reduce_nd_kernel<4><<<ctas, 128>>>(map, c0, head, row0, batch);
    else
      tma_reduce_nd_kernel<3><<<ctas, 128>>>(map, c0, head, batch * S + row0, 0);
    sync_or_die("tma_reduce_nd_kernel");
    CUDA_CHECK(cudaMemcpy(h.data(), d, n * 4, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int b = 0; b < B; ++b)
      for (int s = 0; s < S; ++s)
        for (int hh = 0; hh < H; ++hh)
          for (int c = 0; c < D; ++c) {
            const int r = s - row0, cc = c - c0;
            const bool in = b == batch && hh == head && r >= 0 && r < 16 && cc >= 0 && cc < 32;
            float want = 1.0f;
            if (in)
              for (int k = 0; k < ctas; ++k) want += static_cast<float>(r * 32 + cc) + 0.25f * k;
            const float got = h[((size_t(b) * S + s) * H + hh) * D + c];
            if (got != want && bad++ < 5)
              std::printf("    reduce %dd (b %d, s %d, h %d, d %d): got %g want %g\n", R, b, s, hh, c, got, want);
          }
    ok = bad == 0;
  }
  CUDA_CHECK(cudaFree(d));
  record(R == 4 ? "tma 4-D reduce-add, 128B swizzle, 2 CTAs" : "tma 3-D reduce-add, 128B swizzle, 2 CTAs", ok,
         {R == 4 ? "tma_reduce_add_4d" : "tma_reduce_add_3d", "fence_proxy_async_shared", "tma_store_commit",
          "tma_store_wait"});
}

// ------------------------------------------------------------------------------------------------ cluster: multicast

// Cluster of 2: each CTA loads half of a 64 x 64 bf16 tile and multicasts it to both; both must see the whole tile.
__global__ void __cluster_dims__(2, 1, 1)
    tma_multicast_kernel(const __grid_constant__ CUtensorMap half_map, int c0, int c1, uint16_t* raw) {
  __shared__ alignas(1024) uint16_t tile[64 * 64];
  __shared__ uint64_t bar;
  const uint32_t rank = cluster_ctarank();
  if (threadIdx.x == 0) {
    mbarrier_init(&bar, 1);
    fence_barrier_init();  // the peer's multicast completes on this barrier
  }
  cluster_sync();  // both barriers initialised before either CTA issues a copy
  if (threadIdx.x == 0) {
    mbarrier_expect_tx(&bar, sizeof(tile));  // both halves land here, one from each CTA
    mbarrier_arrive(&bar);
    tma_load_2d_multicast(tile + rank * 32 * 64, &half_map, &bar, 0b11, c0, c1 + rank * 32);
  }
  mbarrier_wait(&bar, 0);
  for (int i = threadIdx.x; i < 64 * 64; i += blockDim.x) raw[rank * 64 * 64 + i] = tile[i];
  cluster_sync();  // no CTA leaves while the peer may still write into its shared memory
}

static void test_tma_multicast() {
  const int rows = 128, cols = 128;
  std::vector<uint16_t> h(rows * cols);
  for (int i = 0; i < rows * cols; ++i) h[i] = static_cast<uint16_t>(i * 3 + 1);
  uint16_t *d, *d_raw;
  CUDA_CHECK(cudaMalloc(&d, h.size() * 2));
  CUDA_CHECK(cudaMalloc(&d_raw, 2 * 64 * 64 * 2));
  CUDA_CHECK(cudaMemcpy(d, h.data(), h.size() * 2, cudaMemcpyHostToDevice));
  CUtensorMap map;
  bool ok = make_tensor_map_2d_bf16(&map, reinterpret_cast<__nv_bfloat16*>(d), rows, cols, 32, 64) == cudaSuccess;
  const int c0 = 64, c1 = 32;
  if (ok) {
    tma_multicast_kernel<<<2, 128>>>(map, c0, c1, d_raw);
    sync_or_die("tma_multicast_kernel");
    std::vector<uint16_t> raw(2 * 64 * 64);
    CUDA_CHECK(cudaMemcpy(raw.data(), d_raw, raw.size() * 2, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int cta = 0; cta < 2; ++cta)
      for (int r = 0; r < 64; ++r)
        for (int c = 0; c < 64; ++c) {
          uint16_t want = h[(c1 + r) * cols + c0 + c];
          uint16_t got = raw[cta * 4096 + swizzled128(r, c, 2)];
          if (got != want && bad++ < 5)
            std::printf("    multicast cta %d (%d,%d): got %u want %u\n", cta, r, c, got, want);
        }
    ok = bad == 0;
  }
  CUDA_CHECK(cudaFree(d));
  CUDA_CHECK(cudaFree(d_raw));
  record("tma multicast, cluster of 2", ok,
         {"tma_load_2d_multicast", "cluster_ctarank", "cluster_sync", "cluster_arrive", "cluster_wait",
          "fence_barrier_init", "mbarrier_expect_tx", "mbarrier_arrive", "mbarrier_wait"});
}

// ------------------------------------------------------------------------------------------------ cluster: DSMEM

// Cluster of 2: each CTA writes a word into the peer's shared memory and then arrives on the peer's barrier
// (release, cluster scope); the peer waits (acquire, cluster scope) and must then see the word.
__global__ void __cluster_dims__(2, 1, 1) cluster_dsmem_kernel(uint32_t* out) {
  __shared__ uint32_t word;
  __shared__ uint64_t bar, done;
  const uint32_t rank = cluster_ctarank(), peer = rank ^ 1;
  if (threadIdx.x == 0) {
    word = 0;
    mbarrier_init(&bar, 1);
    mbarrier_init(&done, 1);
    fence_mbarrier_init();
  }
  cluster_sync();
  if (threadIdx.x == 0) {
    st_shared_cluster(mapa(smem_addr(&word), peer), 100 + rank);
    mbarrier_arrive_cluster_release(mapa(smem_addr(&bar), peer));
    mbarrier_wait_cluster(&bar, 0);
    out[rank * 5 + 0] = word;                                            // written by the peer
    out[rank * 5 + 1] = ld_shared_cluster(mapa(smem_addr(&word), rank));  // own word through the cluster window
    out[rank * 5 + 2] = cluster_nctarank();
    out[rank * 5 + 3] = mbarrier_try_wait_parity_cluster(&bar, 0) ? 1 : 0;
    // A plain (CTA-scope release) remote arrive: only the phase completion is checked.
    mbarrier_arrive_cluster(mapa(smem_addr(&done), peer));
    mbarrier_wait(&done, 0);
    out[rank * 5 + 4] = mbarrier_try_wait_parity(&done, 0) ? 1 : 0;
  }
  cluster_arrive_relaxed();  // keep shared memory alive until the peer is done with it
  cluster_wait();
}

static void test_cluster_dsmem() {
  uint32_t* d;
  CUDA_CHECK(cudaMalloc(&d, 10 * 4));
  CUDA_CHECK(cudaMemset(d, 0, 10 * 4));
  cluster_dsmem_kernel<<<2, 64>>>(d);
  sync_or_die("cluster_dsmem_kernel");
  uint32_t h[10];
  CUDA_CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  bool ok = true;
  for (int r = 0; r < 2; ++r) {
    uint32_t want[5] = {100u + (r ^ 1), 100u + (r ^ 1), 2u, 1u, 1u};
    for (int i = 0; i < 5; ++i)
      if (h[r * 5 + i] != want[i]) {
        ok = false;
        std::printf("    dsmem cta %d field %d: got %u want %u\n", r, i, h[r * 5 + i], want[i]);
      }
  }
  CUDA_CHECK(cudaFree(d));
  record("cluster dsmem + remote mbarrier arrive", ok,
         {"mapa", "st_shared_cluster", "ld_shared_cluster", "fence_mbarrier_init", "mbarrier_arrive_cluster_release",
          "mbarrier_arrive_cluster", "mbarrier_wait_cluster",
          "mbarrier_try_wait_parity_cluster", "cluster_nctarank", "cluster_arrive_relaxed", "cluster_wait",
          "cluster_ctarank"});
}

// ------------------------------------------------------------------------------------------------ bulk copies

// Gathers kBulkRows rows of 256 bytes, row order[i] of `in` into shared row i at a 272-byte pitch (as a paged
// cache's token rows are gathered), one bulk_load per row issued by the lanes of warp 0, all completing on one
// mbarrier; then every thread copies the shared rows out densely.
constexpr int kBulkRows = 40, kBulkRowBytes = 256, kBulkPitch = 272;
__global__ void bulk_load_kernel(const uint8_t* in, const int* order, uint8_t* out) {
  __shared__ alignas(128) uint8_t rows[kBulkRows * kBulkPitch];
  __shared__ uint64_t bar;
  if (threadIdx.x == 0) {
    mbarrier_init(&bar, 1);
    fence_mbarrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) mbarrier_arrive_expect_tx(&bar, kBulkRows * kBulkRowBytes);
  __syncwarp();
  if (threadIdx.x < 32)
    for (int i = threadIdx.x; i < kBulkRows; i += 32)
      bulk_load(rows + i * kBulkPitch, in + order[i] * kBulkRowBytes, kBulkRowBytes, &bar);
  mbarrier_wait(&bar, 0);
  for (int k = threadIdx.x; k < kBulkRows * kBulkRowBytes; k += blockDim.x)
    out[k] = rows[(k / kBulkRowBytes) * kBulkPitch + k % kBulkRowBytes];
}

static void test_bulk_load(std::mt19937& rng) {
  const int source_rows = 100;
  std::vector<uint8_t> in(source_rows * kBulkRowBytes);
  for (auto& byte : in) byte = static_cast<uint8_t>(rng());
  std::vector<int> order(kBulkRows);
  for (auto& row : order) row = static_cast<int>(rng() % source_rows);
  uint8_t *d_in, *d_out;
  int* d_order;
  CUDA_CHECK(cudaMalloc(&d_in, in.size()));
  CUDA_CHECK(cudaMalloc(&d_out, kBulkRows * kBulkRowBytes));
  CUDA_CHECK(cudaMalloc(&d_order, order.size() * sizeof(int)));
  CUDA_CHECK(cudaMemcpy(d_in, in.data(), in.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_order, order.data(), order.size() * sizeof(int), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(d_out, 0, kBulkRows * kBulkRowBytes));
  bulk_load_kernel<<<1, 128>>>(d_in, d_order, d_out);
  sync_or_die("bulk_load_kernel");
  std::vector<uint8_t> out(kBulkRows * kBulkRowBytes);
  CUDA_CHECK(cudaMemcpy(out.data(), d_out, out.size(), cudaMemcpyDeviceToHost));
  bool ok = true;
  for (int i = 0; i < kBulkRows; ++i)
    ok = ok && std::memcmp(&out[i * kBulkRowBytes], &in[order[i] * kBulkRowBytes], kBulkRowBytes) == 0;
  for (void* p : {static_cast<void*>(d_in), static_cast<void*>(d_out), static_cast<void*>(d_order)})
    CUDA_CHECK(cudaFree(p));
  record("bulk copies of gathered rows to a padded pitch", ok,
         {"bulk_load", "mbarrier_arrive_expect_tx", "mbarrier_wait"});
}

// ------------------------------------------------------------------------------------------------ mbarrier phases

// 64 threads, barrier count 64: checks the parity answers before any arrival and after each of 4 phases.
__global__ void mbarrier_phase_kernel(uint32_t* out) {
  __shared__ uint64_t bar;
  if (threadIdx.x == 0) mbarrier_init(&bar, 64);
  __syncthreads();
  if (threadIdx.x == 0) {
    out[0] = mbarrier_try_wait_parity(&bar, 0);  // phase 0 not complete: 0
    out[1] = mbarrier_try_wait_parity(&bar, 1);  // "the phase before 0" counts as complete: 1
  }
  __syncthreads();
  for (int ph = 0; ph < 4; ++ph) {
    mbarrier_arrive(&bar);
    mbarrier_wait(&bar, ph & 1);
    if (threadIdx.x == 0) {
      out[2 + 2 * ph] = mbarrier_try_wait_parity(&bar, ph & 1);            // just completed: 1
      out[3 + 2 * ph] = mbarrier_try_wait_parity(&bar, (ph + 1) & 1);      // next phase open: 0
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) mbarrier_inval(&bar);
}

static void test_mbarrier_phases() {
  uint32_t* d;
  CUDA_CHECK(cudaMalloc(&d, 10 * 4));
  CUDA_CHECK(cudaMemset(d, 0xFF, 10 * 4));
  mbarrier_phase_kernel<<<1, 64>>>(d);
  sync_or_die("mbarrier_phase_kernel");
  uint32_t h[10];
  CUDA_CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  const uint32_t want[10] = {0, 1, 1, 0, 1, 0, 1, 0, 1, 0};
  bool ok = std::memcmp(h, want, sizeof h) == 0;
  if (!ok)
    for (int i = 0; i < 10; ++i) std::printf("    mbarrier out[%d] = %u want %u\n", i, h[i], want[i]);
  CUDA_CHECK(cudaFree(d));
  record("mbarrier phases and parity", ok,
         {"mbarrier_init", "mbarrier_arrive", "mbarrier_try_wait_parity", "mbarrier_wait", "mbarrier_inval"});
}

// ------------------------------------------------------------------------------------------------ elect, named barriers

// elect_one twice per warp with the full mask and twice by lanes 8-31 with their mask. Per warp and mask, out[]
// counts the elections and ORs in the elected lanes' bits (full mask: out[0..3], out[4..7]; lanes 8-31:
// out[8..11], out[12..15]). PTX promises one lane per call and the same lane for the same mask, not which lane.
__global__ void elect_bar_kernel(uint32_t* out) {
  __shared__ uint32_t value;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int rep = 0; rep < 2; ++rep)
    if (elect_one()) {
      atomicAdd(&out[warp], 1u);
      atomicOr(&out[4 + warp], 1u << lane);
    }
  if (lane >= 8) {
    for (int rep = 0; rep < 2; ++rep)
      if (elect_one(0xFFFFFF00u)) {
        atomicAdd(&out[8 + warp], 1u);
        atomicOr(&out[12 + warp], 1u << lane);
      }
  }
  // Named barrier 1 over warps 0 and 1: warp 0 produces, warp 1 consumes.
  if (warp == 0) {
    if (lane == 0) value = 4242;
    bar_arrive(1, 64);
  } else if (warp == 1) {
    bar_sync(1, 64);
    if (lane == 0) out[16] = value;
  }
}

static void test_elect_bar() {
  uint32_t* d;
  CUDA_CHECK(cudaMalloc(&d, 17 * 4));
  CUDA_CHECK(cudaMemset(d, 0, 17 * 4));
  elect_bar_kernel<<<1, 128>>>(d);
  sync_or_die("elect_bar_kernel");
  uint32_t h[17];
  CUDA_CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  auto one_lane = [](uint32_t bits) { return bits != 0 && (bits & (bits - 1)) == 0; };
  bool ok_elect = true;
  for (int w = 0; w < 4; ++w) {
    const bool ok_w = h[w] == 2 && one_lane(h[4 + w]) && h[8 + w] == 2 && one_lane(h[12 + w]) &&
                      (h[12 + w] & 0xFFFFFF00u) != 0;
    if (!ok_w)
      std::printf("    elect warp %d: full mask %u elections, lanes 0x%08x; lanes 8-31 %u, lanes 0x%08x\n", w, h[w],
                  h[4 + w], h[8 + w], h[12 + w]);
    ok_elect = ok_elect && ok_w;
  }
  record("elect.sync, full and partial mask", ok_elect, {"elect_one"});
  record("named barrier arrive/sync", h[16] == 4242, {"bar_arrive", "bar_sync"});
  CUDA_CHECK(cudaFree(d));
}

// ------------------------------------------------------------------------------------------------ setmaxnreg pipeline

// Warp-specialised ring of 4 stages over 16 tiles of 64 x 64 uint16: warpgroup 0 (40 registers) produces with
// TMA, warpgroups 1 and 2 (232 registers each) consume, each summing its 32 rows of every tile.
constexpr int kPipeStages = 4, kPipeTiles = 16;
__global__ void __launch_bounds__(384, 1)
    setmaxnreg_pipeline_kernel(const __grid_constant__ CUtensorMap map, unsigned long long* sums) {
  __shared__ alignas(1024) uint16_t stage[kPipeStages][64 * 64];
  __shared__ uint64_t full[kPipeStages], empty[kPipeStages];
  const int wg = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kPipeStages; ++s) {
      mbarrier_init(&full[s], 1);
      mbarrier_init(&empty[s], 256);
    }
    fence_barrier_init();
  }
  __syncthreads();
  if (wg == 0) {
    setmaxnreg_dec<40>();
    if (threadIdx.x == 0) {
      for (int t = 0; t < kPipeTiles; ++t) {
        const int s = t % kPipeStages, round = t / kPipeStages;
        mbarrier_wait(&empty[s], (round & 1) ^ 1);  // first round passes at once
        mbarrier_arrive_expect_tx(&full[s], 64 * 64 * 2);
        tma_load_2d(stage[s], &map, &full[s], 0, t * 64);
      }
    }
  } else {
    setmaxnreg_inc<232>();
    unsigned long long sum = 0;
    const int t_in = threadIdx.x - 128 * wg;
    for (int t = 0; t < kPipeTiles; ++t) {
      const int s = t % kPipeStages, round = t / kPipeStages;
      mbarrier_wait(&full[s], round & 1);
      for (int i = t_in; i < 32 * 64; i += 128) sum += stage[s][(wg - 1) * 32 * 64 + i];
      mbarrier_arrive(&empty[s]);
    }
    atomicAdd(&sums[wg - 1], sum);
  }
}

static void test_setmaxnreg_pipeline() {
  const int rows = kPipeTiles * 64, cols = 64;
  std::vector<uint16_t> h(rows * cols);
  unsigned long long want[2] = {0, 0};
  for (int i = 0; i < rows * cols; ++i) {
    h[i] = static_cast<uint16_t>((i * 2654435761u) >> 16);
    want[(i / cols) % 64 < 32 ? 0 : 1] += h[i];
  }
  uint16_t* d;
  unsigned long long* d_sums;
  CUDA_CHECK(cudaMalloc(&d, h.size() * 2));
  CUDA_CHECK(cudaMalloc(&d_sums, 16));
  CUDA_CHECK(cudaMemset(d_sums, 0, 16));
  CUDA_CHECK(cudaMemcpy(d, h.data(), h.size() * 2, cudaMemcpyHostToDevice));
  CUtensorMap map;
  const uint64_t dims[2] = {cols, rows}, strides[1] = {cols * 2};
  const uint32_t box[2] = {64, 64};
  bool ok = make_tensor_map(&map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, d, dims, strides, box,
                            CU_TENSOR_MAP_SWIZZLE_NONE) == cudaSuccess;
  if (ok) {
    setmaxnreg_pipeline_kernel<<<1, 384>>>(map, d_sums);
    sync_or_die("setmaxnreg_pipeline_kernel");
    unsigned long long got[2];
    CUDA_CHECK(cudaMemcpy(got, d_sums, 16, cudaMemcpyDeviceToHost));
    ok = got[0] == want[0] && got[1] == want[1];
    if (!ok) std::printf("    sums %llu %llu want %llu %llu\n", got[0], got[1], want[0], want[1]);
  }
  CUDA_CHECK(cudaFree(d));
  CUDA_CHECK(cudaFree(d_sums));
  record("setmaxnreg producer/consumer ring", ok,
         {"setmaxnreg_dec", "setmaxnreg_inc", "fence_barrier_init", "mbarrier_wait", "mbarrier_arrive",
          "mbarrier_arrive_expect_tx", "tma_load_2d"});
}

// ------------------------------------------------------------------------------------------------ mma.sync

// One warp, the uses of the "mma.sync" contract: A's fragment from explicit indices and from ldmatrix_x4;
// C = A B (16x16, two n-tiles of B 16x16 stored a row per n); then E = bf16(C) F with C's fragments reused as
// the A fragment (F 16x8, a row per n); B's fragments from ldmatrix_x4 of a K-like tile (8 n x 32 k, a row
// per n: two k-steps, A serving both) and from ldmatrix_x4_trans of a V-like one (16 k x 16 n, a row per k:
// two n-tiles). Out: C [16][16], E [16][8], C again from the ldmatrix-fed A, CK [16][8], CV [16][16].
__global__ void mma_sync_kernel(const uint16_t* a, const uint16_t* b, const uint16_t* f, const uint16_t* kt,
                                const uint16_t* vt, float* c_out, float* e_out, float* c_ldmatrix,
                                float* ck_out, float* cv_out) {
  __shared__ alignas(16) uint16_t a_s[16 * 16], kt_s[8 * 32], vt_s[16 * 16];
  const int l = threadIdx.x, g = l / 4, c = 2 * (l % 4);
  for (int i = l; i < 256; i += 32) {
    a_s[i] = a[i];
    kt_s[i] = kt[i];
    vt_s[i] = vt[i];
  }
  __syncwarp();
  const auto pair = [](const uint16_t* p) { return uint32_t(p[0]) | (uint32_t(p[1]) << 16); };
  const uint32_t fa[4] = {pair(a + g * 16 + c), pair(a + (g + 8) * 16 + c), pair(a + g * 16 + c + 8),
                          pair(a + (g + 8) * 16 + c + 8)};
  uint32_t fa_ld[4];
  ldmatrix_x4(fa_ld, a_s + ((l % 8) + 8 * ((l / 8) % 2)) * 16 + 8 * (l / 16));
  float acc[2][4] = {}, acc_ld[2][4] = {};
  for (int j = 0; j < 2; ++j) {  // n-tile j: B's rows n = 8j .. 8j + 7
    const uint16_t* column = b + (8 * j + g) * 16;
    const uint32_t fb[2] = {pair(column + c), pair(column + c + 8)};
    mma_m16n8k16_bf16(acc[j], fa, fb);
    mma_m16n8k16_bf16(acc_ld[j], fa_ld, fb);
    for (int h = 0; h < 2; ++h) {
      c_out[(g + 8 * h) * 16 + 8 * j + c] = acc[j][2 * h];
      c_out[(g + 8 * h) * 16 + 8 * j + c + 1] = acc[j][2 * h + 1];
      c_ldmatrix[(g + 8 * h) * 16 + 8 * j + c] = acc_ld[j][2 * h];
      c_ldmatrix[(g + 8 * h) * 16 + 8 * j + c + 1] = acc_ld[j][2 * h + 1];
    }
  }
  const uint32_t reused[4] = {pack_bf16x2(acc[0][0], acc[0][1]), pack_bf16x2(acc[0][2], acc[0][3]),
                              pack_bf16x2(acc[1][0], acc[1][1]), pack_bf16x2(acc[1][2], acc[1][3])};
  const uint32_t ff[2] = {pair(f + g * 16 + c), pair(f + g * 16 + c + 8)};
  float e[4] = {};
  mma_m16n8k16_bf16(e, reused, ff);
  uint32_t k_frag[4], v_frag[4];
  ldmatrix_x4(k_frag, kt_s + (l % 8) * 32 + 8 * (l / 8));
  ldmatrix_x4_trans(v_frag, vt_s + (l % 8 + 8 * ((l / 8) % 2)) * 16 + 8 * (l / 16));
  const uint32_t k_step0[2] = {k_frag[0], k_frag[1]}, k_step1[2] = {k_frag[2], k_frag[3]};
  const uint32_t v_tile0[2] = {v_frag[0], v_frag[1]}, v_tile1[2] = {v_frag[2], v_frag[3]};
  float ck[4] = {}, cv[2][4] = {};
  mma_m16n8k16_bf16(ck, fa, k_step0);
  mma_m16n8k16_bf16(ck, fa, k_step1);
  mma_m16n8k16_bf16(cv[0], fa, v_tile0);
  mma_m16n8k16_bf16(cv[1], fa, v_tile1);
  for (int h = 0; h < 2; ++h) {
    e_out[(g + 8 * h) * 8 + c] = e[2 * h];
    e_out[(g + 8 * h) * 8 + c + 1] = e[2 * h + 1];
    ck_out[(g + 8 * h) * 8 + c] = ck[2 * h];
    ck_out[(g + 8 * h) * 8 + c + 1] = ck[2 * h + 1];
    for (int j = 0; j < 2; ++j) {
      cv_out[(g + 8 * h) * 16 + 8 * j + c] = cv[j][2 * h];
      cv_out[(g + 8 * h) * 16 + 8 * j + c + 1] = cv[j][2 * h + 1];
    }
  }
}

static void test_mma_sync(std::mt19937& rng) {
  std::normal_distribution<float> nd;
  // A [16 m][16 k]; B [16 n][16 k]; F [8 n][16 k]; KT [8 n][32 k]; VT [16 k][16 n]
  std::vector<uint16_t> a(256), b(256), f(128), kt(256), vt(256);
  for (auto* v : {&a, &b, &f, &kt, &vt})
    for (auto& x : *v) x = bf16_bits(nd(rng));
  const auto upload = [](const std::vector<uint16_t>& host) {
    uint16_t* device;
    CUDA_CHECK(cudaMalloc(&device, host.size() * 2));
    CUDA_CHECK(cudaMemcpy(device, host.data(), host.size() * 2, cudaMemcpyHostToDevice));
    return device;
  };
  const auto outputs = [](size_t n) {  // NaN everywhere: unwritten outputs fail
    float* device;
    CUDA_CHECK(cudaMalloc(&device, n * 4));
    CUDA_CHECK(cudaMemset(device, 0xFF, n * 4));
    return device;
  };
  uint16_t *d_a = upload(a), *d_b = upload(b), *d_f = upload(f), *d_kt = upload(kt), *d_vt = upload(vt);
  float *d_c = outputs(256), *d_e = outputs(128), *d_c_ld = outputs(256), *d_ck = outputs(128),
        *d_cv = outputs(256);
  mma_sync_kernel<<<1, 32>>>(d_a, d_b, d_f, d_kt, d_vt, d_c, d_e, d_c_ld, d_ck, d_cv);
  sync_or_die("mma_sync_kernel");
  const auto download = [](const float* device, size_t n) {
    std::vector<float> host(n);
    CUDA_CHECK(cudaMemcpy(host.data(), device, n * 4, cudaMemcpyDeviceToHost));
    return host;
  };
  const std::vector<float> c = download(d_c, 256), e = download(d_e, 128), c_ld = download(d_c_ld, 256),
                           ck = download(d_ck, 128), cv = download(d_cv, 256);
  const auto close = [](double got, double want) {
    return std::fabs(got - want) <= 1e-3 + 1e-3 * std::fabs(want);
  };
  const auto value = [](const std::vector<uint16_t>& v, int i) { return double(bf16_value(v[i])); };
  bool product = true, from_ldmatrix = true, reuse = true, k_like = true, v_like = true;
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 16; ++n) {
      double want = 0, want_v = 0;
      for (int k = 0; k < 16; ++k) {
        want += value(a, m * 16 + k) * value(b, n * 16 + k);
        want_v += value(a, m * 16 + k) * value(vt, k * 16 + n);
      }
      product = product && close(c[m * 16 + n], want);
      from_ldmatrix = from_ldmatrix && c_ld[m * 16 + n] == c[m * 16 + n];
      v_like = v_like && close(cv[m * 16 + n], want_v);
    }
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 8; ++n) {
      double want = 0, want_k = 0;  // E: the device's C, rounded to bf16 as the fragments were
      for (int k = 0; k < 16; ++k) {
        want += double(bf16_value(bf16_bits(c[m * 16 + k]))) * value(f, n * 16 + k);
        want_k += value(a, m * 16 + k) * (value(kt, n * 32 + k) + value(kt, n * 32 + k + 16));
      }
      reuse = reuse && close(e[m * 8 + n], want);
      k_like = k_like && close(ck[m * 8 + n], want_k);
    }
  record("mma.sync m16n8k16 fragments", product, {"mma_m16n8k16_bf16"});
  record("mma.sync A fragment from ldmatrix x4", product && from_ldmatrix,
         {"mma_m16n8k16_bf16", "ldmatrix_x4"});
  record("mma.sync D fragments reused as A", reuse, {"mma_m16n8k16_bf16", "pack_bf16x2"});
  record("mma.sync B of two k-steps from ldmatrix x4", k_like, {"mma_m16n8k16_bf16", "ldmatrix_x4"});
  record("mma.sync B of two n-tiles from ldmatrix x4 .trans", v_like,
         {"mma_m16n8k16_bf16", "ldmatrix_x4_trans"});
  for (void* p :
       {static_cast<void*>(d_a), static_cast<void*>(d_b), static_cast<void*>(d_f), static_cast<void*>(d_kt),
        static_cast<void*>(d_vt), static_cast<void*>(d_c), static_cast<void*>(d_e),
        static_cast<void*>(d_c_ld), static_cast<void*>(d_ck), static_cast<void*>(d_cv)})
    CUDA_CHECK(cudaFree(p));
}

// ------------------------------------------------------------------------------------------------ ldmatrix / stmatrix

// One warp: stmatrix four 8x8 matrices with known values, read them back with ldmatrix; the same through the
// .trans forms. Also checks pack_bf16x2's half order.
__global__ void matrix_kernel(uint16_t* plain, uint16_t* trans, uint32_t* regs) {
  __shared__ alignas(16) uint16_t s_plain[4 * 64], s_trans[4 * 64];
  const int l = threadIdx.x;
  uint32_t r[4];
  for (int m = 0; m < 4; ++m) {
    const int row = l / 4, col = 2 * (l % 4);
    const uint32_t lo = m * 64 + row * 8 + col, hi = lo + 1;
    r[m] = lo | (hi << 16);
  }
  uint16_t* my_row_plain = s_plain + (l / 8) * 64 + (l % 8) * 8;
  uint16_t* my_row_trans = s_trans + (l / 8) * 64 + (l % 8) * 8;
  stmatrix_x4(my_row_plain, r);
  stmatrix_x4_trans(my_row_trans, r);
  __syncwarp();
  uint32_t back[4], back_t[4];
  ldmatrix_x4(back, my_row_plain);
  ldmatrix_x4_trans(back_t, my_row_trans);
  for (int i = l; i < 256; i += 32) {
    plain[i] = s_plain[i];
    trans[i] = s_trans[i];
  }
  for (int m = 0; m < 4; ++m) {
    regs[(0 * 4 + m) * 32 + l] = back[m] ^ r[m];    // 0 when the round trip is exact
    regs[(1 * 4 + m) * 32 + l] = back_t[m] ^ r[m];
  }
  if (l == 0) regs[256] = pack_bf16x2(1.0f, 2.0f);  // 2.0 = 0x4000 high, 1.0 = 0x3F80 low
}

static void test_matrix() {
  uint16_t *d_plain, *d_trans;
  uint32_t* d_regs;
  CUDA_CHECK(cudaMalloc(&d_plain, 512));
  CUDA_CHECK(cudaMalloc(&d_trans, 512));
  CUDA_CHECK(cudaMalloc(&d_regs, 257 * 4));
  matrix_kernel<<<1, 32>>>(d_plain, d_trans, d_regs);
  sync_or_die("matrix_kernel");
  std::vector<uint16_t> plain(256), trans(256);
  std::vector<uint32_t> regs(257);
  CUDA_CHECK(cudaMemcpy(plain.data(), d_plain, 512, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(trans.data(), d_trans, 512, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(regs.data(), d_regs, 257 * 4, cudaMemcpyDeviceToHost));
  bool st = true, st_t = true, ld = true, ld_t = true;
  for (int m = 0; m < 4; ++m)
    for (int row = 0; row < 8; ++row)
      for (int col = 0; col < 8; ++col) {
        const uint16_t v = static_cast<uint16_t>(m * 64 + row * 8 + col);
        st = st && plain[m * 64 + row * 8 + col] == v;
        st_t = st_t && trans[m * 64 + col * 8 + row] == v;
      }
  for (int i = 0; i < 128; ++i) {
    ld = ld && regs[i] == 0;
    ld_t = ld_t && regs[128 + i] == 0;
  }
  record("stmatrix x4 layout", st, {"stmatrix_x4"});
  record("stmatrix x4 .trans layout", st_t, {"stmatrix_x4_trans"});
  record("ldmatrix x4 round trip", ld && st, {"ldmatrix_x4"});
  record("ldmatrix x4 .trans round trip", ld_t && st_t, {"ldmatrix_x4_trans"});
  record("pack_bf16x2 half order", regs[256] == 0x40003F80u, {"pack_bf16x2"});
  CUDA_CHECK(cudaFree(d_plain));
  CUDA_CHECK(cudaFree(d_trans));
  CUDA_CHECK(cudaFree(d_regs));
}

// ------------------------------------------------------------------------------------------------ wgmma

// One warpgroup computes D[64 x N] = A[64 x 64] * B[N x 64]^T with 4 k-steps of m64nNk16 in two commit groups.
// TA / TB = 0: A / B are K-major tiles (TMA box 64 x rows, 128B swizzle). TA / TB = 1: they are stored transposed
// (K rows of M / N elements) and loaded as 64-wide blocks, 8 KB apart. RS = true: A comes from registers built
// from global memory with the documented fragment layout.
template <int N, int TA, int TB, bool RS>
__global__ void __launch_bounds__(128, 1)
    wgmma_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                 const __nv_bfloat16* a_global, float* out) {
  constexpr int B_ELEMS = (N + 63) / 64 * 64 * 64;
  __shared__ alignas(1024) __nv_bfloat16 sa[64 * 64];
  __shared__ alignas(1024) __nv_bfloat16 sb[B_ELEMS];
  __shared__ uint64_t bar;
  const int t = threadIdx.x;
  init_barrier_for_one(&bar);
  if (t == 0) {
    constexpr uint32_t bytes_b = (TB ? (N + 63) / 64 * 64 : N) * 64 * 2;
    mbarrier_arrive_expect_tx(&bar, (RS ? 0 : 64 * 64 * 2) + bytes_b);
    if (!RS) tma_load_2d(sa, &map_a, &bar, 0, 0);
    if (TB) {
      for (int j = 0; j < (N + 63) / 64; ++j) tma_load_2d(sb + j * 64 * 64, &map_b, &bar, j * 64, 0);
    } else {
      tma_load_2d(sb, &map_b, &bar, 0, 0);
    }
  }
  uint32_t afrag[4][4];
  if constexpr (RS) {
    const uint16_t* a16 = reinterpret_cast<const uint16_t*>(a_global);
    for (int ks = 0; ks < 4; ++ks)
      for (int r = 0; r < 4; ++r) {
        const int row = wgmma_a_row(r, t), k = 16 * ks + wgmma_a_col(r, t);
        afrag[ks][r] = a16[row * 64 + k] | (static_cast<uint32_t>(a16[row * 64 + k + 1]) << 16);
      }
  }
  mbarrier_wait(&bar, 0);

  float d[N / 2];
  const uint64_t desc_a = TA ? make_desc_mn128(sa, 8192) : make_desc_k128(sa);
  const uint64_t desc_b = TB ? make_desc_mn128(sb, 8192) : make_desc_k128(sb);
  const uint32_t k_step_bytes_a = TA ? 16 * 128 : 32, k_step_bytes_b = TB ? 16 * 128 : 32;
  wgmma_fence_operand(d);
  if constexpr (RS)
    for (int ks = 0; ks < 4; ++ks) wgmma_fence_operand(afrag[ks]);
  wgmma_fence();
  for (int g = 0; g < 2; ++g) {
#pragma unroll
    for (int kk = 0; kk < 2; ++kk) {
      const int ks = 2 * g + kk;
      const uint64_t db = desc_advance(desc_b, ks * k_step_bytes_b);
      if constexpr (RS)
        wgmma_bf16_rs<N, TB>(d, afrag[ks], db, ks > 0);
      else
        wgmma_bf16_ss<N, TA, TB>(d, desc_advance(desc_a, ks * k_step_bytes_a), db, ks > 0);
    }
    wgmma_commit();
  }
  wgmma_wait<1>();
  wgmma_wait<0>();
  wgmma_fence_operand(d);
#pragma unroll
  for (int i = 0; i < N / 2; ++i) out[wgmma_acc_row(i, t) * N + wgmma_acc_col(i, t)] = d[i];
}

template <int N, int TA, int TB, bool RS>
static void test_wgmma(std::mt19937& rng) {
  std::normal_distribution<float> nd;
  // Logical A[64][64] (M x K) and B[N][64] (N x K), bf16.
  std::vector<uint16_t> a(64 * 64), b(N * 64);
  for (auto& x : a) x = bf16_bits(nd(rng));
  for (auto& x : b) x = bf16_bits(nd(rng));
  // Stored forms: K-major as is; transposed = [64 K rows][M or N].
  std::vector<uint16_t> a_store(a), b_store(b);
  if (TA)
    for (int m = 0; m < 64; ++m)
      for (int k = 0; k < 64; ++k) a_store[k * 64 + m] = a[m * 64 + k];
  if (TB)
    for (int n = 0; n < N; ++n)
      for (int k = 0; k < 64; ++k) b_store[k * N + n] = b[n * 64 + k];
  uint16_t *d_a, *d_a_kmajor, *d_b;
  float* d_out;
  CUDA_CHECK(cudaMalloc(&d_a, a.size() * 2));
  CUDA_CHECK(cudaMalloc(&d_a_kmajor, a.size() * 2));
  CUDA_CHECK(cudaMalloc(&d_b, b.size() * 2));
  CUDA_CHECK(cudaMalloc(&d_out, 64 * N * 4));
  CUDA_CHECK(cudaMemcpy(d_a, a_store.data(), a.size() * 2, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_a_kmajor, a.data(), a.size() * 2, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_b, b_store.data(), b.size() * 2, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(d_out, 0xFF, 64 * N * 4));  // NaN everywhere: unwritten outputs fail
  CUtensorMap map_a, map_b;
  auto* bf_a = reinterpret_cast<__nv_bfloat16*>(d_a);
  auto* bf_b = reinterpret_cast<__nv_bfloat16*>(d_b);
  bool ok = make_tensor_map_2d_bf16(&map_a, bf_a, 64, 64, 64, 64) == cudaSuccess &&
            (TB ? make_tensor_map_2d_bf16(&map_b, bf_b, 64, N, 64, 64)
                : make_tensor_map_2d_bf16(&map_b, bf_b, N, 64, N, 64)) == cudaSuccess;
  double max_err = 0;
  if (ok) {
    wgmma_kernel<N, TA, TB, RS><<<1, 128>>>(map_a, map_b, reinterpret_cast<__nv_bfloat16*>(d_a_kmajor), d_out);
    sync_or_die("wgmma_kernel");
    std::vector<float> out(64 * N);
    CUDA_CHECK(cudaMemcpy(out.data(), d_out, out.size() * 4, cudaMemcpyDeviceToHost));
    for (int m = 0; m < 64; ++m)
      for (int n = 0; n < N; ++n) {
        double ref = 0;
        for (int k = 0; k < 64; ++k) ref += double(bf16_value(a[m * 64 + k])) * bf16_value(b[n * 64 + k]);
        double err = std::fabs(out[m * N + n] - ref);
        if (!(err <= 1e-3 + 1e-3 * std::fabs(ref))) ok = false;
        if (!(err <= max_err)) max_err = err;  // NaN propagates into max_err
      }
  }
  CUDA_CHECK(cudaFree(d_a));
  CUDA_CHECK(cudaFree(d_a_kmajor));
  CUDA_CHECK(cudaFree(d_b));
  CUDA_CHECK(cudaFree(d_out));
  char name[80];
  std::snprintf(name, sizeof name, "wgmma %s m64n%dk16 trans_a=%d trans_b=%d", RS ? "RS" : "SS", N, TA, TB);
  if (!ok) std::printf("    %s: max abs error %g\n", name, max_err);
  if (RS)
    record(name, ok,
           {"wgmma_bf16_rs", "wgmma_a_row", "wgmma_a_col", "wgmma_acc_row", "wgmma_acc_col", "wgmma_fence",
            "wgmma_fence_operand", "wgmma_commit", "wgmma_wait", TB ? "make_desc_mn128" : "make_desc_k128",
            "make_smem_desc", "desc_advance", "fence_barrier_init"});
  else
    record(name, ok,
           {"wgmma_bf16_ss", "wgmma_acc_row", "wgmma_acc_col", "wgmma_fence", "wgmma_fence_operand", "wgmma_commit",
            "wgmma_wait", (TA || TB) ? "make_desc_mn128" : "make_desc_k128", "make_smem_desc", "desc_advance",
            "fence_barrier_init"});
}

template <int TA, int TB, bool RS, int... Ns>
static void test_wgmma_all(std::mt19937& rng, std::integer_sequence<int, Ns...>) {
  (test_wgmma<Ns, TA, TB, RS>(rng), ...);
}

// ----------------------------------------------------------------------------------------------- wgmma operand fences

// Accumulators touched between two commit groups, as attention's online softmax does. Group 1 (SS, k = 0..31) gives
// D1; after its wgmma_wait the threads read D (a snapshot) and double it. Group 2 (RS, k = 32..63, A fragments built
// after group 1) accumulates onto that. Operand fences bracket every access outside the wgmmas. Expected:
// snapshot = A[:, 0:32] B[:, 0:32]^T and D = 2 snapshot + A[:, 32:64] B[:, 32:64]^T.
template <int N>
__global__ void __launch_bounds__(128, 1)
    wgmma_operand_fence_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                               const __nv_bfloat16* a_global, float* snapshot, float* out) {
  __shared__ alignas(1024) __nv_bfloat16 sa[64 * 64];
  __shared__ alignas(1024) __nv_bfloat16 sb[N * 64];
  __shared__ uint64_t bar;
  const int t = threadIdx.x;
  init_barrier_for_one(&bar);
  if (t == 0) {
    mbarrier_arrive_expect_tx(&bar, (64 + N) * 64 * 2);
    tma_load_2d(sa, &map_a, &bar, 0, 0);
    tma_load_2d(sb, &map_b, &bar, 0, 0);
  }
  mbarrier_wait(&bar, 0);

  float d[N / 2];
  const uint64_t desc_a = make_desc_k128(sa), desc_b = make_desc_k128(sb);
  wgmma_fence_operand(d);
  wgmma_fence();
  wgmma_bf16_ss<N>(d, desc_a, desc_b, 0);
  wgmma_bf16_ss<N>(d, desc_advance(desc_a, 32), desc_advance(desc_b, 32), 1);
  wgmma_commit();
  wgmma_wait<0>();
  wgmma_fence_operand(d);
#pragma unroll
  for (int i = 0; i < N / 2; ++i) {
    snapshot[wgmma_acc_row(i, t) * N + wgmma_acc_col(i, t)] = d[i];
    d[i] *= 2.0f;
  }
  uint32_t a2[4], a3[4];  // A fragments of k-steps 2 and 3 (k = 32..47, 48..63)
  const uint16_t* a16 = reinterpret_cast<const uint16_t*>(a_global);
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    const int row = wgmma_a_row(r, t), k = wgmma_a_col(r, t);
    a2[r] = a16[row * 64 + 32 + k] | (static_cast<uint32_t>(a16[row * 64 + 33 + k]) << 16);
    a3[r] = a16[row * 64 + 48 + k] | (static_cast<uint32_t>(a16[row * 64 + 49 + k]) << 16);
  }
  wgmma_fence_operand(d);
  wgmma_fence_operand(a2);
  wgmma_fence_operand(a3);
  wgmma_fence();
  wgmma_bf16_rs<N>(d, a2, desc_advance(desc_b, 64), 1);
  wgmma_bf16_rs<N>(d, a3, desc_advance(desc_b, 96), 1);
  wgmma_commit();
  wgmma_wait<0>();
  wgmma_fence_operand(d);
  wgmma_fence_operand(a2);
  wgmma_fence_operand(a3);
#pragma unroll
  for (int i = 0; i < N / 2; ++i) out[wgmma_acc_row(i, t) * N + wgmma_acc_col(i, t)] = d[i];
}

template <int N>
static void test_wgmma_operand_fence(std::mt19937& rng) {
  std::normal_distribution<float> nd;
  std::vector<uint16_t> a(64 * 64), b(N * 64);  // A[64][64] (M x K), B[N][64] (N x K), both K-major
  for (auto& x : a) x = bf16_bits(nd(rng));
  for (auto& x : b) x = bf16_bits(nd(rng));
  uint16_t *d_a, *d_b;
  float *d_snap, *d_out;
  CUDA_CHECK(cudaMalloc(&d_a, a.size() * 2));
  CUDA_CHECK(cudaMalloc(&d_b, b.size() * 2));
  CUDA_CHECK(cudaMalloc(&d_snap, 64 * N * 4));
  CUDA_CHECK(cudaMalloc(&d_out, 64 * N * 4));
  CUDA_CHECK(cudaMemcpy(d_a, a.data(), a.size() * 2, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_b, b.data(), b.size() * 2, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(d_snap, 0xFF, 64 * N * 4));  // NaN everywhere: unwritten outputs fail
  CUDA_CHECK(cudaMemset(d_out, 0xFF, 64 * N * 4));
  CUtensorMap map_a, map_b;
  auto* bf_a = reinterpret_cast<__nv_bfloat16*>(d_a);
  auto* bf_b = reinterpret_cast<__nv_bfloat16*>(d_b);
  bool ok = make_tensor_map_2d_bf16(&map_a, bf_a, 64, 64, 64, 64) == cudaSuccess &&
            make_tensor_map_2d_bf16(&map_b, bf_b, N, 64, N, 64) == cudaSuccess;
  double max_err = 0;
  if (ok) {
    wgmma_operand_fence_kernel<N><<<1, 128>>>(map_a, map_b, bf_a, d_snap, d_out);
    sync_or_die("wgmma_operand_fence_kernel");
    std::vector<float> snap(64 * N), out(64 * N);
    CUDA_CHECK(cudaMemcpy(snap.data(), d_snap, snap.size() * 4, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(out.data(), d_out, out.size() * 4, cudaMemcpyDeviceToHost));
    auto check = [&](float got, double ref) {
      const double err = std::fabs(got - ref);
      if (!(err <= 1e-3 + 1e-3 * std::fabs(ref))) ok = false;
      if (!(err <= max_err)) max_err = err;  // NaN propagates into max_err
    };
    for (int m = 0; m < 64; ++m)
      for (int n = 0; n < N; ++n) {
        double lo = 0, hi = 0;
        for (int k = 0; k < 64; ++k)
          (k < 32 ? lo : hi) += double(bf16_value(a[m * 64 + k])) * bf16_value(b[n * 64 + k]);
        check(snap[m * N + n], lo);
        check(out[m * N + n], 2 * lo + hi);
      }
  }
  CUDA_CHECK(cudaFree(d_a));
  CUDA_CHECK(cudaFree(d_b));
  CUDA_CHECK(cudaFree(d_snap));
  CUDA_CHECK(cudaFree(d_out));
  char name[80];
  std::snprintf(name, sizeof name, "wgmma operand fences, rescale between groups, n%d", N);
  if (!ok) std::printf("    %s: max abs error %g\n", name, max_err);
  record(name, ok,
         {"wgmma_fence_operand", "wgmma_fence", "wgmma_bf16_ss", "wgmma_bf16_rs", "wgmma_commit", "wgmma_wait",
          "wgmma_acc_row", "wgmma_acc_col", "wgmma_a_row", "wgmma_a_col", "make_desc_k128", "desc_advance"});
}

// ----------------------------------------------------------------------- softmax on accumulators, P V from registers

// One attention tile, as the reference forward computes it: S = Q K^T (SS, 64 x 64 x 64), a masked softmax over
// each row of the accumulator (acc_row_max, exp2_approx, acc_row_sum_partial + quad_sum, acc_row_scale), then
// O = P V with P from registers (wgmma_acc_to_a, RS, V MN-major). K and V come from [B][S][H][D] tensors through
// make_tensor_map_bshd_bf16, in a tile that runs past S: its rows past S load as zero (checked on the raw tile)
// and their keys are masked. Out: O (64 x 64) normalised, and the row sums.
constexpr int kSmB = 2, kSmS = 80, kSmH = 3, kSmD = 64;  // K, V: [2][80][3][64]
constexpr int kSmBatch = 1, kSmHead = 2, kSmRow0 = 32;   // the tile: b = 1, h = 2, rows 32..95 (80..95 past S)

__global__ void __launch_bounds__(128, 1)
    softmax_pv_kernel(const __grid_constant__ CUtensorMap map_q, const __grid_constant__ CUtensorMap map_k,
                      const __grid_constant__ CUtensorMap map_v, float scale_log2, uint16_t* raw_k, float* out,
                      float* row_sums) {
  __shared__ alignas(1024) __nv_bfloat16 sq[64 * 64];
  __shared__ alignas(1024) __nv_bfloat16 sk[64 * 64];
  __shared__ alignas(1024) __nv_bfloat16 sv[64 * 64];
  __shared__ uint64_t bar;
  const int t = threadIdx.x;
  init_barrier_for_one(&bar);
  if (t == 0) {
    mbarrier_arrive_expect_tx(&bar, 3 * 64 * 64 * 2);
    tma_load_2d(sq, &map_q, &bar, 0, 0);
    tma_load_4d(sk, &map_k, &bar, 0, kSmHead, kSmRow0, kSmBatch);
    tma_load_4d(sv, &map_v, &bar, 0, kSmHead, kSmRow0, kSmBatch);
  }
  mbarrier_wait(&bar, 0);
  for (int i = t; i < 64 * 64; i += 128) raw_k[i] = reinterpret_cast<const uint16_t*>(sk)[i];

  float s[32];
  wgmma_fence_operand(s);
  wgmma_fence();
#pragma unroll
  for (int k = 0; k < 4; ++k) wgmma_bf16_ss<64>(s, desc_advance(make_desc_k128(sq), 32 * k),
                                                desc_advance(make_desc_k128(sk), 32 * k), k > 0);
  wgmma_commit();
  wgmma_wait<0>();
  wgmma_fence_operand(s);

#pragma unroll
  for (int i = 0; i < 32; ++i)
    if (kSmRow0 + wgmma_acc_col(i, t) >= kSmS) s[i] = -INFINITY;  // keys past S
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0, 0};
  acc_row_max<64>(s, m);
#pragma unroll
  for (int i = 0; i < 32; ++i) s[i] = exp2_approx(s[i] * scale_log2 - m[(i / 2) % 2] * scale_log2);
  acc_row_sum_partial<64>(s, l);
  l[0] = quad_sum(l[0]);
  l[1] = quad_sum(l[1]);

  uint32_t p[4][4];
  wgmma_acc_to_a<64>(s, p);
  float o[32];
  wgmma_fence_operand(o);
  for (int j = 0; j < 4; ++j) wgmma_fence_operand(p[j]);
  wgmma_fence();
#pragma unroll
  for (int j = 0; j < 4; ++j) wgmma_bf16_rs<64, 1>(o, p[j], desc_advance(make_desc_mn128(sv, 64 * 64 * 2), 2048 * j), j > 0);
  wgmma_commit();
  wgmma_wait<0>();
  wgmma_fence_operand(o);
  for (int j = 0; j < 4; ++j) wgmma_fence_operand(p[j]);
  const float inv[2] = {1.0f / l[0], 1.0f / l[1]};
  acc_row_scale<64>(o, inv);
#pragma unroll
  for (int i = 0; i < 32; ++i) out[wgmma_acc_row(i, t) * 64 + wgmma_acc_col(i, t)] = o[i];
  if (t % 4 == 0) {
    row_sums[wgmma_acc_row(0, t)] = l[0];
    row_sums[wgmma_acc_row(2, t)] = l[1];
  }
}

static void test_softmax_pv(std::mt19937& rng) {
  std::normal_distribution<float> nd;
  const size_t kv_elems = size_t(kSmB) * kSmS * kSmH * kSmD;
  std::vector<uint16_t> q(64 * 64), k(kv_elems), v(kv_elems);
  for (auto& x : q) x = bf16_bits(nd(rng));
  for (auto& x : k) x = bf16_bits(nd(rng));
  for (auto& x : v) x = bf16_bits(nd(rng));
  uint16_t *d_q, *d_k, *d_v, *d_raw;
  float *d_out, *d_sums;
  CUDA_CHECK(cudaMalloc(&d_q, q.size() * 2));
  CUDA_CHECK(cudaMalloc(&d_k, k.size() * 2));
  CUDA_CHECK(cudaMalloc(&d_v, v.size() * 2));
  CUDA_CHECK(cudaMalloc(&d_raw, 64 * 64 * 2));
  CUDA_CHECK(cudaMalloc(&d_out, 64 * 64 * 4));
  CUDA_CHECK(cudaMalloc(&d_sums, 64 * 4));
  CUDA_CHECK(cudaMemcpy(d_q, q.data(), q.size() * 2, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_k, k.data(), k.size() * 2, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_v, v.data(), v.size() * 2, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(d_raw, 0xFF, 64 * 64 * 2));
  CUDA_CHECK(cudaMemset(d_out, 0xFF, 64 * 64 * 4));
  CUDA_CHECK(cudaMemset(d_sums, 0xFF, 64 * 4));
  CUtensorMap map_q, map_k, map_v;
  auto bf = [](uint16_t* p) { return reinterpret_cast<__nv_bfloat16*>(p); };
  bool ok = make_tensor_map_2d_bf16(&map_q, bf(d_q), 64, 64, 64, 64) == cudaSuccess &&
            make_tensor_map_bshd_bf16(&map_k, bf(d_k), kSmB, kSmS, kSmH, kSmD, 64) == cudaSuccess &&
            make_tensor_map_bshd_bf16(&map_v, bf(d_v), kSmB, kSmS, kSmH, kSmD, 64) == cudaSuccess;
  const double scale = 0.125;  // 1 / sqrt(64)
  double max_err = 0;
  if (ok) {
    softmax_pv_kernel<<<1, 128>>>(map_q, map_k, map_v, float(scale * M_LOG2E), d_raw, d_out, d_sums);
    sync_or_die("softmax_pv_kernel");
    std::vector<uint16_t> raw(64 * 64);
    std::vector<float> out(64 * 64), sums(64);
    CUDA_CHECK(cudaMemcpy(raw.data(), d_raw, raw.size() * 2, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(out.data(), d_out, out.size() * 4, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(sums.data(), d_sums, sums.size() * 4, cudaMemcpyDeviceToHost));
    auto kv = [&](const std::vector<uint16_t>& x, int row, int d) {  // row of the tile -> element, 0 past S
      const int srow = kSmRow0 + row;
      return srow < kSmS ? bf16_value(x[((size_t(kSmBatch) * kSmS + srow) * kSmH + kSmHead) * kSmD + d]) : 0.0f;
    };
    for (int r = 0; r < 64; ++r)  // the raw tile: 128B-swizzled rows of K, zeros past S
      for (int c = 0; c < 64; ++c)
        if (bf16_value(raw[swizzled128(r, c, 2)]) != kv(k, r, c)) ok = false;
    const int keys = kSmS - kSmRow0;
    for (int r = 0; r < 64; ++r) {
      std::vector<double> p(keys);
      double mx = -INFINITY, sum = 0;
      for (int j = 0; j < keys; ++j) {
        double dot = 0;
        for (int d = 0; d < 64; ++d) dot += double(bf16_value(q[r * 64 + d])) * kv(k, j, d);
        p[j] = dot * scale;
        mx = std::max(mx, p[j]);
      }
      for (int j = 0; j < keys; ++j) sum += p[j] = std::exp(p[j] - mx);
      // The kernel rounds P to bf16 for the second product: compare with a relative tolerance of that size.
      if (!(std::fabs(sums[r] - sum) <= 1e-3 * sum)) ok = false;
      for (int d = 0; d < 64; ++d) {
        double o = 0;
        for (int j = 0; j < keys; ++j) o += p[j] / sum * kv(v, j, d);
        const double err = std::fabs(out[r * 64 + d] - o);
        if (!(err <= 1e-2 + 1e-2 * std::fabs(o))) ok = false;
        if (!(err <= max_err)) max_err = err;
      }
    }
  }
  for (void* p : {static_cast<void*>(d_q), static_cast<void*>(d_k), static_cast<void*>(d_v),
                  static_cast<void*>(d_raw), static_cast<void*>(d_out), static_cast<void*>(d_sums)})
    CUDA_CHECK(cudaFree(p));
  if (!ok) std::printf("    softmax on accumulators: max abs error %g\n", max_err);
  record("softmax on accumulators, P V from registers, 4-D maps", ok,
         {"exp2_approx", "quad_max", "quad_sum", "acc_row_max", "acc_row_sum_partial", "acc_row_scale",
          "wgmma_acc_to_a", "make_tensor_map_bshd_bf16", "tma_load_4d", "make_desc_mn128", "wgmma_bf16_rs"});
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
  std::mt19937 rng(1234);

  test_tma_rank<1>({1000}, {64}, {960});
  test_tma_rank<2>({96, 50}, {32, 16}, {64, 40});
  test_tma_rank<3>({40, 12, 7}, {16, 4, 3}, {24, 8, 5});
  test_tma_rank<4>({24, 6, 5, 4}, {8, 4, 2, 2}, {16, 4, 3, 2});
  test_tma_rank<5>({16, 5, 4, 3, 3}, {8, 2, 2, 2, 2}, {8, 4, 3, 2, 1});
  test_tma_swizzle();
  test_tma_global_map();
  test_tma_store_reduce();
  test_tma_reduce_nd<3>();
  test_tma_reduce_nd<4>();
  test_tma_multicast();
  test_cluster_dsmem();
  test_bulk_load(rng);
  test_mbarrier_phases();
  test_elect_bar();
  test_setmaxnreg_pipeline();
  test_matrix();
  test_mma_sync(rng);

  using AllN = std::integer_sequence<int, 16, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256>;
  test_wgmma_all<0, 0, false>(rng, AllN{});
  test_wgmma_all<0, 0, true>(rng, AllN{});
  test_wgmma_all<0, 1, false>(rng, std::integer_sequence<int, 64, 96, 128, 256>{});
  test_wgmma_all<0, 1, true>(rng, std::integer_sequence<int, 64, 96, 128, 256>{});
  test_wgmma_all<1, 0, false>(rng, std::integer_sequence<int, 64, 128>{});
  test_wgmma_all<1, 1, false>(rng, std::integer_sequence<int, 128>{});
  test_wgmma_operand_fence<64>(rng);
  test_wgmma_operand_fence<256>(rng);
  test_softmax_pv(rng);

  int failed = 0;
  std::printf("\nper function:\n");
  for (const auto& [name, o] : g_outcomes) {
    std::printf("%-4s %-34s (%s)\n", o.ok ? "PASS" : "FAIL", name.c_str(), o.tests.c_str());
    failed += !o.ok;
  }
  std::printf("\n%zu functions, %d failed\n", g_outcomes.size(), failed);
  return failed ? 1 : 0;
}
