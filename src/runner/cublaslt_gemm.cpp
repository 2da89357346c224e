#include "runner/cublaslt_gemm.h"

#include <stdexcept>
#include <string>

namespace ptxbench::runner {
namespace {

void check_cublas(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string(call) + ": " + cublasLtGetStatusName(status) + ": " +
                             cublasLtGetStatusString(status));
  }
}

#define PTXBENCH_CUBLAS(call) check_cublas((call), #call)

template <typename T>
void set_desc(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute, T value) {
  PTXBENCH_CUBLAS(cublasLtMatmulDescSetAttribute(desc, attribute, &value, sizeof(value)));
}

int algo_config(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attribute) {
  int value = 0;
  size_t written = 0;
  PTXBENCH_CUBLAS(cublasLtMatmulAlgoConfigGetAttribute(&algo, attribute, &value, sizeof(value), &written));
  return value;
}

}  // namespace

CublasLt::CublasLt() : workspace_(kWorkspaceBytes) {
  PTXBENCH_CUBLAS(cublasLtCreate(&handle_));
}

CublasLt::~CublasLt() {
  if (handle_ != nullptr) (void)cublasLtDestroy(handle_);
}

GemmPlan::GemmPlan(const CublasLt& lt, int64_t m, int64_t n, int64_t k, cudaDataType_t out_type) : lt_(lt) {
  // Row-major C = A B^T is, column-major, C^T (N x M) = B (N x K, stored as K x N) transposed times A^T (K x
  // M): cuBLASLt's "TN" case, the one its Hopper kernels are tuned for.
  PTXBENCH_CUBLAS(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  set_desc(desc_, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T);
  set_desc(desc_, CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N);
  PTXBENCH_CUBLAS(cublasLtMatrixLayoutCreate(&layout_b_, CUDA_R_16BF, static_cast<uint64_t>(k),
                                             static_cast<uint64_t>(n), k));
  PTXBENCH_CUBLAS(cublasLtMatrixLayoutCreate(&layout_a_, CUDA_R_16BF, static_cast<uint64_t>(k),
                                             static_cast<uint64_t>(m), k));
  PTXBENCH_CUBLAS(cublasLtMatrixLayoutCreate(&layout_c_, out_type, static_cast<uint64_t>(n),
                                             static_cast<uint64_t>(m), n));

  cublasLtMatmulPreference_t preference = nullptr;
  PTXBENCH_CUBLAS(cublasLtMatmulPreferenceCreate(&preference));
  const uint64_t workspace = lt_.workspace_bytes();
  int found = 0;
  const cublasStatus_t status = cublasLtMatmulPreferenceSetAttribute(
      preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof(workspace));
  const cublasStatus_t heuristic_status =
      status != CUBLAS_STATUS_SUCCESS
          ? status
          : cublasLtMatmulAlgoGetHeuristic(lt_.handle(), desc_, layout_b_, layout_a_, layout_c_, layout_c_,
                                           preference, 1, &heuristic_, &found);
  (void)cublasLtMatmulPreferenceDestroy(preference);
  check_cublas(heuristic_status, "cublasLtMatmulAlgoGetHeuristic");
  if (found < 1) {
    throw std::runtime_error("cuBLASLt has no algorithm for M=" + std::to_string(m) +
                             " N=" + std::to_string(n) + " K=" + std::to_string(k));
  }
}

GemmPlan::~GemmPlan() {
  if (layout_c_ != nullptr) (void)cublasLtMatrixLayoutDestroy(layout_c_);
  if (layout_a_ != nullptr) (void)cublasLtMatrixLayoutDestroy(layout_a_);
  if (layout_b_ != nullptr) (void)cublasLtMatrixLayoutDestroy(layout_b_);
  if (desc_ != nullptr) (void)cublasLtMatmulDescDestroy(desc_);
}

void GemmPlan::run(const __nv_bfloat16* a, const __nv_bfloat16* b, void* c, cudaStream_t stream) const {
  const float alpha = 1.0f, beta = 0.0f;
  PTXBENCH_CUBLAS(cublasLtMatmul(lt_.handle(), desc_, &alpha, b, layout_b_, a, layout_a_, &beta, c, layout_c_,
                                 c, layout_c_, &heuristic_.algo, lt_.workspace(), lt_.workspace_bytes(),
                                 stream));
}

nlohmann::ordered_json GemmPlan::describe() const {
  return {{"algo_id", algo_config(heuristic_.algo, CUBLASLT_ALGO_CONFIG_ID)},
          {"tile_id", algo_config(heuristic_.algo, CUBLASLT_ALGO_CONFIG_TILE_ID)},
          {"stages_id", algo_config(heuristic_.algo, CUBLASLT_ALGO_CONFIG_STAGES_ID)},
          {"splitk", algo_config(heuristic_.algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM)},
          {"workspace_bytes", heuristic_.workspaceSize}};
}

}  // namespace ptxbench::runner
