// GEMM: C[M,N] = A[M,K] * B[N,K]^T, a linear layer (include/ptxbench/abi.h).
#include "family/family.h"

namespace ptxbench {

Family gemm_family() {
  return {
      .name = "gemm",
      .entry_point = "ptxbench_gemm_bf16",
      .summary =
          "C[M,N] = A[M,K] * B[N,K]^T, bf16 inputs, fp32 accumulation, bf16 output; row-major, K contiguous",
      .dims = {"M", "N", "K"},
      .parameters = {},
      // A ~ N(0,1) and B ~ N(0,1/K): every element of C is ~ N(0,1) whatever K, so a tolerance means the same
      // thing at every shape and no element is trivially zero.
      .tensors = {{.name = "A", .shape = {"M", "K"}},
                  {.name = "B", .shape = {"N", "K"}, .fill = {Fill::normal, "K"}},
                  {.name = "C",
                   .role = Role::output,
                   .shape = {"M", "N"},
                   .row_dims = 1,
                   .tolerance = {.rtol = 0.01, .atol = 0.01}}},
      .scalars = {{ScalarSpec::integer, "M", "M"},
                  {ScalarSpec::integer, "N", "N"},
                  {ScalarSpec::integer, "K", "K"}},
      .arguments = {"A", "B", "C", "M", "N", "K"},
      .workspace = std::nullopt,
      .shape_rules = {},
      .flops = "2*M*N*K",
      .bytes = "",
      .baselines = {{"cublaslt", "cuBLASLt's bf16 GEMM, timed in the same process the same way", ""}},
      .hints = {},
  };
}

}  // namespace ptxbench
