// ptxkit warp-level matrix multiply-accumulate on the tensor cores (mma.sync, sm_80 and later): the MMA for work
// too narrow for a warpgroup's wgmma (fewer than 64 rows, as the 4 or 8 query heads that share a KV head in a
// decode). Contract: "mma.sync" (kits/common/contracts.md, as every contract here).
#pragma once

#include "common.cuh"

namespace ptxkit {

// ---------------------------------------------------------------- warp scope
// D += A B with A 16x16 (row-major), B 16x8 (column-major), bf16 in, fp32 accumulate, every lane of the warp
// taking part. With g = lane / 4 and c = 2 * (lane % 4), lane l holds:
//   a[0]: A[g][c, c+1]      a[1]: A[g+8][c, c+1]      a[2]: A[g][c+8, c+9]      a[3]: A[g+8][c+8, c+9]
//   b[0]: B[c, c+1][g]      b[1]: B[c+8, c+9][g]
//   d[0], d[1]: D[g][c, c+1]                          d[2], d[3]: D[g+8][c, c+1]
// (bf16 pairs with the lower index in the low half: pack_bf16x2, ldmatrix_x4). Contract: "mma.sync".
__device__ __forceinline__ void mma_m16n8k16_bf16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

}  // namespace ptxkit
