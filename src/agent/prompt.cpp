#include "agent/prompt.h"

#include <fmt/format.h>
#include <algorithm>

#include "arch/profile.h"
#include "util/files.h"
#include "util/text.h"

namespace ptxbench::agent {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A reply without code is shown back trimmed to this many characters (head and tail).
constexpr size_t kReplyShown = 3000;

std::string trim_middle(const std::string& text, size_t limit) {
  if (text.size() <= limit) return text;
  const size_t half = limit / 2;
  const std::string head = utf8_head(text, half), tail = utf8_tail(text, half);
  return fmt::format("{}\n[... {} bytes omitted ...]\n{}", head, text.size() - head.size() - tail.size(),
                     tail);
}

}  // namespace

std::string to_string(KnowledgeLevel level) {
  return kKnowledgeLevels.at(static_cast<size_t>(level));
}

std::optional<KnowledgeLevel> knowledge_level_from_string(const std::string& text) {
  for (size_t i = 0; i < kKnowledgeLevels.size(); ++i)
    if (text == kKnowledgeLevels[i]) return static_cast<KnowledgeLevel>(i);
  return std::nullopt;
}

std::optional<std::vector<KnowledgeLevel>> knowledge_levels_from_string(const std::string& text) {
  std::vector<KnowledgeLevel> levels;
  for (const std::string& name : split(text, ',')) {
    const auto level = knowledge_level_from_string(name);
    if (!level || std::find(levels.begin(), levels.end(), *level) != levels.end()) return std::nullopt;
    levels.push_back(*level);
  }
  if (levels.empty()) return std::nullopt;
  return levels;
}

std::string system_prompt(const Track& track) {
  return track.system_prompt();
}

std::string task_statement(const Track& track, const Task& task) {
  const Family& family = task.family_spec();
  const ArchProfile* arch = find_arch(task.arch);
  std::string out = fmt::format("Task: {}\n{}\n\n{}\n\n", task.id, task.title, task.description);
  out += fmt::format("Architecture: {} ({}), {}\n", task.arch, arch ? arch->marketing : "?",
                     arch ? track.toolchain(*arch) : "?");
  out += task.mode == TaskMode::full ? fmt::format("The solution is run, checked and timed on a {} GPU.\n",
                                                   arch ? arch->marketing : "?")
                                     : "This task is compiled and checked statically only (no GPU of this "
                                       "architecture runs it here): the "
                                       "required instructions must be in the compiled code.\n";
  out += fmt::format("\n{}\n", track.entry_point(family));
  out += fmt::format("It computes: {}\n", family.summary);
  out += "\nShapes (every one is checked on fresh random inputs; the first is timed):\n";
  for (const auto& shape : task.all_shapes())
    out += fmt::format("  {:<8} {}\n", shape.label, shape.to_string());
  if (const std::string parameters = describe_parameters(task); !parameters.empty())
    out += fmt::format("Parameters of every call: {}\n", parameters);
  out += fmt::format(
      "Tolerance: every element must satisfy {} against an fp32-accumulated reference; NaN and Inf never "
      "pass.\n",
      describe_tolerances(task));
  out += "\nRequired instruction families (each must execute):\n";
  std::string math_family;
  for (const auto& f : task.required) {
    out += fmt::format("  {:<10} PTX {}   (SASS {}){}\n", f.name, fmt::join(f.ptx, " / "),
                       fmt::join(f.sass, " / "), f.does_the_math ? ", does the math" : "");
    if (f.does_the_math) math_family = f.name;
  }
  if (!math_family.empty())
    out += fmt::format("Coverage: the {} instructions must account for at least {:.0f}% of the FLOPs ({}).\n",
                       math_family, task.coverage_threshold * 100, family.flops);
  out += fmt::format("Speed is measured against: {}.\n", describe_baseline(task));
  out += fmt::format("\n{}\n", track.file_start());
  return out;
}

