// ptxkit::hopper wgmma: warpgroup matrix multiply-accumulate, bf16 x bf16 -> fp32, shape m64nNk16.
// All 128 threads of a warpgroup (4 consecutive warps, the first warp index a multiple of 4) execute each
// instruction wrapper (wgmma_fence, wgmma_bf16_*, wgmma_commit, wgmma_wait) together. Contract: "wgmma ordering",
// "accumulator registers", "descriptors" (sections of kits/hopper/contracts.md, as every contract named here unless
// marked "(common)": those are sections of kits/common/contracts.md), "swizzle" (common).
#pragma once

#include "common.cuh"
#include "matrix.cuh"  // pack_bf16x2

namespace ptxkit::hopper {

using namespace ptxkit;  // the shared wrappers (smem_addr, pack_bf16x2, ...)

// ---------------------------------------------------------------- shared-memory matrix descriptors

// Swizzle field of a descriptor (bits 62-63). It must match the swizzle the tile was written with (the
// tensor map's CU_TENSOR_MAP_SWIZZLE_*).
enum class DescSwizzle : uint32_t { none = 0, b128 = 1, b64 = 2, b32 = 3 };

// Builds a wgmma shared-memory matrix descriptor: bits 0-13 start address >> 4 (the address 16-byte aligned),
// bits 16-29 leading byte offset >> 4, bits 32-45 stride byte offset >> 4, bits 62-63 swizzle. It leaves the base
// offset (bits 49-51) at 0, so it assumes the swizzle pattern starts on its repeat boundary: a tile aligned to
// 1024 bytes for 128B swizzle (512 for 64B, 256 for 32B). Contract: "descriptors".
__device__ __forceinline__ uint64_t make_smem_desc(uint32_t smem, uint32_t lbo_bytes, uint32_t sbo_bytes,
                                                   DescSwizzle swizzle) {
  uint64_t desc = 0;
  desc |= static_cast<uint64_t>((smem & 0x3FFFF) >> 4);
  desc |= static_cast<uint64_t>((lbo_bytes & 0x3FFFF) >> 4) << 16;
  desc |= static_cast<uint64_t>((sbo_bytes & 0x3FFFF) >> 4) << 32;
  desc |= static_cast<uint64_t>(swizzle) << 62;
  return desc;
}

// Descriptor of a K-major tile written by TMA with 128B swizzle (rows of 64 bf16 = 128 bytes, 8-row groups
// 1024 bytes apart; the tile 1024-byte aligned, as make_smem_desc assumes). Advance along K with
// desc_advance(desc, 32 * k16_step). Contract: "descriptors" and "swizzle" (common).
__device__ __forceinline__ uint64_t make_desc_k128(const void* tile) {
  return make_smem_desc(smem_addr(tile), 16, 1024, DescSwizzle::b128);
}

// Descriptor of an MN-major tile written by TMA with 128B swizzle: 64-element (128-byte) rows along M or N, one
// row per K index; 8-K-row groups 1024 bytes apart (SBO); `mn_block_bytes` between consecutive 64-wide M/N blocks
// (LBO). Advance along K by 16 rows with desc_advance(desc, 2048). Use with TRANS = 1. Contract: "descriptors".
__device__ __forceinline__ uint64_t make_desc_mn128(const void* tile, uint32_t mn_block_bytes) {
  return make_smem_desc(smem_addr(tile), mn_block_bytes, 1024, DescSwizzle::b128);
}

// Moves a descriptor's start address by `bytes` (a multiple of 16). Contract: "descriptors" (advancing K).
__device__ __forceinline__ uint64_t desc_advance(uint64_t desc, uint32_t bytes) { return desc + (bytes >> 4); }

// ---------------------------------------------------------------- fragment layouts (no instruction)

// Accumulator element d[i] of thread t (0..127 in the warpgroup) holds D[row][col] of the 64 x N result.
// Contract: "accumulator layout" (each 8 x 8 block has the register layout of "ldmatrix and stmatrix" (common)).
__host__ __device__ constexpr int wgmma_acc_row(int i, int t) { return (t / 32) * 16 + (t % 32) / 4 + 8 * ((i / 2) % 2); }
__host__ __device__ constexpr int wgmma_acc_col(int i, int t) { return (i / 4) * 8 + (t % 4) * 2 + (i % 2); }

// Register-A fragment: a[r] of thread t holds A[row][k] (low half) and A[row][k + 1] (high half) of the 64 x 16
// A tile. Accumulator pairs (d[8j+0],d[8j+1]), (d[8j+2],d[8j+3]), (d[8j+4],d[8j+5]), (d[8j+6],d[8j+7]), packed to
// bf16x2, are exactly a[0..3] of the A tile made of result columns 16j..16j+15. Contract: "wgmma ordering"
// (wgmma_fence between building A registers and the wgmma that reads them).
__host__ __device__ constexpr int wgmma_a_row(int r, int t) { return (t / 32) * 16 + (t % 32) / 4 + 8 * (r % 2); }
__host__ __device__ constexpr int wgmma_a_col(int r, int t) { return (t % 4) * 2 + 8 * (r / 2); }

// Packs a 64 x N fp32 accumulator (layout wgmma_acc_row/col) into the register-A fragments of the 64 x N bf16
// matrix it holds: a[j] is the A operand of k-step j (columns 16j..16j+15), for a following wgmma_bf16_rs with
// K = N. This is how a result (attention's P) feeds the next product without a trip through shared memory.
// Contract: "register A from accumulators".
template <int N>
__device__ __forceinline__ void wgmma_acc_to_a(const float (&d)[N / 2], uint32_t (&a)[N / 16][4]) {
  static_assert(N % 16 == 0, "whole k-steps of 16 columns");
#pragma unroll
  for (int j = 0; j < N / 16; ++j)
#pragma unroll
    for (int r = 0; r < 4; ++r) a[j][r] = pack_bf16x2(d[8 * j + 2 * r], d[8 * j + 2 * r + 1]);
}

// ---------------------------------------------------------------- warpgroup scope

// Orders earlier accesses to the accumulator and A-fragment registers before the next wgmma that uses them (it
// orders registers only: shared memory written by ordinary stores needs fence_proxy_async_shared()). Needed before
// the first wgmma, and after any read or write of those registers by other instructions; wgmmas of the same shape
// chaining one accumulator need none between them. Contract: "wgmma ordering".
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }

