#include "eval/launch_binding.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ptxbench {
namespace {

using nlohmann::json;

// A launch as both sides can describe it.
struct Launch {
  std::string name;
  uint64_t name_hash = 0;
  std::array<int64_t, 3> grid{}, block{}, cluster{};
  int64_t dynamic_shared_bytes = 0;
  bool cluster_known = true, shared_known = true;  // ncu's table may lack those columns
  double duration_us = 0;
};

std::array<int64_t, 3> dims(const Dim3& d) {
  return {d.x, d.y, d.z};
}

std::array<int64_t, 3> dims(const json& array) {
  std::array<int64_t, 3> d{};
  for (size_t i = 0; i < 3 && array.is_array() && i < array.size(); ++i) d[i] = array[i].get<int64_t>();
  return d;
}

Launch from_ncu(const NcuLaunch& launch) {
  return {.name = launch.kernel_name,
          .name_hash = kernel_name_hash(launch.kernel_name),
          .grid = dims(launch.grid),
          .block = dims(launch.block),
          .cluster = launch.cluster ? dims(*launch.cluster) : std::array<int64_t, 3>{},
          .dynamic_shared_bytes = launch.dynamic_shared_bytes.value_or(0),
          .cluster_known = launch.cluster.has_value(),
          .shared_known = launch.dynamic_shared_bytes.has_value(),
          .duration_us = launch.duration_ns.value_or(0) * 1e-3};
}

Launch from_log(const json& launch) {
  return {.name = launch.value("name", std::string()),
          .name_hash = std::stoull(launch.value("name_hash", std::string("0")), nullptr, 16),
          .grid = dims(launch.value("grid", json())),
          .block = dims(launch.value("block", json())),
          .cluster = dims(launch.value("cluster", json())),
          .dynamic_shared_bytes = launch.value("dynamic_shared_bytes", int64_t{0}),
          .duration_us = launch.value("duration_us", 0.0)};
}

// CUDA reports a launch without clusters as (0,0,0) in one place and (1,1,1) in another.
std::array<int64_t, 3> cluster_shape(std::array<int64_t, 3> c) {
  return c == std::array<int64_t, 3>{0, 0, 0} ? std::array<int64_t, 3>{1, 1, 1} : c;
}

bool same_launch(const Launch& profiled, const Launch& seen) {
  return profiled.name_hash == seen.name_hash && profiled.grid == seen.grid && profiled.block == seen.block &&
         (!profiled.cluster_known || cluster_shape(profiled.cluster) == cluster_shape(seen.cluster)) &&
         (!profiled.shared_known || profiled.dynamic_shared_bytes == seen.dynamic_shared_bytes);
}

json to_json(const Launch& l) {
  return {{"name", l.name},
          {"grid", l.grid},
          {"block", l.block},
          {"cluster", l.cluster_known ? json(l.cluster) : json()},
          {"dynamic_shared_bytes", l.shared_known ? json(l.dynamic_shared_bytes) : json()},
          {"duration_us", l.duration_us > 0 ? json(l.duration_us) : json()}};
}

std::string describe(const Launch& l) {
  std::string text = fmt::format("{}<<<({}), ({})>>>", l.name.substr(0, 60), fmt::join(l.grid, ","),
                                 fmt::join(l.block, ","));
  if (cluster_shape(l.cluster) != std::array<int64_t, 3>{1, 1, 1})
    text += fmt::format(" cluster ({})", fmt::join(l.cluster, ","));
  if (l.dynamic_shared_bytes != 0) text += fmt::format(" {} B dynamic shared", l.dynamic_shared_bytes);
  return text;
}

std::string describe(const std::vector<Launch>& launches) {
  if (launches.empty()) return "no kernel";
  std::vector<std::string> parts;
  for (const Launch& l : launches) parts.push_back(describe(l));
  return fmt::format("{}", fmt::join(parts, ", "));
}

// The first problem wins the message; a failure outranks a harness error.
struct Findings {
  StageStatus status = StageStatus::passed;
  std::string message;
  void add(StageStatus kind, std::string text) {
    if (status == StageStatus::failed || (status == kind && !message.empty())) return;
    status = kind;
    message = std::move(text);
  }
};

void check_signatures(const std::string& stage, const json& log, const std::vector<Launch>& profiled,
                      Findings& findings) {
  for (const json& signature : log.value("signatures", json::array())) {
    std::vector<Launch> seen;
    for (const json& launch : signature.value("launches", json::array())) seen.push_back(from_log(launch));
    // The solution process reports a call's first kMaxLaunches launches and how many there were.
    const bool same = signature.value("launch_count", size_t{0}) == profiled.size() &&
                      seen.size() <= profiled.size() &&
                      std::equal(seen.begin(), seen.end(), profiled.begin(),
                                 [](const Launch& s, const Launch& p) { return same_launch(p, s); });
    if (!same)
      findings.add(
          StageStatus::failed,
          fmt::format("{} of the {} stage's calls launched {}, but the profiled call launched {}: the "
                      "instruction proof does not cover the code that was {}",
                      signature.value("calls", 0), stage, describe(seen), describe(profiled),
                      stage == "time" ? "timed" : "checked"));
    else if (stage == "time")
      for (size_t k = 0; k < seen.size(); ++k) {
        const double timed = seen[k].duration_us, measured = profiled[k].duration_us;
        if (measured <= 0) continue;  // ncu gave no duration
        const bool close = std::abs(timed - measured) <= kDurationSlackUs ||
                           (timed <= kDurationFactor * measured && measured <= kDurationFactor * timed);
        if (!close)
          findings.add(
              StageStatus::failed,
              fmt::format("{} ran {:.1f} us in the timed calls (median) but {:.1f} us in the profiled "
                          "call: more than {:.0f}x apart, so the profiled call did not run the timed "
                          "code",
                          describe(seen[k]), timed, measured, kDurationFactor));
      }
  }
}

void check_counts(const std::string& stage, const json& log, const std::string& mma_name,
                  int64_t profiled_mma, Findings& findings) {
  for (const json& counted : log.value("counted", json::array())) {
    const std::string where = counted.value("where", std::string("a call"));
    if (counted.contains("problem")) {
      findings.add(StageStatus::harness_error,
                   fmt::format("the {} stage's {} could not be counted: {}", stage, where,
                               counted.value("problem", std::string())));
      continue;
    }
    const auto mma = counted.value("mma", int64_t{0});
    const double tolerance = kCountTolerance * static_cast<double>(std::max<int64_t>(profiled_mma, 1));
    if (std::abs(static_cast<double>(mma - profiled_mma)) > tolerance)
      findings.add(StageStatus::failed,
                   fmt::format("the {} stage's {} executed {} {} instructions (hardware counters), but the "
                               "profiled call {}: the calls that were not profiled ran other code",
                               stage, where, mma, mma_name, profiled_mma));
  }
}

}  // namespace

