// A task family in the runner: its descriptor's tensors as buffers (src/family), and its reference.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime.h>
#include <nlohmann/json.hpp>

#include "family/family.h"
#include "runner/kernels.h"
#include "runner/references.h"
#include "runner/solution_process.h"

namespace ptxbench::runner {

// The runner writes its JSON with the fields in the order it sets them (status before details).
using Json = nlohmann::ordered_json;

struct ShapeSpec {
  std::string label;
  std::vector<std::pair<std::string, int64_t>> dims;  // in the request's order: {"M", 8192}, {"N", 4096}, ...
  std::optional<int64_t> dim(const std::string& name) const;
  int64_t volume() const;         // product of the dimensions, to pick the smallest shape
  std::string to_string() const;  // "main (M=8192 N=4096 K=4096)"
  Json dims_json() const;         // {"M": 8192, "N": 4096, "K": 4096}
};

using Tolerance = ptxbench::Tolerance;

// One output compared with its reference, viewed as rows x cols (row-major).
struct OutputCheck {
  std::string name;
  int64_t rows = 0;
  int64_t cols = 0;
  Comparison comparison;
  bool passed() const { return comparison.mismatches == 0 && comparison.unwritten_outside_sample == 0; }
};

// A task family as the runner drives it: the buffers of its descriptor's tensors (src/family), which it
// allocates, fills, passes to the solution, checks and compares, and its Reference (references.h) for what
// only code can say. The modes in session.cpp drive every family through this one class.
class TaskFamily {
 public:
  TaskFamily(const Family& spec, std::unique_ptr<Reference> reference,
             const std::map<std::string, bool>& parameters, std::map<std::string, Tolerance> tolerances);

  // The solution process the family asks for what only the solution knows (a workspace's size).
  void bind(SolutionProcess& solution) { solution_ = &solution; }

  // Allocates, for one shape, the inputs, pristine copies of them for the reference, the outputs, a snapshot
  // of the outputs and the reference outputs, and the workspace the solution asks for (a SolutionFault above
  // the family's limit); frees the previous shape's. Throws std::invalid_argument for a shape the family
  // cannot take (a missing or non-positive dimension, a broken shape rule).
  void allocate(const ShapeSpec& shape);

  // Writes fresh random inputs derived from `key`, the same values into the pristine copies, and then the
  // inputs the reference computes from them.
  void fill_inputs(uint64_t key, cudaStream_t stream);

  // Fills the outputs and the workspace with 0xFF bytes (NaN in bf16 and fp32), so that an element the
  // solution does not write fails, and a workspace is not zeroed.
  void poison_outputs(cudaStream_t stream);

  // The entry point's arguments for the current buffers: the solution process calls it with them.
  SolutionCall solution_call() const;
  // The buffers the solution reads and writes (allocated with DeviceBuffer::shared), by name: moved before
  // each checked or timed call, their guards filled and checked around it.
  std::vector<std::pair<std::string, DeviceBuffer*>> shared_buffers();

  // Copies the outputs aside: what the solution had written when the runner took it to be done.
  void snapshot_outputs(cudaStream_t stream);

  // Elements of the outputs that differ from the snapshot (something wrote after it). Synchronises `stream`.
  uint64_t outputs_changed_since_snapshot(cudaStream_t stream);

  // Per input, the elements that differ from the pristine copy. Synchronises `stream`.
  std::vector<std::pair<std::string, uint64_t>> changed_inputs(cudaStream_t stream);

  // Computes the reference outputs from the pristine copies.
  void compute_reference(cudaStream_t stream);
  // The time stage's check of a timed call: the reference of a sample of the outputs' rows (`draw`,
  // layouts.h), where the family's reference samples (Reference::samples), else of every row. Returns
  // whether it sampled.
  bool compute_reference_sample(SampleDraw draw, cudaStream_t stream);
  // Whether compute_reference_sample samples.
  bool samples() const { return reference_->samples(); }

  // Compares the snapshot of every output with the reference, each with its tolerance (the request's per-
  // output one, else `tolerance`): the elements the last reference computed, all of them but after a sampled
  // one. Synchronises `stream`.
  std::vector<OutputCheck> compare(const Tolerance& tolerance, cudaStream_t stream);

  // Floating-point operations of one call on the current shape (the descriptor's formula).
  double flops() const;
  // Bytes one call on the current shape must read at least once: after the cold-L2 flush they come from DRAM
  // (the time stage's physics floor). The descriptor's formula, else the inputs' sizes. Outputs do not count:
  // writes may still sit in the L2 when the call's stop event fires.
  double input_bytes() const;

  // The baseline timed in this process (Reference::call_baseline), on the pristine inputs; its description,
  // null when the family has none here.
  void call_baseline(cudaStream_t stream);
  Json describe_baseline() const;

  const Family& spec() const { return spec_; }

 private:
  // One tensor of the descriptor: what the solution sees (`data`), and as its role needs, the pristine copy
  // (an input), the snapshot, the fp32 reference and the elements a sampled reference computed (an output,
  // allocated at the first sample).
  struct Buffers {
    const TensorSpec* spec;
    std::vector<int64_t> extents;
    DeviceBuffer data, pristine, snapshot, reference, checked;
  };
  const Buffers& buffers(const std::string& name) const;
  ReferenceTensors reference_tensors();

  const Family& spec_;
  std::unique_ptr<Reference> reference_;
  std::map<std::string, bool> parameters_;
  std::map<std::string, Tolerance> tolerances_;
  Values values_;                 // the current shape's dimensions and the parameters
  std::vector<Buffers> tensors_;  // in the descriptor's order
  SolutionProcess* solution_ = nullptr;
  bool sampled_ = false;  // the last reference computed was a sample
};

// The dimension `name` of `shape` as an int; throws std::invalid_argument when it is missing or out
// of 1..INT_MAX.
int positive_int_dim(const ShapeSpec& shape, const char* name);

struct Request;

// The family for a request's "family" and "entry_point", set up with its parameters and per-output
// tolerances; nullptr if there is none. Throws RequestError for parameters or tolerances the family does not
// take.
std::unique_ptr<TaskFamily> make_family(const Request& request);

}  // namespace ptxbench::runner
