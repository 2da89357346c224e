// ptxkit::hopper common pieces: types and the shared-memory address conversion every wrapper uses.
#pragma once

#include <cstdint>
#include <cuda_bf16.h>

namespace ptxkit::hopper {

// 32-bit shared-window address of a pointer into this CTA's shared memory (the form PTX's [addr] operands take).
// Contract: "clusters" (turn it into another CTA's address with mapa).
__device__ __forceinline__ uint32_t smem_addr(const void* ptr) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(ptr));
}

}  // namespace ptxkit::hopper
