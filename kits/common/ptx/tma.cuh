// ptxkit TMA (the tensor memory accelerator): host-side tensor-map creation and the bulk tensor copies. The
// contracts named here are sections of kits/common/contracts.md.
// Coordinates are element indices, innermost dimension first (c0 = column of a row-major matrix). Loads complete
// on an mbarrier (contract "expect_tx accounting"); stores and reductions complete in bulk groups (contract "TMA
// stores"). The device functions take the address of a tensor map: a `const __grid_constant__ CUtensorMap`
// parameter, a `__constant__` variable, or a map in global memory after fence_tensormap_acquire (contract "tensor
// maps").
#pragma once

#include <cuda.h>           // CUtensorMap and its enums (types only: nothing here links the driver library)
#include <cudaTypedefs.h>   // PFN_cuTensorMapEncodeTiled_v12000
#include <cuda_runtime.h>

#include "common.cuh"

namespace ptxkit {

// ================================================================ host

// Host: cuTensorMapEncodeTiled, fetched through the CUDA runtime (no libcuda link, no dlopen); nullptr if the
// driver lacks it. Contract: "tensor maps".
inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found) !=
          cudaSuccess ||
      found != cudaDriverEntryPointSuccess)
    return nullptr;
  return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
}

// Host: encodes a tiled tensor map of `rank` (1..5) dimensions. `dims` and `box` are innermost first;
// `strides_bytes[i]` is the byte stride of dimension i+1 (rank-1 values, each a multiple of 16). Out-of-bounds
// elements load as zero and are skipped by stores. Element strides are all 1. Returns cudaSuccess or
// cudaErrorInvalidValue.
// Contract: "tensor maps" and "swizzle".
inline cudaError_t make_tensor_map(CUtensorMap* map, CUtensorMapDataType dtype, uint32_t rank, const void* global,
                                   const uint64_t* dims, const uint64_t* strides_bytes, const uint32_t* box,
                                   CUtensorMapSwizzle swizzle,
                                   CUtensorMapL2promotion l2 = CU_TENSOR_MAP_L2_PROMOTION_L2_256B) {
  PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
  if (encode == nullptr) return cudaErrorInvalidValue;
  cuuint32_t element_strides[5] = {1, 1, 1, 1, 1};
  const cuuint64_t no_strides[1] = {0};  // rank 1 has no strides, but the driver rejects a null array
  const cuuint64_t* strides = rank > 1 ? reinterpret_cast<const cuuint64_t*>(strides_bytes) : no_strides;
  CUresult r = encode(map, dtype, rank, const_cast<void*>(global), reinterpret_cast<const cuuint64_t*>(dims),
                      strides, reinterpret_cast<const cuuint32_t*>(box),
                      element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, l2,
                      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

// Host: tensor map of a row-major bf16 matrix [rows][cols] (row pitch `ld` elements, default cols) with boxes of
// box_rows x box_cols. For 128B swizzle box_cols must be 64 (128 bytes). Contract: "tensor maps" and "swizzle".
inline cudaError_t make_tensor_map_2d_bf16(CUtensorMap* map, const __nv_bfloat16* global, uint64_t rows,
                                           uint64_t cols, uint32_t box_rows, uint32_t box_cols,
                                           CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_128B,
                                           uint64_t ld = 0) {
  const uint64_t dims[2] = {cols, rows};
  const uint64_t strides[1] = {(ld ? ld : cols) * sizeof(__nv_bfloat16)};
  const uint32_t box[2] = {box_cols, box_rows};
  return make_tensor_map(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, global, dims, strides, box, swizzle);
}

// Host: tensor map of a [B][S][H][D] bf16 tensor (row-major, D contiguous: the attention ABI's Q, K, V and O), with
// boxes of `box_rows` rows of S and `box_cols` of D, for one (b, h): dims {D, H, S, B}, box {box_cols, 1,
// box_rows, 1}. Load box (d0, h, s0, b) with tma_load_4d(dst, map, bar, d0, h, s0, b): a box_rows x box_cols tile,
// rows past S and columns past D zero-filled (stores clip them). D must be a multiple of 8 (16-byte strides); for
// 128B swizzle box_cols is 64, and D > 64 takes ceil(D / 64) boxes. Contract: "tensor maps" and "swizzle".
inline cudaError_t make_tensor_map_bshd_bf16(CUtensorMap* map, const __nv_bfloat16* global, uint64_t B, uint64_t S,
                                             uint64_t H, uint64_t D, uint32_t box_rows, uint32_t box_cols = 64,
                                             CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_128B) {
  const uint64_t dims[4] = {D, H, S, B};
  const uint64_t strides[3] = {D * sizeof(__nv_bfloat16), H * D * sizeof(__nv_bfloat16),
                               S * H * D * sizeof(__nv_bfloat16)};
  const uint32_t box[4] = {box_cols, 1, box_rows, 1};
  return make_tensor_map(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 4, global, dims, strides, box, swizzle);
}

// ================================================================ device, thread scope (one thread issues)

// Generic address of a tensor map (a __grid_constant__ parameter, or in constant or global memory), as the copy
// instructions take it. Contract: "tensor maps".
__device__ __forceinline__ uint64_t tmap_addr(const CUtensorMap* map) { return reinterpret_cast<uint64_t>(map); }

// Acquires a tensor map in global memory that ordinary stores (or a host copy) wrote, for this thread's later TMA
// instructions (fence.proxy.tensormap::generic.acquire.gpu over its 128 bytes). Once per CTA before first use, then
// __syncthreads() if other threads issue the copies; again only after the map changes. Contract: "tensor maps".
__device__ __forceinline__ void fence_tensormap_acquire(const CUtensorMap* map) {
  asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" ::"l"(tmap_addr(map)) : "memory");
}

// Copies `bytes` contiguous bytes of global memory at `src` into shared `dst` with the bulk copy engine (no
// tensor map: one row of a gathered layout, such as a paged KV cache's token row); completes `bytes` of
// transaction on `bar`. `src`, `dst` and `bytes` are multiples of 16. SASS UBLKCP. Contract: "expect_tx
// accounting" and "bulk copies".
__device__ __forceinline__ void bulk_load(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                   smem_addr(dst)),
               "l"(src), "r"(bytes), "r"(smem_addr(bar))
               : "memory");
}

