#include "runner/references.h"

#include <stdexcept>
#include <vector>

#include <cuda_bf16.h>

#include "runner/attention_kernels.h"
#include "runner/cublaslt_gemm.h"
#include "runner/cuda_check.h"
#include "runner/layouts.h"

namespace ptxbench::runner {

void Reference::call_baseline(ReferenceTensors&, cudaStream_t) {
  throw std::logic_error("the runner times no baseline of this family in its own process");
}

void Reference::compute_sample(ReferenceTensors&, SampleDraw, cudaStream_t) {
  throw std::logic_error("this family's reference computes every row");
}

namespace {

const __nv_bfloat16* bf16(const DeviceBuffer* buffer) {
  return buffer->as<const __nv_bfloat16>();
}

// GEMM: cuBLASLt with fp32 output is the reference (fp32 accumulation of the same bf16 products), and
// cuBLASLt with bf16 output the baseline.
class GemmReference final : public Reference {
 public:
  void allocate(const ReferenceTensors&) override {
    reference_plan_.reset();
    baseline_plan_.reset();
    baseline_output_ = DeviceBuffer();
  }

  void compute(ReferenceTensors& t, cudaStream_t stream) override {
    if (!cublaslt_) cublaslt_ = std::make_unique<CublasLt>();
    if (!reference_plan_)
      reference_plan_ =
          std::make_unique<GemmPlan>(*cublaslt_, t.dim("M"), t.dim("N"), t.dim("K"), CUDA_R_32F);
    reference_plan_->run(bf16(t.pristine.at("A")), bf16(t.pristine.at("B")), t.reference.at("C")->get(),
                         stream);
  }

  nlohmann::ordered_json describe_baseline() const override {
    nlohmann::ordered_json description = {{"name", "cublaslt"},
                                          {"compute", "bf16 in, fp32 compute, bf16 out"},
                                          {"workspace_limit_bytes", CublasLt::kWorkspaceBytes}};
    if (baseline_plan_) description["algo"] = baseline_plan_->describe();
    return description;
  }

  void call_baseline(ReferenceTensors& t, cudaStream_t stream) override {
    if (!cublaslt_) cublaslt_ = std::make_unique<CublasLt>();
    if (!baseline_plan_)
      baseline_plan_ =
          std::make_unique<GemmPlan>(*cublaslt_, t.dim("M"), t.dim("N"), t.dim("K"), CUDA_R_16BF);
    if (baseline_output_.get() == nullptr) baseline_output_ = DeviceBuffer(t.data.at("C")->bytes());
    baseline_plan_->run(bf16(t.pristine.at("A")), bf16(t.pristine.at("B")), baseline_output_.get(), stream);
  }

 private:
  std::unique_ptr<CublasLt> cublaslt_;  // created on first use, shared by the plans
  std::unique_ptr<GemmPlan> reference_plan_, baseline_plan_;
  DeviceBuffer baseline_output_;  // the baseline's bf16 C, allocated on first use
};

AttentionDims attention_dims(const ReferenceTensors& t) {
  return {.b = t.dim("B"),
          .hq = t.dim("Hq"),
          .hkv = t.dim("Hkv"),
          .sq = t.dim("Sq"),
          .sk = t.dim("Sk"),
          .d = t.dim("D"),
          .causal = t.values.at("causal") != 0,
          .scale = static_cast<float>(t.reals.at("scale"))};
}

// attention_kernels.cu's fp32 forward. Its vendor baseline runs in a process of its own (the descriptor's
// baseline module), not here.
class AttentionForwardReference final : public Reference {
 public:
  void compute(ReferenceTensors& t, cudaStream_t stream) override {
    attention_forward_reference(attention_dims(t), bf16(t.pristine.at("Q")), bf16(t.pristine.at("K")),
                                bf16(t.pristine.at("V")), t.reference.at("O")->as<float>(),
                                t.reference.at("LSE")->as<float>(), stream);
  }

  bool samples() const override { return true; }
  void compute_sample(ReferenceTensors& t, SampleDraw draw, cudaStream_t stream) override {
    const AttentionDims dims = attention_dims(t);
    attention_forward_sample(dims, bf16(t.pristine.at("Q")), bf16(t.pristine.at("K")),
                             bf16(t.pristine.at("V")), t.reference.at("O")->as<float>(),
                             t.reference.at("LSE")->as<float>(),
                             draw_attention_sample(dims.b, dims.hq / dims.hkv, dims.sq, dims.sk, false, draw),
                             t.checked.at("O")->as<uint8_t>(), t.checked.at("LSE")->as<uint8_t>(), stream);
  }
};

// The backward's O and LSE are the reference forward of its Q, K, V as a forward kernel computes and stores
// them (P rounded to bf16 for P V, O rounded to bf16; LSE in fp32 as is); its reference is
// attention_kernels.cu's fp32 backward, which takes P from the given LSE and Delta from the given O, as the
// ABI says.
class AttentionBackwardReference final : public Reference {
 public:
  void allocate(const ReferenceTensors& t) override {
    const AttentionDims dims = attention_dims(t);
    forward_o_ = DeviceBuffer(static_cast<size_t>(dims.q_elements()) * sizeof(float));
    forward_lse_ = DeviceBuffer(static_cast<size_t>(dims.lse_elements()) * sizeof(float));
    delta_ = DeviceBuffer(static_cast<size_t>(dims.lse_elements()) * sizeof(float));
  }

