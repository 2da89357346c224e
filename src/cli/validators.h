// Checks of command-line values that CLI11's own do not make.
#pragma once

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <cmath>
#include <string>
#include <system_error>
#include <vector>

#include "agent/prompt.h"

namespace ptxbench {

// A positive, finite number of seconds or a ratio. CLI11's PositiveNumber takes "nan", and for "inf" or
// "1e400" prints the largest double in full, 309 digits.
inline const CLI::Validator kPositiveFinite(
    [](std::string& text) {
      double value = 0;
      const char* end = text.data() + text.size();
      const auto [stop, error] = std::from_chars(text.data(), end, value);
      if (error != std::errc() || stop != end || !std::isfinite(value) || value <= 0)
        return "must be a positive number, not '" + text + "'";
      return std::string();
    },
    "POSITIVE");

// The knowledge levels' names (agent/prompt.h), for CLI::IsMember.
inline const std::vector<std::string> kKnowledgeLevelNames(agent::kKnowledgeLevels.begin(),
                                                           agent::kKnowledgeLevels.end());

// A run's --knowledge: one level or several, comma-separated, none twice.
inline const CLI::Validator kKnowledgeLevelList(
    [](std::string& text) {
      if (agent::knowledge_levels_from_string(text)) return std::string();
      return fmt::format("must be a knowledge level ({}) or several comma-separated, each once, not '{}'",
                         fmt::join(agent::kKnowledgeLevels, ", "), text);
    },
    "LEVEL[,LEVEL...]");

}  // namespace ptxbench
