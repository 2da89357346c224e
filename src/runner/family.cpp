#include "runner/family.h"

#include "runner/gemm_family.h"

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

std::unique_ptr<TaskFamily> make_family(const std::string& family, const std::string& entry_point) {
  if (family == GemmFamily::kFamily && entry_point == GemmFamily::kEntryPoint)
    return std::make_unique<GemmFamily>();
  return nullptr;
}

}  // namespace ptxbench::runner