std::string knowledge_text(const Track& track, const fs::path& kits_dir, const Task& task,
                           KnowledgeLevel level) {
  const ArchProfile* arch = find_arch(task.arch);
  if (!arch) return fmt::format("No kit: {} is not an architecture ptxbench knows.\n", task.arch);
  const KitLayout kit = track.kit(*arch);
  const fs::path dir = kits_dir / kit.folder;
  std::string out = fmt::format("Architecture knowledge ({} level) from the {}, kits/{}:\n", to_string(level),
                                kit.title, kit.folder);
  if (!fs::is_directory(dir))
    return out + fmt::format("The {} does not exist yet: {}\n", kit.title, kit.no_kit);

  auto include_file = [&](const fs::path& file, bool code) {
    const std::string name = fs::relative(file, kits_dir.parent_path()).generic_string();
    if (!fs::is_regular_file(file)) {
      out += fmt::format("\n----- {} -----\n(not in this kit yet)\n", name);
      return;
    }
    const std::string text = read_file(file);
    out += fmt::format("\n----- {} -----\n", name);
    out += code ? fenced(track, text) : text;
    if (!out.ends_with('\n')) out += '\n';
  };

  include_file(dir / "params.md", false);
  if (level == KnowledgeLevel::params) {
    out += fmt::format("\n{}\n", kit.no_templates);
    return out;
  }
  // The shared folder's templates and contracts first: the architecture's build on them.
  std::vector<fs::path> folders;
  if (!kit.shared_folder.empty()) folders.push_back(kits_dir / kit.shared_folder);
  folders.push_back(dir);
  // The files of one kind in a subfolder of each folder, each folder's sorted by name.
  const auto files_in = [&](const std::string& subfolder, const std::string& extension) {
    std::vector<fs::path> files;
    for (const fs::path& folder : folders) {
      std::vector<fs::path> own;
      if (fs::is_directory(folder / subfolder))
        for (const auto& entry : fs::directory_iterator(folder / subfolder))
          if (entry.is_regular_file() && entry.path().extension() == extension) own.push_back(entry.path());
      std::sort(own.begin(), own.end());
      files.insert(files.end(), own.begin(), own.end());
    }
    return files;
  };
  const std::vector<fs::path> templates = files_in(kit.templates, kit.template_extension);
  out += fmt::format("\n{}\n", kit.templates_intro);
  if (templates.empty()) out += kit.no_template_files + "\n";
  for (const auto& file : templates) include_file(file, true);
  if (level == KnowledgeLevel::templates) return out;
  for (const fs::path& folder : folders) include_file(folder / "contracts.md", false);
  if (level == KnowledgeLevel::patterns) {
    const std::vector<fs::path> patterns = files_in("patterns", ".md");
    out +=
        "\nHow the kit's pieces combine, pattern by pattern (every code fragment in them is compiled and run "
        "on the GPU by the kit's tests):\n";
    if (patterns.empty()) out += fmt::format("(the {} has no pattern documents yet)\n", kit.title);
    for (const auto& file : patterns) include_file(file, false);
  }
  return out;
}

std::string first_message(const Track& track, const Task& task, const std::string& knowledge) {
  return fmt::format("{}\n{}\nWrite the solution: the whole {} in one ```{} block.",
                     task_statement(track, task), knowledge, track.file_noun(), track.fence());
}

std::string fenced(const Track& track, const std::string& code) {
  return fmt::format("```{}\n{}{}```\n", track.fence(), code, code.ends_with('\n') ? "" : "\n");
}

std::string to_string(ContextPolicy policy) {
  switch (policy) {
    case ContextPolicy::compact:
      return "compact";
    case ContextPolicy::full:
      return "full";
    case ContextPolicy::last_pair:
      return "last-pair";
  }
  return "compact";
}

std::optional<ContextPolicy> context_policy_from_string(const std::string& text) {
  for (const ContextPolicy policy : {ContextPolicy::compact, ContextPolicy::full, ContextPolicy::last_pair})
    if (text == to_string(policy)) return policy;
  return std::nullopt;
}

size_t context_budget_chars(int64_t context_tokens, int64_t max_tokens) {
  if (context_tokens <= 0) return 0;
  return static_cast<size_t>(std::max<int64_t>(context_tokens - std::max<int64_t>(max_tokens, 0), 0)) * 3;
}

