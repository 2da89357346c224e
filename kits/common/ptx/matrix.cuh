// ptxkit matrix moves between registers and shared memory (ldmatrix / stmatrix, 8x8 b16 matrices) and the bf16
// packing that feeds them. Contract: "ldmatrix and stmatrix" (kits/common/contracts.md, as every contract here).
#pragma once

#include "common.cuh"

namespace ptxkit {

// ---------------------------------------------------------------- thread scope

// Packs two floats into a bf16x2 register, round-to-nearest-even: `lo` in bits 0-15, `hi` in bits 16-31 (the
// lower column of a fragment pair goes in `lo`). Contract: "ldmatrix and stmatrix".
__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi) {
  uint32_t r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// ---------------------------------------------------------------- warp scope
// x4: four 8x8 matrices of 16-bit elements. Lane l gives the shared address of row (l % 8) of matrix (l / 8)
// (16 contiguous bytes, 16-byte aligned). In register r[m] of lane l sits row (l / 4), columns 2 * (l % 4) and
// 2 * (l % 4) + 1 of matrix m (the lower column in the low half). The .trans forms exchange rows and columns.

// Loads four 8x8 b16 matrices from shared memory into r[0..3]. Contract: "ldmatrix and stmatrix".
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void* row_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(row_addr))
               : "memory");
}

// Loads four 8x8 b16 matrices transposed: r[m] of lane l holds column (l / 4), rows 2 * (l % 4) and
// 2 * (l % 4) + 1 of matrix m. Contract: "ldmatrix and stmatrix".
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const void* row_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(row_addr))
               : "memory");
}

// Stores r[0..3] as four 8x8 b16 matrices to shared memory (the inverse of ldmatrix_x4). Contract: "ldmatrix and
// stmatrix" and, when TMA or the tensor cores read the result, "proxy fences".
__device__ __forceinline__ void stmatrix_x4(void* row_addr, const uint32_t (&r)[4]) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(smem_addr(row_addr)),
               "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
               : "memory");
}

// Stores r[0..3] transposed (the inverse of ldmatrix_x4_trans). Contract: "ldmatrix and stmatrix".
__device__ __forceinline__ void stmatrix_x4_trans(void* row_addr, const uint32_t (&r)[4]) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(smem_addr(row_addr)),
               "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
               : "memory");
}

}  // namespace ptxkit
