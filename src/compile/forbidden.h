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
  // "vendor-library", "dynamic-loading", "driver-api", "process", "thread", "file", "network", "abi", "size"
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
// The most of a tool's listing of a submission's compiled code the judge reads: the library's dynamic
// symbols, its dynamic section and its host code's disassembly here, its SASS in the instruction stage
// (GpuTools::sass_listing_limit). Each is read whole, since what the judge looks for could lie past a cut: a
// longer one is the submission's failure (here rule "size"); the largest shipped SASS listing is a few MB.
inline constexpr size_t kListingLimit = size_t{256} << 20;

// Reads imports with readelf, then scan_imports; also flags a raw `syscall` instruction in host code.
std::vector<Violation> scan_library(const std::filesystem::path& library,
                                    size_t listing_limit = kListingLimit);

// The rule of an entry point the library does not export: the ABI's, not a forbidden means.
inline constexpr const char* kEntryPointRule = "entry-point";

// The ABI's entry points the library does not export (rule kEntryPointRule), each with what it exports
// instead when that looks meant: the same name with C++ linkage, or a near spelling. `exported`: its defined
// dynamic symbols; `symbols`: the family's (family.h's Family::symbols()).
std::vector<Violation> check_entry_points(const std::vector<std::string>& exported,
                                          const std::vector<std::string>& symbols);
// Reads the exports with readelf, then check_entry_points.
std::vector<Violation> missing_entry_points(const std::filesystem::path& library,
                                            const std::vector<std::string>& symbols,
                                            size_t listing_limit = kListingLimit);

// Removes // and /* */ comments, keeping string and character literals and line breaks (so lines still
// count).
std::string strip_comments(const std::string& source);

nlohmann::json to_json(const Violation& violation);

}  // namespace ptxbench
