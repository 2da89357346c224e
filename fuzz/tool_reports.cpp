// The compute-sanitizer and Nsight Compute report parsers (eval/sanitizer_report.h, eval/ncu_report.h) on
// arbitrary tool output: what the solution's process writes can reach both logs, so neither may throw; and
// the profiler feedback's summary of what the latter read (eval/profile_summary.h).
#include "arch/profile.h"
#include "eval/ncu_report.h"
#include "eval/profile_summary.h"
#include "eval/sanitizer_report.h"
#include "fuzz_input.h"

#include <set>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ptxbench;
  const std::string output = fuzz::text(data, size);
  (void)parse_sanitizer_report(output);
  (void)parse_ncu_report(output);
  const ProfileSpec& profile = find_arch("sm_90a")->profile;
  const NcuReport report = parse_ncu_report(output, &profile);
  std::set<int> launches;
  for (const NcuLaunch& launch : report.launches) launches.insert(launch.id);
  (void)profile_text(summarize_profile(report, profile, launches), 0);
  return 0;
}
