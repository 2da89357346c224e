#include "eval/verdict.h"

#include <fmt/format.h>
#include <algorithm>
#include <stdexcept>

namespace ptxbench {

using nlohmann::json;

namespace {

constexpr StageStatus kAllStatuses[] = {StageStatus::passed,  StageStatus::failed,
                                        StageStatus::timeout, StageStatus::runtime_error,
                                        StageStatus::skipped, StageStatus::harness_error};

bool is_failure(StageStatus s) {
  return s == StageStatus::failed || s == StageStatus::timeout || s == StageStatus::runtime_error;
}

}  // namespace

std::string to_string(StageStatus status) {
  switch (status) {
    case StageStatus::passed:
      return "passed";
    case StageStatus::failed:
      return "failed";
    case StageStatus::timeout:
      return "timeout";
    case StageStatus::runtime_error:
      return "runtime_error";
    case StageStatus::skipped:
      return "skipped";
    case StageStatus::harness_error:
      return "harness_error";
  }
  return "harness_error";
}

StageStatus stage_status_from_string(const std::string& text) {
  for (auto s : kAllStatuses)
    if (to_string(s) == text) return s;
  throw std::invalid_argument("unknown stage status '" + text + "'");
}

std::string to_string(OverallStatus status) {
  switch (status) {
    case OverallStatus::passed:
      return "passed";
    case OverallStatus::failed:
      return "failed";
    case OverallStatus::incomplete:
      return "incomplete";
    case OverallStatus::error:
      return "error";
  }
  return "error";
}

OverallStatus Verdict::overall() const {
  auto any = [&](auto pred) { return std::any_of(stages.begin(), stages.end(), pred); };
  if (any([](const StageResult& s) { return is_failure(s.status); })) return OverallStatus::failed;
  if (any([](const StageResult& s) { return s.status == StageStatus::harness_error; }))
    return OverallStatus::error;
  if (stages.empty() || any([](const StageResult& s) { return s.status == StageStatus::skipped; }))
    return OverallStatus::incomplete;
  return OverallStatus::passed;
}

std::optional<bool> Verdict::correct() const {
  for (const auto& stage : stages) {
    if (stage.name == "correct") {
      if (stage.status == StageStatus::passed) return true;
      if (is_failure(stage.status)) return false;
      return std::nullopt;
    }
    if (is_failure(stage.status)) return false;
  }
  return std::nullopt;
}

std::optional<bool> Verdict::verified() const {
  switch (overall()) {
    case OverallStatus::passed:
      return true;
    case OverallStatus::failed:
      return false;
    case OverallStatus::incomplete:
    case OverallStatus::error:
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<double> Verdict::kernel_speedup() const {
  const StageResult* time = stage("time");
  const StageResult* instructions = stage("instructions");
  if (!speedup || !time || !instructions) return std::nullopt;
  const auto at = [](const json& doc, const char* pointer) -> const json& {
    static const json none;
    const json::json_pointer path(pointer);
    return doc.contains(path) ? doc[path] : none;
  };
  const json& baseline_us = at(time->details, "/baseline/event_us/median");
  const json& signatures = at(instructions->details, "/binding/stages/time/signatures");
  if (!baseline_us.is_number() || !signatures.is_array() || signatures.empty()) return std::nullopt;
  // The timed calls' launches: the signature most calls had.
  const json& timed = *std::max_element(
      signatures.begin(), signatures.end(),
      [](const json& a, const json& b) { return a.value("calls", 0) < b.value("calls", 0); });
  double kernels_us = 0;
  for (const json& launch : timed.value("launches", json::array())) {
    const json duration = launch.value("duration_us", json());
    if (!duration.is_number()) return std::nullopt;
    kernels_us += duration.get<double>();
  }
  if (!(kernels_us > 0)) return std::nullopt;
  return baseline_us.get<double>() / kernels_us;
}

bool Verdict::reusable() const {
  return overall() != OverallStatus::error &&
         std::none_of(stages.begin(), stages.end(),
                      [](const StageResult& s) { return s.status == StageStatus::timeout; });
}

const StageResult* Verdict::stage(const std::string& name) const {
  for (const auto& s : stages)
    if (s.name == name) return &s;
  return nullptr;
}

StageResult& Verdict::stage_mut(const std::string& name) {
  for (auto& s : stages)
    if (s.name == name) return s;
  return stages.emplace_back(StageResult{.name = name});
}

std::string Verdict::summary() const {
  const OverallStatus status = overall();
  for (const auto& s : stages)
    if (is_failure(s.status) || (status == OverallStatus::error && s.status == StageStatus::harness_error)) {
      std::string first_line = s.message.substr(0, s.message.find('\n'));
      return fmt::format("{} at {}: {}", to_string(status), s.name, first_line);
    }
  if (status == OverallStatus::incomplete) {
    std::vector<std::string> skipped;
    std::string reason;
    for (const auto& s : stages)
      if (s.status == StageStatus::skipped) {
        skipped.push_back(s.name);
        if (reason.empty()) reason = s.message;
      }
    return fmt::format("incomplete: {} skipped ({})", fmt::join(skipped, ", "), reason);
  }
  std::string out = to_string(status);
  if (speedup) out += fmt::format(": {:.3f}x the baseline", *speedup);
  if (coverage) out += fmt::format(", coverage {:.1f}%", *coverage * 100);
  return out;
}

std::string Verdict::feedback() const {
  std::string out = fmt::format("Verdict for task {}: {}\n", task_id, summary());
  for (const auto& s : stages) {
    if (s.status == StageStatus::passed && s.message.empty()) {
      out += fmt::format("[{}] passed\n", s.name);
      continue;
    }
    out +=
        fmt::format("[{}] {}{}{}\n", s.name, to_string(s.status), s.message.empty() ? "" : ": ", s.message);
  }
  return out;
}

json to_json(const Verdict& v) {
  json stages = json::array();
  for (const auto& s : v.stages)
    stages.push_back({{"name", s.name},
                      {"status", to_string(s.status)},
                      {"wall_s", s.wall_s},
                      {"message", s.message},
                      {"details", s.details}});
  return tagged(documents::verdict, {{"task", v.task_id},
                                     {"arch", v.arch},
                                     {"track", v.track},
                                     {"submission", v.submission_hash},
                                     {"source_name", v.source_name},
                                     {"created_at", v.created_at},
                                     {"ptxbench_version", v.ptxbench_version},
                                     {"host", v.host},
                                     {"device", v.device},
                                     {"status", to_string(v.overall())},
                                     {"summary", v.summary()},
                                     {"speedup", v.speedup ? json(*v.speedup) : json(nullptr)},
                                     {"coverage", v.coverage ? json(*v.coverage) : json(nullptr)},
                                     {"stages", stages},
                                     {"feedback", v.feedback()}});
}

Verdict verdict_from_json(const json& doc) {
  if (doc.value("schema", 0) != documents::verdict.version)
    throw std::invalid_argument(
        fmt::format("verdict schema {} is not {}", doc.value("schema", 0), documents::verdict.version));
  Verdict v;
  v.task_id = doc.at("task");
  v.arch = doc.at("arch");
  v.track = doc.value("track", std::string("cuda"));  // verdicts from before tracks are CUDA's
  v.submission_hash = doc.at("submission");
  v.source_name = doc.at("source_name");
  v.created_at = doc.at("created_at");
  v.ptxbench_version = doc.at("ptxbench_version");
  v.host = doc.at("host");
  v.device = doc.value("device", std::string());  // verdicts from before the field: the default GPU, or none
  if (!doc.at("speedup").is_null()) v.speedup = doc.at("speedup").get<double>();
  if (!doc.at("coverage").is_null()) v.coverage = doc.at("coverage").get<double>();
  for (const auto& s : doc.at("stages"))
    v.stages.push_back({.name = s.at("name"),
                        .status = stage_status_from_string(s.at("status")),
                        .wall_s = s.at("wall_s"),
                        .message = s.at("message"),
                        .details = s.at("details")});
  return v;
}

}  // namespace ptxbench
