// ptxkit::blackwell tensor memory (TMEM): the typed address, allocation (tcgen05.alloc / dealloc /
// relinquish_alloc_permit), and the moves between TMEM and registers (tcgen05.ld / st and their waits).
// TMEM is 128 lanes x 512 columns of 32-bit cells per SM (256 KB); an accumulator of tcgen05.mma lives there.
// The contracts named here are sections of kits/blackwell/contracts.md, or of kits/common/contracts.md where
// marked "(common)".
#pragma once

#include "common.cuh"

namespace ptxkit::blackwell {

using namespace ptxkit;

// ---------------------------------------------------------------- addresses (no instruction)

// A tensor-memory address: bits 31-16 the lane (row, 0..127), bits 15-0 the column (0..511). tcgen05.alloc
// returns the base of an allocation (lane 0, its first column). Contract: "tensor memory addresses".
struct TmemAddr {
  uint32_t raw;
  __host__ __device__ constexpr uint32_t lane() const { return raw >> 16; }
  __host__ __device__ constexpr uint32_t column() const { return raw & 0xFFFFu; }
  // The address `lanes` lanes down and `columns` columns right of this one (no wrap check).
  __host__ __device__ constexpr TmemAddr offset(uint32_t lanes, uint32_t columns) const {
    return TmemAddr{raw + (lanes << 16) + columns};
  }
};

// The address of (lane, column). Contract: "tensor memory addresses".
__host__ __device__ constexpr TmemAddr tmem_addr(uint32_t lane, uint32_t column) {
  return TmemAddr{(lane << 16) | (column & 0xFFFFu)};
}

// The allocation's base address, read from the shared-memory word tcgen05.alloc wrote. Read it only after the
// allocating warp's fence and a thread barrier (see tmem_alloc). Contract: "tensor memory allocation".
__device__ __forceinline__ TmemAddr tmem_base(const uint32_t* slot) {
  return TmemAddr{*reinterpret_cast<const volatile uint32_t*>(slot)};
}

// ---------------------------------------------------------------- warp scope: allocation

// Allocates NCOLS columns (a power of two, 32 .. 512) of this CTA's TMEM (all 128 lanes) and writes the base
// address to the shared-memory word `slot`. One whole warp executes it, converged; it blocks until the columns are
// free. With CTA_GROUP = 2 one warp in each CTA of the pair executes it, with the same NCOLS and the same `slot`
// offset. Then: tcgen05_fence_before_thread_sync(), a barrier, tcgen05_fence_after_thread_sync(), tmem_base(slot).
// Contract: "tensor memory allocation" and "cta_group consistency".
template <uint32_t NCOLS, int CTA_GROUP = 1>
__device__ __forceinline__ void tmem_alloc(uint32_t* slot) {
  static_assert(NCOLS >= 32 && NCOLS <= 512 && (NCOLS & (NCOLS - 1)) == 0, "tmem_alloc: a power of two, 32..512");
  static_assert(CTA_GROUP == 1 || CTA_GROUP == 2, "cta_group::1 or ::2");
  if constexpr (CTA_GROUP == 1)
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;" ::"r"(smem_addr(slot)),
                 "n"(NCOLS)
                 : "memory");
  else
    asm volatile("tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%0], %1;" ::"r"(smem_addr(slot)),
                 "n"(NCOLS)
                 : "memory");
}

// Frees the NCOLS columns starting at `base` (an address tmem_alloc returned, with the same NCOLS and CTA_GROUP).
// One whole warp executes it, after every tcgen05 operation on those columns has completed; every allocation is
// freed before the kernel exits. Contract: "tensor memory allocation".
template <uint32_t NCOLS, int CTA_GROUP = 1>
__device__ __forceinline__ void tmem_dealloc(TmemAddr base) {
  static_assert(NCOLS >= 32 && NCOLS <= 512 && (NCOLS & (NCOLS - 1)) == 0, "tmem_dealloc: a power of two, 32..512");
  static_assert(CTA_GROUP == 1 || CTA_GROUP == 2, "cta_group::1 or ::2");
  if constexpr (CTA_GROUP == 1)
    asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;" ::"r"(base.raw), "n"(NCOLS) : "memory");
  else
    asm volatile("tcgen05.dealloc.cta_group::2.sync.aligned.b32 %0, %1;" ::"r"(base.raw), "n"(NCOLS) : "memory");
}

