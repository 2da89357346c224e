#include "compile/diagnostics.h"

#include <fmt/format.h>
#include <regex>
#include <sstream>
#include <vector>

#include "util/text.h"

namespace ptxbench {
namespace {

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (size_t pos = text.find(from); pos != std::string::npos; pos = text.find(from, pos + to.size()))
    text.replace(pos, from.size(), to);
}

// `line` without its quoted spans ('cicc', "solution.cu"): names and source text a compiler quotes.
std::string unquoted(const std::string& line) {
  static const std::regex quoted(R"('[^']*'|"[^"]*"|`[^`']*')");
  return std::regex_replace(line, quoted, "''");
}

}  // namespace

TrimmedDiagnostics trim_diagnostics(const std::string& compiler_output, const std::string& work_dir,
                                    int max_errors, size_t max_chars, const std::string& display_root) {
  std::string output = compiler_output;
  for (const std::string& dir : {work_dir, display_root}) {
    if (dir.empty()) continue;
    replace_all(output, dir + "/", "");
    replace_all(output, dir, ".");
  }

  // A diagnostic is a header line ("solution.cu(12): error: ...", "ptxas ... error : ...", "... fatal error")
  // followed by its excerpt lines (the source line and the caret), up to the next header or blank line.
  static const std::regex header(
      R"((^\S.*?(\(\d+\))?: (catastrophic error|fatal error|error|warning)\b)|(^ptxas.*(error|warning)\s*:))");
  static const std::regex is_error(R"(\b(error|fatal)\b)");
  struct Diagnostic {
    bool error;
    std::string text;
  };
  std::vector<Diagnostic> diagnostics;
  std::istringstream lines(output);
  std::string line;
  bool in_diagnostic = false;
  while (std::getline(lines, line)) {
    if (line.starts_with("ptxas info") || line.find("bytes stack frame") != std::string::npos)
      continue;  // the resource report: parsed separately
    if (line.find("detected in the compilation of") != std::string::npos) continue;
    std::smatch m;
    if (std::regex_search(line, m, header)) {
      std::string kind = m[3].matched ? m[3].str() : m[5].str();
      diagnostics.push_back({kind != "warning", line});
      in_diagnostic = true;
    } else if (in_diagnostic && !line.empty()) {
      diagnostics.back().text += "\n" + line;
    } else {
      in_diagnostic = false;
      if (!line.empty() && std::regex_search(line, is_error))
        diagnostics.push_back({true, line});  // linker etc.
    }
  }

  TrimmedDiagnostics result;
  for (const auto& d : diagnostics) (d.error ? result.errors : result.warnings)++;
  int kept_errors = 0, kept_warnings = 0;
  auto append = [&](const std::string& text) {
    if (result.text.size() + text.size() + 1 > max_chars) return false;
    result.text += text + "\n";
    return true;
  };
  for (const auto& d : diagnostics)
    if (d.error && kept_errors < max_errors && append(d.text)) ++kept_errors;
  for (const auto& d : diagnostics)
    if (!d.error && kept_errors + kept_warnings < max_errors && append(d.text)) ++kept_warnings;
  if (kept_errors < result.errors || kept_warnings < result.warnings)
    result.text += fmt::format("({} more errors and {} more warnings not shown)\n",
                               result.errors - kept_errors, result.warnings - kept_warnings);
  if (diagnostics.empty() && !output.empty())
    result.text = utf8_head(output, max_chars);  // unknown format: raw
  return result;
}

std::string host_failure_line(const std::string& compiler_output, const std::string& source_name) {
  // The C library's words for what the machine ran out of or refused, and nvcc's for a tool it lost.
  static const std::regex host(
      R"(No space left on device|Disk quota exceeded|Read-only file system|Input/output error|)"
      R"(Permission denied|Too many open files|Cannot allocate memory|Could not open output file|)"
      R"(died due to signal)");
  // A located diagnostic: EDG's "solution.cu(12)", gcc's "solution.cu:12:", ptxas's "..._solution.ptx,
  // line 12", and EDG's closing count.
  const std::string stem = source_name.substr(0, source_name.rfind('.'));
  const std::regex in_source(stem + R"(\.\w+(\(\d+\)|:\d+|, line \d+)|detected in the compilation of)");
  std::string found;
  std::istringstream lines(compiler_output);
  for (std::string line; std::getline(lines, line);) {
    if (std::regex_search(line, in_source)) return "";
    if (found.empty() && std::regex_search(unquoted(line), host)) found = line;
  }
  return found;
}

}  // namespace ptxbench
