// A family's trusted side in the runner: its fp32 reference, the inputs it computes from the others
// (Fill::computed), and a vendor baseline timed in this process (GEMM's cuBLASLt). Everything else the runner
// does with a family (allocating, filling, passing, comparing, counting FLOPs) it reads from the family's
// descriptor (src/family, described_family.h). A new family is one class here, made by make_reference().
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include <cuda_runtime.h>
#include <nlohmann/json.hpp>

#include "family/family.h"
#include "runner/device_buffer.h"
#include "runner/layouts.h"

namespace ptxbench::runner {

// What a reference reads and writes, by the descriptor's names: the pristine copy of each input (never seen
// by the solution), the buffer of each input the solution reads (a computed input is written into both), the
// fp32 reference of each output; and the shape's values, with the float scalars.
struct ReferenceTensors {
  Values values;
  std::map<std::string, double> reals;  // the float scalars' values ("scale")
  std::map<std::string, DeviceBuffer*> pristine, data, reference;
  // Per output, one byte per element, for compute_sample() to mark what it computed.
  std::map<std::string, DeviceBuffer*> checked;

  int dim(const std::string& name) const { return static_cast<int>(values.at(name)); }
};

class Reference {
 public:
  virtual ~Reference() = default;
  // A new shape: allocate the scratch the reference needs.
  virtual void allocate(const ReferenceTensors&) {}
  // Writes the Fill::computed inputs (data and pristine copy): from the other inputs' pristine copies, or drawn
  // from `key` (the call's, derived for them).
  virtual void compute_inputs(ReferenceTensors&, uint64_t /*key*/, cudaStream_t) {}
  // Writes each output's fp32 reference from the inputs' pristine copies.
  virtual void compute(ReferenceTensors& tensors, cudaStream_t stream) = 0;
  // Whether the time stage checks each timed call on a sample of the outputs' rows (compute_sample), where
  // the whole reference costs many times the call (the dense attention families).
  virtual bool samples() const { return false; }
  // The reference of a sample of the outputs' rows (layouts.h), 1 in each output's `checked` bytes at the
  // elements computed (zeroed elsewhere). The default, for a reference that does not sample, throws
  // std::logic_error.
  virtual void compute_sample(ReferenceTensors&, SampleDraw, cudaStream_t);
  // A baseline timed in this process, on the pristine inputs into outputs of its own; null when there is
  // none.
  virtual nlohmann::ordered_json describe_baseline() const { return nullptr; }
  virtual void call_baseline(ReferenceTensors&, cudaStream_t);  // throws: there is none
};

// The reference of family `name`, or nullptr when the runner has none.
std::unique_ptr<Reference> make_reference(const std::string& name);

}  // namespace ptxbench::runner
