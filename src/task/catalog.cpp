#include "task/catalog.h"

namespace ptxbench {

const std::vector<FamilyInfo>& all_families() {
  static const std::vector<FamilyInfo> families = {
      {"gemm",
       {"M", "N", "K"},
       "ptxbench_gemm_bf16",
       "int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C,\n"
       "                       int M, int N, int K, cudaStream_t stream);",
       "C[M,N] = A[M,K] * B[N,K]^T, bf16 inputs, fp32 accumulation, bf16 output; row-major, K contiguous"},
  };
  return families;
}

const std::vector<ArchInfo>& all_archs() {
  static const std::vector<ArchInfo> archs = {
      {"sm_90a", "Hopper", "hopper", "arch=compute_90a,code=sm_90a", 90},
      {"sm_100a", "Blackwell", "blackwell", "arch=compute_100a,code=sm_100a", 100},
  };
  return archs;
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
