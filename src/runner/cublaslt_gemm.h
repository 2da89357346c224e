// cuBLASLt GEMMs in the layout of the solution ABI (C[M,N] = A[M,K] * B[N,K]^T, all row-major): the
// fp32-output reference for correctness and the bf16-output baseline for timing.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <nlohmann/json.hpp>

#include "runner/device_buffer.h"

namespace ptxbench::runner {

// The library handle and the runner-owned workspace every plan uses.
class CublasLt {
 public:
  static constexpr size_t kWorkspaceBytes = size_t{32} << 20;

  CublasLt();
  ~CublasLt();
  CublasLt(const CublasLt&) = delete;
  CublasLt& operator=(const CublasLt&) = delete;

  cublasLtHandle_t handle() const { return handle_; }
  void* workspace() const { return workspace_.get(); }
  size_t workspace_bytes() const { return workspace_.bytes(); }

 private:
  cublasLtHandle_t handle_ = nullptr;
  DeviceBuffer workspace_;
};

// One C = A * B^T of fixed sizes: bf16 inputs, fp32 compute, output in `out_type` (CUDA_R_16BF or
// CUDA_R_32F), with the algorithm the heuristic ranks first for the workspace.
class GemmPlan {
 public:
  GemmPlan(const CublasLt& lt, int64_t m, int64_t n, int64_t k, cudaDataType_t out_type);
  ~GemmPlan();
  GemmPlan(const GemmPlan&) = delete;
  GemmPlan& operator=(const GemmPlan&) = delete;

  void run(const __nv_bfloat16* a, const __nv_bfloat16* b, void* c, cudaStream_t stream) const;
  nlohmann::ordered_json describe() const;  // the chosen algorithm's configuration, for the record

 private:
  const CublasLt& lt_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t layout_b_ = nullptr;  // cuBLASLt's "A": our B, K x N column-major, transposed
  cublasLtMatrixLayout_t layout_a_ = nullptr;  // cuBLASLt's "B": our A, K x M column-major
  cublasLtMatrixLayout_t layout_c_ = nullptr;  // our row-major C is N x M column-major
  cublasLtMatmulHeuristicResult_t heuristic_{};
};

}  // namespace ptxbench::runner
