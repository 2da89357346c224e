// Order statistics of timing samples, for the runner's summaries: header-only and free of CUDA.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace ptxbench::runner {

// Linear interpolation between order statistics (numpy's default), of values sorted in increasing order.
inline double percentile(const std::vector<double>& sorted, double fraction) {
  const double position = fraction * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<size_t>(std::floor(position));
  const size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (position - static_cast<double>(below)) * (sorted[above] - sorted[below]);
}

// The median of values in any order; 0 for none.
inline double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return percentile(values, 0.5);
}

}  // namespace ptxbench::runner