// Gives up this CTA's right to allocate TMEM (so CTAs waiting in tcgen05.alloc on this SM can be served); no
// tmem_alloc of this CTA may follow. One whole warp executes it. Contract: "tensor memory allocation".
template <int CTA_GROUP = 1>
__device__ __forceinline__ void tmem_relinquish_alloc_permit() {
  static_assert(CTA_GROUP == 1 || CTA_GROUP == 2, "cta_group::1 or ::2");
  if constexpr (CTA_GROUP == 1)
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
  else
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;" ::: "memory");
}

// ---------------------------------------------------------------- warp scope: TMEM <-> registers

#define PTXKIT_TM_R1 "%0"
#define PTXKIT_TM_R2 "%0, %1"
#define PTXKIT_TM_R4 "%0, %1, %2, %3"
#define PTXKIT_TM_R8 "%0, %1, %2, %3, %4, %5, %6, %7"
#define PTXKIT_TM_R16 PTXKIT_TM_R8 \
  ", %8, %9, %10, %11, %12, %13, %14, %15"
#define PTXKIT_TM_R32 PTXKIT_TM_R16 \
  ", %16, %17, %18, %19, %20, %21, %22, %23" \
  ", %24, %25, %26, %27, %28, %29, %30, %31"
#define PTXKIT_TM_R64 PTXKIT_TM_R32 \
  ", %32, %33, %34, %35, %36, %37, %38, %39" \
  ", %40, %41, %42, %43, %44, %45, %46, %47" \
  ", %48, %49, %50, %51, %52, %53, %54, %55" \
  ", %56, %57, %58, %59, %60, %61, %62, %63"
#define PTXKIT_TM_R128 PTXKIT_TM_R64 \
  ", %64, %65, %66, %67, %68, %69, %70, %71" \
  ", %72, %73, %74, %75, %76, %77, %78, %79" \
  ", %80, %81, %82, %83, %84, %85, %86, %87" \
  ", %88, %89, %90, %91, %92, %93, %94, %95" \
  ", %96, %97, %98, %99, %100, %101, %102, %103" \
  ", %104, %105, %106, %107, %108, %109, %110, %111" \
  ", %112, %113, %114, %115, %116, %117, %118, %119" \
  ", %120, %121, %122, %123, %124, %125, %126, %127"
#define PTXKIT_TM_OUT1(r) "=r"(r[0])
#define PTXKIT_TM_OUT2(r) "=r"(r[0]), "=r"(r[1])
#define PTXKIT_TM_OUT4(r) "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
#define PTXKIT_TM_OUT8(r) "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7])
#define PTXKIT_TM_OUT16(r) PTXKIT_TM_OUT8(r), \
  "=r"(r[8]), "=r"(r[9]), "=r"(r[10]), "=r"(r[11]), "=r"(r[12]), "=r"(r[13]), "=r"(r[14]), "=r"(r[15])
#define PTXKIT_TM_OUT32(r) PTXKIT_TM_OUT16(r), \
  "=r"(r[16]), "=r"(r[17]), "=r"(r[18]), "=r"(r[19]), "=r"(r[20]), "=r"(r[21]), "=r"(r[22]), "=r"(r[23]), \
  "=r"(r[24]), "=r"(r[25]), "=r"(r[26]), "=r"(r[27]), "=r"(r[28]), "=r"(r[29]), "=r"(r[30]), "=r"(r[31])
#define PTXKIT_TM_OUT64(r) PTXKIT_TM_OUT32(r), \
  "=r"(r[32]), "=r"(r[33]), "=r"(r[34]), "=r"(r[35]), "=r"(r[36]), "=r"(r[37]), "=r"(r[38]), "=r"(r[39]), \
  "=r"(r[40]), "=r"(r[41]), "=r"(r[42]), "=r"(r[43]), "=r"(r[44]), "=r"(r[45]), "=r"(r[46]), "=r"(r[47]), \
  "=r"(r[48]), "=r"(r[49]), "=r"(r[50]), "=r"(r[51]), "=r"(r[52]), "=r"(r[53]), "=r"(r[54]), "=r"(r[55]), \
  "=r"(r[56]), "=r"(r[57]), "=r"(r[58]), "=r"(r[59]), "=r"(r[60]), "=r"(r[61]), "=r"(r[62]), "=r"(r[63])
