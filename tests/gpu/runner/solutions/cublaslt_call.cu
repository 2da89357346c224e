// link: -lcublasLt
// Not a kernel of its own: calls cuBLASLt the way the runner's baseline does (same heuristic, 32 MiB
// workspace), keeping its handle, plan and workspace between calls, which the ABI forbids. Two uses: the case
// that only the "kernel not from the submission" check can catch (its output is right), and a check of the
// timing method, whose speedup must come out near 1.0. Expected: passed in check and time mode.
#include <cublasLt.h>

#include "ptxbench/abi.h"

namespace {

struct Plan {
  int m = 0, n = 0, k = 0;
  cublasLtHandle_t handle = nullptr;
  void* workspace = nullptr;
  size_t workspace_bytes = size_t{32} << 20;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t b = nullptr, a = nullptr, c = nullptr;
  cublasLtMatmulHeuristicResult_t heuristic{};
};

// Builds the plan for one shape, as the runner's GemmPlan does (row-major C = A B^T as column-major "TN").
bool make_plan(Plan& plan, int m, int n, int k) {
  if (plan.handle == nullptr && (cublasLtCreate(&plan.handle) != CUBLAS_STATUS_SUCCESS ||
                                 cudaMalloc(&plan.workspace, plan.workspace_bytes) != cudaSuccess)) {
    return false;
  }
  if (plan.desc != nullptr) {
    cublasLtMatrixLayoutDestroy(plan.b);
    cublasLtMatrixLayoutDestroy(plan.a);
    cublasLtMatrixLayoutDestroy(plan.c);
    cublasLtMatmulDescDestroy(plan.desc);
  }
  const cublasOperation_t transpose = CUBLAS_OP_T, none = CUBLAS_OP_N;
  cublasLtMatmulDescCreate(&plan.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof(transpose));
  cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_TRANSB, &none, sizeof(none));
  cublasLtMatrixLayoutCreate(&plan.b, CUDA_R_16BF, k, n, k);
  cublasLtMatrixLayoutCreate(&plan.a, CUDA_R_16BF, k, m, k);
  cublasLtMatrixLayoutCreate(&plan.c, CUDA_R_16BF, n, m, n);
  cublasLtMatmulPreference_t preference = nullptr;
  cublasLtMatmulPreferenceCreate(&preference);
  const uint64_t workspace = plan.workspace_bytes;
  cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                       sizeof(workspace));
  int found = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
      plan.handle, plan.desc, plan.b, plan.a, plan.c, plan.c, preference, 1, &plan.heuristic, &found);
  cublasLtMatmulPreferenceDestroy(preference);
  if (status != CUBLAS_STATUS_SUCCESS || found < 1) return false;
  plan.m = m;
  plan.n = n;
  plan.k = k;
  return true;
}

Plan plan;

}  // namespace

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M,
                                  int N, int K, cudaStream_t stream) {
  if ((plan.m != M || plan.n != N || plan.k != K) && !make_plan(plan, M, N, K)) return 1;
  const float alpha = 1.0f, beta = 0.0f;
  return cublasLtMatmul(plan.handle, plan.desc, &alpha, B, plan.b, A, plan.a, &beta, C, plan.c, C, plan.c,
                        &plan.heuristic.algo, plan.workspace, plan.workspace_bytes,
                        stream) == CUBLAS_STATUS_SUCCESS
             ? 0
             : 2;
}
