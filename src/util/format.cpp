#include "util/format.h"

#include <fmt/format.h>

namespace ptxbench {

std::string percent(std::optional<double> share) {
  if (!share) return "-";
  const double value = *share * 100;
  return value >= 0.1 || value <= 0 ? fmt::format("{:.1f}%", value) : fmt::format("{:.2g}%", value);
}

}  // namespace ptxbench