// Closes the group of wgmma issued since the last commit. Contract: "wgmma ordering".
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }

// Waits until at most N committed groups are pending. Only then may the retired groups' accumulators and A
// registers be accessed and their shared operands overwritten. N <= 7 is CUTLASS's limit (PTX states none).
// Contract: "wgmma ordering".
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  static_assert(N >= 0 && N <= 7, "wgmma_wait: N in 0..7, as CUTLASS allows");
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

// Operand fence (emits no instruction): an empty asm that reads and writes every register of `r`, so the
// compiler moves no access to them across it. wgmma_fence / wgmma_commit / wgmma_wait name no registers; put this
// on the accumulators (and the RS form's A fragments) before wgmma_fence() and after each wgmma_wait<N>().
// Contract: "wgmma ordering" (operand fences).
template <int R>
__device__ __forceinline__ void wgmma_fence_operand(float (&r)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(r[i])::"memory");
}
template <int R>
__device__ __forceinline__ void wgmma_fence_operand(uint32_t (&r)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+r"(r[i])::"memory");
}

// The operand lists of the accumulator: N/2 floats per thread, named in groups of eight (%0..%7, %8..%15, ...).
// Every N below is a multiple of 16, so N/2 = 8 * G registers.
#define PTXKIT_ACC_STR_1 "%0, %1, %2, %3, %4, %5, %6, %7"
#define PTXKIT_ACC_STR_2 PTXKIT_ACC_STR_1 ", " "%8, %9, %10, %11, %12, %13, %14, %15"
#define PTXKIT_ACC_STR_3 PTXKIT_ACC_STR_2 ", " "%16, %17, %18, %19, %20, %21, %22, %23"
#define PTXKIT_ACC_STR_4 PTXKIT_ACC_STR_3 ", " "%24, %25, %26, %27, %28, %29, %30, %31"
#define PTXKIT_ACC_STR_5 PTXKIT_ACC_STR_4 ", " "%32, %33, %34, %35, %36, %37, %38, %39"
#define PTXKIT_ACC_STR_6 PTXKIT_ACC_STR_5 ", " "%40, %41, %42, %43, %44, %45, %46, %47"
#define PTXKIT_ACC_STR_7 PTXKIT_ACC_STR_6 ", " "%48, %49, %50, %51, %52, %53, %54, %55"
#define PTXKIT_ACC_STR_8 PTXKIT_ACC_STR_7 ", " "%56, %57, %58, %59, %60, %61, %62, %63"
#define PTXKIT_ACC_STR_9 PTXKIT_ACC_STR_8 ", " "%64, %65, %66, %67, %68, %69, %70, %71"
#define PTXKIT_ACC_STR_10 PTXKIT_ACC_STR_9 ", " "%72, %73, %74, %75, %76, %77, %78, %79"
#define PTXKIT_ACC_STR_11 PTXKIT_ACC_STR_10 ", " "%80, %81, %82, %83, %84, %85, %86, %87"
#define PTXKIT_ACC_STR_12 PTXKIT_ACC_STR_11 ", " "%88, %89, %90, %91, %92, %93, %94, %95"
#define PTXKIT_ACC_STR_13 PTXKIT_ACC_STR_12 ", " "%96, %97, %98, %99, %100, %101, %102, %103"
#define PTXKIT_ACC_STR_14 PTXKIT_ACC_STR_13 ", " "%104, %105, %106, %107, %108, %109, %110, %111"
#define PTXKIT_ACC_STR_15 PTXKIT_ACC_STR_14 ", " "%112, %113, %114, %115, %116, %117, %118, %119"
#define PTXKIT_ACC_STR_16 PTXKIT_ACC_STR_15 ", " "%120, %121, %122, %123, %124, %125, %126, %127"

