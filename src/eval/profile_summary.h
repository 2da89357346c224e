// The profiler feedback (run --feedback profile; docs/agent.md): a short, stable summary of the Nsight
// Compute sections that the instruction stage collects on the main shape when asked (the architecture
// profile's ProfileSpec), over the solution's own launches, for a model to act on: the tensor pipe's
// activity, achieved occupancy, DRAM and L2 throughput, the top stall reasons, registers (and, from the
// compile, spills).
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "arch/profile.h"
#include "eval/ncu_report.h"

namespace ptxbench {

struct ProfileSummary {
  int launches = 0;        // the solution's launches summarised
  double duration_us = 0;  // their total duration (ncu's own pass; 0 when it was not reported)
  // Each figure of the spec that a launch reported: the mean over the launches weighted by duration (equal
  // weights without durations), the registers' the largest.
  std::map<std::string, double> figures;
  std::vector<std::string> missing;  // the spec's figures no launch reported
  // The stall reasons, each one's share of all stalled warps (percent, weighted as the figures), largest
  // first, at most kTopStalls.
  std::vector<std::pair<std::string, double>> stalls;
  static constexpr size_t kTopStalls = 4;
};

// Summarises the launches of `report` whose ncu ID is in `solution_launches`.
ProfileSummary summarize_profile(const NcuReport& report, const ProfileSpec& spec,
                                 const std::set<int>& solution_launches);

nlohmann::json to_json(const ProfileSummary& summary);
// Reads what to_json wrote (a stored verdict's); an empty summary for anything else.
ProfileSummary profile_summary_from_json(const nlohmann::json& doc);

// The summary as a model reads it: a few lines, at most `limit` characters, the same figures in the same
// order every time. `spilled_bytes`: the compile's spill stores and loads (ptxas), or -1 when unknown.
std::string profile_text(const ProfileSummary& summary, int64_t spilled_bytes = -1, size_t limit = 700);

}  // namespace ptxbench
