// ptxkit::hopper arithmetic on registers: the fast base-2 exponential and the row reductions over a wgmma
// accumulator, the pieces of a softmax (or any row-wise normalisation) done where wgmma leaves its result.
// Contract: "row reductions over accumulators" (kits/hopper/contracts.md, as every contract named here).
#pragma once

#include "common.cuh"

namespace ptxkit::hopper {

using namespace ptxkit;

// ---------------------------------------------------------------- thread scope

// 2^x by ex2.approx.ftz.f32: one MUFU instruction, approximate (softmax's tolerance, not a libm's), subnormal
// results flushed to zero; 2^-inf = +0, so a masked score of -inf gives a probability of exactly 0. Use
// e^x = 2^(x * log2(e)) and fold the log2(e) into the score's scale (one FFMA per element).
// Contract: "row reductions over accumulators".
__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// ---------------------------------------------------------------- warp scope

// The four lanes of a quad (lanes 4q .. 4q + 3) hold the same accumulator rows (wgmma_acc_row depends on t / 4
// only); these combine a value over them. All 32 lanes of the warp execute them. Contract: "row reductions over
// accumulators".
__device__ __forceinline__ float quad_max(float v) {
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
  return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
}
__device__ __forceinline__ float quad_sum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

// ---------------------------------------------------------------- warpgroup layout (the 64 x N accumulator)

// Each thread holds two rows of a 64 x N accumulator: row wgmma_acc_row(0, t) in the elements d[i] with
// (i / 2) % 2 == 0 (h = 0) and the row 8 below in the others (h = 1). `row[h]` below is indexed the same way.

// row[h] = max(row[h], the largest element of row h over all N columns): the whole row, combined over the quad.
// Contract: "row reductions over accumulators".
template <int N>
__device__ __forceinline__ void acc_row_max(const float (&d)[N / 2], float (&row)[2]) {
  float m[2] = {row[0], row[1]};
#pragma unroll
  for (int i = 0; i < N / 2; ++i) m[(i / 2) % 2] = fmaxf(m[(i / 2) % 2], d[i]);
  row[0] = quad_max(m[0]);
  row[1] = quad_max(m[1]);
}

// row[h] += the sum of this thread's elements of row h: a quarter of the row. Partial sums may be carried across
// many tiles and combined once with quad_sum at the end. Contract: "row reductions over accumulators".
template <int N>
__device__ __forceinline__ void acc_row_sum_partial(const float (&d)[N / 2], float (&row)[2]) {
#pragma unroll
  for (int i = 0; i < N / 2; ++i) row[(i / 2) % 2] += d[i];
}

// d *= factor[h] for every element of row h (the online softmax's rescaling of its output accumulator).
// Contract: "row reductions over accumulators".
template <int N>
__device__ __forceinline__ void acc_row_scale(float (&d)[N / 2], const float (&factor)[2]) {
#pragma unroll
  for (int i = 0; i < N / 2; ++i) d[i] *= factor[(i / 2) % 2];
}

}  // namespace ptxkit::hopper