#define PTXKIT_TM_OUT128(r) PTXKIT_TM_OUT64(r), \
  "=r"(r[64]), "=r"(r[65]), "=r"(r[66]), "=r"(r[67]), "=r"(r[68]), "=r"(r[69]), "=r"(r[70]), "=r"(r[71]), \
  "=r"(r[72]), "=r"(r[73]), "=r"(r[74]), "=r"(r[75]), "=r"(r[76]), "=r"(r[77]), "=r"(r[78]), "=r"(r[79]), \
  "=r"(r[80]), "=r"(r[81]), "=r"(r[82]), "=r"(r[83]), "=r"(r[84]), "=r"(r[85]), "=r"(r[86]), "=r"(r[87]), \
  "=r"(r[88]), "=r"(r[89]), "=r"(r[90]), "=r"(r[91]), "=r"(r[92]), "=r"(r[93]), "=r"(r[94]), "=r"(r[95]), \
  "=r"(r[96]), "=r"(r[97]), "=r"(r[98]), "=r"(r[99]), "=r"(r[100]), "=r"(r[101]), "=r"(r[102]), "=r"(r[103]), \
  "=r"(r[104]), "=r"(r[105]), "=r"(r[106]), "=r"(r[107]), "=r"(r[108]), "=r"(r[109]), "=r"(r[110]), "=r"(r[111]), \
  "=r"(r[112]), "=r"(r[113]), "=r"(r[114]), "=r"(r[115]), "=r"(r[116]), "=r"(r[117]), "=r"(r[118]), "=r"(r[119]), \
  "=r"(r[120]), "=r"(r[121]), "=r"(r[122]), "=r"(r[123]), "=r"(r[124]), "=r"(r[125]), "=r"(r[126]), "=r"(r[127])
#define PTXKIT_TM_IN1(r) "r"(r[0])
#define PTXKIT_TM_IN2(r) "r"(r[0]), "r"(r[1])
#define PTXKIT_TM_IN4(r) "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
#define PTXKIT_TM_IN8(r) "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]), "r"(r[4]), "r"(r[5]), "r"(r[6]), "r"(r[7])
#define PTXKIT_TM_IN16(r) PTXKIT_TM_IN8(r), \
  "r"(r[8]), "r"(r[9]), "r"(r[10]), "r"(r[11]), "r"(r[12]), "r"(r[13]), "r"(r[14]), "r"(r[15])
#define PTXKIT_TM_IN32(r) PTXKIT_TM_IN16(r), \
  "r"(r[16]), "r"(r[17]), "r"(r[18]), "r"(r[19]), "r"(r[20]), "r"(r[21]), "r"(r[22]), "r"(r[23]), \
  "r"(r[24]), "r"(r[25]), "r"(r[26]), "r"(r[27]), "r"(r[28]), "r"(r[29]), "r"(r[30]), "r"(r[31])
#define PTXKIT_TM_IN64(r) PTXKIT_TM_IN32(r), \
  "r"(r[32]), "r"(r[33]), "r"(r[34]), "r"(r[35]), "r"(r[36]), "r"(r[37]), "r"(r[38]), "r"(r[39]), \
  "r"(r[40]), "r"(r[41]), "r"(r[42]), "r"(r[43]), "r"(r[44]), "r"(r[45]), "r"(r[46]), "r"(r[47]), \
  "r"(r[48]), "r"(r[49]), "r"(r[50]), "r"(r[51]), "r"(r[52]), "r"(r[53]), "r"(r[54]), "r"(r[55]), \
  "r"(r[56]), "r"(r[57]), "r"(r[58]), "r"(r[59]), "r"(r[60]), "r"(r[61]), "r"(r[62]), "r"(r[63])
