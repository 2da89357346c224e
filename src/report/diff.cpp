#include "report/diff.h"

#include <dtl/dtl.hpp>

#include <sstream>
#include <vector>

#include "util/text.h"

namespace ptxbench::report {

std::string unified_diff(const std::string& before, const std::string& after) {
  if (before == after) return "";
  dtl::Diff<std::string> diff(split_lines(before), split_lines(after));
  diff.onHuge();
  diff.compose();
  diff.composeUnifiedHunks();
  std::ostringstream out;
  diff.printUnifiedFormat(out);
  return out.str();
}

}  // namespace ptxbench::report
