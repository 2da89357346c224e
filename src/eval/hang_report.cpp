#include "eval/hang_report.h"

#include <fmt/format.h>
#include <algorithm>
#include <map>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

namespace ptxbench {

namespace {

const std::regex kKernelRow(
    R"(^\*?\s*(\d+)\s+\S+\s+\d+\s+\d+\s+\S+\s+0x[0-9a-fA-F]+\s+(\(\d+,\d+,\d+\))\s+(\(\d+,\d+,\d+\))\s+(.*\S)\s*$)");
const std::regex kKernelHeading(R"(^\s*Kernel\s+(\d+)\s*$)");
const std::regex kThreadRow(
    R"(^\*?\s*\(\d+,\d+,\d+\)\s+\(\d+,\d+,\d+\)\s+\(\d+,\d+,\d+\)\s+\(\d+,\d+,\d+\)\s+(\d+)\s+(0x[0-9a-fA-F]+)(?:\s+(\S+)\s+(\d+))?\s*$)");

// cuda-gdb's and the driver's words when the GPU side cannot be debugged.
bool says_attach_failed(const std::string& line) {
  for (const char* words :
       {"while attaching to the application", "CUDA Debugger back-end", "(cudbgApiAttach)", "CUDBG_ERROR_"})
    if (line.find(words) != std::string::npos) return true;
  return false;
}

std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

HangReport parse_cuda_gdb_threads(const std::string& output) {
  HangReport report;
  std::map<std::pair<int, std::string>, WaitSite> sites;
  std::istringstream in(output);
  int kernel = 0;
  bool in_threads = false;  // after "info cuda threads"'s heading
  std::smatch m;
  for (std::string line; std::getline(in, line);) {
    if (line.find("Switching focus to CUDA kernel") != std::string::npos) report.stopped = true;
    if (report.attach_failure.empty() && says_attach_failed(line)) {
      report.attach_failure = line.substr(0, 300);
      continue;
    }
    if (line.find("BlockIdx ThreadIdx To BlockIdx ThreadIdx") != std::string::npos) {
      in_threads = true;
      continue;
    }
    if (in_threads && std::regex_match(line, m, kKernelHeading)) {
      kernel = std::stoi(m[1]);
      continue;
    }
    if (in_threads && std::regex_match(line, m, kThreadRow)) {
      WaitSite site{.kernel = kernel, .threads = std::stoll(m[1])};
      if (m[3].matched) {
        site.file = base_name(m[3]);
        site.line = std::stoi(m[4]);
        site.location = fmt::format("{}:{}", site.file, site.line);
      } else {
        site.location = m[2];
      }
      const auto [at, inserted] = sites.try_emplace({kernel, site.location}, site);
      if (!inserted) at->second.threads += site.threads;
      at->second.runs += 1;
      report.threads += site.threads;
      continue;
    }
    if (!in_threads && std::regex_match(line, m, kKernelRow))
      report.kernels.push_back({.id = std::stoi(m[1]), .grid = m[2], .block = m[3], .invocation = m[4]});
    else if (in_threads && !line.empty() && line[0] != ' ' && line[0] != '*')
      in_threads = false;  // the next command's output
  }
  for (auto& [key, site] : sites) report.sites.push_back(site);
  std::stable_sort(report.sites.begin(), report.sites.end(),
                   [](const WaitSite& a, const WaitSite& b) { return a.threads > b.threads; });
  return report;
}

std::string HangReport::summary(size_t max_sites) const {
  if (sites.empty()) return "";
  std::string text;
  int kernel = -1;
  for (size_t i = 0; i < sites.size() && i < max_sites; ++i) {
    const WaitSite& site = sites[i];
    if (site.kernel != kernel) {
      kernel = site.kernel;
      std::string name = fmt::format("kernel {}", kernel);
      for (const HungKernel& k : kernels)
        if (k.id == kernel) {
          std::string invocation = k.invocation;
          if (const size_t paren = invocation.find('('); paren != std::string::npos) invocation.resize(paren);
          name = fmt::format("kernel {}<<<{},{}>>>", invocation, k.grid, k.block);
        }
      text += fmt::format("{}{}: ", text.empty() ? "" : "; ", name);
    } else {
      text += ", ";
    }
    text += fmt::format("{} thread{} at {}", site.threads, site.threads == 1 ? "" : "s", site.location);
  }
  if (sites.size() > max_sites) text += fmt::format(" (and {} more places)", sites.size() - max_sites);
  return text;
}

nlohmann::json to_json(const HangReport& report) {
  nlohmann::json kernels = nlohmann::json::array(), sites = nlohmann::json::array();
  for (const HungKernel& k : report.kernels)
    kernels.push_back({{"id", k.id}, {"grid", k.grid}, {"block", k.block}, {"invocation", k.invocation}});
  for (const WaitSite& s : report.sites)
    sites.push_back(
        {{"kernel", s.kernel}, {"location", s.location}, {"threads", s.threads}, {"runs", s.runs}});
  return {{"kernels", kernels},
          {"sites", sites},
          {"threads", report.threads},
          {"stopped", report.stopped},
          {"attach_failure", report.attach_failure},
          {"summary", report.summary()}};
}

}  // namespace ptxbench
