// The compute-sanitizer and Nsight Compute report parsers (eval/sanitizer_report.h, eval/ncu_report.h) on
// arbitrary tool output: what the solution's process writes can reach both logs, so neither may throw.
#include "eval/ncu_report.h"
#include "eval/sanitizer_report.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ptxbench;
  const std::string output = fuzz::text(data, size);
  (void)parse_sanitizer_report(output);
  (void)parse_ncu_report(output);
  return 0;
}