#define PTXKIT_TM_IN128(r) PTXKIT_TM_IN64(r), \
  "r"(r[64]), "r"(r[65]), "r"(r[66]), "r"(r[67]), "r"(r[68]), "r"(r[69]), "r"(r[70]), "r"(r[71]), \
  "r"(r[72]), "r"(r[73]), "r"(r[74]), "r"(r[75]), "r"(r[76]), "r"(r[77]), "r"(r[78]), "r"(r[79]), \
  "r"(r[80]), "r"(r[81]), "r"(r[82]), "r"(r[83]), "r"(r[84]), "r"(r[85]), "r"(r[86]), "r"(r[87]), \
  "r"(r[88]), "r"(r[89]), "r"(r[90]), "r"(r[91]), "r"(r[92]), "r"(r[93]), "r"(r[94]), "r"(r[95]), \
  "r"(r[96]), "r"(r[97]), "r"(r[98]), "r"(r[99]), "r"(r[100]), "r"(r[101]), "r"(r[102]), "r"(r[103]), \
  "r"(r[104]), "r"(r[105]), "r"(r[106]), "r"(r[107]), "r"(r[108]), "r"(r[109]), "r"(r[110]), "r"(r[111]), \
  "r"(r[112]), "r"(r[113]), "r"(r[114]), "r"(r[115]), "r"(r[116]), "r"(r[117]), "r"(r[118]), "r"(r[119]), \
  "r"(r[120]), "r"(r[121]), "r"(r[122]), "r"(r[123]), "r"(r[124]), "r"(r[125]), "r"(r[126]), "r"(r[127])

// Loads 32 lanes x N columns: thread t of the warp gets lane (taddr.lane() + t), r[j] = column taddr.column() + j.
// N = 1, 2, 4, ..., 128. Asynchronous: r is undefined until tmem_wait_ld(). The whole warp executes it with the
// same taddr, whose lane is the first of the warp's lane quarter (32 * (warp index % 4)).
// Contract: "lane quarters" and "tcgen05 ordering".
template <int N>
__device__ __forceinline__ void tmem_ld_32x32b(uint32_t (&r)[N], TmemAddr taddr) {
  static_assert(N == 1 || N == 2 || N == 4 || N == 8 || N == 16 || N == 32 || N == 64 || N == 128,
                "tmem_ld_32x32b: N = 1, 2, 4, ..., 128");
#define PTXKIT_TM_LD(NN)                                                                                          \
  if constexpr (N == NN)                                                                                          \
    asm volatile("tcgen05.ld.sync.aligned.32x32b.x" #NN ".b32 {" PTXKIT_TM_R##NN "}, [%" #NN "];"               \
                 : PTXKIT_TM_OUT##NN(r)                                                                           \
                 : "r"(taddr.raw)                                                                                 \
                 : "memory");
  PTXKIT_TM_LD(1) PTXKIT_TM_LD(2) PTXKIT_TM_LD(4) PTXKIT_TM_LD(8)
  PTXKIT_TM_LD(16) PTXKIT_TM_LD(32) PTXKIT_TM_LD(64) PTXKIT_TM_LD(128)
#undef PTXKIT_TM_LD
}

// Stores v to 32 lanes x N columns (the layout of tmem_ld_32x32b). Asynchronous: tmem_wait_st() before another
// thread or tcgen05.mma reads the cells. Contract: "lane quarters" and "tcgen05 ordering".
template <int N>
__device__ __forceinline__ void tmem_st_32x32b(TmemAddr taddr, const uint32_t (&v)[N]) {
  static_assert(N == 1 || N == 2 || N == 4 || N == 8 || N == 16 || N == 32 || N == 64 || N == 128,
                "tmem_st_32x32b: N = 1, 2, 4, ..., 128");
#define PTXKIT_TM_ST(NN)                                                                                          \
  if constexpr (N == NN)                                                                                          \
    asm volatile("tcgen05.st.sync.aligned.32x32b.x" #NN ".b32 [%" #NN "], {" PTXKIT_TM_R##NN "};"               \
                 :                                                                                                \
                 : PTXKIT_TM_IN##NN(v), "r"(taddr.raw)                                                            \
                 : "memory");
  PTXKIT_TM_ST(1) PTXKIT_TM_ST(2) PTXKIT_TM_ST(4) PTXKIT_TM_ST(8)
  PTXKIT_TM_ST(16) PTXKIT_TM_ST(32) PTXKIT_TM_ST(64) PTXKIT_TM_ST(128)
#undef PTXKIT_TM_ST
}

