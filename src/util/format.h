// Numbers as people read them in tables and messages.
#pragma once

#include <optional>
#include <string>

namespace ptxbench {

// A share as a percentage: 0.256 -> "25.6%"; a share under 0.1% keeps two significant digits ("0.012%"), so it
// does not read as 0; none -> "-" (unknown, not 0%).
std::string percent(std::optional<double> share);

}  // namespace ptxbench
