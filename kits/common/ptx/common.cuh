// ptxkit common pieces: types and the shared-memory address conversion every wrapper uses.
//
// kits/common/ptx holds the wrappers that Hopper (sm_90a) and Blackwell (sm_100a) share, in namespace ptxkit; each
// architecture's umbrella header (hopper.cuh, blackwell.cuh) includes them and makes them visible in its own
// namespace. Every "Contract:" named in this folder is a section of ../contracts.md (kits/common/contracts.md).
#pragma once

#include <cstdint>
#include <cuda_bf16.h>

namespace ptxkit {

// 32-bit shared-window address of a pointer into this CTA's shared memory (the form PTX's [addr] operands take).
// Contract: "clusters" (turn it into another CTA's address with mapa).
__device__ __forceinline__ uint32_t smem_addr(const void* ptr) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(ptr));
}

}  // namespace ptxkit
