#include "eval/profile_summary.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>

#include <nlohmann/json.hpp>

#include "util/text.h"

namespace ptxbench {

using nlohmann::json;

namespace {

// The figures in the order the text gives them, with how it names them.
struct FigureText {
  const char* figure;
  const char* text;  // a format for the value
};
constexpr FigureText kFigureTexts[] = {
    {"tensor_pipe_pct", "tensor pipe active {:.1f}% of peak"},
    {"achieved_occupancy_pct", "achieved occupancy {:.1f}% of the warps an SM holds"},
    {"dram_throughput_pct", "DRAM throughput {:.1f}% of peak"},
    {"l2_throughput_pct", "L2 throughput {:.1f}% of peak"},
    {"registers_per_thread", "{:.0f} registers per thread"},
};

}  // namespace

ProfileSummary summarize_profile(const NcuReport& report, const ProfileSpec& spec,
                                 const std::set<int>& solution_launches) {
  ProfileSummary summary;
  std::vector<const NcuLaunch*> launches;
  for (const NcuLaunch& launch : report.launches)
    if (solution_launches.contains(launch.id)) launches.push_back(&launch);
  summary.launches = static_cast<int>(launches.size());
  const bool timed = !launches.empty() &&
                     std::all_of(launches.begin(), launches.end(),
                                 [](const NcuLaunch* l) { return l->duration_ns && *l->duration_ns > 0; });
  const auto weight = [&](const NcuLaunch& l) { return timed ? *l.duration_ns : 1.0; };
  for (const NcuLaunch* l : launches) summary.duration_us += timed ? *l->duration_ns * 1e-3 : 0;

  for (const auto& [figure, candidates] : spec.figures) {
    double sum = 0, weights = 0, largest = 0;
    for (const NcuLaunch* l : launches)
      for (const std::string& metric : candidates)
        if (const auto it = l->metrics.find(metric); it != l->metrics.end()) {
          sum += it->second * weight(*l);
          weights += weight(*l);
          largest = std::max(largest, it->second);
          break;
        }
    if (weights <= 0)
      summary.missing.push_back(figure);
    else
      summary.figures[figure] = figure == "registers_per_thread" ? largest : sum / weights;
  }

  // reason -> weighted warps per issue cycle
  std::map<std::string, double> stalls;
  double total = 0;
  for (const NcuLaunch* l : launches)
    for (const auto& [metric, value] : l->metrics) {
      if (!metric.starts_with(spec.stall_prefix) || !metric.ends_with(spec.stall_suffix) ||
          metric.size() <= spec.stall_prefix.size() + spec.stall_suffix.size())
        continue;
      const std::string reason = metric.substr(
          spec.stall_prefix.size(), metric.size() - spec.stall_prefix.size() - spec.stall_suffix.size());
      // "selected" is the warp that issued, not a stall; "..._not_issued" repeats a reason's share.
      if (reason == "selected" || reason.ends_with("_not_issued") || value <= 0) continue;
      stalls[reason] += value * weight(*l);
      total += value * weight(*l);
    }
  for (const auto& [reason, value] : stalls) summary.stalls.emplace_back(reason, 100 * value / total);
  std::stable_sort(summary.stalls.begin(), summary.stalls.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  if (summary.stalls.size() > ProfileSummary::kTopStalls) summary.stalls.resize(ProfileSummary::kTopStalls);
  return summary;
}

json to_json(const ProfileSummary& summary) {
  json stalls = json::array();
  for (const auto& [reason, share] : summary.stalls)
    stalls.push_back({{"reason", reason}, {"share_pct", share}});
  return {{"launches", summary.launches},
          {"duration_us", summary.duration_us},
          {"figures", summary.figures},
          {"missing", summary.missing},
          {"stalls", stalls}};
}

ProfileSummary profile_summary_from_json(const json& doc) {
  ProfileSummary summary;
  if (!doc.is_object()) return summary;
  try {
    summary.launches = doc.value("launches", 0);
    summary.duration_us = doc.value("duration_us", 0.0);
    summary.figures = doc.value("figures", std::map<std::string, double>());
    summary.missing = doc.value("missing", std::vector<std::string>());
    for (const json& s : doc.value("stalls", json::array()))
      summary.stalls.emplace_back(s.at("reason").get<std::string>(), s.at("share_pct").get<double>());
  } catch (const json::exception&) {
    return {};
  }
  return summary;
}

std::string profile_text(const ProfileSummary& summary, int64_t spilled_bytes, size_t limit) {
  if (summary.launches == 0) return "";
  std::string text = fmt::format("Profile of the main shape (Nsight Compute, {} launch{} of yours",
                                 summary.launches, summary.launches == 1 ? "" : "es");
  text += summary.duration_us > 0 ? fmt::format(", {:.1f} us):\n", summary.duration_us) : "):\n";
  std::vector<std::string> figures;
  for (const FigureText& f : kFigureTexts)
    if (const auto it = summary.figures.find(f.figure); it != summary.figures.end())
      figures.push_back(fmt::format(fmt::runtime(f.text), it->second));
  if (spilled_bytes >= 0) figures.push_back(fmt::format("{} bytes of register spills", spilled_bytes));
  for (const std::string& figure : figures) text += "- " + figure + "\n";
  if (!summary.stalls.empty()) {
    std::vector<std::string> stalls;
    for (const auto& [reason, share] : summary.stalls)
      stalls.push_back(fmt::format("{} {:.0f}%", reason, share));
    text += fmt::format("- warps stalled on (share of stalls): {}\n", fmt::join(stalls, ", "));
  }
  if (!summary.missing.empty())
    text += fmt::format("- not reported here: {}\n", fmt::join(summary.missing, ", "));
  return text.size() <= limit ? text : utf8_head(text, limit) + "\n";
}

}  // namespace ptxbench
