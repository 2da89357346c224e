// The forbidden-means scan. A solution must do its own work with its own kernels: no vendor libraries
// (cuBLAS, cuDNN, CUTLASS/CuTe), no loading code at run time (dlopen/dlsym), no processes or threads, no file
// or network access, none of what the ABI rules out (allocating, synchronising, creating streams), and of the
// CUDA driver only a few harmless functions (tensor maps, errors, attributes, launches). Two views: the
// source text (for a message that points at a line) and the compiled library's imported symbols and needed
// libraries (which macros and token pasting cannot hide).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace ptxbench {

struct Violation {
  // "vendor-library", "dynamic-loading", "driver-api", "process", "thread", "file", "network", "abi"
  std::string rule;
  std::string evidence;  // the include, call or imported symbol
  int line = 0;          // in the solution source; 0 for evidence from the compiled library
  std::string message;   // for a person or a model
};

std::vector<Violation> scan_source(const std::string& source);
// `undefined_symbols`: the library's imported dynamic symbols (without version suffix); `needed`: its
// DT_NEEDED.
std::vector<Violation> scan_imports(const std::vector<std::string>& undefined_symbols,
                                    const std::vector<std::string>& needed);
// Reads imports with nm and readelf, then scan_imports; also flags a raw `syscall` instruction in host code.
std::vector<Violation> scan_library(const std::filesystem::path& library);

// Removes // and /* */ comments, keeping string and character literals and line breaks (so lines still
// count).
std::string strip_comments(const std::string& source);

nlohmann::json to_json(const Violation& violation);

}  // namespace ptxbench