int64_t counted_instructions(const CounterSpec& counter, const NcuReport& report) {
  int64_t total = 0;
  for (const NcuLaunch& launch : report.launches)
    for (const auto& [opcode, count] : launch.opcodes)
      if (std::find(counter.opcodes.begin(), counter.opcodes.end(), opcode.substr(0, opcode.find('.'))) !=
          counter.opcodes.end())
        total += count;
  return total;
}

LaunchBinding bind_launches(const ArchProfile& arch, const NcuReport& profiled_report,
                            const std::vector<std::pair<std::string, json>>& logs) {
  std::vector<Launch> profiled;
  for (const NcuLaunch& launch : profiled_report.launches) profiled.push_back(from_ncu(launch));
  Findings findings;
  if (!arch.counters)
    findings.add(StageStatus::harness_error,
                 fmt::format("the {} calls' tensor-pipe counts cannot be bound to the profiled call: {}",
                             arch.name, arch.counters_missing));
  const int64_t profiled_mma = arch.counters ? counted_instructions(arch.counters->mma, profiled_report) : 0;
  json profiled_json = json::array();
  for (const Launch& launch : profiled) profiled_json.push_back(to_json(launch));
  json details = {{"profiled", std::move(profiled_json)}, {"profiled_mma", profiled_mma},
                  {"duration_factor", kDurationFactor},   {"duration_slack_us", kDurationSlackUs},
                  {"count_tolerance", kCountTolerance},   {"stages", json::object()}};
  for (const auto& [stage, log] : logs) {
    details["stages"][stage] = log;
    if (log.value("recorder", std::string()) != "recorded") {
      findings.add(StageStatus::harness_error,
                   fmt::format("the launches of the {} stage's calls could not be recorded ({}), so the "
                               "instruction proof cannot be bound to them",
                               stage, log.value("problem", std::string("no calls recorded"))));
      continue;
    }
    check_signatures(stage, log, profiled, findings);
    if (arch.counters) check_counts(stage, log, arch.math.name, profiled_mma, findings);
  }
  return {.status = findings.status, .message = findings.message, .details = std::move(details)};
}

}  // namespace ptxbench