// Loads 16 lanes x (8 * X) columns, X = 1, 2, 4, ..., 32 repetitions of a 16-lane x 256-bit block, 4 registers per
// thread per block: for block b, r[4b], r[4b + 1] hold lane (taddr.lane() + t / 4), columns 8b + 2 (t % 4) and
// 8b + 2 (t % 4) + 1, and r[4b + 2], r[4b + 3] the same columns of the lane 8 below [PTX ISA: matrix fragments for
// shape .16x256b]. taddr's lane is the first or the 17th lane of the warp's quarter. Asynchronous, as
// tmem_ld_32x32b. Contract: "lane quarters" and "tcgen05 ordering".
template <int X>
__device__ __forceinline__ void tmem_ld_16x256b(uint32_t (&r)[4 * X], TmemAddr taddr) {
  static_assert(X == 1 || X == 2 || X == 4 || X == 8 || X == 16 || X == 32, "tmem_ld_16x256b: X = 1, 2, 4, ..., 32");
#define PTXKIT_TM_LD(XX, RR)                                                                                      \
  if constexpr (X == XX)                                                                                          \
    asm volatile("tcgen05.ld.sync.aligned.16x256b.x" #XX ".b32 {" PTXKIT_TM_R##RR "}, [%" #RR "];"              \
                 : PTXKIT_TM_OUT##RR(r)                                                                           \
                 : "r"(taddr.raw)                                                                                 \
                 : "memory");
  PTXKIT_TM_LD(1, 4) PTXKIT_TM_LD(2, 8) PTXKIT_TM_LD(4, 16)
  PTXKIT_TM_LD(8, 32) PTXKIT_TM_LD(16, 64) PTXKIT_TM_LD(32, 128)
#undef PTXKIT_TM_LD
}

// Stores v to 16 lanes x (8 * X) columns (the layout of tmem_ld_16x256b). Asynchronous, as tmem_st_32x32b.
// Contract: "lane quarters" and "tcgen05 ordering".
template <int X>
__device__ __forceinline__ void tmem_st_16x256b(TmemAddr taddr, const uint32_t (&v)[4 * X]) {
  static_assert(X == 1 || X == 2 || X == 4 || X == 8 || X == 16 || X == 32, "tmem_st_16x256b: X = 1, 2, 4, ..., 32");
#define PTXKIT_TM_ST(XX, RR)                                                                                      \
  if constexpr (X == XX)                                                                                          \
    asm volatile("tcgen05.st.sync.aligned.16x256b.x" #XX ".b32 [%" #RR "], {" PTXKIT_TM_R##RR "};"              \
                 :                                                                                                \
                 : PTXKIT_TM_IN##RR(v), "r"(taddr.raw)                                                            \
                 : "memory");
  PTXKIT_TM_ST(1, 4) PTXKIT_TM_ST(2, 8) PTXKIT_TM_ST(4, 16)
  PTXKIT_TM_ST(8, 32) PTXKIT_TM_ST(16, 64) PTXKIT_TM_ST(32, 128)
#undef PTXKIT_TM_ST
}

// Waits until every tmem_ld_* this thread issued has written its registers. Contract: "tcgen05 ordering".
__device__ __forceinline__ void tmem_wait_ld() { asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory"); }

// Waits until every tmem_st_* this thread issued has written tensor memory. Contract: "tcgen05 ordering".
__device__ __forceinline__ void tmem_wait_st() { asm volatile("tcgen05.wait::st.sync.aligned;" ::: "memory"); }

// Operand fence (emits no instruction): an empty asm that reads and writes every register of `r`, so the compiler
// moves no use of them above it. tmem_wait_ld names no registers; call this on the loaded registers right after
// it. Contract: "tcgen05 ordering" (operand fences).
template <int R>
__device__ __forceinline__ void tmem_fence_operand(uint32_t (&r)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+r"(r[i])::"memory");
}

}  // namespace ptxkit::blackwell
