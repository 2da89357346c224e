#include "task/catalog.h"

#include <algorithm>

namespace ptxbench {
// The dense bf16 tensor rates per SM per clock:
// - sm_90a 4096: the H100 and H200 datasheets' dense bf16 rate, 989.4 TFLOP/s (989 in kits/hopper/params.md),
//   over their 132 SMs at 1830 MHz: 989.4e12 / (132 x 1.83e9) = 4096. At the 1980 MHz maximum clock
//   (params.md) the peak is 1070 TFLOP/s.
// - sm_100a 8192: derived, not an NVIDIA per-SM figure: twice Hopper's, which with the B200's 148 SMs gives
//   NVIDIA's 2.25 PFLOP/s dense bf16 for the B200 at 1.86 GHz (2.25e15 / (148 x 8192) = 1.856e9).
namespace {

// The instructions both architectures' kits use: TMA, mbarriers, clusters, the warp-level MMA.
const std::vector<std::string> kCommonPtx = {"cp.async.bulk.tensor",
                                             "cp.async.bulk",
                                             "cp.reduce.async.bulk.tensor",
                                             "mbarrier.init",
                                             "mbarrier.arrive",
                                             "mbarrier.expect_tx",
                                             "mbarrier.try_wait",
                                             "mbarrier.test_wait",
                                             "ldmatrix",
                                             "stmatrix",
                                             "mma.sync",
                                             "fence.proxy.async",
                                             "barrier.cluster",
                                             "elect.sync"};
const std::vector<std::string> kCommonSass = {"HMMA",        "UTMALDG",      "UTMASTG", "UTMAREDG", "UTMAPF",
                                              "UBLKCP",      "SYNCS",        "LDSM",    "STSM",     "FENCE",
                                              "UCGABAR_ARV", "UCGABAR_WAIT", "ELECT"};

// An architecture's own names, then the common ones.
std::vector<std::string> with_common(std::vector<std::string> own, const std::vector<std::string>& common) {
  own.insert(own.end(), common.begin(), common.end());
  return own;
}

}  // namespace

const std::vector<ArchInfo>& all_archs() {
  static const std::vector<ArchInfo> archs = {
      // The PTX instructions the kits use and the SASS opcodes nvcc 13.0 compiles them to (read with
      // cuobjdump; on Hopper, also executed on an H200 and named by Nsight Compute).
      {"sm_90a", "Hopper", "hopper", "arch=compute_90a,code=sm_90a", 90, 4096,
       with_common({"wgmma.mma_async", "wgmma.fence", "wgmma.commit_group", "wgmma.wait_group", "setmaxnreg"},
                   kCommonPtx),
       with_common({"HGMMA", "QGMMA", "IGMMA", "BGMMA", "IMMA", "WARPGROUP", "UTMACMDFLUSH", "USETMAXREG"},
                   kCommonSass)},
      {"sm_100a", "Blackwell", "blackwell", "arch=compute_100a,code=sm_100a", 100, 8192,
       with_common({"tcgen05.mma", "tcgen05.ld", "tcgen05.st", "tcgen05.alloc", "tcgen05.dealloc",
                    "tcgen05.relinquish_alloc_permit", "tcgen05.commit", "tcgen05.cp", "tcgen05.fence",
                    "tcgen05.wait"},
                   kCommonPtx),
       with_common({"UTCHMMA", "UTCQMMA", "UTCBAR", "UTCCP", "UTCATOMSWS", "LDTM", "STTM"}, kCommonSass)},
  };
  return archs;
}

bool known_instruction(const std::vector<std::string>& known, const std::string& name) {
  return std::any_of(known.begin(), known.end(), [&](const std::string& k) {
    return name == k || (name.size() > k.size() + 1 && name.starts_with(k) && name[k.size()] == '.');
  });
}

const std::vector<std::string>& instruction_family_names() {
  static const std::vector<std::string> names = {"wgmma", "tcgen05.mma", "tma", "mbarrier"};
  return names;
}

const ArchInfo* find_arch(const std::string& name) {
  for (const auto& a : all_archs())
    if (a.name == name) return &a;
  return nullptr;
}

}  // namespace ptxbench
