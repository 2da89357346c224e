// Parsing compute-sanitizer's text output
//   compute-sanitizer --tool memcheck|synccheck|racecheck|initcheck --print-limit N --error-exitcode 99
//   <program>
// Every line of the tool starts with "========= "; an error is a top-level line ("Invalid __global__ write of
// size 4 bytes", "Barrier error detected. Divergent thread(s) in warp.", "Program hit cudaErrorLaunchFailure
// ...") followed by indented detail lines (at kernel+0x.. in file:line / by thread (x,y,z) in block (x,y,z) /
// Access to 0x.. is out of bounds / host backtrace) and a bare "=========" line. The run ends with
// "ERROR SUMMARY: N errors" (and "ERROR SUMMARY: M errors were not printed" beyond --print-limit).
// tests/data/sanitizer/ holds real outputs from an H200.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace ptxbench {

enum class SanitizerErrorKind {
  memory_access,       // memcheck: Invalid __global__/__shared__/__local__ read/write/atomic
  uninitialized,       // initcheck: Uninitialized __global__ memory read
  barrier,             // synccheck: Barrier error detected, invalid arguments to a barrier
  race,                // racecheck: Race reported between ... accesses
  host_api,            // Program hit cudaError... on a CUDA API call
  hardware_exception,  // Warp Illegal Address, Illegal Instruction, Misaligned PC, ... reported by the GPU
  leak,                // memcheck --leak-check: Leaked N bytes
  other,
};

struct SanitizerError {
  SanitizerErrorKind kind = SanitizerErrorKind::other;
  std::string headline;  // the error's first line: "Invalid __shared__ write of size 4 bytes"
  std::string kernel;    // "oob_shared_kernel(float *, int)", empty for host API errors
  std::string location;  // "sanitizer_cases.cu:26" (needs -lineinfo) or the kernel offset "+0x100"
  std::string thread;    // "(5,0,0)"
  std::string block;     // "(0,0,0)"
  std::string address;   // "0x400414"
  std::string detail;    // "Access to 0x400414 is out of bounds", with "and is ... nearest allocation ..."

  // One line for people and models: what, where, which thread, the address detail.
  std::string summary() const;
};

struct SanitizerReport {
  std::optional<int64_t> error_count;  // from "ERROR SUMMARY: N errors"; absent when the tool did not finish
  int64_t errors_not_printed = 0;      // beyond --print-limit
  int64_t errors_printed = 0;          // error blocks in the output
  std::vector<SanitizerError> errors;  // the first `max_errors` blocks, in the order printed
  bool target_returned_error = false;  // "Target application returned an error"
  // "Error: process didn't terminate successfully": how the program ended (a non-zero exit, a signal), not a
  // hazard; what the call did is the runner's result's to say.
  bool target_ended_abnormally = false;
  bool tool_failed = false;            // the tool could not check the program: the result says nothing
  std::string tool_failure;            // why, in the tool's words

  bool found_errors() const { return error_count.value_or(0) > 0 || errors_printed > 0; }
};

// Entry: the tool's output (stdout and stderr together, the program's own lines mixed in).
SanitizerReport parse_sanitizer_report(const std::string& output, size_t max_errors = 5);

std::string to_string(SanitizerErrorKind kind);
nlohmann::json to_json(const SanitizerError& error);
nlohmann::json to_json(const SanitizerReport& report);

}  // namespace ptxbench
