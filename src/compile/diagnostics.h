// Compiler output trimmed to what a model needs to fix the code: the first errors with their source excerpts,
// paths shortened to the solution's name, and a count of what was left out. And the reading that tells a
// compile the host broke (a full disk, a killed compiler) from one the source broke.
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

// The line of a failed compile's output that names a host trouble: a full disk or quota, a read-only or
// unwritable folder, an I/O error, a compiler tool killed ("'cicc' died due to signal 9"). Empty when there is
// none, and also when any line locates a diagnostic in the source (`source_name`, a plain file name such as
// "solution.cu": its line, its PTX's line, "errors detected in the compilation of"). Words only: it says why
// in a host failure's message, and never decides that a compile is one (compile.h, host_failure, reads the
// host itself), since a source can print any words (`#line 1 "other.cu"` then `#error No space left on
// device`).
std::string host_failure_line(const std::string& compiler_output, const std::string& source_name);

}  // namespace ptxbench
