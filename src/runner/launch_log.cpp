#include "runner/launch_log.h"

#include "runner/solution_process.h"
#include "runner/statistics.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace ptxbench::runner {
namespace {

namespace s = solution;

bool same_launch(const s::Launch& a, const s::Launch& b) {
  return a.name_hash == b.name_hash && std::equal(a.grid, a.grid + 3, b.grid) &&
         std::equal(a.block, a.block + 3, b.block) && std::equal(a.cluster, a.cluster + 3, b.cluster) &&
         a.dynamic_shared_bytes == b.dynamic_shared_bytes;
}

Json dims(const int32_t (&d)[3]) {
  return Json::array({d[0], d[1], d[2]});
}

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(value));
  return text;
}

}  // namespace

void LaunchLog::note(const s::Reply& reply, const std::string& where, bool counted) {
  noted_.push_back({.index = reply.call_index, .where = where, .counted = counted});
}

Json LaunchLog::collect(SolutionProcess& solution) {
  for (const Noted& call : noted_) add(solution.recorded(call.index), call);
  noted_.clear();
  return summary();
}

void LaunchLog::add(const s::Reply& reply, const Noted& call) {
  if (call.counted && reply.counter == s::Tool::recorded)
    counted_.push_back(
        {{"where", call.where}, {"mma", reply.mma_instructions}, {"tensor", reply.tensor_instructions}});
  else if (call.counted)
    counted_.push_back({{"where", call.where}, {"problem", reply.tool_problem}});
  if (reply.recorder != s::Tool::recorded) {
    if (problem_.empty()) problem_ = reply.tool_problem;
    return;
  }
  ++calls_;
  const size_t kept = std::min<size_t>(reply.launch_count, s::kMaxLaunches);
  const auto matches = [&](const Group& group) {
    return group.launch_count == reply.launch_count &&
           std::equal(reply.launches, reply.launches + kept, group.launches.begin(), same_launch);
  };
  auto group = std::find_if(groups_.begin(), groups_.end(), matches);
  if (group == groups_.end()) {
    group = groups_.insert(groups_.end(), Group{.launches = {reply.launches, reply.launches + kept},
                                                .launch_count = reply.launch_count,
                                                .durations_us = std::vector<std::vector<double>>(kept)});
  }
  ++group->calls;
  for (size_t k = 0; k < kept; ++k)
    group->durations_us[k].push_back(1e-3 * static_cast<double>(reply.launches[k].duration_ns));
}

Json LaunchLog::summary() const {
  Json signatures = Json::array();
  for (const Group& group : groups_) {
    Json launches = Json::array();
    for (size_t k = 0; k < group.launches.size(); ++k) {
      const s::Launch& launch = group.launches[k];
      launches.push_back({{"name", launch.name},
                          {"name_hash", hex(launch.name_hash)},
                          {"grid", dims(launch.grid)},
                          {"block", dims(launch.block)},
                          {"cluster", dims(launch.cluster)},
                          {"dynamic_shared_bytes", launch.dynamic_shared_bytes},
                          {"duration_us", median(group.durations_us[k])}});
    }
    signatures.push_back(
        {{"calls", group.calls}, {"launch_count", group.launch_count}, {"launches", launches}});
  }
  return {{"recorder", calls_ > 0 && problem_.empty() ? "recorded" : "unavailable"},
          {"problem", problem_},
          {"calls", calls_},
          {"signatures", signatures},
          {"counted", counted_}};
}

}  // namespace ptxbench::runner
