#include "runner/family.h"

#include <climits>
#include <stdexcept>

#include "runner/attention_family.h"
#include "runner/gemm_family.h"
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

std::unique_ptr<TaskFamily> make_family(const Request& request) {
  const std::string& family = request.family;
  const std::string& entry_point = request.entry_point;
  if (family == GemmFamily::kFamily && entry_point == GemmFamily::kEntryPoint)
    return std::make_unique<GemmFamily>();
  const bool forward =
      family == AttentionForwardFamily::kFamily && entry_point == AttentionForwardFamily::kEntryPoint;
  const bool backward =
      family == AttentionBackwardFamily::kFamily && entry_point == AttentionBackwardFamily::kEntryPoint;
  if (forward || backward) {
    for (const auto& [output, tolerance] : request.tolerances) {
      const bool known =
          forward ? (output == "O" || output == "LSE") : (output == "dQ" || output == "dK" || output == "dV");
      if (!known)
        throw RequestError("request: \"tolerances\" names \"" + output + "\", not an output of " + family);
    }
    try {
      if (forward) return std::make_unique<AttentionForwardFamily>(request.parameters, request.tolerances);
      return std::make_unique<AttentionBackwardFamily>(request.parameters, request.tolerances);
    } catch (const std::invalid_argument& error) {
      throw RequestError(error.what());
    }
  }
  return nullptr;
}

}  // namespace ptxbench::runner