namespace {

size_t request_chars(const llm::Request& request) {
  size_t chars = request.system.size();
  for (const auto& m : request.messages) chars += m.content.size();
  return chars;
}

std::string assistant_text(const Track& track, const PreviousTurn& turn) {
  return turn.code ? fenced(track, *turn.code) : trim_middle(turn.reply, kReplyShown);
}

std::string verdict_text(const PreviousTurn& turn) {
  std::string text = fmt::format("Verdict on your turn {} reply:\n{}", turn.index, turn.feedback);
  if (!text.ends_with('\n')) text += '\n';
  return text;
}

std::string lines_of(const std::vector<PreviousTurn>& turns, size_t count, const char* heading) {
  if (count == 0) return "";
  std::string text = fmt::format("\n{}\n", heading);
  for (size_t i = 0; i < count; ++i) text += fmt::format("- turn {}: {}\n", turns[i].index, turns[i].outcome);
  return text;
}

std::string next_step(const Track& track, int index, bool passed) {
  return fmt::format("\nThis is turn {}. ", index) +
         (passed
              ? fmt::format("The file passed every stage: make it faster while keeping it correct and its "
                            "required instructions executed. Answer with the whole file in one ```{} block.",
                            track.fence())
              : fmt::format("Fix the problems above. Answer with the whole corrected {} in one ```{} block.",
                            track.file_noun(), track.fence()));
}

// The request with the first `as_lines` turns as lines and the rest as messages (full), or the last turn
// alone as messages (compact, last-pair).
llm::Request assemble(const Track& track, const std::string& first, int index,
                      const std::vector<PreviousTurn>& turns, ContextPolicy policy, size_t as_lines) {
  llm::Request request{.system = system_prompt(track), .messages = {{"user", first}}};
  const size_t shown = policy == ContextPolicy::full ? as_lines : turns.size() - 1;
  for (size_t i = shown; i < turns.size(); ++i) {
    request.messages.push_back({"assistant", assistant_text(track, turns[i])});
    std::string text = verdict_text(turns[i]);
    if (i + 1 == turns.size()) {
      if (policy == ContextPolicy::compact) text += lines_of(turns, shown, "Earlier turns:");
      if (policy == ContextPolicy::full)
        text += lines_of(turns, shown, "Earlier turns (their replies left out to fit the context):");
      text += next_step(track, index, turns[i].passed);
    }
    request.messages.push_back({"user", text});
  }
  return request;
}

}  // namespace

llm::Request build_request(const Track& track, const std::string& first_user_message, int index,
                           const std::vector<PreviousTurn>& turns, const ContextOptions& context) {
  llm::Request request =
      index <= 1 || turns.empty()
          ? llm::Request{.system = system_prompt(track), .messages = {{"user", first_user_message}}}
          : assemble(track, first_user_message, index, turns, context.policy, 0);
  // full: the oldest turns become lines, one at a time, until the request fits (the previous turn stays).
  for (size_t as_lines = 1; context.policy == ContextPolicy::full && context.budget_chars > 0 &&
                            request_chars(request) > context.budget_chars && as_lines < turns.size();
       ++as_lines)
    request = assemble(track, first_user_message, index, turns, context.policy, as_lines);
  if (context.budget_chars > 0 && request_chars(request) > context.budget_chars)
    throw ContextTooLarge(fmt::format(
        "the request of turn {} takes {} characters, more than the {} the model's window allows "
        "(context_tokens less max_tokens, at 3 characters a token; docs/models.md), even with the {} context",
        index, request_chars(request), context.budget_chars, to_string(context.policy)));
  return request;
}

json to_json(const llm::Request& request) {
  json messages = json::array();
  for (const auto& m : request.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
  return {{"system", request.system}, {"messages", messages}};
}

llm::Request request_from_json(const json& doc) {
  llm::Request request{.system = doc.at("system").get<std::string>()};
  for (const auto& m : doc.at("messages"))
    request.messages.push_back({m.at("role").get<std::string>(), m.at("content").get<std::string>()});
  return request;
}

}  // namespace ptxbench::agent
