// Error types the command line maps to exit codes.
#pragma once

#include <stdexcept>

namespace ptxbench {

// The project's own data is unusable: a broken task file or manifest, no project folder.
struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace ptxbench
