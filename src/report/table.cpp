#include "report/table.h"

#include <fmt/format.h>
#include <algorithm>

namespace ptxbench {

std::string TextTable::render() const {
  std::vector<size_t> widths(header_.size());
  auto measure = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i)
      widths[i] = std::max(widths[i], row[i].size());
  };
  measure(header_);
  for (const auto& row : rows_) measure(row);
  auto line = [&](const std::vector<std::string>& row) {
    std::string out;
    for (size_t i = 0; i < widths.size(); ++i) {
      const std::string cell = i < row.size() ? row[i] : "";
      out += i + 1 < widths.size() ? fmt::format("{:<{}}  ", cell, widths[i]) : cell;
    }
    return out + "\n";
  };
  std::string out = line(header_);
  std::vector<std::string> rule;
  for (size_t w : widths) rule.push_back(std::string(w, '-'));
  out += line(rule);
  for (const auto& row : rows_) out += line(row);
  return out;
}

}  // namespace ptxbench