// Loads the 1D box at (c0) into shared `dst`; completes `bytes` of transaction on `bar`. Contract: "expect_tx
// accounting".
__device__ __forceinline__ void tma_load_1d(void* dst, const CUtensorMap* map, uint64_t* bar, int32_t c0) {
  asm volatile(
      "cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3}], [%2];" ::"r"(
          smem_addr(dst)),
      "l"(tmap_addr(map)), "r"(smem_addr(bar)), "r"(c0)
      : "memory");
}

// Loads the 2D box at (c0, c1) into shared `dst`, completing on `bar`. Contract: "expect_tx accounting".
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, uint64_t* bar, int32_t c0,
                                            int32_t c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], "
      "[%2];" ::"r"(smem_addr(dst)),
      "l"(tmap_addr(map)), "r"(smem_addr(bar)), "r"(c0), "r"(c1)
      : "memory");
}

// Loads the 3D box at (c0, c1, c2) into shared `dst`, completing on `bar`. Contract: "expect_tx accounting".
__device__ __forceinline__ void tma_load_3d(void* dst, const CUtensorMap* map, uint64_t* bar, int32_t c0,
                                            int32_t c1, int32_t c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], "
      "[%2];" ::"r"(smem_addr(dst)),
      "l"(tmap_addr(map)), "r"(smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

// Loads the 4D box at (c0..c3) into shared `dst`, completing on `bar`. Contract: "expect_tx accounting".
__device__ __forceinline__ void tma_load_4d(void* dst, const CUtensorMap* map, uint64_t* bar, int32_t c0,
                                            int32_t c1, int32_t c2, int32_t c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, "
      "%6}], [%2];" ::"r"(smem_addr(dst)),
      "l"(tmap_addr(map)), "r"(smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
      : "memory");
}

// Loads the 5D box at (c0..c4) into shared `dst`, completing on `bar`. Contract: "expect_tx accounting".
__device__ __forceinline__ void tma_load_5d(void* dst, const CUtensorMap* map, uint64_t* bar, int32_t c0,
                                            int32_t c1, int32_t c2, int32_t c3, int32_t c4) {
  asm volatile(
      "cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, "
      "%6, %7}], [%2];" ::"r"(smem_addr(dst)),
      "l"(tmap_addr(map)), "r"(smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
      : "memory");
}

// Loads the 2D box at (c0, c1) once and writes it to the same shared offset `dst` (and completes on the same
// barrier offset `bar`) in every CTA whose bit is set in `cta_mask`. Contract: "clusters" and "expect_tx
// accounting".
__device__ __forceinline__ void tma_load_2d_multicast(void* dst, const CUtensorMap* map, uint64_t* bar,
                                                      uint16_t cta_mask, int32_t c0, int32_t c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], "
      "[%1, {%4, %5}], [%2], %3;" ::"r"(smem_addr(dst)),
      "l"(tmap_addr(map)), "r"(smem_addr(bar)), "h"(cta_mask), "r"(c0), "r"(c1)
      : "memory");
}

// Stores shared `src` to the 1D box at (c0); part of the next bulk group. Box coordinates must not be negative;
// the parts past the upper edges are skipped (as for every tma_store_*). Contract: "TMA stores".
__device__ __forceinline__ void tma_store_1d(const CUtensorMap* map, const void* src, int32_t c0) {
  asm volatile("cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group [%0, {%2}], [%1];" ::"l"(tmap_addr(map)),
               "r"(smem_addr(src)), "r"(c0)
               : "memory");
}

