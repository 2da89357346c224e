// ptxkit::hopper: template functions over Hopper (sm_90a) PTX, one small wrapper per instruction.
//
// Use:   #include <hopper.cuh>          (the folder kits/hopper/ptx is on the include path of every solution)
//        using namespace ptxkit::hopper;
// Build: nvcc -gencode arch=compute_90a,code=sm_90a -std=c++20 ...   (wgmma and setmaxnreg need the "a" target)
//
// Files, by what they wrap:
//   sync.cuh      fences (proxy, mbarrier init), named barriers, elect.sync, setmaxnreg, cluster barrier/rank, mapa
//   mbarrier.cuh  mbarrier init / arrive / expect_tx / try_wait.parity (and the wait loops), remote arrive
//   tma.cuh       host tensor-map creation (through the CUDA runtime only), tensor-map acquire fence, TMA loads
//                 1D-5D, multicast, stores, reduce-add, bulk-group commit/wait, L2 prefetch
//   wgmma.cuh     descriptors, wgmma bf16 m64nNk16 (A from shared memory or registers), fence / commit / wait,
//                 operand fence
//   matrix.cuh    ldmatrix / stmatrix x4 (and .trans), bf16x2 packing
//   math.cuh      ex2.approx, and row max / sum / scale over the wgmma accumulator layout (softmax pieces)
// Each function's comment names the rule in ../contracts.md that it depends on; ../params.md has the numbers.
#pragma once

#include "common.cuh"
#include "sync.cuh"
#include "mbarrier.cuh"
#include "tma.cuh"
#include "wgmma.cuh"
#include "matrix.cuh"
#include "math.cuh"
