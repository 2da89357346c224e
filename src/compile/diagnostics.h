// Compiler output trimmed to what a model needs to fix the code: the first errors with their source excerpts,
// paths shortened to the solution's name, and a count of what was left out.
#pragma once

#include <string>

namespace ptxbench {

struct TrimmedDiagnostics {
  std::string text;
  int errors = 0;    // errors nvcc reported in all
  int warnings = 0;  // warnings nvcc reported in all
};

// `work_dir` is removed from paths, and `display_root` (when given) too, so that messages name files as the
// project does ("kits/hopper/ptx/wgmma.cuh"). At most `max_errors` errors are kept (warnings only when there
// is room), and the text is cut at `max_chars`.
TrimmedDiagnostics trim_diagnostics(const std::string& compiler_output, const std::string& work_dir,
                                    int max_errors = 8, size_t max_chars = 4000,
                                    const std::string& display_root = "");

}  // namespace ptxbench