#define PTXKIT_ACC_OPS_1(d) "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
#define PTXKIT_ACC_OPS_2(d) PTXKIT_ACC_OPS_1(d), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
#define PTXKIT_ACC_OPS_3(d) PTXKIT_ACC_OPS_2(d), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23])
#define PTXKIT_ACC_OPS_4(d) PTXKIT_ACC_OPS_3(d), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define PTXKIT_ACC_OPS_5(d) PTXKIT_ACC_OPS_4(d), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39])
#define PTXKIT_ACC_OPS_6(d) PTXKIT_ACC_OPS_5(d), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47])
#define PTXKIT_ACC_OPS_7(d) PTXKIT_ACC_OPS_6(d), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55])
#define PTXKIT_ACC_OPS_8(d) PTXKIT_ACC_OPS_7(d), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define PTXKIT_ACC_OPS_9(d) PTXKIT_ACC_OPS_8(d), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71])
#define PTXKIT_ACC_OPS_10(d) PTXKIT_ACC_OPS_9(d), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79])
#define PTXKIT_ACC_OPS_11(d) PTXKIT_ACC_OPS_10(d), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87])
#define PTXKIT_ACC_OPS_12(d) PTXKIT_ACC_OPS_11(d), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
#define PTXKIT_ACC_OPS_13(d) PTXKIT_ACC_OPS_12(d), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103])
#define PTXKIT_ACC_OPS_14(d) PTXKIT_ACC_OPS_13(d), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111])
#define PTXKIT_ACC_OPS_15(d) PTXKIT_ACC_OPS_14(d), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119])
#define PTXKIT_ACC_OPS_16(d) PTXKIT_ACC_OPS_15(d), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])

// wgmma_bf16_ss<N, TRANS_A, TRANS_B>: D[64 x N] (+)= A[64 x 16] * B[N x 16]^T, A and B in shared memory (given by
// descriptors), D in `d` (N/2 floats per thread, layout wgmma_acc_row/col). scale_d = 0 ignores the old D (first
// K step), 1 accumulates. TRANS_A/TRANS_B = 0: the tile is K-major; 1: M-/N-major. N = 16, 32, ..., 256.
// Asynchronous: wgmma_fence_operand(d), wgmma_fence, the wgmmas, wgmma_commit, wgmma_wait, wgmma_fence_operand(d).
// Contract: "wgmma ordering", "accumulator registers", "descriptors".
#define PTXKIT_WGMMA_SS(NN, G, DA, DB, SD, TA, TB)                                                              \
  if constexpr (N == NN) {                                                                                      \
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, " SD ", 0;\n\t"                                          \
                 "wgmma.mma_async.sync.aligned.m64n" #NN "k16.f32.bf16.bf16 {" PTXKIT_ACC_STR_##G "}, " DA ", " \
                 DB ", p, 1, 1, " TA ", " TB ";\n\t}"                                                           \
                 : PTXKIT_ACC_OPS_##G(d)                                                                        \
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TRANS_A), "n"(TRANS_B));                         \
  }

