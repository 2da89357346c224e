// ptxkit::blackwell tcgen05 (5th-generation tensor core): the MMA with its accumulator in tensor memory, its
// completion (tcgen05.commit onto an mbarrier), the copy shared memory -> TMEM (tcgen05.cp), and the tcgen05
// fences around thread synchronisation. The contracts named here are sections of kits/blackwell/contracts.md, or
// of kits/common/contracts.md where marked "(common)".
//
// CTA_GROUP (1 or 2) picks .cta_group::1 (this CTA's tensor core) or .cta_group::2 (the pair of CTAs of
// kits/blackwell/ptx/cta_pair.cuh working as one); every tcgen05 instruction of a kernel uses the same value
// (contract "cta_group consistency").
#pragma once

#include "common.cuh"
#include "tmem.cuh"

namespace ptxkit::blackwell {

using namespace ptxkit;

// ---------------------------------------------------------------- thread scope: MMA (one thread issues)

// D[M x N] (+)= A[M x 16] * B[N x 16]^T with A and B bf16 in shared memory (descriptors from
// tcgen05_desc.cuh) and D fp32 in tensor memory at `d`; `idesc` from make_idesc_bf16_f32 gives M, N and the
// majorness. `accumulate` = 0 ignores D's old contents (the enable-input-d predicate is false: first K step),
// non-zero adds to them. One thread issues it (the others must not); asynchronous: its completion is observed
// through tcgen05_commit. Contract: "issue granularity", "mma operands", "commit and completion".
template <int CTA_GROUP = 1>
__device__ __forceinline__ void tcgen05_mma_bf16_ss(TmemAddr d, uint64_t a_desc, uint64_t b_desc, uint32_t idesc,
                                                    uint32_t accumulate) {
  static_assert(CTA_GROUP == 1 || CTA_GROUP == 2, "cta_group::1 or ::2");
  if constexpr (CTA_GROUP == 1)
    asm volatile(
        "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %4, 0;\n\t"
        "tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n\t}" ::"r"(d.raw),
        "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate)
        : "memory");
  else
    asm volatile(
        "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %4, 0;\n\t"
        "tcgen05.mma.cta_group::2.kind::f16 [%0], %1, %2, %3, p;\n\t}" ::"r"(d.raw),
        "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate)
        : "memory");
}

// As tcgen05_mma_bf16_ss with A read from tensor memory at `a` (bf16 pairs packed in 32-bit cells, M lanes x 8
// columns per K step of 16) instead of shared memory; A must then be K-major (the idesc's A-transpose bit 0).
// Contract: "issue granularity", "mma operands", "commit and completion".
template <int CTA_GROUP = 1>
__device__ __forceinline__ void tcgen05_mma_bf16_ts(TmemAddr d, TmemAddr a, uint64_t b_desc, uint32_t idesc,
                                                    uint32_t accumulate) {
  static_assert(CTA_GROUP == 1 || CTA_GROUP == 2, "cta_group::1 or ::2");
  if constexpr (CTA_GROUP == 1)
    asm volatile(
        "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %4, 0;\n\t"
        "tcgen05.mma.cta_group::1.kind::f16 [%0], [%1], %2, %3, p;\n\t}" ::"r"(d.raw),
        "r"(a.raw), "l"(b_desc), "r"(idesc), "r"(accumulate)
        : "memory");
  else
    asm volatile(
        "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %4, 0;\n\t"
        "tcgen05.mma.cta_group::2.kind::f16 [%0], [%1], %2, %3, p;\n\t}" ::"r"(d.raw),
        "r"(a.raw), "l"(b_desc), "r"(idesc), "r"(accumulate)
        : "memory");
}

// ---------------------------------------------------------------- thread scope: copy shared memory -> TMEM

// Copies a 128-lane x 256-bit block (8 columns of every lane from `dst`) from the shared-memory matrix that
// `src_desc` describes (tcgen05_desc.cuh) into tensor memory. One thread issues it; asynchronous, ordered before a
// later tcgen05_mma of the same CTA_GROUP issued by the same thread, and observed through tcgen05_commit.
// Contract: "issue granularity", "tcgen05 ordering", "proxy fences" (common).
template <int CTA_GROUP = 1>
__device__ __forceinline__ void tcgen05_cp_128x256b(TmemAddr dst, uint64_t src_desc) {
  static_assert(CTA_GROUP == 1 || CTA_GROUP == 2, "cta_group::1 or ::2");
  if constexpr (CTA_GROUP == 1)
    asm volatile("tcgen05.cp.cta_group::1.128x256b [%0], %1;" ::"r"(dst.raw), "l"(src_desc) : "memory");
  else
    asm volatile("tcgen05.cp.cta_group::2.128x256b [%0], %1;" ::"r"(dst.raw), "l"(src_desc) : "memory");
}

// ---------------------------------------------------------------- thread scope: completion

// Makes mbarrier `bar` (of this CTA) receive one arrival when every asynchronous tcgen05 operation this thread
// issued before it (mma, cp) has completed: the MMAs' shared-memory operands may then be overwritten and their
// accumulator read. The thread that issued the MMAs executes it. Contract: "commit and completion".
template <int CTA_GROUP = 1>
__device__ __forceinline__ void tcgen05_commit(uint64_t* bar) {
  static_assert(CTA_GROUP == 1 || CTA_GROUP == 2, "cta_group::1 or ::2");
  if constexpr (CTA_GROUP == 1)
    asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" ::"r"(
                     smem_addr(bar))
                 : "memory");
  else
    asm volatile("tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.b64 [%0];" ::"r"(
                     smem_addr(bar))
                 : "memory");
}

// As tcgen05_commit, arriving once on the mbarrier at `bar`'s offset in every CTA of the cluster whose bit is set
// in `cta_mask` (bit i = cluster_ctarank() i): how a pair's MMA tells both CTAs that a stage or the accumulator is
// done. Contract: "commit and completion" and "cta pairs".
template <int CTA_GROUP = 1>
__device__ __forceinline__ void tcgen05_commit_multicast(uint64_t* bar, uint16_t cta_mask) {
  static_assert(CTA_GROUP == 1 || CTA_GROUP == 2, "cta_group::1 or ::2");
  if constexpr (CTA_GROUP == 1)
    asm volatile(
        "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%0], %1;" ::"r"(
            smem_addr(bar)),
        "h"(cta_mask)
        : "memory");
  else
    asm volatile(
        "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%0], %1;" ::"r"(
            smem_addr(bar)),
        "h"(cta_mask)
        : "memory");
}

// ---------------------------------------------------------------- thread scope: fences

// Orders this thread's earlier tcgen05 operations before its next thread synchronisation (bar.sync, an mbarrier
// arrive, a cluster barrier): the "release" half. Contract: "tcgen05 ordering".
__device__ __forceinline__ void tcgen05_fence_before_thread_sync() {
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
}

// Orders this thread's later tcgen05 operations after its last thread synchronisation (a barrier, an mbarrier
// wait): the "acquire" half. Contract: "tcgen05 ordering".
__device__ __forceinline__ void tcgen05_fence_after_thread_sync() {
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
}

}  // namespace ptxkit::blackwell
