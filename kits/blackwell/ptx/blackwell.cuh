// ptxkit::blackwell: template functions over Blackwell (sm_100a) PTX, one small wrapper per instruction.
//
// Use:   #include <blackwell.cuh>       (kits/common/ptx and kits/blackwell/ptx on the include path)
//        using namespace ptxkit::blackwell;   (brings in the shared wrappers of namespace ptxkit as well)
// Build: nvcc -gencode arch=compute_100a,code=sm_100a -std=c++20 ...   (tcgen05 needs the "a" target)
//
// Files, by what they wrap. Shared with Hopper, in kits/common/ptx (namespace ptxkit):
//   common.cuh        smem_addr (the shared-window address every wrapper takes)
//   sync.cuh          fences (proxy, mbarrier init), named barriers, elect.sync, setmaxnreg, cluster barrier/rank,
//                     mapa, ld/st.shared::cluster
//   mbarrier.cuh      mbarrier init / arrive / expect_tx / try_wait.parity (and the wait loops), remote arrive
//   tma.cuh           host tensor-map creation, TMA loads 1D-5D, multicast, stores, reduce-add, bulk groups
//   matrix.cuh        ldmatrix / stmatrix x4 (and .trans), bf16x2 packing
// Blackwell only, in kits/blackwell/ptx (namespace ptxkit::blackwell):
//   tmem.cuh          TmemAddr, tcgen05.alloc / dealloc / relinquish_alloc_permit, tcgen05.ld / st (.32x32b,
//                     .16x256b), tcgen05.wait::ld / ::st, operand fence
//   tcgen05_desc.cuh  shared-memory matrix descriptor (Blackwell format) and kind::f16 instruction descriptor
//   tcgen05.cuh       tcgen05.mma kind::f16 (A from shared memory or TMEM; cta_group::1 / ::2), tcgen05.cp
//                     .128x256b, tcgen05.commit (plain, multicast), tcgen05.fence::before / after_thread_sync
//   cta_pair.cuh      CTA-pair ranks and peer / leader shared addresses, the .cta_group::2 TMA load
// Each function's comment names the rule it depends on: in the files of kits/common/ptx a section of
// kits/common/contracts.md; in the files here a section of ../contracts.md (kits/blackwell/contracts.md), or of
// kits/common/contracts.md where marked "(common)". ../params.md has the numbers.
#pragma once

#include "common.cuh"
#include "sync.cuh"
#include "mbarrier.cuh"
#include "tma.cuh"
#include "matrix.cuh"
#include "mma.cuh"

namespace ptxkit::blackwell {
// The shared wrappers (namespace ptxkit) are part of this kit: `using namespace ptxkit::blackwell;` and qualified
// names such as `ptxkit::blackwell::mbarrier_init` find them.
using namespace ptxkit;
}  // namespace ptxkit::blackwell

#include "tmem.cuh"
#include "tcgen05_desc.cuh"
#include "tcgen05.cuh"
#include "cta_pair.cuh"
