// ptxkit mbarrier: the 64-bit shared-memory barriers that TMA (and, on Blackwell, tcgen05.commit) completes and
// pipelines wait on. A barrier is a `uint64_t` in shared memory, 8-byte aligned. One wrapper per PTX instruction;
// the waits are a C++ loop over try_wait. kits/common/contracts.md, "mbarrier phases" and "expect_tx accounting",
// governs all of them.
#pragma once

#include "common.cuh"

namespace ptxkit {

// Initialises `bar` to phase 0 expecting `count` (1 .. 2^20 - 1) arrivals per phase (one thread does this, before
// any use). Contract: "barrier initialisation".
__device__ __forceinline__ void mbarrier_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}

// Invalidates `bar` so its memory can be reused for something else. Contract: "barrier initialisation".
__device__ __forceinline__ void mbarrier_inval(uint64_t* bar) {
  asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(smem_addr(bar)) : "memory");
}

// One arrival on `bar` (release, CTA scope). Arrive in a phase only after the previous phase was seen complete.
// Contract: "mbarrier phases".
__device__ __forceinline__ void mbarrier_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}

// One arrival on `bar` that also raises the phase's expected transaction count by `bytes` (the bytes TMA will
// land on it). Contract: "expect_tx accounting".
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes)
               : "memory");
}

// Raises the current phase's expected transaction count by `bytes` without arriving. Contract: "expect_tx
// accounting".
__device__ __forceinline__ void mbarrier_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes)
               : "memory");
}

// One arrival on a barrier of any CTA in the cluster (`cluster_bar` from mapa(smem_addr(bar), rank)), with the
// default CTA-scope release: enough for "I have finished reading the buffer you will overwrite", and cheap. Other
// CTAs may arrive on a barrier (and TMA complete bytes on it); only its own CTA may wait on it.
// Contract: "clusters" and "mbarrier phases".
__device__ __forceinline__ void mbarrier_arrive_cluster(uint32_t cluster_bar) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(cluster_bar) : "memory");
}

// One arrival on a barrier of any CTA in the cluster with release at cluster scope: this thread's earlier writes
// (e.g. st_shared_cluster into the barrier's CTA) are visible to a thread that then waits with
// mbarrier_wait_cluster. Costs more than mbarrier_arrive_cluster. Contract: "clusters".
__device__ __forceinline__ void mbarrier_arrive_cluster_release(uint32_t cluster_bar) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(cluster_bar) : "memory");
}

// True once the phase with parity `parity` (0 or 1) of `bar` has completed; may return false after a
// system-dependent time limit, so call it in a loop (mbarrier_wait). Acquire, CTA scope.
// Contract: "mbarrier phases".
__device__ __forceinline__ bool mbarrier_try_wait_parity(uint64_t* bar, uint32_t parity) {
  uint32_t done;
  asm volatile(
      "{\n\t.reg .pred p;\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(done)
      : "r"(smem_addr(bar)), "r"(parity)
      : "memory");
  return done != 0;
}

// As mbarrier_try_wait_parity, with acquire at cluster scope: pairs with mbarrier_arrive_cluster_release when
// this thread then reads memory that other CTAs wrote before arriving. Contract: "clusters".
__device__ __forceinline__ bool mbarrier_try_wait_parity_cluster(uint64_t* bar, uint32_t parity) {
  uint32_t done;
  asm volatile(
      "{\n\t.reg .pred p;\n\t"
      "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(done)
      : "r"(smem_addr(bar)), "r"(parity)
      : "memory");
  return done != 0;
}

// Blocks until the phase with parity `parity` of `bar` has completed. Contract: "mbarrier phases".
__device__ __forceinline__ void mbarrier_wait(uint64_t* bar, uint32_t parity) {
  while (!mbarrier_try_wait_parity(bar, parity)) {
  }
}

// Blocks until the phase with parity `parity` has completed, acquiring at cluster scope. Contract: "clusters".
__device__ __forceinline__ void mbarrier_wait_cluster(uint64_t* bar, uint32_t parity) {
  while (!mbarrier_try_wait_parity_cluster(bar, parity)) {
  }
}

}  // namespace ptxkit