template <int N, int TRANS_A = 0, int TRANS_B = 0>
__device__ __forceinline__ void wgmma_bf16_ss(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b, int scale_d) {
  static_assert(N >= 16 && N <= 256 && N % 16 == 0, "this kit provides N = 16, 32, ..., 256");
  //              N   G  desc_a desc_b scale_d trans_a trans_b   (operand numbers after the 8G accumulators)
  PTXKIT_WGMMA_SS( 16,  1, "%8", "%9", "%10", "%11", "%12")
  PTXKIT_WGMMA_SS( 32,  2, "%16", "%17", "%18", "%19", "%20")
  PTXKIT_WGMMA_SS( 48,  3, "%24", "%25", "%26", "%27", "%28")
  PTXKIT_WGMMA_SS( 64,  4, "%32", "%33", "%34", "%35", "%36")
  PTXKIT_WGMMA_SS( 80,  5, "%40", "%41", "%42", "%43", "%44")
  PTXKIT_WGMMA_SS( 96,  6, "%48", "%49", "%50", "%51", "%52")
  PTXKIT_WGMMA_SS(112,  7, "%56", "%57", "%58", "%59", "%60")
  PTXKIT_WGMMA_SS(128,  8, "%64", "%65", "%66", "%67", "%68")
  PTXKIT_WGMMA_SS(144,  9, "%72", "%73", "%74", "%75", "%76")
  PTXKIT_WGMMA_SS(160, 10, "%80", "%81", "%82", "%83", "%84")
  PTXKIT_WGMMA_SS(176, 11, "%88", "%89", "%90", "%91", "%92")
  PTXKIT_WGMMA_SS(192, 12, "%96", "%97", "%98", "%99", "%100")
  PTXKIT_WGMMA_SS(208, 13, "%104", "%105", "%106", "%107", "%108")
  PTXKIT_WGMMA_SS(224, 14, "%112", "%113", "%114", "%115", "%116")
  PTXKIT_WGMMA_SS(240, 15, "%120", "%121", "%122", "%123", "%124")
  PTXKIT_WGMMA_SS(256, 16, "%128", "%129", "%130", "%131", "%132")
}
#undef PTXKIT_WGMMA_SS

// wgmma_bf16_rs<N, TRANS_B>: D[64 x N] (+)= A[64 x 16] * B[N x 16]^T with A in registers (`a`: four bf16x2 per
// thread, layout wgmma_a_row/col) and B in shared memory; only B can be MN-major. Otherwise as wgmma_bf16_ss, with
// `a` fenced like `d`. The A registers stay untouched until a wgmma_wait retires the wgmma that reads them.
// Contract: "wgmma ordering", "accumulator registers", "descriptors".
#define PTXKIT_WGMMA_RS(NN, G, A, DB, SD, TB)                                                                   \
  if constexpr (N == NN) {                                                                                      \
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, " SD ", 0;\n\t"                                          \
                 "wgmma.mma_async.sync.aligned.m64n" #NN "k16.f32.bf16.bf16 {" PTXKIT_ACC_STR_##G "}, {" A "}, " \
                 DB ", p, 1, 1, " TB ";\n\t}"                                                                   \
                 : PTXKIT_ACC_OPS_##G(d)                                                                        \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d), "n"(TRANS_B));        \
  }

template <int N, int TRANS_B = 0>
__device__ __forceinline__ void wgmma_bf16_rs(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t desc_b,
                                              int scale_d) {
  static_assert(N >= 16 && N <= 256 && N % 16 == 0, "this kit provides N = 16, 32, ..., 256");
  //              N   G  a registers          desc_b scale_d trans_b
  PTXKIT_WGMMA_RS( 16,  1, "%8, %9, %10, %11", "%12", "%13", "%14")
  PTXKIT_WGMMA_RS( 32,  2, "%16, %17, %18, %19", "%20", "%21", "%22")
  PTXKIT_WGMMA_RS( 48,  3, "%24, %25, %26, %27", "%28", "%29", "%30")
  PTXKIT_WGMMA_RS( 64,  4, "%32, %33, %34, %35", "%36", "%37", "%38")
  PTXKIT_WGMMA_RS( 80,  5, "%40, %41, %42, %43", "%44", "%45", "%46")
  PTXKIT_WGMMA_RS( 96,  6, "%48, %49, %50, %51", "%52", "%53", "%54")
  PTXKIT_WGMMA_RS(112,  7, "%56, %57, %58, %59", "%60", "%61", "%62")
  PTXKIT_WGMMA_RS(128,  8, "%64, %65, %66, %67", "%68", "%69", "%70")
  PTXKIT_WGMMA_RS(144,  9, "%72, %73, %74, %75", "%76", "%77", "%78")
  PTXKIT_WGMMA_RS(160, 10, "%80, %81, %82, %83", "%84", "%85", "%86")
  PTXKIT_WGMMA_RS(176, 11, "%88, %89, %90, %91", "%92", "%93", "%94")
  PTXKIT_WGMMA_RS(192, 12, "%96, %97, %98, %99", "%100", "%101", "%102")
  PTXKIT_WGMMA_RS(208, 13, "%104, %105, %106, %107", "%108", "%109", "%110")
  PTXKIT_WGMMA_RS(224, 14, "%112, %113, %114, %115", "%116", "%117", "%118")
  PTXKIT_WGMMA_RS(240, 15, "%120, %121, %122, %123", "%124", "%125", "%126")
  PTXKIT_WGMMA_RS(256, 16, "%128, %129, %130, %131", "%132", "%133", "%134")
}
#undef PTXKIT_WGMMA_RS

}  // namespace ptxkit::hopper
