#include "runner/gemm_family.h"

#include <climits>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "runner/cuda_check.h"
#include "runner/kernels.h"
#include "runner/protocol.h"

namespace ptxbench::runner {
void GemmFamily::allocate(const ShapeSpec& shape) {
  const int m = positive_int_dim(shape, "M"), n = positive_int_dim(shape, "N"),
            k = positive_int_dim(shape, "K");
  // Free the previous shape's memory before taking the new one, so the peak is one shape's worth.
  for (DeviceBuffer* buffer :
       {&a_, &b_, &c_, &a_copy_, &b_copy_, &c_snapshot_, &c_reference_, &c_baseline_}) {
    *buffer = DeviceBuffer();
  }
  reference_plan_.reset();
  baseline_plan_.reset();
  m_ = m;
  n_ = n;
  k_ = k;
  a_ = DeviceBuffer::shared(bf16_bytes(m, k));
  b_ = DeviceBuffer::shared(bf16_bytes(n, k));
  c_ = DeviceBuffer::shared(bf16_bytes(m, n));
  a_copy_ = DeviceBuffer(bf16_bytes(m, k));
  b_copy_ = DeviceBuffer(bf16_bytes(n, k));
  c_snapshot_ = DeviceBuffer::exported(bf16_bytes(m, n));  // written by the solution process (kSnapshotPoint)
  c_reference_ = DeviceBuffer(static_cast<size_t>(m) * static_cast<size_t>(n) * sizeof(float));
}

void GemmFamily::fill_inputs(uint64_t key, cudaStream_t stream) {
  // A ~ N(0,1) and B ~ N(0,1)/sqrt(K), so every element of C is ~ N(0,1) whatever K: the tolerance means the
  // same thing at every shape, and no element is trivially zero.
  fill_normal_bf16(a_.as<__nv_bfloat16>(), a_copy_.as<__nv_bfloat16>(), int64_t{m_} * k_, derive_key(key, 0),
                   1.0f, stream);
  fill_normal_bf16(b_.as<__nv_bfloat16>(), b_copy_.as<__nv_bfloat16>(), int64_t{n_} * k_, derive_key(key, 1),
                   1.0f / std::sqrt(static_cast<float>(k_)), stream);
}

void GemmFamily::poison_outputs(cudaStream_t stream) {
  PTXBENCH_CUDA(cudaMemsetAsync(c_.get(), 0xFF, c_.bytes(), stream));  // 0xFFFF: a bf16 NaN
}

SolutionCall GemmFamily::solution_call() const {
  return {.pointers = {&a_, &b_, &c_}, .ints = {m_, n_, k_}, .scale = 0, .snapshots = {{2, &c_snapshot_}}};
}

std::vector<std::pair<std::string, DeviceBuffer*>> GemmFamily::shared_buffers() {
  return {{"A", &a_}, {"B", &b_}, {"C", &c_}};
}

void GemmFamily::snapshot_outputs(cudaStream_t stream) {
  PTXBENCH_CUDA(cudaMemcpyAsync(c_snapshot_.get(), c_.get(), c_.bytes(), cudaMemcpyDeviceToDevice, stream));
}

uint64_t GemmFamily::outputs_changed_since_snapshot(cudaStream_t stream) {
  return count_differences(c_.get(), c_snapshot_.get(), c_.bytes(), 2, stream);
}

std::vector<std::pair<std::string, uint64_t>> GemmFamily::changed_inputs(cudaStream_t stream) {
  return {{"A", count_differences(a_.get(), a_copy_.get(), a_.bytes(), 2, stream)},
          {"B", count_differences(b_.get(), b_copy_.get(), b_.bytes(), 2, stream)}};
}

void GemmFamily::compute_reference(cudaStream_t stream) {
  if (!cublaslt_) cublaslt_ = std::make_unique<CublasLt>();
  if (!reference_plan_) reference_plan_ = std::make_unique<GemmPlan>(*cublaslt_, m_, n_, k_, CUDA_R_32F);
  reference_plan_->run(pristine_a(), pristine_b(), c_reference_.get(), stream);
}

std::vector<OutputCheck> GemmFamily::compare(const Tolerance& tolerance, cudaStream_t stream) {
  OutputCheck check{.name = "C", .rows = m_, .cols = n_, .comparison = {}};
  check.comparison =
      compare_bf16(c_snapshot_.as<const __nv_bfloat16>(), c_reference_.as<const float>(), int64_t{m_} * n_,
                   static_cast<float>(tolerance.rtol), static_cast<float>(tolerance.atol),
                   protocol::kMaxReportedMismatches, stream);
  return {check};
}

double GemmFamily::flops() const {
  return 2.0 * m_ * n_ * k_;
}

double GemmFamily::input_bytes() const {
  return static_cast<double>(a_.bytes() + b_.bytes());
}

void GemmFamily::call_baseline(cudaStream_t stream) {
  if (!cublaslt_) cublaslt_ = std::make_unique<CublasLt>();
  if (!baseline_plan_) baseline_plan_ = std::make_unique<GemmPlan>(*cublaslt_, m_, n_, k_, CUDA_R_16BF);
  if (c_baseline_.get() == nullptr) c_baseline_ = DeviceBuffer(c_.bytes());
  baseline_plan_->run(pristine_a(), pristine_b(), c_baseline_.get(), stream);
}

Json GemmFamily::describe_baseline() const {
  Json description = {{"name", "cublaslt"},
                      {"compute", "bf16 in, fp32 compute, bf16 out"},
                      {"workspace_limit_bytes", CublasLt::kWorkspaceBytes}};
  if (baseline_plan_) description["algo"] = baseline_plan_->describe();
  return description;
}

}  // namespace ptxbench::runner
