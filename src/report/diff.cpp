#include "report/diff.h"

#include <dtl/dtl.hpp>

#include <sstream>
#include <vector>

namespace ptxbench::report {

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

std::string unified_diff(const std::string& before, const std::string& after) {
  if (before == after) return "";
  dtl::Diff<std::string> diff(lines_of(before), lines_of(after));
  diff.onHuge();
  diff.compose();
  diff.composeUnifiedHunks();
  std::ostringstream out;
  diff.printUnifiedFormat(out);
  return out.str();
}

}  // namespace ptxbench::report