// Stores shared `src` to the 2D box at (c0, c1); out-of-bounds parts are skipped. Contract: "TMA stores".
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, const void* src, int32_t c0, int32_t c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%2, %3}], [%1];" ::"l"(
                   tmap_addr(map)),
               "r"(smem_addr(src)), "r"(c0), "r"(c1)
               : "memory");
}

// Stores shared `src` to the 3D box at (c0, c1, c2). Contract: "TMA stores".
__device__ __forceinline__ void tma_store_3d(const CUtensorMap* map, const void* src, int32_t c0, int32_t c1,
                                             int32_t c2) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4}], [%1];" ::"l"(
                   tmap_addr(map)),
               "r"(smem_addr(src)), "r"(c0), "r"(c1), "r"(c2)
               : "memory");
}

// Stores shared `src` to the 4D box at (c0..c3). Contract: "TMA stores".
__device__ __forceinline__ void tma_store_4d(const CUtensorMap* map, const void* src, int32_t c0, int32_t c1,
                                             int32_t c2, int32_t c3) {
  asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4, %5}], [%1];" ::"l"(
                   tmap_addr(map)),
               "r"(smem_addr(src)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
               : "memory");
}

// Stores shared `src` to the 5D box at (c0..c4). Contract: "TMA stores".
__device__ __forceinline__ void tma_store_5d(const CUtensorMap* map, const void* src, int32_t c0, int32_t c1,
                                             int32_t c2, int32_t c3, int32_t c4) {
  asm volatile("cp.async.bulk.tensor.5d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4, %5, %6}], [%1];" ::"l"(
                   tmap_addr(map)),
               "r"(smem_addr(src)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
               : "memory");
}

// Adds shared `src` element-wise into the 2D box at (c0, c1) of global memory (atomic per element; e.g. split-K).
// Contract: "TMA stores".
__device__ __forceinline__ void tma_reduce_add_2d(const CUtensorMap* map, const void* src, int32_t c0,
                                                  int32_t c1) {
  asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3}], [%1];" ::"l"(
                   tmap_addr(map)),
               "r"(smem_addr(src)), "r"(c0), "r"(c1)
               : "memory");
}

// Adds shared `src` element-wise into the 3D box at (c0, c1, c2) of global memory (atomic per element, like
// tma_reduce_add_2d: several CTAs may add into the same box). Contract: "TMA stores".
__device__ __forceinline__ void tma_reduce_add_3d(const CUtensorMap* map, const void* src, int32_t c0, int32_t c1,
                                                  int32_t c2) {
  asm volatile("cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3, %4}], [%1];" ::"l"(
                   tmap_addr(map)),
               "r"(smem_addr(src)), "r"(c0), "r"(c1), "r"(c2)
               : "memory");
}

// Adds shared `src` element-wise into the 4D box at (c0..c3) of global memory (atomic per element): e.g. an fp32
// accumulator of a [B][S][H][D] tensor that several CTAs add partial sums into. Contract: "TMA stores".
__device__ __forceinline__ void tma_reduce_add_4d(const CUtensorMap* map, const void* src, int32_t c0, int32_t c1,
                                                  int32_t c2, int32_t c3) {
  asm volatile(
      "cp.reduce.async.bulk.tensor.4d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3, %4, %5}], [%1];" ::"l"(
          tmap_addr(map)),
      "r"(smem_addr(src)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
      : "memory");
}

// Closes the bulk group of this thread's TMA stores issued since the last commit. Contract: "TMA stores".
__device__ __forceinline__ void tma_store_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }

// Waits until at most N of this thread's bulk groups still READ shared memory (the source may then be reused;
// the global writes may still be in flight). Contract: "TMA stores".
template <int N>
__device__ __forceinline__ void tma_store_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

// Waits until at most N of this thread's bulk groups are incomplete (their global writes done and visible to
// this thread). Contract: "TMA stores".
template <int N>
__device__ __forceinline__ void tma_store_wait() {
  asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}

// Prefetches the 2D box at (c0, c1) into L2 (no shared memory, no barrier). Contract: "tensor maps".
__device__ __forceinline__ void tma_prefetch_2d(const CUtensorMap* map, int32_t c0, int32_t c1) {
  asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];" ::"l"(tmap_addr(map)), "r"(c0),
               "r"(c1)
               : "memory");
}

// Prefetches the tensor map itself (its 128-byte descriptor) ahead of the first copy. Contract: "tensor maps".
__device__ __forceinline__ void prefetch_tensormap(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(tmap_addr(map)) : "memory");
}

}  // namespace ptxkit
