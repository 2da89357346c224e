// ptxkit::blackwell descriptors of tcgen05.mma (no instructions): the 64-bit shared-memory matrix descriptor of an
// A or B tile (Blackwell's format, which differs from wgmma's in bits 46-48 and 61-63) and the 32-bit instruction
// descriptor of .kind::f16 (bf16 x bf16 -> fp32). Both are plain bit packing, `constexpr` where the inputs are.
// The contracts named here are sections of kits/blackwell/contracts.md, or of kits/common/contracts.md where
// marked "(common)".
#pragma once

#include "common.cuh"

namespace ptxkit::blackwell {

using namespace ptxkit;

// ---------------------------------------------------------------- shared-memory matrix descriptor
// [PTX ISA: tcgen05, shared memory descriptor] bits:
//   0-13  matrix start address, (addr & 0x3FFFF) >> 4      14-15 reserved (0)
//   16-29 leading dimension byte offset (LBO) >> 4         30-31 reserved (0)
//   32-45 stride dimension byte offset (SBO) >> 4          46-48 fixed 0b001
//   49-51 matrix base offset                               52    LBO mode: 0 = byte offset (relative)
//   53-60 fixed 0                                          61-63 swizzling mode (Tcgen05Swizzle)

// Swizzling mode, bits 61-63. It must match the swizzle the tile was written with (the tensor map's
// CU_TENSOR_MAP_SWIZZLE_*: 128B -> b128, 64B -> b64, 32B -> b32). Values 3, 5 and 7 are invalid.
// Contract: "shared memory descriptors".
enum class Tcgen05Swizzle : uint32_t { none = 0, b128_base32b = 1, b128 = 2, b64 = 4, b32 = 6 };

// Builds a tcgen05 shared-memory descriptor. `smem` (a shared-window address, smem_addr(tile)), `lbo_bytes` and
// `sbo_bytes` are 16-byte multiples; `base_offset` is 0 when the tile starts on its swizzle pattern's repeat
// boundary (1024 bytes for 128B swizzle, 512 for 64B, 256 for 32B), else (start >> 7) & 7. LBO mode 0 (relative).
// Contract: "shared memory descriptors".
__host__ __device__ constexpr uint64_t make_tcgen05_smem_desc(uint32_t smem, uint32_t lbo_bytes, uint32_t sbo_bytes,
                                                              Tcgen05Swizzle swizzle, uint32_t base_offset = 0) {
  return static_cast<uint64_t>((smem & 0x3FFFFu) >> 4)                 // bits 0-13
         | static_cast<uint64_t>((lbo_bytes & 0x3FFFFu) >> 4) << 16    // bits 16-29
         | static_cast<uint64_t>((sbo_bytes & 0x3FFFFu) >> 4) << 32    // bits 32-45
         | static_cast<uint64_t>(1) << 46                              // bits 46-48 = 0b001
         | static_cast<uint64_t>(base_offset & 7u) << 49               // bits 49-51
         | static_cast<uint64_t>(swizzle) << 61;                       // bits 61-63
}

// Descriptor of a K-major bf16 tile written by TMA with 128B swizzle: rows of 64 bf16 (128 bytes), one per M/N
// index, 8-row groups 1024 bytes apart (SBO = 1024; LBO is not used by swizzled K-major layouts, set to 16), the
// tile 1024-byte aligned. Step K by 16 (one kind::f16 MMA) with tcgen05_desc_advance(desc, 32 * k).
// Contract: "shared memory descriptors" and "swizzle" (common).
__device__ __forceinline__ uint64_t make_tcgen05_desc_k128(const void* tile) {
  return make_tcgen05_smem_desc(smem_addr(tile), 16, 1024, Tcgen05Swizzle::b128);
}

// Descriptor of an MN-major bf16 tile written by TMA with 128B swizzle: rows of 64 M/N elements (128 bytes), one
// per K index; 8-K-row groups 1024 bytes apart (SBO); `mn_block_bytes` between consecutive 64-wide M/N blocks
// (LBO). Step K by 16 rows with tcgen05_desc_advance(desc, 2048). Use with the MN-major bit of the instruction
// descriptor. Contract: "shared memory descriptors" and "swizzle" (common).
__device__ __forceinline__ uint64_t make_tcgen05_desc_mn128(const void* tile, uint32_t mn_block_bytes) {
  return make_tcgen05_smem_desc(smem_addr(tile), mn_block_bytes, 1024, Tcgen05Swizzle::b128);
}

// Moves a descriptor's start address by `bytes` (a multiple of 16; the result stays inside the 256 KB window).
// Contract: "shared memory descriptors" (advancing K).
__host__ __device__ constexpr uint64_t tcgen05_desc_advance(uint64_t desc, uint32_t bytes) {
  return desc + (bytes >> 4);
}

// ---------------------------------------------------------------- instruction descriptor, .kind::f16
// [PTX ISA: tcgen05, instruction descriptor, table for .kind::tf32, .kind::f16, .kind::f8f6f4 and .kind::i8] bits:
//   0-1 sparsity selector (0)   2 sparsity (0 = dense)   3 saturate (0)   4-5 D type (F16 = 0, F32 = 1)
//   6 reserved   7-9 A type (F16 = 0, BF16 = 1)   10-12 B type (F16 = 0, BF16 = 1)   13 negate A   14 negate B
//   15 transpose A (0 = K-major, 1 = MN-major)   16 transpose B   17-22 N >> 3   23 reserved   24-28 M >> 4
//   29 reserved   30-31 maximum shift (.ws only, 0)

// The instruction descriptor of a dense bf16 x bf16 -> fp32 tcgen05.mma.kind::f16 of shape M x N x 16, no negation.
// `a_mn_major` / `b_mn_major`: the tile is MN-major (transposed) instead of K-major. M is the whole instruction's
// M: with cta_group::2 it spans both CTAs of the pair. Contract: "instruction descriptor".
__host__ __device__ constexpr uint32_t make_idesc_bf16_f32(uint32_t m, uint32_t n, bool a_mn_major = false,
                                                           bool b_mn_major = false) {
  return (1u << 4)                                 // D type F32
         | (1u << 7)                               // A type BF16
         | (1u << 10)                              // B type BF16
         | (static_cast<uint32_t>(a_mn_major) << 15)
         | (static_cast<uint32_t>(b_mn_major) << 16)
         | ((n >> 3) << 17)                        // bits 17-22
         | ((m >> 4) << 24);                       // bits 24-28
}

// As make_idesc_bf16_f32(M, N, ...), checking the shape at compile time against the shapes of kind::f16 that the
// kit supports: cta_group::1 M = 64 (N = 8 .. 256 in steps of 8) or M = 128 (N = 16 .. 256 in steps of 16);
// cta_group::2 M = 128 or 256 (N = 16 .. 256 in steps of 16). Contract: "instruction descriptor".
template <int M, int N, bool A_MN_MAJOR = false, bool B_MN_MAJOR = false, int CTA_GROUP = 1>
__host__ __device__ constexpr uint32_t make_idesc_bf16_f32() {
  static_assert(CTA_GROUP == 1 || CTA_GROUP == 2, "cta_group::1 or ::2");
  static_assert(CTA_GROUP == 2 || (M == 64 && N % 8 == 0 && N >= 8 && N <= 256) ||
                    (M == 128 && N % 16 == 0 && N >= 16 && N <= 256),
                "cta_group::1: M = 64 with N = 8..256 step 8, or M = 128 with N = 16..256 step 16");
  static_assert(CTA_GROUP == 1 || ((M == 128 || M == 256) && N % 16 == 0 && N >= 16 && N <= 256),
                "cta_group::2: M = 128 or 256, N = 16..256 step 16");
  return make_idesc_bf16_f32(M, N, A_MN_MAJOR, B_MN_MAJOR);
}

}  // namespace ptxkit::blackwell
