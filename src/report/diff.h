// Line diffs between two turns' code, as unified diff text (dtl: Wu's O(NP) algorithm).
#pragma once

#include <string>

namespace ptxbench::report {

// The unified diff from `before` to `after`, three lines of context around each change; empty when they are
// equal.
std::string unified_diff(const std::string& before, const std::string& after);

}  // namespace ptxbench::report
