#include "eval/sanitizer_report.h"
#include "util/text.h"

#include <array>
#include <regex>
#include <sstream>
#include <string_view>

#include <nlohmann/json.hpp>

#include "eval/ncu_report.h"  // parse_count: counts with thousands separators

namespace ptxbench {

using nlohmann::json;

namespace {

constexpr std::string_view kPrefix = "=========";
// The most of a line the parser reads: a kernel's name comes from the solution (a template's can run to
// kilobytes), and std::regex recurses per character, so a line of 40 kB overflowed the stack (found by
// fuzz/tool_reports.cpp). Past this a line's words are cut, never parsed.
constexpr size_t kMaxLineBytes = 4096;

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// Messages with which the tool says it could not check the program at all. Its verdict then says nothing
// about the submission (a harness problem, or a program that never reached the GPU).
constexpr std::array<std::string_view, 7> kToolFailures = {
    "terminated before first instrumented API call",
    "doesn't exist or is not a valid executable",
    "Device not supported",
    "Internal Sanitizer Error",
    "Unable to ",
    "Failed to ",
    "Could not ",
};

SanitizerErrorKind kind_of(std::string_view headline) {
  if (contains(headline, "Barrier error") || contains(headline, "barrier"))
    return SanitizerErrorKind::barrier;
  if (contains(headline, "Race reported")) return SanitizerErrorKind::race;
  if (starts_with(headline, "Program hit ")) return SanitizerErrorKind::host_api;
  if (starts_with(headline, "Invalid ")) return SanitizerErrorKind::memory_access;
  if (starts_with(headline, "Uninitialized ")) return SanitizerErrorKind::uninitialized;
  if (starts_with(headline, "Leaked ")) return SanitizerErrorKind::leak;
  if (starts_with(headline, "Warp ") || starts_with(headline, "Device ") || contains(headline, "Illegal") ||
      contains(headline, "Hardware"))
    return SanitizerErrorKind::hardware_exception;
  return SanitizerErrorKind::other;
}

// "at misaligned_kernel(const char *, float *)+0x60 in sanitizer_cases.cu:33"   (compute-sanitizer)
// "at 0x000000c8 in /path/helper.cuh:75:void projection<double>(double*, int)"   (older cuda-memcheck form)
void read_location(const std::string& text, SanitizerError& error) {
  static const std::regex kOld(R"(^0x[0-9a-fA-F]+ in (.*?:\d+):(.*)$)");
  static const std::regex kNew(R"(^(.*)\+(0x[0-9a-fA-F]+)(?: in (.*))?$)");
  std::smatch match;
  if (std::regex_match(text, match, kOld)) {
    error.location = match[1];
    error.kernel = trim(match[2].str());
  } else if (std::regex_match(text, match, kNew)) {
    error.kernel = trim(match[1].str());
    error.location = match[3].matched ? trim(match[3].str()) : "+" + match[2].str();
  } else {
    error.location = text;
  }
}

void read_detail_line(const std::string& line, SanitizerError& error) {
  static const std::regex kThread(R"(^by thread (\([^)]*\)) in block (\([^)]*\)))");
  static const std::regex kAddress(R"(^(?:Access to|Address) (0x[0-9a-fA-F]+) )");
  std::smatch match;
  if (starts_with(line, "at ") && error.kernel.empty() && error.location.empty()) {
    read_location(line.substr(3), error);
  } else if (std::regex_search(line, match, kThread)) {
    error.thread = match[1];
    error.block = match[2];
  } else if (std::regex_search(line, match, kAddress)) {
    error.address = match[1];
    error.detail = line;
  } else if (starts_with(line, "and is ") && !error.detail.empty()) {
    error.detail += " " + line;  // "and is 4 bytes after the nearest allocation at 0x.. of size 512 bytes"
  }
  // Backtraces ("Saved host backtrace ...", "Host Frame: ...", "Device Frame: ...") are left out.
}

}  // namespace

std::string SanitizerError::summary() const {
  std::string text = headline;
  if (!kernel.empty()) text += " in " + kernel;
  if (!location.empty() && !starts_with(location, "+")) text += " at " + location;
  if (!thread.empty()) text += ", thread " + thread + " block " + block;
  if (!detail.empty()) text += ": " + detail;
  return text;
}

SanitizerReport parse_sanitizer_report(const std::string& output, size_t max_errors) {
  SanitizerReport report;
  static const std::regex kNotPrinted(R"(^ERROR SUMMARY: ([\d,]+) errors? were not printed)");
  static const std::regex kSummary(R"(^ERROR SUMMARY: ([\d,]+) errors?)");
  // racecheck ends with its own summary instead: "RACECHECK SUMMARY: 1 hazard displayed (1 error, 0
  // warnings)" (H200, compute-sanitizer 2025.3.1); its errors are the hazards that count.
  static const std::regex kRaceSummary(
      R"(^RACECHECK SUMMARY: [\d,]+ hazards? displayed \(([\d,]+) errors?, [\d,]+ warnings?\))");
  static const std::regex kRaceLocation(R"( at (.*\+0x[0-9a-fA-F]+(?: in \S+)?))");
  bool saw_banner = false;
  bool in_error = false;  // detail lines belong to the last error, which is kept only if within max_errors
  SanitizerError current;
  auto finish_error = [&] {
    if (!in_error) return;
    if (report.errors.size() < max_errors) report.errors.push_back(std::move(current));
    current = SanitizerError{};
    in_error = false;
  };

  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!starts_with(line, kPrefix)) continue;  // the program's own output
    if (line.size() > kMaxLineBytes) line.resize(kMaxLineBytes);
    const std::string_view body = std::string_view(line).substr(kPrefix.size());
    const std::string text = trim(body);
    if (text.empty()) {  // a bare "=========" closes an error block
      finish_error();
      continue;
    }
    const bool top_level = body.size() >= 2 && body[0] == ' ' && body[1] != ' ';
    if (!top_level) {
      if (in_error) read_detail_line(text, current);
      continue;
    }
    finish_error();
    std::smatch match;
    int64_t count = 0;
    if (text == "COMPUTE-SANITIZER") {
      saw_banner = true;
    } else if (std::regex_search(text, match, kNotPrinted)) {
      if (parse_count(match[1].str(), count)) report.errors_not_printed = count;
    } else if (std::regex_search(text, match, kSummary) || std::regex_search(text, match, kRaceSummary)) {
      if (parse_count(match[1].str(), count)) report.error_count = count;
    } else if (contains(text, "SUMMARY:")) {
      // LEAK SUMMARY: informational; the leaks themselves are error blocks
    } else if (contains(text, "Target application returned an error")) {
      report.target_returned_error = true;
    } else if (contains(text, "process didn't terminate successfully")) {
      report.target_ended_abnormally = true;
    } else {
      const auto kind = kind_of(text);
      bool failure = false;
      if (kind == SanitizerErrorKind::other || kind == SanitizerErrorKind::hardware_exception) {
        for (const auto phrase : kToolFailures) failure = failure || contains(text, phrase);
      }
      if (failure) {
        report.tool_failed = true;
        if (report.tool_failure.empty())
          report.tool_failure = starts_with(text, "Error: ") ? text.substr(7) : text;
        continue;
      }
      current.kind = kind;
      current.headline = text;
      if (kind == SanitizerErrorKind::race && std::regex_search(text, match, kRaceLocation))
        read_location(match[1].str(), current);
      in_error = true;
      ++report.errors_printed;
    }
  }
  finish_error();

  if (!saw_banner && !report.tool_failed) {
    report.tool_failed = true;
    report.tool_failure = "no compute-sanitizer output (the tool did not start)";
  } else if (!report.error_count && !report.tool_failed) {
    // Without its summary the tool did not finish (killed by a time limit, or crashed itself).
    report.tool_failed = true;
    report.tool_failure = "compute-sanitizer stopped before its summary";
  }
  return report;
}

