// ptxkit synchronisation: proxy fences, named barriers, elect.sync, setmaxnreg, cluster barriers and distributed
// shared memory (mapa, ld/st.shared::cluster). One wrapper per PTX instruction; kits/common/contracts.md names the
// rule each one depends on.
#pragma once

#include "common.cuh"

namespace ptxkit {

// ---------------------------------------------------------------- thread scope

// Orders this thread's earlier generic-proxy shared-memory writes before later async-proxy accesses (TMA,
// tensor-core operand reads: wgmma, tcgen05.mma, tcgen05.cp).
// Contract: "proxy fences".
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// Release at cluster scope for this thread's earlier mbarrier.init operations only (other CTAs of the cluster then
// see the barriers initialised, after a cluster barrier). Contract: "barrier initialisation".
__device__ __forceinline__ void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// After the mbarrier_init calls of the thread that initialises barriers: fence_mbarrier_init() then
// fence_proxy_async_shared(). Follow it with __syncthreads() (or cluster_sync()). Contract: "barrier
// initialisation".
__device__ __forceinline__ void fence_barrier_init() {
  fence_mbarrier_init();
  fence_proxy_async_shared();
}

// ---------------------------------------------------------------- warp scope

// elect.sync over `mask`: true in exactly one active lane of the mask, false elsewhere. PTX promises the same lane
// for the same mask every time, not which lane. Every lane of `mask` must execute it (it waits for them all), and
// no lane outside `mask` may. Contract: "single issuing thread".
__device__ __forceinline__ bool elect_one(uint32_t mask = 0xffffffffu) {
  uint32_t elected;
  asm volatile(
      "{\n\t.reg .pred p;\n\t"
      "elect.sync _|p, %1;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(elected)
      : "r"(mask));
  return elected != 0;
}

// Named barrier `id` (1..15; 0 is __syncthreads) over `threads` threads (a multiple of 32), all of which wait.
// Contract: "named barriers".
__device__ __forceinline__ void bar_sync(uint32_t id, uint32_t threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// Arrives on named barrier `id` without waiting (the producer side of a bar_sync with the same id and count).
// Contract: "named barriers".
__device__ __forceinline__ void bar_arrive(uint32_t id, uint32_t threads) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// ---------------------------------------------------------------- warpgroup scope

// Raises this warpgroup's per-thread register budget to REGS, at least the current budget (blocks until the CTA
// pool has them; the registers gained start undefined). Contract: "setmaxnreg".
template <int REGS>
__device__ __forceinline__ void setmaxnreg_inc() {
  static_assert(REGS >= 24 && REGS <= 256 && REGS % 8 == 0, "setmaxnreg: 24..256 in steps of 8");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(REGS));
}

// Lowers this warpgroup's per-thread register budget to REGS, at most the current budget, returning the rest to
// the CTA pool. Contract: "setmaxnreg".
template <int REGS>
__device__ __forceinline__ void setmaxnreg_dec() {
  static_assert(REGS >= 24 && REGS <= 256 && REGS % 8 == 0, "setmaxnreg: 24..256 in steps of 8");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(REGS));
}

// ---------------------------------------------------------------- cluster scope

// This CTA's rank in its cluster (0 .. cluster size - 1). Contract: "clusters".
__device__ __forceinline__ uint32_t cluster_ctarank() {
  uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
}

// Number of CTAs in this cluster. Contract: "clusters".
__device__ __forceinline__ uint32_t cluster_nctarank() {
  uint32_t n;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
  return n;
}

// Arrives on the cluster barrier with release semantics (all threads of every CTA must arrive).
// Contract: "clusters".
__device__ __forceinline__ void cluster_arrive() {
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
}

// Arrives on the cluster barrier without ordering memory (cheaper; for pure execution sync). Contract: "clusters".
__device__ __forceinline__ void cluster_arrive_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
}

// Waits for every thread of the cluster to have arrived, with acquire semantics. Contract: "clusters".
__device__ __forceinline__ void cluster_wait() {
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// cluster_arrive() then cluster_wait(): a full cluster-wide barrier. Contract: "clusters".
__device__ __forceinline__ void cluster_sync() {
  cluster_arrive();
  cluster_wait();
}

// Maps a shared address of this CTA to the same variable in CTA `rank` of the cluster (a shared::cluster address
// for ld/st.shared::cluster, remote mbarrier arrive and multicast). Contract: "clusters".
__device__ __forceinline__ uint32_t mapa(uint32_t smem, uint32_t rank) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(smem), "r"(rank));
  return remote;
}

// Loads a 32-bit word from distributed shared memory (an address from mapa). Contract: "clusters".
__device__ __forceinline__ uint32_t ld_shared_cluster(uint32_t cluster_addr) {
  uint32_t v;
  asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(cluster_addr) : "memory");
  return v;
}

// Stores a 32-bit word to distributed shared memory (an address from mapa). Contract: "clusters".
__device__ __forceinline__ void st_shared_cluster(uint32_t cluster_addr, uint32_t v) {
  asm volatile("st.shared::cluster.u32 [%0], %1;" ::"r"(cluster_addr), "r"(v) : "memory");
}

}  // namespace ptxkit
