// ptxkit::blackwell CTA pairs: what the two CTAs of a .cta_group::2 MMA need beyond the shared cluster wrappers
// (cluster_ctarank, mapa, mbarrier_arrive_cluster*, cluster_arrive / cluster_wait in kits/common/ptx): their ranks,
// each other's shared addresses, and the TMA load whose completion goes to the pair's leader. The pair is the two
// CTAs of a cluster whose ranks differ only in bit 0; the kit calls the even one the leader (it issues the pair's
// MMAs, as CUTLASS's 2-SM kernels do). The contracts named here are sections of kits/blackwell/contracts.md, or of
// kits/common/contracts.md where marked "(common)".
#pragma once

#include "common.cuh"
#include "sync.cuh"
#include "tma.cuh"

namespace ptxkit::blackwell {

using namespace ptxkit;

// ---------------------------------------------------------------- ranks and addresses (cluster scope)

// 0 in the pair's leader (even cluster rank), 1 in its peer. Contract: "cta pairs".
__device__ __forceinline__ uint32_t cta_pair_rank() { return cluster_ctarank() & 1u; }

// True in the leader of the pair. Contract: "cta pairs".
__device__ __forceinline__ bool cta_pair_is_leader() { return (cluster_ctarank() & 1u) == 0; }

// Cluster rank of the other CTA of the pair. Contract: "cta pairs".
__device__ __forceinline__ uint32_t cta_pair_peer_rank() { return cluster_ctarank() ^ 1u; }

// Cluster rank of the pair's leader (this CTA's own rank in the leader). Contract: "cta pairs".
__device__ __forceinline__ uint32_t cta_pair_leader_rank() { return cluster_ctarank() & ~1u; }

// The shared::cluster address of `p` (a variable in this CTA's shared memory) in the other CTA of the pair, for
// mbarrier_arrive_cluster* and ld/st_shared_cluster. Contract: "cta pairs" and "clusters" (common).
__device__ __forceinline__ uint32_t peer_smem_addr(const void* p) { return mapa(smem_addr(p), cta_pair_peer_rank()); }

// The shared::cluster address of `p` in the pair's leader (the address of this CTA's own `p` in the leader).
// Contract: "cta pairs" and "clusters" (common).
__device__ __forceinline__ uint32_t leader_smem_addr(const void* p) {
  return mapa(smem_addr(p), cta_pair_leader_rank());
}

// ---------------------------------------------------------------- thread scope (one thread issues)

// Loads the 2D box at (c0, c1) into this CTA's shared `dst` and completes its bytes on the mbarrier at
// `cluster_bar`, which may be in either CTA of the pair (leader_smem_addr(&full[s]): the leader's barrier then
// counts the bytes of both halves of a pair's operand) [PTX ISA: cp.async.bulk.tensor, .cta_group::2].
// Contract: "cta pairs" and "expect_tx accounting" (common).
__device__ __forceinline__ void tma_load_2d_cta_pair(void* dst, const CUtensorMap* map, uint32_t cluster_bar,
                                                     int32_t c0, int32_t c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.cta_group::2 [%0], "
      "[%1, {%3, %4}], [%2];" ::"r"(smem_addr(dst)),
      "l"(tmap_addr(map)), "r"(cluster_bar), "r"(c0), "r"(c1)
      : "memory");
}

}  // namespace ptxkit::blackwell
