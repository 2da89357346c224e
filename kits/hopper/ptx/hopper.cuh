// ptxkit::hopper: template functions over Hopper (sm_90a) PTX, one small wrapper per instruction.
//
// Use:   #include <hopper.cuh>          (kits/common/ptx and kits/hopper/ptx are on the include path of every
//                                        solution)
//        using namespace ptxkit::hopper;   (brings in the shared wrappers of namespace ptxkit as well)
// Build: nvcc -gencode arch=compute_90a,code=sm_90a -std=c++20 ...   (wgmma and setmaxnreg need the "a" target)
//
// Files, by what they wrap. Shared with Blackwell, in kits/common/ptx (namespace ptxkit):
//   common.cuh    smem_addr (the shared-window address every wrapper takes)
//   sync.cuh      fences (proxy, mbarrier init), named barriers, elect.sync, setmaxnreg, cluster barrier/rank, mapa
//   mbarrier.cuh  mbarrier init / arrive / expect_tx / try_wait.parity (and the wait loops), remote arrive
//   tma.cuh       host tensor-map creation (through the CUDA runtime only), tensor-map acquire fence, TMA loads
//                 1D-5D, multicast, stores, reduce-add, bulk-group commit/wait, L2 prefetch
//   matrix.cuh    ldmatrix / stmatrix x4 (and .trans), bf16x2 packing
// Hopper only, in kits/hopper/ptx (namespace ptxkit::hopper):
//   wgmma.cuh     descriptors, wgmma bf16 m64nNk16 (A from shared memory or registers), fence / commit / wait,
//                 operand fence
//   math.cuh      ex2.approx, and row max / sum / scale over the wgmma accumulator layout (softmax pieces)
// Each function's comment names the rule it depends on: in the files of kits/common/ptx a section of
// kits/common/contracts.md; in the files here a section of ../contracts.md (kits/hopper/contracts.md), or of
// kits/common/contracts.md where marked "(common)". ../params.md has the numbers.
#pragma once

#include "common.cuh"
#include "sync.cuh"
#include "mbarrier.cuh"
#include "tma.cuh"
#include "matrix.cuh"
#include "mma.cuh"

namespace ptxkit::hopper {
// The shared wrappers (namespace ptxkit) are part of this kit: `using namespace ptxkit::hopper;` and qualified
// names such as `ptxkit::hopper::mbarrier_init` find them.
using namespace ptxkit;
}  // namespace ptxkit::hopper

#include "wgmma.cuh"
#include "math.cuh"