  void compute_inputs(ReferenceTensors& t, uint64_t, cudaStream_t stream) override {
    const AttentionDims dims = attention_dims(t);
    attention_forward_reference(dims, bf16(t.pristine.at("Q")), bf16(t.pristine.at("K")),
                                bf16(t.pristine.at("V")), forward_o_.as<float>(), forward_lse_.as<float>(),
                                stream, kAttentionScoreBlockBytes, true);
    round_to_bf16(forward_o_.as<const float>(), t.data.at("O")->as<__nv_bfloat16>(),
                  t.pristine.at("O")->as<__nv_bfloat16>(), dims.q_elements(), stream);
    for (DeviceBuffer* target : {t.data.at("LSE"), t.pristine.at("LSE")})
      PTXBENCH_CUDA(cudaMemcpyAsync(target->get(), forward_lse_.get(), forward_lse_.bytes(),
                                    cudaMemcpyDeviceToDevice, stream));
  }

  void compute(ReferenceTensors& t, cudaStream_t stream) override {
    attention_backward_reference(attention_dims(t), bf16(t.pristine.at("Q")), bf16(t.pristine.at("K")),
                                 bf16(t.pristine.at("V")), bf16(t.pristine.at("O")),
                                 t.pristine.at("LSE")->as<const float>(), bf16(t.pristine.at("dO")),
                                 t.reference.at("dQ")->as<float>(), t.reference.at("dK")->as<float>(),
                                 t.reference.at("dV")->as<float>(), delta_.as<float>(), stream);
  }

  bool samples() const override { return true; }
  void compute_sample(ReferenceTensors& t, SampleDraw draw, cudaStream_t stream) override {
    const AttentionDims dims = attention_dims(t);
    attention_backward_sample(dims, bf16(t.pristine.at("Q")), bf16(t.pristine.at("K")),
                              bf16(t.pristine.at("V")), bf16(t.pristine.at("O")),
                              t.pristine.at("LSE")->as<const float>(), bf16(t.pristine.at("dO")),
                              t.reference.at("dQ")->as<float>(), t.reference.at("dK")->as<float>(),
                              t.reference.at("dV")->as<float>(), delta_.as<float>(),
                              draw_attention_sample(dims.b, dims.hq / dims.hkv, dims.sq, dims.sk, true, draw),
                              t.checked.at("dQ")->as<uint8_t>(), t.checked.at("dK")->as<uint8_t>(),
                              t.checked.at("dV")->as<uint8_t>(), stream);
  }

 private:
  DeviceBuffer forward_o_, forward_lse_, delta_;  // fp32 scratch
};

// A computed int32 input drawn on the host, into the solution's buffer and the pristine copy. From pageable
// memory: the copy has left `host` when the call returns.
void upload_input(ReferenceTensors& t, const std::string& name, const std::vector<int32_t>& host,
                  cudaStream_t stream) {
  for (DeviceBuffer* target : {t.data.at(name), t.pristine.at(name)}) {
    if (target->bytes() != host.size() * sizeof(int32_t))
      throw std::logic_error(name + ": the layout drawn has another size than the tensor");
    PTXBENCH_CUDA(
        cudaMemcpyAsync(target->get(), host.data(), target->bytes(), cudaMemcpyHostToDevice, stream));
  }
}

// The pristine copy of a computed int32 input, read back to the host (the reference's loop over sequences).
std::vector<int32_t> download_input(ReferenceTensors& t, const std::string& name, cudaStream_t stream) {
  const DeviceBuffer* pristine = t.pristine.at(name);
  std::vector<int32_t> host(pristine->bytes() / sizeof(int32_t));
  PTXBENCH_CUDA(
      cudaMemcpyAsync(host.data(), pristine->get(), pristine->bytes(), cudaMemcpyDeviceToHost, stream));
  PTXBENCH_CUDA(cudaStreamSynchronize(stream));
  return host;
}

// Paged decode: the lengths and the page table of each call drawn from its key (layouts.h), then
// attention_kernels.cu's fp32 decode over them.
class PagedDecodeReference final : public Reference {
 public:
  void compute_inputs(ReferenceTensors& t, uint64_t key, cudaStream_t stream) override {
    const PagedLayout layout = draw_paged_layout(t.dim("B"), t.dim("L"), t.values.at("T"), t.dim("page"),
                                                 t.dim("max_pages"), t.dim("num_pages"), key);
    upload_input(t, "seq_lens", layout.seq_lens, stream);
    upload_input(t, "page_table", layout.page_table, stream);
  }

