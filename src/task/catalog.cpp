#include "task/catalog.h"

namespace ptxbench {
namespace {

const char* kAttentionLayout =
    "Q [B,Sq,Hq,D], K and V [B,Sk,Hkv,D], O like Q, bf16; LSE [B,Hq,Sq] fp32 = natural log of the row sum of "
    "exp(scale*q.k) over visible keys; scale = 1/sqrt(D); query head h uses KV head h/(Hq/Hkv); causal: "
    "query i "
    "sees key j iff j <= i + (Sk - Sq) (bottom-right aligned)";

// The rules of include/ptxbench/abi.h that a task's shapes must keep: head dims the ABI names, GQA groups
// that divide evenly, and (causal) every query row sees at least one key, so that no reference value is -inf
// (LSE) and every compared element is finite.
std::string check_attention_shape(const std::map<std::string, int64_t>& dims,
                                  const std::map<std::string, bool>& parameters) {
  const int64_t d = dims.at("D");
  if (d != 64 && d != 96 && d != 128) return "D must be 64, 96 or 128";
  if (dims.at("Hq") % dims.at("Hkv") != 0) return "Hq must be a multiple of Hkv";
  const auto causal = parameters.find("causal");
  if (causal != parameters.end() && causal->second && dims.at("Sq") > dims.at("Sk"))
    return "a causal shape needs Sq <= Sk (else the first Sq - Sk query rows see no key)";
  return "";
}

// The vendor attention (baselines/attention_cudnn.py, which the runner runs in a process of its own), or the
// solution's time alone.
const std::vector<std::string> kAttentionBaselines = {kBaselineVendorAttention, kBaselineNone};

const std::vector<TensorInfo> kAttentionForwardTensors = {
    {"Q", "B*Sq*Hq*D"}, {"K", "B*Sk*Hkv*D"}, {"V", "B*Sk*Hkv*D"}, {"O", "B*Sq*Hq*D"}, {"LSE", "B*Hq*Sq"}};

// The forward's tensors, and the gradients: dO, dQ like Q; dK, dV like K.
std::vector<TensorInfo> attention_backward_tensors() {
  std::vector<TensorInfo> tensors = kAttentionForwardTensors;
  tensors.insert(tensors.end(),
                 {{"dO", "B*Sq*Hq*D"}, {"dQ", "B*Sq*Hq*D"}, {"dK", "B*Sk*Hkv*D"}, {"dV", "B*Sk*Hkv*D"}});
  return tensors;
}

const std::vector<ParameterInfo> kAttentionParameters = {
    {"causal", "query i sees key j only when j <= i + (Sk - Sq) (bottom-right aligned)"}};

}  // namespace

const std::vector<FamilyInfo>& all_families() {
  static const std::vector<FamilyInfo> families = {
      {"gemm",
       {"M", "N", "K"},
       "ptxbench_gemm_bf16",
       {"ptxbench_gemm_bf16"},
       "int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C,\n"
       "                       int M, int N, int K, cudaStream_t stream);",
       "C[M,N] = A[M,K] * B[N,K]^T, bf16 inputs, fp32 accumulation, bf16 output; row-major, K contiguous",
       {"C"},
       {},
       {kBaselineCublasLt},  // the runner's GEMM family times cuBLASLt in the same process
       {{"A", "M*K"}, {"B", "N*K"}, {"C", "M*N"}},
       nullptr},
      {"attention-forward",
       {"B", "Hq", "Hkv", "Sq", "Sk", "D"},
       "ptxbench_attention_forward_bf16",
       {"ptxbench_attention_forward_bf16"},
       "int ptxbench_attention_forward_bf16(const __nv_bfloat16* Q, const __nv_bfloat16* K,\n"
       "                                    const __nv_bfloat16* V, __nv_bfloat16* O, float* LSE,\n"
       "                                    int B, int Hq, int Hkv, int Sq, int Sk, int D, float scale,\n"
       "                                    int causal, cudaStream_t stream);",
       std::string("O = softmax(scale * Q K^T) V and LSE, fp32 accumulation; ") + kAttentionLayout,
       {"O", "LSE"},
       kAttentionParameters,
       kAttentionBaselines,
       kAttentionForwardTensors,
       check_attention_shape},
      {"attention-backward",
       {"B", "Hq", "Hkv", "Sq", "Sk", "D"},
       "ptxbench_attention_backward_bf16",
       {"ptxbench_attention_backward_workspace_bytes", "ptxbench_attention_backward_bf16"},
       "size_t ptxbench_attention_backward_workspace_bytes(int B, int Hq, int Hkv, int Sq, int Sk, int D,\n"
       "                                                   int causal);\n"
       "int ptxbench_attention_backward_bf16(const __nv_bfloat16* Q, const __nv_bfloat16* K,\n"
       "                                     const __nv_bfloat16* V, const __nv_bfloat16* O, const float* "
       "LSE,\n"
       "                                     const __nv_bfloat16* dO, __nv_bfloat16* dQ, __nv_bfloat16* dK,\n"
       "                                     __nv_bfloat16* dV, void* workspace, int B, int Hq, int Hkv,\n"
       "                                     int Sq, int Sk, int D, float scale, int causal,\n"
       "                                     cudaStream_t stream);",
       std::string(
           "dQ, dK, dV of attention from Q, K, V, O, LSE and dO (dK, dV summed over the query heads of a "
           "KV group), with a workspace the solution sizes; ") +
           kAttentionLayout,
       {"dQ", "dK", "dV"},
       kAttentionParameters,
       kAttentionBaselines,
       attention_backward_tensors(),
       check_attention_shape},
  };
  return families;
}

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

const FamilyInfo* find_family(const std::string& name) {
  for (const auto& f : all_families())
    if (f.name == name) return &f;
  return nullptr;
}

const ArchInfo* find_arch(const std::string& name) {
  for (const auto& a : all_archs())
    if (a.name == name) return &a;
  return nullptr;
}

}  // namespace ptxbench
