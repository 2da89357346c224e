// The GEMM family: C[M,N] = A[M,K] * B[N,K]^T in bf16 with fp32 accumulation (ptxbench_gemm_bf16 in abi.h).
#pragma once

#include <memory>

#include <cuda_bf16.h>

#include "ptxbench/abi.h"
#include "runner/cublaslt_gemm.h"
#include "runner/device_buffer.h"
#include "runner/family.h"

namespace ptxbench::runner {

class GemmFamily final : public TaskFamily {
 public:
  static constexpr const char* kFamily = "gemm";
  static constexpr const char* kEntryPoint = "ptxbench_gemm_bf16";

  void allocate(const ShapeSpec& shape) override;
  void fill_inputs(uint64_t key, cudaStream_t stream) override;
  void poison_outputs(cudaStream_t stream) override;
  SolutionCall solution_call() const override;
  std::vector<std::pair<std::string, DeviceBuffer*>> shared_buffers() override;
  void snapshot_outputs(cudaStream_t stream) override;
  uint64_t outputs_changed_since_snapshot(cudaStream_t stream) override;
  std::vector<std::pair<std::string, uint64_t>> changed_inputs(cudaStream_t stream) override;
  void compute_reference(cudaStream_t stream) override;
  std::vector<OutputCheck> compare(const Tolerance& tolerance, cudaStream_t stream) override;
  double flops() const override;
  double input_bytes() const override;  // A and B
  void call_baseline(cudaStream_t stream) override;
  Json describe_baseline() const override;

 private:
  // Bytes of a rows x cols bf16 matrix.
  static size_t bf16_bytes(int64_t rows, int64_t cols) { return static_cast<size_t>(rows * cols) * 2; }
  const __nv_bfloat16* pristine_a() const { return a_copy_.as<__nv_bfloat16>(); }
  const __nv_bfloat16* pristine_b() const { return b_copy_.as<__nv_bfloat16>(); }

  int m_ = 0, n_ = 0, k_ = 0;
  DeviceBuffer a_, b_, c_;                 // what the solution sees
  DeviceBuffer a_copy_, b_copy_;           // pristine inputs: reference, baseline, unchanged-inputs check
  DeviceBuffer c_snapshot_, c_reference_;  // bf16 snapshot of C; fp32 reference
  DeviceBuffer c_baseline_;                // the baseline's bf16 output, allocated on first use
  std::unique_ptr<CublasLt> cublaslt_;     // created on first use, shared by the plans
  std::unique_ptr<GemmPlan> reference_plan_, baseline_plan_;
};

}  // namespace ptxbench::runner