  void compute(ReferenceTensors& t, cudaStream_t stream) override {
    const PagedDecodeDims dims{.b = t.dim("B"),
                               .hq = t.dim("Hq"),
                               .hkv = t.dim("Hkv"),
                               .d = t.dim("D"),
                               .page_size = t.dim("page"),
                               .max_pages = t.dim("max_pages"),
                               .scale = static_cast<float>(t.reals.at("scale"))};
    paged_decode_reference(dims, bf16(t.pristine.at("Q")), bf16(t.pristine.at("K_cache")),
                           bf16(t.pristine.at("V_cache")), t.pristine.at("page_table")->as<const int>(),
                           t.pristine.at("seq_lens")->as<const int>(), t.reference.at("O")->as<float>(),
                           t.reference.at("LSE")->as<float>(), stream);
  }
};

// Ragged prefill: the order of the sequences drawn from each call's key (layouts.h), then one dense causal
// forward of attention_kernels.cu per sequence, at the offsets read back from the pristine indptr.
class RaggedPrefillReference final : public Reference {
 public:
  void compute_inputs(ReferenceTensors& t, uint64_t key, cudaStream_t stream) override {
    const std::vector<int32_t> indptr =
        draw_ragged_indptr(t.dim("B"), t.dim("Bl"), t.dim("L"), t.dim("S"), key);
    upload_input(t, "indptr", indptr, stream);
  }

  void compute(ReferenceTensors& t, cudaStream_t stream) override {
    const std::vector<int32_t> indptr = download_input(t, "indptr", stream);
    ragged_prefill_reference(t.dim("Hq"), t.dim("Hkv"), t.dim("D"), static_cast<float>(t.reals.at("scale")),
                             indptr, bf16(t.pristine.at("Q")), bf16(t.pristine.at("K")),
                             bf16(t.pristine.at("V")), t.reference.at("O")->as<float>(),
                             t.reference.at("LSE")->as<float>(), stream);
  }
};

// Paged prefill: the order of the sequences and their pages drawn from each call's key (layouts.h), then
// attention_kernels.cu's gather and dense causal forward per sequence, at the offsets and lengths read back
// from the pristine inputs.
class PagedPrefillReference final : public Reference {
 public:
  void compute_inputs(ReferenceTensors& t, uint64_t key, cudaStream_t stream) override {
    const PagedPrefillLayout layout =
        draw_paged_prefill_layout(t.dim("B"), t.dim("Bl"), t.dim("L"), t.dim("S"), t.dim("P"), t.dim("page"),
                                  t.dim("max_pages"), t.dim("num_pages"), key);
    upload_input(t, "qo_indptr", layout.qo_indptr, stream);
    upload_input(t, "kv_lens", layout.kv_lens, stream);
    upload_input(t, "page_table", layout.page_table, stream);
  }

  void compute(ReferenceTensors& t, cudaStream_t stream) override {
    const std::vector<int32_t> qo_indptr = download_input(t, "qo_indptr", stream),
                               kv_lens = download_input(t, "kv_lens", stream);
    const PagedPrefillDims dims{.hq = t.dim("Hq"),
                                .hkv = t.dim("Hkv"),
                                .d = t.dim("D"),
                                .page_size = t.dim("page"),
                                .max_pages = t.dim("max_pages"),
                                .scale = static_cast<float>(t.reals.at("scale"))};
    paged_prefill_reference(dims, qo_indptr, kv_lens, bf16(t.pristine.at("Q")),
                            bf16(t.pristine.at("K_cache")), bf16(t.pristine.at("V_cache")),
                            t.pristine.at("page_table")->as<const int>(), t.reference.at("O")->as<float>(),
                            t.reference.at("LSE")->as<float>(), stream);
  }
};

}  // namespace

std::unique_ptr<Reference> make_reference(const std::string& name) {
  if (name == "gemm") return std::make_unique<GemmReference>();
  if (name == "attention-forward") return std::make_unique<AttentionForwardReference>();
  if (name == "attention-backward") return std::make_unique<AttentionBackwardReference>();
  if (name == "attention-decode-paged") return std::make_unique<PagedDecodeReference>();
  if (name == "attention-prefill-ragged") return std::make_unique<RaggedPrefillReference>();
  if (name == "attention-prefill-paged") return std::make_unique<PagedPrefillReference>();
  return nullptr;
}

}  // namespace ptxbench::runner
