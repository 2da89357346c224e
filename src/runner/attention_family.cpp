#include "runner/attention_family.h"

#include <climits>
#include <cmath>
#include <stdexcept>

#include "runner/cuda_check.h"
#include "runner/kernels.h"
#include "runner/protocol.h"
#include "runner/session.h"

namespace ptxbench::runner {
namespace {

size_t bytes_of(int64_t elements, int elem_bytes) {
  return static_cast<size_t>(elements) * static_cast<size_t>(elem_bytes);
}

// Fills with 0xFF bytes: NaN in bf16 (0xFFFF) and fp32 (0xFFFFFFFF), so an element not written fails.
void poison(DeviceBuffer& buffer, cudaStream_t stream) {
  if (buffer.get() != nullptr) PTXBENCH_CUDA(cudaMemsetAsync(buffer.get(), 0xFF, buffer.bytes(), stream));
}

}  // namespace

// ---- shared
// ---------------------------------------------------------------------------------------------------

AttentionFamily::AttentionFamily(const std::map<std::string, bool>& parameters,
                                 std::map<std::string, Tolerance> tolerances)
    : tolerances_(std::move(tolerances)) {
  const auto causal = parameters.find("causal");
  if (causal == parameters.end())
    throw std::invalid_argument("request: the attention families need \"parameters\": {\"causal\": ...}");
  for (const auto& [name, value] : parameters) {
    if (name != "causal")
      throw std::invalid_argument("request: unknown attention parameter \"" + name + "\"");
  }
  dims_.causal = causal->second;
}

void AttentionFamily::set_shape(const ShapeSpec& shape) {
  AttentionDims d = dims_;
  d.b = positive_int_dim(shape, "B");
  d.hq = positive_int_dim(shape, "Hq");
  d.hkv = positive_int_dim(shape, "Hkv");
  d.sq = positive_int_dim(shape, "Sq");
  d.sk = positive_int_dim(shape, "Sk");
  d.d = positive_int_dim(shape, "D");
  if (d.hq % d.hkv != 0)
    throw std::invalid_argument("shape " + shape.label + ": Hq must be a multiple of Hkv");
  // Every compared value must be finite: a causal row with no visible key would have LSE = -inf.
  if (d.causal && d.sq > d.sk)
    throw std::invalid_argument("shape " + shape.label + ": causal needs Sq <= Sk");
  d.scale = 1.0f / std::sqrt(static_cast<float>(d.d));  // the tasks' softmax scale (protocol.h)
  // Free the previous shape's memory before taking the new one, so the peak is one shape's worth.
  for (Input* input : inputs_) {
    input->data = DeviceBuffer();
    input->copy = DeviceBuffer();
  }
  for (Output* output : outputs_) {
    output->data = DeviceBuffer();
    output->snapshot = DeviceBuffer();
    output->reference = DeviceBuffer();
  }
  dims_ = d;
}

void AttentionFamily::allocate_buffers(const std::vector<std::pair<Input*, size_t>>& inputs,
                                       const std::vector<std::pair<Output*, size_t>>& outputs,
                                       DeviceBuffer* extra, size_t extra_bytes) {
  for (const auto& [input, bytes] : inputs) input->data = DeviceBuffer::shared(bytes);
  for (const auto& [output, bytes] : outputs) output->data = DeviceBuffer::shared(bytes);
  if (extra != nullptr) *extra = DeviceBuffer::shared(extra_bytes);
  for (const auto& [input, bytes] : inputs) input->copy = DeviceBuffer(bytes);
  for (const auto& [output, bytes] : outputs) {
    output->snapshot = DeviceBuffer::exported(bytes);  // written by the solution process (kSnapshotPoint)
    output->reference = DeviceBuffer(bytes / static_cast<size_t>(output->elem_bytes) * sizeof(float));
  }
}

std::vector<int64_t> AttentionFamily::dims_arguments() const {
  return {dims_.b, dims_.hq, dims_.hkv, dims_.sq, dims_.sk, dims_.d, dims_.causal ? 1 : 0};
}

std::vector<std::pair<std::string, DeviceBuffer*>> AttentionFamily::shared_buffers() {
  std::vector<std::pair<std::string, DeviceBuffer*>> buffers;
  for (Input* input : inputs_) buffers.emplace_back(input->name, &input->data);
  for (Output* output : outputs_) buffers.emplace_back(output->name, &output->data);
  return buffers;
}

void AttentionFamily::poison_outputs(cudaStream_t stream) {
  for (Output* output : outputs_) poison(output->data, stream);
}

void AttentionFamily::snapshot_outputs(cudaStream_t stream) {
  for (Output* output : outputs_) {
    PTXBENCH_CUDA(cudaMemcpyAsync(output->snapshot.get(), output->data.get(), output->data.bytes(),
                                  cudaMemcpyDeviceToDevice, stream));
  }
}

uint64_t AttentionFamily::outputs_changed_since_snapshot(cudaStream_t stream) {
  uint64_t changed = 0;
  for (Output* output : outputs_) {
    changed += count_differences(output->data.get(), output->snapshot.get(), output->data.bytes(),
                                 output->elem_bytes, stream);
  }
  return changed;
}

std::vector<std::pair<std::string, uint64_t>> AttentionFamily::changed_inputs(cudaStream_t stream) {
  std::vector<std::pair<std::string, uint64_t>> changed;
  for (Input* input : inputs_) {
    changed.emplace_back(input->name, count_differences(input->data.get(), input->copy.get(),
                                                        input->data.bytes(), input->elem_bytes, stream));
  }
  return changed;
}

std::vector<OutputCheck> AttentionFamily::compare(const Tolerance& tolerance, cudaStream_t stream) {
  std::vector<OutputCheck> checks;
  for (Output* output : outputs_) {
    const auto it = tolerances_.find(output->name);
    const Tolerance& t = it == tolerances_.end() ? tolerance : it->second;
    const int64_t n = output->rows * output->cols;
    const auto rtol = static_cast<float>(t.rtol), atol = static_cast<float>(t.atol);
    OutputCheck check{.name = output->name, .rows = output->rows, .cols = output->cols, .comparison = {}};
    check.comparison =
        output->elem_bytes == 2
            ? compare_bf16(output->snapshot.as<const __nv_bfloat16>(), output->reference.as<const float>(), n,
                           rtol, atol, protocol::kMaxReportedMismatches, stream)
            : compare_f32(output->snapshot.as<const float>(), output->reference.as<const float>(), n, rtol,
                          atol, protocol::kMaxReportedMismatches, stream);
    checks.push_back(std::move(check));
  }
  return checks;
}

void AttentionFamily::call_baseline(cudaStream_t) {
  throw std::logic_error("the runner times no attention baseline (describe_baseline() is null)");
}

Json AttentionFamily::describe_baseline() const {
  return nullptr;
}

// Every element bears on the outputs while each query row sees a key (Sq <= Sk, the timed shapes'; the last
// row sees every key, masked or not). A causal call with Sq > Sk need not read its first Sq - Sk query rows.
double AttentionFamily::input_bytes() const {
  size_t bytes = 0;
  for (const Input* input : inputs_) bytes += input->data.bytes();
  return static_cast<double>(bytes);
}

// ---- forward
// --------------------------------------------------------------------------------------------------

void AttentionForwardFamily::allocate(const ShapeSpec& shape) {
  inputs_ = {&q_, &k_, &v_};
  outputs_ = {&o_, &lse_};
  set_shape(shape);
  // O is compared as one row per token (b * Sq + i) of Hq * D values (h * D + d); LSE as one row per (b, h)
  // of Sq values (i): a mismatch's row and column then name the token or the query row.
  o_.rows = int64_t{dims_.b} * dims_.sq;
  o_.cols = int64_t{dims_.hq} * dims_.d;
  lse_.rows = int64_t{dims_.b} * dims_.hq;
  lse_.cols = dims_.sq;
  allocate_buffers({{&q_, bytes_of(dims_.q_elements(), 2)},
                    {&k_, bytes_of(dims_.kv_elements(), 2)},
                    {&v_, bytes_of(dims_.kv_elements(), 2)}},
                   {{&o_, bytes_of(dims_.q_elements(), 2)}, {&lse_, bytes_of(dims_.lse_elements(), 4)}},
                   nullptr, 0);
}

void AttentionFamily::fill_qkv(uint64_t key, cudaStream_t stream) {
  fill_normal_bf16(q_.data.as<__nv_bfloat16>(), q_.copy.as<__nv_bfloat16>(), dims_.q_elements(),
                   derive_key(key, 0), 1.0f, stream);
  fill_normal_bf16(k_.data.as<__nv_bfloat16>(), k_.copy.as<__nv_bfloat16>(), dims_.kv_elements(),
                   derive_key(key, 1), 1.0f, stream);
  fill_normal_bf16(v_.data.as<__nv_bfloat16>(), v_.copy.as<__nv_bfloat16>(), dims_.kv_elements(),
                   derive_key(key, 2), 1.0f, stream);
}

void AttentionForwardFamily::fill_inputs(uint64_t key, cudaStream_t stream) {
  fill_qkv(key, stream);
}

SolutionCall AttentionForwardFamily::solution_call() const {
  return {.pointers = {&q_.data, &k_.data, &v_.data, &o_.data, &lse_.data},
          .ints = dims_arguments(),
          .scale = dims_.scale,
          .snapshots = {{3, &o_.snapshot}, {4, &lse_.snapshot}}};
}

void AttentionForwardFamily::compute_reference(cudaStream_t stream) {
  attention_forward_reference(dims_, bf16(q_.copy), bf16(k_.copy), bf16(v_.copy), o_.reference.as<float>(),
                              lse_.reference.as<float>(), stream);
}

double AttentionForwardFamily::flops() const {
  const double full = 4.0 * dims_.b * dims_.hq * dims_.sq * dims_.sk * dims_.d;
  return dims_.causal ? full / 2 : full;
}

// ---- backward
// -------------------------------------------------------------------------------------------------

void AttentionBackwardFamily::allocate(const ShapeSpec& shape) {
  inputs_ = {&q_, &k_, &v_, &o_, &lse_, &do_};
  outputs_ = {&dq_, &dk_, &dv_};
  workspace_ = DeviceBuffer();
  forward_o_ = DeviceBuffer();
  forward_lse_ = DeviceBuffer();
  delta_ = DeviceBuffer();
  set_shape(shape);
  label_ = shape.label;
  // dQ: one row per token (b * Sq + i) of Hq * D values; dK and dV: one row per key token (b * Sk + j) of
  // Hkv * D values.
  dq_.rows = int64_t{dims_.b} * dims_.sq;
  dq_.cols = int64_t{dims_.hq} * dims_.d;
  dk_.rows = dv_.rows = int64_t{dims_.b} * dims_.sk;
  dk_.cols = dv_.cols = int64_t{dims_.hkv} * dims_.d;

  const uint64_t workspace_bytes = solution_->workspace_bytes(dims_arguments());
  if (workspace_bytes > kMaxWorkspaceBytes) {
    throw SolutionFault("shape " + shape.to_string() + ": " + std::string(solution::kWorkspaceEntryPoint) +
                            " asked for " + std::to_string(workspace_bytes) + " bytes; at most " +
                            std::to_string(kMaxWorkspaceBytes) + " (4 GiB) are given",
                        shape.label, 0, "workspace size", std::nullopt, std::nullopt);
  }
  const size_t q_bytes = bytes_of(dims_.q_elements(), 2), kv_bytes = bytes_of(dims_.kv_elements(), 2);
  allocate_buffers({{&q_, q_bytes},
                    {&k_, kv_bytes},
                    {&v_, kv_bytes},
                    {&o_, q_bytes},
                    {&lse_, bytes_of(dims_.lse_elements(), 4)},
                    {&do_, q_bytes}},
                   {{&dq_, q_bytes}, {&dk_, kv_bytes}, {&dv_, kv_bytes}},
                   workspace_bytes > 0 ? &workspace_ : nullptr, workspace_bytes);
  forward_o_ = DeviceBuffer(bytes_of(dims_.q_elements(), 4));
  forward_lse_ = DeviceBuffer(bytes_of(dims_.lse_elements(), 4));
  delta_ = DeviceBuffer(bytes_of(dims_.lse_elements(), 4));
}

void AttentionBackwardFamily::fill_inputs(uint64_t key, cudaStream_t stream) {
  fill_qkv(key, stream);
  fill_normal_bf16(do_.data.as<__nv_bfloat16>(), do_.copy.as<__nv_bfloat16>(), dims_.q_elements(),
                   derive_key(key, 3), 1.0f, stream);
  // O and LSE must be the forward of this Q, K, V (the backward's formulas assume it): the reference forward,
  // O rounded to bf16 as a forward kernel would store it, LSE as is.
  attention_forward_reference(dims_, bf16(q_.copy), bf16(k_.copy), bf16(v_.copy), forward_o_.as<float>(),
                              forward_lse_.as<float>(), stream);
  round_to_bf16(forward_o_.as<const float>(), o_.data.as<__nv_bfloat16>(), o_.copy.as<__nv_bfloat16>(),
                dims_.q_elements(), stream);
  for (DeviceBuffer* target : {&lse_.data, &lse_.copy}) {
    PTXBENCH_CUDA(cudaMemcpyAsync(target->get(), forward_lse_.get(), forward_lse_.bytes(),
                                  cudaMemcpyDeviceToDevice, stream));
  }
}

void AttentionBackwardFamily::poison_outputs(cudaStream_t stream) {
  AttentionFamily::poison_outputs(stream);
  poison(workspace_, stream);
}

SolutionCall AttentionBackwardFamily::solution_call() const {
  return {.pointers = {&q_.data, &k_.data, &v_.data, &o_.data, &lse_.data, &do_.data, &dq_.data, &dk_.data,
                       &dv_.data, workspace_.get() != nullptr ? &workspace_ : nullptr},
          .ints = dims_arguments(),
          .scale = dims_.scale,
          .snapshots = {{6, &dq_.snapshot}, {7, &dk_.snapshot}, {8, &dv_.snapshot}}};
}

std::vector<std::pair<std::string, DeviceBuffer*>> AttentionBackwardFamily::shared_buffers() {
  auto buffers = AttentionFamily::shared_buffers();
  if (workspace_.get() != nullptr) buffers.emplace_back("workspace", &workspace_);
  return buffers;
}

void AttentionBackwardFamily::compute_reference(cudaStream_t stream) {
  attention_backward_reference(dims_, bf16(q_.copy), bf16(k_.copy), bf16(v_.copy), bf16(o_.copy),
                               lse_.copy.as<const float>(), bf16(do_.copy), dq_.reference.as<float>(),
                               dk_.reference.as<float>(), dv_.reference.as<float>(), delta_.as<float>(),
                               stream);
}

double AttentionBackwardFamily::flops() const {
  const double full = 10.0 * dims_.b * dims_.hq * dims_.sq * dims_.sk * dims_.d;
  return dims_.causal ? full / 2 : full;
}

}  // namespace ptxbench::runner