std::string to_string(SanitizerErrorKind kind) {
  switch (kind) {
    case SanitizerErrorKind::memory_access:
      return "memory_access";
    case SanitizerErrorKind::uninitialized:
      return "uninitialized";
    case SanitizerErrorKind::barrier:
      return "barrier";
    case SanitizerErrorKind::race:
      return "race";
    case SanitizerErrorKind::host_api:
      return "host_api";
    case SanitizerErrorKind::hardware_exception:
      return "hardware_exception";
    case SanitizerErrorKind::leak:
      return "leak";
    case SanitizerErrorKind::other:
      return "other";
  }
  return "other";
}

json to_json(const SanitizerError& error) {
  return json{{"kind", to_string(error.kind)}, {"headline", error.headline}, {"kernel", error.kernel},
              {"location", error.location},    {"thread", error.thread},     {"block", error.block},
              {"address", error.address},      {"detail", error.detail},     {"summary", error.summary()}};
}

json to_json(const SanitizerReport& report) {
  json errors = json::array();
  for (const auto& error : report.errors) errors.push_back(to_json(error));
  return json{{"error_count", report.error_count ? json(*report.error_count) : json(nullptr)},
              {"errors_printed", report.errors_printed},
              {"errors_not_printed", report.errors_not_printed},
              {"errors", std::move(errors)},
              {"target_returned_error", report.target_returned_error},
              {"target_ended_abnormally", report.target_ended_abnormally},
              {"tool_failed", report.tool_failed},
              {"tool_failure", report.tool_failure}};
}

}  // namespace ptxbench
