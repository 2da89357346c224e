// The attention families (include/ptxbench/abi.h): forward (O and LSE) and backward (dQ, dK, dV with a
// solution-sized workspace), bf16 tensors, GQA, causal masking aligned bottom-right. Inputs are N(0,1) from
// the runner's Philox generator; the reference is attention_kernels.cu's (fp32, cuBLAS SGEMMs). The runner
// times no baseline for them (describe_baseline() is null; session.cpp then times the solution alone, and the
// parent adds the vendor attention's, measured by baselines/attention_torch.py).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <cuda_bf16.h>

#include "ptxbench/abi.h"
#include "runner/attention_kernels.h"
#include "runner/device_buffer.h"
#include "runner/family.h"

namespace ptxbench::runner {

// What both attention families share: the shape, the parameters, the per-output tolerances, and the buffers
// of tensors the solution reads (with pristine copies) or writes (with snapshots and fp32 references).
class AttentionFamily : public TaskFamily {
 public:
  // `parameters` must set "causal"; `tolerances` overrides the session's tolerance per output name.
  AttentionFamily(const std::map<std::string, bool>& parameters, std::map<std::string, Tolerance> tolerances);

  void poison_outputs(cudaStream_t stream) override;
  void snapshot_outputs(cudaStream_t stream) override;
  uint64_t outputs_changed_since_snapshot(cudaStream_t stream) override;
  std::vector<std::pair<std::string, uint64_t>> changed_inputs(cudaStream_t stream) override;
  std::vector<OutputCheck> compare(const Tolerance& tolerance, cudaStream_t stream) override;
  std::vector<std::pair<std::string, DeviceBuffer*>> shared_buffers() override;
  void call_baseline(cudaStream_t stream) override;  // throws: there is none
  Json describe_baseline() const override;           // null: no baseline for this family yet
  double input_bytes() const override;               // every tensor in `inputs_`

 protected:
  // A tensor the solution reads: its buffer and a pristine copy.
  struct Input {
    std::string name;
    DeviceBuffer data, copy;
    int elem_bytes = 2;
  };
  // A tensor the solution writes, compared as rows x cols: its buffer, a snapshot, the fp32 reference.
  struct Output {
    std::string name;
    int64_t rows = 0, cols = 0;
    int elem_bytes = 2;  // 2: bf16, 4: fp32
    DeviceBuffer data, snapshot, reference;
  };

  // Reads B, Hq, Hkv, Sq, Sk, D and frees the previous shape's buffers; throws std::invalid_argument.
  void set_shape(const ShapeSpec& shape);
  // Allocates the buffers the solution sees (DeviceBuffer::shared, and `extra_bytes` of workspace into
  // `extra` unless it is null), the pristine copies, snapshots and references.
  void allocate_buffers(const std::vector<std::pair<Input*, size_t>>& inputs,
                        const std::vector<std::pair<Output*, size_t>>& outputs, DeviceBuffer* extra,
                        size_t extra_bytes);
  // The ints every attention entry point takes after its pointers: B, Hq, Hkv, Sq, Sk, D, causal.
  std::vector<int64_t> dims_arguments() const;
  static const __nv_bfloat16* bf16(const DeviceBuffer& b) { return b.as<const __nv_bfloat16>(); }
  // Q, K, V ~ N(0,1) from `key` (and their pristine copies): with scale = 1/sqrt(D) every score scale * q.k
  // is ~ N(0,1) whatever D, so the softmax is neither flat nor one-hot and every row's weights matter.
  void fill_qkv(uint64_t key, cudaStream_t stream);

  AttentionDims dims_;
  Input q_{"Q", {}, {}, 2}, k_{"K", {}, {}, 2}, v_{"V", {}, {}, 2};  // both directions take them
  std::vector<Input*> inputs_;                                       // in the order they are reported
  std::vector<Output*> outputs_;                                     // in the order they are compared

 private:
  std::map<std::string, Tolerance> tolerances_;
};

class AttentionForwardFamily final : public AttentionFamily {
 public:
  static constexpr const char* kFamily = "attention-forward";
  static constexpr const char* kEntryPoint = "ptxbench_attention_forward_bf16";
  using AttentionFamily::AttentionFamily;

  void allocate(const ShapeSpec& shape) override;
  void fill_inputs(uint64_t key, cudaStream_t stream) override;
  SolutionCall solution_call() const override;
  void compute_reference(cudaStream_t stream) override;
  double flops() const override;  // 4*B*Hq*Sq*Sk*D, halved when causal (the task files' formula)

 private:
  Output o_{"O", 0, 0, 2, {}, {}, {}}, lse_{"LSE", 0, 0, 4, {}, {}, {}};
};

class AttentionBackwardFamily final : public AttentionFamily {
 public:
  static constexpr const char* kFamily = "attention-backward";
  static constexpr const char* kEntryPoint = "ptxbench_attention_backward_bf16";
  static constexpr size_t kMaxWorkspaceBytes = size_t{4} << 30;
  using AttentionFamily::AttentionFamily;

  // Asks the solution for its workspace size (a SolutionFault above kMaxWorkspaceBytes) and allocates it.
  void allocate(const ShapeSpec& shape) override;
  // Q, K, V, dO ~ N(0,1); O and LSE are the reference forward of this Q, K, V (O rounded to bf16).
  void fill_inputs(uint64_t key, cudaStream_t stream) override;
  void poison_outputs(cudaStream_t stream) override;  // also fills the workspace with 0xFF: it is not zeroed
  SolutionCall solution_call() const override;
  std::vector<std::pair<std::string, DeviceBuffer*>> shared_buffers() override;
  void compute_reference(cudaStream_t stream) override;
  double flops() const override;  // 2.5x the forward: 10*B*Hq*Sq*Sk*D, halved when causal

 private:
  std::string label_;
  Input o_{"O", {}, {}, 2}, lse_{"LSE", {}, {}, 4}, do_{"dO", {}, {}, 2};
  Output dq_{"dQ", 0, 0, 2, {}, {}, {}}, dk_{"dK", 0, 0, 2, {}, {}, {}}, dv_{"dV", 0, 0, 2, {}, {}, {}};
  DeviceBuffer workspace_;
  DeviceBuffer forward_o_, forward_lse_, delta_;  // fp32 scratch of the reference
};

}  // namespace ptxbench::runner
