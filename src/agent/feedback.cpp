#include "agent/feedback.h"
#include "compile/forbidden.h"
#include "eval/profile_summary.h"
#include "util/text.h"

#include <fmt/format.h>
#include <algorithm>
#include <vector>

namespace ptxbench::agent {
namespace {

std::string cap(const std::string& text, size_t max_chars, size_t max_lines) {
  std::string out;
  size_t lines = 0, pos = 0;
  while (pos < text.size() && lines < max_lines) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    out += text.substr(pos, end - pos);
    ++lines;
    pos = end + 1;
    if (pos < text.size() && lines < max_lines) out += '\n';
  }
  bool cut = pos < text.size();
  if (out.size() > max_chars) {
    out = utf8_head(out, max_chars);
    cut = true;
  }
  if (cut) out += "\n[... cut ...]";
  return out;
}

}  // namespace

std::string to_string(ErrorClass c) {
  switch (c) {
    case ErrorClass::none:
      return "";
    case ErrorClass::compile:
      return "compile";
    case ErrorClass::forbidden:
      return "forbidden";
    case ErrorClass::memory_safety:
      return "memory_safety";
    case ErrorClass::timeout:
      return "timeout";
    case ErrorClass::runtime:
      return "runtime";
    case ErrorClass::numerical:
      return "numerical";
    case ErrorClass::instruction:
      return "instruction";
    case ErrorClass::timing:
      return "timing";
    case ErrorClass::extraction:
      return "extraction";
    case ErrorClass::harness:
      return "harness";
    case ErrorClass::provider:
      return "provider";
  }
  return "";
}

std::optional<ErrorClass> error_class_from_string(const std::string& text) {
  for (auto c : {ErrorClass::none, ErrorClass::compile, ErrorClass::forbidden, ErrorClass::memory_safety,
                 ErrorClass::timeout, ErrorClass::runtime, ErrorClass::numerical, ErrorClass::instruction,
                 ErrorClass::timing, ErrorClass::extraction, ErrorClass::harness, ErrorClass::provider})
    if (to_string(c) == text) return c;
  return std::nullopt;
}

namespace {

bool only_missing_entry_points(const StageResult& stage) {
  const nlohmann::json violations =
      stage.details.is_object() ? stage.details.value("violations", nlohmann::json::array()) : nlohmann::json();
  return violations.is_array() && !violations.empty() &&
         std::all_of(violations.begin(), violations.end(), [](const nlohmann::json& v) {
           return v.is_object() && v.value("rule", std::string()) == kEntryPointRule;
         });
}

}  // namespace

ErrorClass classify(const Verdict& verdict) {
  for (const auto& s : verdict.stages) {
    if (s.status == StageStatus::timeout) return ErrorClass::timeout;
    if (s.status == StageStatus::runtime_error) return ErrorClass::runtime;
    if (s.status != StageStatus::failed) continue;
    if (s.name == "compile") return ErrorClass::compile;
    if (s.name == "static")  // a missing entry point only: the ABI's link error, as the Triton compile's
      return only_missing_entry_points(s) ? ErrorClass::compile : ErrorClass::forbidden;
    if (s.name == "sanitize") return ErrorClass::memory_safety;
    if (s.name == "correct") return ErrorClass::numerical;
    if (s.name == "instructions") return ErrorClass::instruction;
    // Work hidden outside `stream` breaks the ABI; otherwise the timed calls' output was wrong, or their time
    // below what the hardware allows.
    if (s.name == "time")
      return s.message.find("outside `stream`") != std::string::npos ? ErrorClass::forbidden
                                                                     : ErrorClass::timing;
    return ErrorClass::numerical;
  }
  return verdict.overall() == OverallStatus::error ? ErrorClass::harness : ErrorClass::none;
}

bool verified(const Verdict& verdict) {
  return verdict.overall() == OverallStatus::passed;
}

bool nothing_failed(const Verdict& verdict) {
  const OverallStatus status = verdict.overall();
  return status == OverallStatus::passed || status == OverallStatus::incomplete;
}

std::string compact_feedback(const Verdict& v, const FeedbackLimits& limits) {
  std::string out = fmt::format("Verdict: {}\n", cap(v.summary(), 400, 1));
  // Skipped stages grouped by reason, in stage order: "[sanitize, correct, time] skipped: no GPU here".
  std::vector<std::pair<std::string, std::vector<std::string>>> skipped;
  for (const auto& s : v.stages) {
    switch (s.status) {
      case StageStatus::passed:  // with what it says even so: ptxas warnings, the coverage, the times
        out += fmt::format("[{}] passed{}{}\n", s.name, s.message.empty() ? "" : ": ",
                           cap(s.message, limits.stage_chars, limits.stage_lines));
        break;
      case StageStatus::skipped: {
        const std::string reason = cap(s.message, 300, 2);
        auto it =
            std::find_if(skipped.begin(), skipped.end(), [&](const auto& p) { return p.first == reason; });
        if (it == skipped.end())
          skipped.push_back({reason, {s.name}});
        else
          it->second.push_back(s.name);
        break;
      }
      default:
        out += fmt::format("[{}] {}: {}\n", s.name, to_string(s.status),
                           cap(s.message, limits.stage_chars, limits.stage_lines));
    }
  }
  for (const auto& [reason, names] : skipped)
    out += fmt::format("[{}] skipped: {}\n", fmt::join(names, ", "), reason);
  if (v.coverage)
    out += fmt::format("Coverage: {:.1f}% of the FLOPs done by the required MMA instruction.\n",
                       *v.coverage * 100);
  if (v.speedup) out += fmt::format("Speed: {:.3f}x the baseline (higher is faster).\n", *v.speedup);
  out += profile_feedback(v);
  return cap(out, limits.total_chars, 400);
}

std::string profile_feedback(const Verdict& v) {
  const StageResult* instructions = v.stage("instructions");
  if (!instructions || !instructions->details.is_object() || !instructions->details.contains("profile"))
    return "";
  int64_t spilled = -1;  // unknown without ptxas's report (a Triton solution)
  if (const StageResult* compile = v.stage("compile"); compile && compile->details.is_object() &&
                                                       compile->details.contains("kernels") &&
                                                       compile->details["kernels"].is_array()) {
    spilled = 0;
    for (const auto& k : compile->details["kernels"])
      spilled += k.value("spill_store_bytes", int64_t{0}) + k.value("spill_load_bytes", int64_t{0});
  }
  return profile_text(profile_summary_from_json(instructions->details["profile"]), spilled);
}

}  // namespace ptxbench::agent
