#include "agent/extract.h"

#include <fmt/format.h>
#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>
#include <vector>

#include "eval/evaluate.h"

namespace ptxbench::agent {
namespace {

struct Fence {
  char mark = 0;  // '`' or '~'
  size_t length = 0;
  std::string info;  // lower-case first word of the info string
};

// A fence line: up to 3 spaces, then at least 3 backticks or tildes, then an info string.
bool parse_fence(const std::string& line, Fence& fence) {
  size_t i = 0;
  while (i < line.size() && i < 3 && line[i] == ' ') ++i;
  if (i >= line.size() || (line[i] != '`' && line[i] != '~')) return false;
  const char mark = line[i];
  size_t n = 0;
  while (i + n < line.size() && line[i + n] == mark) ++n;
  if (n < 3) return false;
  std::string rest = line.substr(i + n);
  if (mark == '`' && rest.find('`') != std::string::npos) return false;  // inline code, not a fence
  std::istringstream words(rest);
  std::string info;
  words >> info;
  std::transform(info.begin(), info.end(), info.begin(), [](unsigned char c) { return std::tolower(c); });
  fence = {mark, n, info};
  return true;
}

bool closes(const std::string& line, const Fence& open) {
  Fence f;
  return parse_fence(line, f) && f.mark == open.mark && f.length >= open.length && f.info.empty();
}

}  // namespace

Extraction extract_code(const Track& track, const std::string& reply) {
  std::vector<std::string> lines;
  {
    std::istringstream in(reply);
    for (std::string line; std::getline(in, line);) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      lines.push_back(line);
    }
  }
  // The last block labelled in the track's language wins; an unlabelled one only when there is none (a
  // trailing ``` block is as often a shell command or compiler output as the solution).
  Extraction best, unlabelled;
  std::set<std::string> other_languages;
  int blocks = 0;
  bool empty_block = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    Fence open;
    if (!parse_fence(lines[i], open)) continue;
    ++blocks;
    size_t end = i + 1;
    while (end < lines.size() && !closes(lines[end], open)) ++end;
    std::string code;
    for (size_t j = i + 1; j < end; ++j) code += lines[j] + "\n";
    const bool blank =
        std::all_of(code.begin(), code.end(), [](unsigned char c) { return std::isspace(c) != 0; });
    if (track.takes_fence(open.info) && blank) {
      empty_block = true;  // an empty block is no solution; an earlier one with code still counts
    } else if (track.takes_fence(open.info)) {
      Extraction& slot = open.info.empty() ? unlabelled : best;
      slot.found = true;
      slot.code = code;
      slot.language = open.info;
      slot.unterminated = end >= lines.size();
    } else {
      other_languages.insert(open.info);
    }
    i = end;  // past the closing fence (or the end)
  }
  if (!best.found && unlabelled.found) best = unlabelled;
  best.blocks = blocks;
  const std::string answer =
      fmt::format("Answer with the whole {} in one ```{} block.", track.file_noun(), track.fence());
  if (best.found && best.code.size() > kMaxSolutionBytes) {
    // The limit every path to the judge holds a source to (the service's included): over it the turn is the
    // model's, judged nowhere.
    best.found = false;
    best.problem = fmt::format(
        "Your code block holds {} bytes, over the limit of {} bytes a solution may have, so it was not "
        "compiled. {}",
        best.code.size(), kMaxSolutionBytes, answer);
    best.code.clear();
    return best;
  }
  if (best.found) return best;
  best.problem =
      empty_block ? "Your reply's code block is empty, so there was nothing to compile. " + answer
      : other_languages.empty()
          ? "Your reply contained no fenced code block, so there was nothing to compile. " + answer
          : fmt::format(
                "Your reply contained no {} code block (only blocks marked {}), so there was nothing "
                "to compile. {}",
                track.language_noun(), fmt::join(other_languages, ", "), answer);
  return best;
}

}  // namespace ptxbench::agent
