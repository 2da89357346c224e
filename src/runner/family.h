// A task family: everything the runner needs to know about one kind of kernel (GEMM now, attention later).
// The modes in session.cpp drive any family through this interface; a new family is one class implementing
// it, made by make_family().
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime.h>
#include <nlohmann/json.hpp>

#include "runner/kernels.h"
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

struct Tolerance {
  double rtol = 0;
  double atol = 0;
};

// One output compared with its reference, viewed as rows x cols (row-major).
struct OutputCheck {
  std::string name;
  int64_t rows = 0;
  int64_t cols = 0;
  Comparison comparison;
  bool passed() const { return comparison.mismatches == 0; }
};

class TaskFamily {
 public:
  virtual ~TaskFamily() = default;

  // The solution process the family asks for what only the solution knows (the backward's workspace size).
  void bind(SolutionProcess& solution) { solution_ = &solution; }

  // Allocates, for one shape, the inputs, pristine copies of them for the reference, the outputs, a snapshot
  // of the outputs and the reference outputs; frees the previous shape's. Throws std::invalid_argument for a
  // shape the family cannot take (a missing or non-positive dimension).
  virtual void allocate(const ShapeSpec& shape) = 0;

  // Writes fresh random inputs derived from `key`, and the same values into the pristine copies.
  virtual void fill_inputs(uint64_t key, cudaStream_t stream) = 0;

  // Fills the outputs with NaN so that an element the solution does not write fails.
  virtual void poison_outputs(cudaStream_t stream) = 0;

  // The entry point's arguments for the current buffers: the solution process calls it with them.
  virtual SolutionCall solution_call() const = 0;
  // The buffers the solution reads and writes (allocated with DeviceBuffer::shared), by name: moved before
  // each checked or timed call, their guards filled and checked around it.
  virtual std::vector<std::pair<std::string, DeviceBuffer*>> shared_buffers() = 0;

  // Copies the outputs aside: what the solution had written when the runner took it to be done.
  virtual void snapshot_outputs(cudaStream_t stream) = 0;

  // Elements of the outputs that differ from the snapshot (something wrote after it). Synchronises `stream`.
  virtual uint64_t outputs_changed_since_snapshot(cudaStream_t stream) = 0;

  // Per input, the elements that differ from the pristine copy. Synchronises `stream`.
  virtual std::vector<std::pair<std::string, uint64_t>> changed_inputs(cudaStream_t stream) = 0;

  // Computes the reference outputs from the pristine copies.
  virtual void compute_reference(cudaStream_t stream) = 0;

  // Compares the snapshot of every output with the reference. Synchronises `stream`.
  virtual std::vector<OutputCheck> compare(const Tolerance& tolerance, cudaStream_t stream) = 0;

  // Floating-point operations of one call on the current shape.
  virtual double flops() const = 0;
  // Bytes of the inputs one call on the current shape must read at least once: after the cold-L2 flush they
  // come from DRAM (the time stage's physics floor). Outputs do not count: writes may still sit in the L2
  // when the call's stop event fires.
  virtual double input_bytes() const = 0;

  // Runs the baseline (a vendor library) on the pristine copies into an output of its own.
  virtual void call_baseline(cudaStream_t stream) = 0;
  virtual Json describe_baseline() const = 0;  // {"name": "cublaslt", ...}

 protected:
  SolutionProcess* solution_ = nullptr;
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
