#include "agent/reference_model.h"

#include <fmt/format.h>

#include "agent/prompt.h"
#include "arch/profile.h"
#include "eval/solution_run.h"

namespace ptxbench::agent {

namespace {

// "Task: gemm-bf16-...\n" at the start of a line of the first user message.
std::string task_id_in(const llm::Request& request) {
  for (const auto& m : request.messages) {
    if (m.role != "user") continue;
    const std::string marker = "Task: ";
    size_t pos = m.content.rfind(marker, 0) == 0 ? 0 : m.content.find("\n" + marker);
    if (pos == std::string::npos) return "";
    if (pos != 0) ++pos;
    pos += marker.size();
    return m.content.substr(pos, m.content.find_first_of(" \n", pos) - pos);
  }
  return "";
}

}  // namespace

std::string break_on_purpose(const std::string& source, const std::string& entry_point) {
  const std::string broken_call = "  ptxbench_check_arguments(stream);  // validate the arguments first\n";
  size_t extern_c = source.find("extern \"C\"");
  size_t name = extern_c == std::string::npos || entry_point.empty()
                    ? std::string::npos
                    : source.find(entry_point + "(", extern_c);
  if (name != std::string::npos) {
    // The parameter list's closing parenthesis, then the body's opening brace.
    int depth = 0;
    size_t i = source.find('(', name);
    for (; i < source.size(); ++i) {
      if (source[i] == '(')
        ++depth;
      else if (source[i] == ')' && --depth == 0)
        break;
    }
    const size_t brace = source.find('{', i);
    if (i < source.size() && brace != std::string::npos) {
      const size_t line_end = source.find('\n', brace);
      const size_t at = line_end == std::string::npos ? source.size() : line_end + 1;
      std::string out = source.substr(0, at);
      if (line_end == std::string::npos) out += '\n';
      return out + broken_call + source.substr(at);
    }
  }
  return source + (source.ends_with('\n') ? "" : "\n") +
         "static int ptxbench_checked = ptxbench_check_arguments();\n";
}

ReferenceModel::ReferenceModel(const std::filesystem::path& solutions_dir, const TaskRegistry& registry,
                               const Track& track)
    : track_(track) {
  const auto manifest = load_solution_manifest(solutions_dir);
  auto expects = [](const ShippedSolution& s, const char* stage) {
    auto it = s.expect.find(stage);
    return it != s.expect.end() && it->second == "passed";
  };
  for (const Task& task : registry.all()) {
    entry_points_[task.id] = task.family_spec().entry_point;
    const ShippedSolution* chosen = nullptr;
    bool verified = false;
    // The first expected to pass, else the first expected to be correct; for a static-only task (no GPU
    // stage runs), the first expected to pass the static stage.
    const char* fallback = task.mode == TaskMode::static_only ? "static" : "correct";
    for (const auto& s : manifest) {
      if (s.track != &track) continue;
      bool matches = false;
      for (const Task* t : registry.matching(s.tasks)) matches = matches || t->id == task.id;
      if (!matches) continue;
      if (expects(s, "overall")) {
        chosen = &s;
        verified = true;
        break;
      }
      if (!chosen && expects(s, fallback)) chosen = &s;
    }
    if (chosen)
      by_task_[task.id] = {chosen->path.generic_string(), chosen->source, verified,
                           task.mode == TaskMode::static_only};
  }
}

bool ReferenceModel::has_reference(const std::string& task_id) const {
  auto it = by_task_.find(task_id);
  return it != by_task_.end() && it->second.verified;
}

std::string ReferenceModel::answer(const std::string& task_id, int turn) const {
  auto it = by_task_.find(task_id);
  if (task_id.empty())
    return "I am the reference model; I cannot tell which task this is, so I have no code.";
  if (it == by_task_.end())
    return fmt::format(
        "I am the reference model and have no shipped solution for {} in the {} track, so I have no code to "
        "give.",
        task_id, track_.name());
  const Shipped& s = it->second;
  auto entry = entry_points_.find(task_id);
  const std::string entry_point = entry == entry_points_.end() ? "" : entry->second;
  std::string intro =
      s.verified ? fmt::format("The shipped reference solution solutions/{}", s.path)
      : s.static_only
          ? fmt::format(
                "The shipped solutions/{}, which has never run on a GPU of its architecture: "
                "only its compile and static stages can be judged",
                s.path)
          : fmt::format(
                "I have no solution for {} that uses its required instructions. This is the shipped "
                "solutions/{}, which is correct but does not use them",
                task_id, s.path);
  if (turn <= 1)
    return fmt::format(
        "{}, with a mistake made on purpose (a call to a function that does not exist), so that the "
        "feedback path is exercised.\n\n{}",
        intro, fenced(track_, break_on_purpose(s.source, entry_point)));
  return fmt::format("{}.\n\n{}", intro, fenced(track_, s.source));
}

llm::Reply ReferenceModel::complete(const llm::Request& request) {
  int turn = 1;
  for (const auto& m : request.messages) turn += m.role == "assistant";
  llm::Reply reply{
      .ok = true, .text = answer(task_id_in(request), turn), .finish_reason = "stop", .attempts = 1};
  return reply;
}

}  // namespace ptxbench::agent
