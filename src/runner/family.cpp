#include "runner/family.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <stdexcept>

#include "runner/cuda_check.h"
#include "runner/protocol.h"
#include "runner/request.h"

namespace ptxbench::runner {

std::optional<int64_t> ShapeSpec::dim(const std::string& name) const {
  for (const auto& [dim_name, value] : dims) {
    if (dim_name == name) return value;
  }
  return std::nullopt;
}

Json ShapeSpec::dims_json() const {
  Json object = Json::object();
  for (const auto& [name, value] : dims) object[name] = value;
  return object;
}

int64_t ShapeSpec::volume() const {
  int64_t product = 1;
  for (const auto& [name, value] : dims) product *= value;
  return product;
}

std::string ShapeSpec::to_string() const {
  std::string text = label + " (";
  bool first = true;
  for (const auto& [name, value] : dims) {
    text += (first ? "" : " ") + name + "=" + std::to_string(value);
    first = false;
  }
  return text + ")";
}

int positive_int_dim(const ShapeSpec& shape, const char* name) {
  const std::optional<int64_t> value = shape.dim(name);
  if (!value) throw std::invalid_argument("shape " + shape.label + " has no dimension " + name);
  if (*value <= 0 || *value > INT_MAX) {
    throw std::invalid_argument("shape " + shape.label + ": " + name + " must be in 1.." +
                                std::to_string(INT_MAX));
  }
  return static_cast<int>(*value);
}

namespace {

// Fills with kPoisonByte (kernels.h), so that an element not written fails.
void poison(DeviceBuffer& buffer, cudaStream_t stream) {
  if (buffer.get() != nullptr)
    PTXBENCH_CUDA(cudaMemsetAsync(buffer.get(), kPoisonByte, buffer.bytes(), stream));
}

size_t element_bytes(const TensorSpec& tensor) {
  return static_cast<size_t>(dtype_info(tensor.dtype).bytes);
}

}  // namespace

TaskFamily::TaskFamily(const Family& spec, std::unique_ptr<Reference> reference,
                       const std::map<std::string, bool>& parameters,
                       std::map<std::string, Tolerance> tolerances)
    : spec_(spec),
      reference_(std::move(reference)),
      parameters_(parameters),
      tolerances_(std::move(tolerances)) {
  for (const auto& [output, tolerance] : tolerances_) {
    const TensorSpec* tensor = spec_.tensor(output);
    if (tensor == nullptr || tensor->role != Role::output)
      throw std::invalid_argument("request: \"tolerances\" names \"" + output + "\", not an output of " +
                                  spec_.name);
  }
  for (const auto& [name, value] : parameters_) {
    (void)value;
    const bool known = std::any_of(spec_.parameters.begin(), spec_.parameters.end(),
                                   [&](const ParameterSpec& p) { return p.name == name; });
    if (!known) throw std::invalid_argument("request: unknown parameter \"" + name + "\" of " + spec_.name);
  }
  for (const ParameterSpec& p : spec_.parameters)
    if (!parameters_.contains(p.name))
      throw std::invalid_argument("request: the " + spec_.name + " family needs \"parameters\": {\"" +
                                  p.name + "\": ...}");
}

const TaskFamily::Buffers& TaskFamily::buffers(const std::string& name) const {
  for (const Buffers& b : tensors_)
    if (b.spec->name == name) return b;
  throw std::logic_error(spec_.name + ": no tensor " + name);
}

void TaskFamily::allocate(const ShapeSpec& shape) {
  std::map<std::string, int64_t> dims;
  for (const std::string& dim : spec_.dims) dims[dim] = positive_int_dim(shape, dim.c_str());
  Values values;
  std::string problem;
  try {
    values = values_of(spec_, dims, parameters_);
    problem = check_shape(spec_, values);
  } catch (const std::invalid_argument& error) {
    problem = error.what();
  }
  if (!problem.empty()) throw std::invalid_argument("shape " + shape.label + ": " + problem);
  // Free the previous shape's memory before taking the new one, so the peak is one shape's worth.
  tensors_.clear();
  values_ = std::move(values);
  for (const TensorSpec& tensor : spec_.tensors) {
    Buffers b{.spec = &tensor,
              .extents = {},
              .data = {},
              .pristine = {},
              .snapshot = {},
              .reference = {},
              .checked = {}};
    if (tensor.role == Role::workspace) {
      std::vector<int64_t> ints;
      // The workspace function's arguments are integer scalars of the entry point, by their names
      // ("page_size"), not dimensions ("page").
      for (const std::string& argument : spec_.workspace->arguments)
        ints.push_back(integer_scalar(spec_, argument, values_));
      const uint64_t bytes = solution_->workspace_bytes(ints);
      if (bytes > spec_.workspace->max_bytes) {
        throw SolutionFault("shape " + shape.to_string() + ": " + spec_.workspace->symbol + " asked for " +
                                std::to_string(bytes) + " bytes; at most " +
                                std::to_string(spec_.workspace->max_bytes) + " are given",
                            shape.label, 0, "workspace size", std::nullopt, std::nullopt);
      }
      if (bytes > 0) b.data = DeviceBuffer::shared(bytes);
      b.extents = {static_cast<int64_t>(bytes)};
      tensors_.push_back(std::move(b));
      continue;
    }
    for (const std::string& extent : tensor.shape) b.extents.push_back(evaluate_expression(extent, values_));
    const int64_t count = elements(tensor, values_);
    const size_t bytes = static_cast<size_t>(count) * element_bytes(tensor);
    b.data = DeviceBuffer::shared(bytes);
    if (tensor.role == Role::input) b.pristine = DeviceBuffer(bytes);
    if (tensor.role == Role::output) {
      b.snapshot = DeviceBuffer::exported(bytes);  // written by the solution process (kSnapshotPoint)
      b.reference = DeviceBuffer(static_cast<size_t>(count) * sizeof(float));
    }
    tensors_.push_back(std::move(b));
  }
  reference_->allocate(reference_tensors());
}

ReferenceTensors TaskFamily::reference_tensors() {
  ReferenceTensors t;
  t.values = values_;
  for (const ScalarSpec& scalar : spec_.scalars)
    if (scalar.kind == ScalarSpec::real) t.reals[scalar.name] = evaluate_real(scalar.value, values_);
  for (Buffers& b : tensors_) {
    t.data[b.spec->name] = &b.data;
    if (b.spec->role == Role::input) t.pristine[b.spec->name] = &b.pristine;
    if (b.spec->role == Role::output) {
      t.reference[b.spec->name] = &b.reference;
      t.checked[b.spec->name] = &b.checked;
    }
  }
  return t;
}

void TaskFamily::fill_inputs(uint64_t key, cudaStream_t stream) {
  uint64_t salt = 0;  // one key per random input, in the descriptor's order
  for (Buffers& b : tensors_) {
    if (b.spec->role != Role::input || b.spec->fill.kind != Fill::normal) continue;
    if (b.spec->dtype != DType::bf16)
      throw std::logic_error(spec_.name + ": the runner draws normal values for bf16 tensors only");
    const auto variance = static_cast<float>(evaluate_expression(b.spec->fill.variance_divisor, values_));
    fill_normal_bf16(b.data.as<__nv_bfloat16>(), b.pristine.as<__nv_bfloat16>(),
                     static_cast<int64_t>(b.data.bytes() / 2), derive_key(key, salt++),
                     1.0f / std::sqrt(variance), stream);
  }
  ReferenceTensors t = reference_tensors();
  reference_->compute_inputs(t, derive_key(key, salt), stream);
}

void TaskFamily::poison_outputs(cudaStream_t stream) {
  for (Buffers& b : tensors_)
    if (b.spec->role != Role::input) poison(b.data, stream);
}

SolutionCall TaskFamily::solution_call() const {
  SolutionCall call;
  for (const std::string& argument : spec_.arguments) {
    if (spec_.tensor(argument) != nullptr) {
      const Buffers& b = buffers(argument);
      if (b.spec->role == Role::output)
        call.snapshots.emplace_back(static_cast<uint32_t>(call.tensors.size()), &b.snapshot);
      call.tensors.push_back({.buffer = b.data.get() != nullptr ? &b.data : nullptr,
                              .dtype = static_cast<uint8_t>(b.spec->dtype),
                              .extents = b.extents});
    } else if (const ScalarSpec* scalar = spec_.scalar(argument); scalar->kind == ScalarSpec::real) {
      call.floats.push_back(static_cast<float>(evaluate_real(scalar->value, values_)));
    } else {
      call.ints.push_back(integer_scalar(spec_, argument, values_));
    }
  }
  return call;
}

std::vector<std::pair<std::string, DeviceBuffer*>> TaskFamily::shared_buffers() {
  std::vector<std::pair<std::string, DeviceBuffer*>> shared;
  for (Buffers& b : tensors_)
    if (b.data.get() != nullptr) shared.emplace_back(b.spec->name, &b.data);
  return shared;
}

void TaskFamily::snapshot_outputs(cudaStream_t stream) {
  for (Buffers& b : tensors_)
    if (b.spec->role == Role::output)
      PTXBENCH_CUDA(
          cudaMemcpyAsync(b.snapshot.get(), b.data.get(), b.data.bytes(), cudaMemcpyDeviceToDevice, stream));
}

uint64_t TaskFamily::outputs_changed_since_snapshot(cudaStream_t stream) {
  uint64_t changed = 0;
  for (Buffers& b : tensors_)
    if (b.spec->role == Role::output)
      changed += count_differences(b.data.get(), b.snapshot.get(), b.data.bytes(),
                                   static_cast<int>(element_bytes(*b.spec)), stream);
  return changed;
}

std::vector<std::pair<std::string, uint64_t>> TaskFamily::changed_inputs(cudaStream_t stream) {
  std::vector<std::pair<std::string, uint64_t>> changed;
  for (Buffers& b : tensors_)
    if (b.spec->role == Role::input)
      changed.emplace_back(b.spec->name, count_differences(b.data.get(), b.pristine.get(), b.data.bytes(),
                                                           static_cast<int>(element_bytes(*b.spec)), stream));
  return changed;
}

void TaskFamily::compute_reference(cudaStream_t stream) {
  ReferenceTensors t = reference_tensors();
  reference_->compute(t, stream);
  sampled_ = false;
}

bool TaskFamily::compute_reference_sample(SampleDraw draw, cudaStream_t stream) {
  if (!reference_->samples()) {
    compute_reference(stream);
    return false;
  }
  // Every mark starts cleared here, so that an element the sample did not compute is never compared,
  // whatever the reference marks.
  for (Buffers& b : tensors_) {
    if (b.spec->role != Role::output) continue;
    if (b.checked.get() == nullptr) b.checked = DeviceBuffer(b.reference.bytes() / sizeof(float));
    PTXBENCH_CUDA(cudaMemsetAsync(b.checked.get(), 0, b.checked.bytes(), stream));
  }
  ReferenceTensors t = reference_tensors();
  reference_->compute_sample(t, draw, stream);
  sampled_ = true;
  return true;
}

std::vector<OutputCheck> TaskFamily::compare(const Tolerance& tolerance, cudaStream_t stream) {
  std::vector<OutputCheck> checks;
  for (Buffers& b : tensors_) {
    if (b.spec->role != Role::output) continue;
    const auto it = tolerances_.find(b.spec->name);
    const Tolerance& t = it == tolerances_.end() ? tolerance : it->second;
    // Rows: the first row_dims extents (a token, a query row); columns: the rest.
    int64_t rows = 1, cols = 1;
    for (size_t k = 0; k < b.extents.size(); ++k)
      (static_cast<int>(k) < b.spec->row_dims ? rows : cols) *= b.extents[k];
    const auto rtol = static_cast<float>(t.rtol), atol = static_cast<float>(t.atol);
    OutputCheck check{.name = b.spec->name, .rows = rows, .cols = cols, .comparison = {}};
    const uint8_t* checked = sampled_ ? b.checked.as<const uint8_t>() : nullptr;
    switch (b.spec->dtype) {
      case DType::bf16:
        check.comparison =
            compare_bf16(b.snapshot.as<const __nv_bfloat16>(), b.reference.as<const float>(), checked,
                         rows * cols, rtol, atol, protocol::kMaxReportedMismatches, stream);
        break;
      case DType::f32:
        check.comparison = compare_f32(b.snapshot.as<const float>(), b.reference.as<const float>(), checked,
                                       rows * cols, rtol, atol, protocol::kMaxReportedMismatches, stream);
        break;
      default:
        throw std::logic_error(spec_.name + ": output " + b.spec->name +
                               " of a type the runner cannot compare");
    }
    // A sample that marked nothing of an output would pass it unseen: the judge's fault, not the solution's.
    if (sampled_ && check.comparison.compared == 0)
      throw std::logic_error(spec_.name + ": the sampled reference marked no element of output " +
                             b.spec->name);
    checks.push_back(std::move(check));
  }
  return checks;
}

double TaskFamily::flops() const {
  return static_cast<double>(evaluate_expression(spec_.flops, values_));
}

// Every input element bears on the outputs while each query row sees a key (the shape rules'); a family whose
// call need not read every input (a paged cache's unused pages) says what it must read in its `bytes`.
double TaskFamily::input_bytes() const {
  if (!spec_.bytes.empty()) return static_cast<double>(evaluate_expression(spec_.bytes, values_));
  size_t bytes = 0;
  for (const Buffers& b : tensors_)
    if (b.spec->role == Role::input) bytes += b.data.bytes();
  return static_cast<double>(bytes);
}

void TaskFamily::call_baseline(cudaStream_t stream) {
  ReferenceTensors t = reference_tensors();
  reference_->call_baseline(t, stream);
}

Json TaskFamily::describe_baseline() const {
  return reference_->describe_baseline();
}

std::unique_ptr<TaskFamily> make_family(const Request& request) {
  const Family* spec = find_family(request.family);
  if (spec == nullptr || spec->entry_point != request.entry_point) return nullptr;
  std::unique_ptr<Reference> reference = make_reference(spec->name);
  if (!reference) return nullptr;
  try {
    return std::make_unique<TaskFamily>(*spec, std::move(reference), request.parameters, request.tolerances);
  } catch (const std::invalid_argument& error) {
    throw RequestError(error.what());
  }
}

}  // namespace ptxbench::runner
