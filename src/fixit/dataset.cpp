#include "fixit/dataset.h"

#include <fmt/format.h>
#include <map>
#include <set>
#include <stdexcept>

#include "agent/feedback.h"
#include "agent/prompt.h"
#include "util/files.h"
#include "util/hash.h"
#include "util/json_file.h"
#include "util/text.h"

namespace ptxbench::fixit {

using nlohmann::json;

std::string to_string(Layout layout) {
  return layout == Layout::fix ? "fix" : "direct";
}

std::optional<Layout> layout_from_string(const std::string& text) {
  if (text == "fix") return Layout::fix;
  if (text == "direct") return Layout::direct;
  return std::nullopt;
}

std::string to_string(Balance balance) {
  switch (balance) {
    case Balance::none:
      return "none";
    case Balance::before_repair:
      return "before_repair";
    case Balance::after_repair:
      return "after_repair";
  }
  return "none";
}

// --- the spec -------------------------------------------------------------------------------------------

namespace {

template <class T>
T field(const json& doc, const char* name, T fallback) {
  if (!doc.contains(name) || doc[name].is_null()) return fallback;
  try {
    return doc[name].get<T>();
  } catch (const json::exception&) {
    throw std::invalid_argument(fmt::format("field \"{}\" has the wrong type ({})", name, doc[name].dump()));
  }
}

void only_fields(const json& doc, const std::string& where, const std::set<std::string>& known) {
  if (!doc.is_object()) throw std::invalid_argument(where + " is not a JSON object");
  for (const auto& [key, value] : doc.items())
    if (!known.count(key))
      throw std::invalid_argument(fmt::format("{}: unknown field \"{}\" (known: {})", where, key,
                                              fmt::join(known, ", ")));
}

}  // namespace

Spec parse_spec(const json& doc) {
  only_fields(doc, "the spec",
              {"name", "about", "source", "runs", "model", "tasks", "error_classes", "turns", "balance",
               "teacher", "reasoner", "layout", "holdout", "seed"});
  Spec s;
  s.name = field<std::string>(doc, "name", "");
  if (s.name.empty()) throw std::invalid_argument("field \"name\" is missing");
  s.about = field<std::string>(doc, "about", "");
  const std::string source = field<std::string>(doc, "source", "failures");
  if (source != "failures" && source != "correct")
    throw std::invalid_argument("field \"source\" is \"" + source + "\"; \"failures\" or \"correct\"");
  s.correct_source = source == "correct";
  s.mine.correct = s.correct_source;
  s.mine.runs = field<std::vector<int64_t>>(doc, "runs", {});
  s.mine.model = field<std::string>(doc, "model", "");
  s.mine.tasks = field<std::string>(doc, "tasks", "*");
  s.mine.error_classes = field<std::vector<std::string>>(doc, "error_classes", {});
  for (const auto& c : s.mine.error_classes) {
    const auto parsed = agent::error_class_from_string(c);
    if (!parsed || !minable_class(*parsed))
      throw std::invalid_argument("field \"error_classes\": \"" + c +
                                  "\" is not the class of a failed turn with code");
  }
  s.mine.seed = field<uint64_t>(doc, "seed", 1);
  if (doc.contains("turns")) {
    const json& t = doc["turns"];
    only_fields(t, "field \"turns\"", {"min", "max"});
    s.mine.min_turn = field<int>(t, "min", 1);
    s.mine.max_turn = field<int>(t, "max", 0);
  }
  if (doc.contains("balance") && !doc["balance"].is_null()) {
    const json& b = doc["balance"];
    only_fields(b, "field \"balance\"", {"when", "per_task", "per_class"});
    const std::string when = field<std::string>(b, "when", "before_repair");
    s.balance = when == "before_repair" ? Balance::before_repair
                : when == "after_repair"
                    ? Balance::after_repair
                    : throw std::invalid_argument("field \"balance.when\": \"before_repair\" or \"after_repair\"");
    s.quotas.per_task = field<int>(b, "per_task", 0);
    s.quotas.per_class = field<int>(b, "per_class", 0);
    if (!s.quotas.any() || s.quotas.per_task < 0 || s.quotas.per_class < 0)
      throw std::invalid_argument("field \"balance\" needs a positive per_task or per_class");
  }
  if (doc.contains("teacher") && !doc["teacher"].is_null()) {
    const json& t = doc["teacher"];
    only_fields(t, "field \"teacher\"", {"model", "turns", "knowledge"});
    s.teacher = field<std::string>(t, "model", "");
    s.teacher_turns = field<int>(t, "turns", 5);
    s.knowledge = field<std::string>(t, "knowledge", "contracts");
    if (s.teacher.empty()) throw std::invalid_argument("field \"teacher.model\" is missing");
    if (s.teacher_turns < 1 || s.teacher_turns > 100)
      throw std::invalid_argument("field \"teacher.turns\" must be 1 to 100");
    if (!agent::knowledge_level_from_string(s.knowledge))
      throw std::invalid_argument("field \"teacher.knowledge\": params, templates or contracts");
  }
  if (doc.contains("reasoner") && !doc["reasoner"].is_null()) {
    const json& r = doc["reasoner"];
    only_fields(r, "field \"reasoner\"", {"model", "min_chars", "max_chars", "max_code_lines", "attempts"});
    s.reasoner = field<std::string>(r, "model", "");
    s.limits.min_chars = field<size_t>(r, "min_chars", s.limits.min_chars);
    s.limits.max_chars = field<size_t>(r, "max_chars", s.limits.max_chars);
    s.limits.max_code_lines = field<size_t>(r, "max_code_lines", s.limits.max_code_lines);
    s.reason_attempts = field<int>(r, "attempts", 2);
    if (s.reasoner.empty()) throw std::invalid_argument("field \"reasoner.model\" is missing");
    if (s.limits.min_chars >= s.limits.max_chars)
      throw std::invalid_argument("field \"reasoner\": min_chars must be below max_chars");
  }
  const std::string layout = field<std::string>(doc, "layout", s.correct_source ? "direct" : "fix");
  const auto parsed_layout = layout_from_string(layout);
  if (!parsed_layout) throw std::invalid_argument("field \"layout\": \"fix\" or \"direct\"");
  s.layout = *parsed_layout;
  s.holdout = field<std::vector<std::string>>(doc, "holdout", {});

  if (s.correct_source) {
    if (s.layout != Layout::direct) throw std::invalid_argument("source \"correct\" takes layout \"direct\"");
    if (!s.teacher.empty() || !s.reasoner.empty())
      throw std::invalid_argument("source \"correct\" (direct generation) has no teacher and no reasoner");
    if (s.balance == Balance::after_repair)
      throw std::invalid_argument("source \"correct\" has no repair to balance after");
    if (!s.mine.error_classes.empty())
      throw std::invalid_argument("source \"correct\" has no error classes");
  } else {
    if (s.layout != Layout::fix) throw std::invalid_argument("source \"failures\" takes layout \"fix\"");
    if (s.teacher.empty()) throw std::invalid_argument("source \"failures\" needs a \"teacher\"");
  }
  if (s.balance == Balance::before_repair) s.mine.quotas = s.quotas;
  return s;
}

Spec load_spec(const std::filesystem::path& file) {
  json doc;
  try {
    doc = read_json_file(file);  // strict: a key given twice is an error; a regular file of bounded size
  } catch (const ConfigError& e) {
    throw std::invalid_argument(e.what());
  }
  try {
    return parse_spec(doc);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("{}: {}", file.string(), e.what()));
  }
}

json to_json(const Spec& s) {
  json doc = {{"name", s.name},
              {"about", s.about},
              {"source", s.correct_source ? "correct" : "failures"},
              {"runs", s.mine.runs},
              {"model", s.mine.model},
              {"tasks", s.mine.tasks},
              {"error_classes", s.mine.error_classes},
              {"turns", {{"min", s.mine.min_turn}, {"max", s.mine.max_turn}}},
              {"layout", to_string(s.layout)},
              {"holdout", s.holdout},
              {"seed", s.mine.seed}};
  doc["balance"] = s.balance == Balance::none
                       ? json(nullptr)
                       : json{{"when", to_string(s.balance)},
                              {"per_task", s.quotas.per_task},
                              {"per_class", s.quotas.per_class}};
  doc["teacher"] = s.teacher.empty()
                       ? json(nullptr)
                       : json{{"model", s.teacher}, {"turns", s.teacher_turns}, {"knowledge", s.knowledge}};
  doc["reasoner"] = s.reasoner.empty() ? json(nullptr)
                                       : json{{"model", s.reasoner},
                                              {"min_chars", s.limits.min_chars},
                                              {"max_chars", s.limits.max_chars},
                                              {"max_code_lines", s.limits.max_code_lines},
                                              {"attempts", s.reason_attempts}};
  return doc;
}

// --- examples -------------------------------------------------------------------------------------------

namespace {

// The verdict the example's code must carry: stored, passed every stage, and of exactly this code.
Verdict passing_verdict(Store& store, int64_t evaluation_id, const std::string& code_hash) {
  const auto verdict = store.verdict(evaluation_id);
  if (!verdict) throw std::runtime_error(fmt::format("evaluation {} is not in the store", evaluation_id));
  if (!agent::verified(*verdict))
    throw std::runtime_error(
        fmt::format("evaluation {} did not pass every stage ({}): it cannot be an example's code", evaluation_id,
                    verdict->summary()));
  if (verdict->submission_hash != code_hash)
    throw std::runtime_error(fmt::format("evaluation {} judged other code than the example's", evaluation_id));
  return *verdict;
}

std::string source_or_throw(Store& store, const std::string& hash) {
  auto code = store.source(hash);
  if (!code) throw std::runtime_error("submission " + hash + " is not in the store");
  return *code;
}

json message(const std::string& role, const std::string& content, std::optional<int> weight = std::nullopt) {
  json m = {{"role", role}, {"content", content}};
  if (weight) m["weight"] = *weight;
  return m;
}

// The knowledge level the mined turn's model was shown: stored with the item, or (a set mined before it was)
// its trajectory's.
std::string source_knowledge(Store& store, const Mined& m) {
  if (!m.knowledge.empty()) return m.knowledge;
  for (const auto& t : store.trajectories(m.run_id))
    if (t.id == m.trajectory_id) return t.knowledge;
  throw std::runtime_error(
      fmt::format("trajectory {} of run {} is not in the store", m.trajectory_id, m.run_id));
}

// The system prompt and the first user message of an example about the mined turn.
std::pair<std::string, std::string> prompt_for(Store& store, const Task& task, const Mined& m,
                                               PromptSource source) {
  if (source == PromptSource::statement)
    return {agent::system_prompt(cuda_track()), agent::task_statement(cuda_track(), task)};
  // The agent's own: every turn's request begins with the first message; turn 1's is read.
  for (const auto& turn : store.turns(m.trajectory_id)) {
    if (turn.index != 1) continue;
    const json& request = turn.request;
    if (!request.contains("system") || !request.contains("messages") || request["messages"].empty() ||
        request["messages"][0].value("role", "") != "user")
      break;
    return {request["system"].get<std::string>(), request["messages"][0].at("content").get<std::string>()};
  }
  throw std::runtime_error(fmt::format("the first request of trajectory {} (run {}) is not in the store",
                                       m.trajectory_id, m.run_id));
}

}  // namespace

std::string to_string(PromptSource source) {
  return source == PromptSource::agent ? "agent" : "statement";
}

std::optional<PromptSource> prompt_source_from_string(const std::string& text) {
  if (text == "statement") return PromptSource::statement;
  if (text == "agent") return PromptSource::agent;
  return std::nullopt;
}

std::vector<Example> make_examples(Store& store, const TaskRegistry& registry, Layout layout,
                                   const ExampleSources& sources) {
  std::vector<Example> out;
  if (layout == Layout::direct) {
    for (const auto& m : sources.correct) {
      const Task* task = registry.find(m.task_id);
      if (!task) throw std::runtime_error("no task " + m.task_id);
      const Verdict v = passing_verdict(store, m.evaluation_id, m.code_hash);
      const std::string code = source_or_throw(store, m.code_hash);
      const auto [system, first] = prompt_for(store, *task, m, sources.prompt);
      out.push_back({.messages = json::array({message("system", system), message("user", first),
                                              message("assistant", agent::fenced(cuda_track(), code), 1)}),
                     .meta = {{"task", m.task_id},
                              {"family", task->family},
                              {"layout", "direct"},
                              {"source_model", m.model},
                              {"source_run", m.run_id},
                              {"knowledge", source_knowledge(store, m)},
                              {"prompt", to_string(sources.prompt)},
                              {"turn", m.turn},
                              {"evaluation_id", m.evaluation_id},
                              {"submission", m.code_hash},
                              {"judge_version", v.ptxbench_version},
                              {"judge_host", v.host}},
                     .task_id = m.task_id});
    }
    return out;
  }
  for (const auto& r : sources.repairs) {
    if (r.status != kVerified) continue;
    const Task* task = registry.find(r.failure.task_id);
    if (!task) throw std::runtime_error("no task " + r.failure.task_id);
    const Verdict v = passing_verdict(store, r.fix_evaluation_id, r.fix_hash);
    std::string reasoning;
    if (sources.need_reasoning) {
      auto it = sources.reasoning.find(r.trajectory_id);
      if (it == sources.reasoning.end()) continue;  // refused or not written: no example
      reasoning = it->second;
    }
    std::string feedback;
    for (const auto& turn : store.turns(r.failure.trajectory_id))
      if (turn.index == r.failure.turn) feedback = turn.feedback;
    const std::string failed = source_or_throw(store, r.failure.code_hash);
    const std::string fix = source_or_throw(store, r.fix_hash);
    const std::string answer =
        (reasoning.empty() ? "" : reasoning + "\n\n") + agent::fenced(cuda_track(), fix);
    const auto [system, first] = prompt_for(store, *task, r.failure, sources.prompt);
    out.push_back(
        {.messages = json::array(
             {message("system", system), message("user", first),
              message("assistant", agent::fenced(cuda_track(), failed), 0),
              message("user", feedback +
                                  "\n\nFix the code: answer with the whole corrected file in one ```cuda "
                                  "block."),
              message("assistant", answer, 1)}),
         .meta = {{"task", r.failure.task_id},
                  {"family", task->family},
                  {"layout", "fix"},
                  {"error_class", r.failure.error_class},
                  {"turn", r.failure.turn},
                  {"source_model", r.failure.model},
                  {"source_run", r.failure.run_id},
                  {"knowledge", source_knowledge(store, r.failure)},
                  {"prompt", to_string(sources.prompt)},
                  {"failed_evaluation_id", r.failure.evaluation_id},
                  {"failed_submission", r.failure.code_hash},
                  {"evaluation_id", r.fix_evaluation_id},
                  {"submission", r.fix_hash},
                  {"fix_turn", r.fix_turn},
                  {"teacher", sources.teacher},
                  {"reasoner", sources.need_reasoning ? sources.reasoner : ""},
                  {"judge_version", v.ptxbench_version},
                  {"judge_host", v.host}},
         .task_id = r.failure.task_id});
  }
  return out;
}

std::string to_string(ExportFormat format) {
  switch (format) {
    case ExportFormat::prompt_completion:
      return "prompt-completion";
    case ExportFormat::messages:
      return "messages";
    case ExportFormat::openai:
      return "openai";
  }
  return "prompt-completion";
}

std::optional<ExportFormat> export_format_from_string(const std::string& text) {
  for (const auto format : {ExportFormat::prompt_completion, ExportFormat::messages, ExportFormat::openai})
    if (to_string(format) == text) return format;
  return std::nullopt;
}

namespace {

json line_for(const Example& e, ExportFormat format, const json& meta) {
  switch (format) {
    case ExportFormat::openai:
      return {{"messages", e.messages}};
    case ExportFormat::prompt_completion: {
      // TRL's conversational prompt-completion: the last message (the only one with weight 1: the fix, or the
      // verified code) is the completion, everything before it the prompt; TRL reads no weights.
      json prompt = json::array(), completion = json::array();
      for (size_t i = 0; i < e.messages.size(); ++i) {
        json m = e.messages[i];
        m.erase("weight");
        (i + 1 == e.messages.size() ? completion : prompt).push_back(m);
      }
      return {{"prompt", prompt}, {"completion", completion}, {"metadata", meta}};
    }
    case ExportFormat::messages:
      break;
  }
  return {{"messages", e.messages}, {"metadata", meta}};
}

// Who reads the format, and where its loss goes: said in the card.
std::string trainer_of(ExportFormat format) {
  switch (format) {
    case ExportFormat::prompt_completion:
      return "TRL's SFTTrainer (conversational prompt-completion)";
    case ExportFormat::messages:
      return "Hugging Face datasets and tools of one's own (TRL's SFTTrainer would read it as conversational "
             "language modelling)";
    case ExportFormat::openai:
      return "OpenAI fine-tuning (the chat format)";
  }
  return "";
}

std::string loss_of(ExportFormat format) {
  switch (format) {
    case ExportFormat::prompt_completion:
      return "on the completion alone (the last assistant message: the fix, or the verified code): TRL's "
             "completion_only_loss, on by default for prompt-completion data";
    case ExportFormat::messages:
      return "\"weight\": 1 marks the message to learn (the last), \"weight\": 0 the failed attempt; TRL "
             "ignores "
             "\"weight\": its loss covers every token, or every assistant message with assistant_only_loss, "
             "the "
             "failed attempt included (for TRL export prompt-completion)";
    case ExportFormat::openai:
      return "on the assistant messages with \"weight\": 1 (the last); \"weight\": 0 keeps the failed "
             "attempt "
             "out of it";
  }
  return "";
}

// The Hub's size category of a data set of n examples.
std::string size_category(int n) {
  if (n < 1000) return "n<1K";
  if (n < 10000) return "1K<n<10K";
  if (n < 100000) return "10K<n<100K";
  return "100K<n<1M";
}

// The data card's YAML front matter: the splits and their files (`configs`: datasets.load_dataset on the
// folder loads exactly these), the licence, the task category. Strings are written as JSON strings, which
// YAML reads as its double-quoted scalars.
std::string front_matter(const std::string& name, int train, int test) {
  std::string out = "---\n";
  out += fmt::format("pretty_name: {}\n", json(fmt::format("ptxbench fixit: {}", name)).dump());
  out += "license: apache-2.0\n";
  out += "language:\n- en\n";
  out += "task_categories:\n- text-generation\n";
  out += "tags:\n- code\n- cuda\n- gpu-kernels\n- ptxbench\n";
  out += fmt::format("size_categories:\n- {}\n", json(size_category(train + test)).dump());
  out += "configs:\n- config_name: default\n  data_files:\n";
  if (train > 0 || test == 0)  // a split of no example is not named: there is nothing to load from it
    out += fmt::format("  - split: {}\n    path: {}.jsonl\n", kTrainSplit, kTrainSplit);
  if (test > 0) out += fmt::format("  - split: {}\n    path: {}.jsonl\n", kTestSplit, kTestSplit);
  out += "---\n";
  return out;
}

std::string count_table(const std::string& title, const json& counts) {
  std::string out = fmt::format("\n### {}\n\n| | train | test (held out) |\n|---|---:|---:|\n", title);
  for (const auto& [key, value] : counts.items())
    out += fmt::format("| {} | {} | {} |\n", key, value.value(kTrainSplit, 0), value.value(kTestSplit, 0));
  return out;
}

}  // namespace

ExportResult export_examples(const std::vector<Example>& examples, const std::filesystem::path& dir,
                             ExportFormat format, const std::vector<std::string>& holdout,
                             const TaskSelection& held_out, const json& card_extra) {
  std::filesystem::create_directories(dir);
  std::string train, test, train_meta, test_meta;  // the metadata: the openai format's, apart
  ExportResult result;
  json counts = {{"task", json::object()},
                 {"error_class", json::object()},
                 {"turn", json::object()},
                 {"source_model", json::object()},
                 {"knowledge", json::object()}};
  std::set<std::string> heldout_tasks, train_tasks, teachers, reasoners, judges, prompts;
  for (const auto& e : examples) {
    const bool held = held_out.matches(e.task_id);
    const std::string split = held ? kTestSplit : kTrainSplit;
    json meta = e.meta;
    meta["split"] = split;
    (held ? test : train) += json_text(line_for(e, format, meta)) + "\n";
    int& in_split = held ? result.test : result.train;
    ++in_split;
    if (format == ExportFormat::openai) {
      meta["line"] = in_split;  // in its split's file, from 1
      (held ? test_meta : train_meta) += json_text(meta) + "\n";
    }
    (held ? heldout_tasks : train_tasks).insert(e.task_id);
    auto bump = [&](const char* what, const std::string& key) {
      if (key.empty()) return;
      json& c = counts[what][key];
      if (c.is_null()) c = {{kTrainSplit, 0}, {kTestSplit, 0}};
      c[split] = c[split].get<int>() + 1;
    };
    bump("task", e.task_id);
    bump("error_class", e.meta.value("error_class", std::string()));
    bump("turn", std::to_string(e.meta.value("turn", 0)));
    bump("source_model", e.meta.value("source_model", std::string()));
    bump("knowledge", e.meta.value("knowledge", std::string()));
    if (auto t = e.meta.value("teacher", std::string()); !t.empty()) teachers.insert(t);
    if (auto r = e.meta.value("reasoner", std::string()); !r.empty()) reasoners.insert(r);
    if (auto p = e.meta.value("prompt", std::string()); !p.empty()) prompts.insert(p);
    judges.insert(e.meta.value("judge_version", std::string()));
  }
  // The build's teacher and reasoner, named even when no example came through.
  for (const char* role : {"teacher", "reasoner"})
    if (auto name = card_extra.is_object() ? card_extra.value(role, std::string()) : ""; !name.empty())
      (std::string(role) == "teacher" ? teachers : reasoners).insert(name);

  // The split files, named as `datasets` infers splits (a split's keyword in the file name, delimited); no
  // other file of the folder has such a name, and a file this export does not write is removed, so that a
  // folder exported again holds this export alone.
  const std::filesystem::path train_file = dir / fmt::format("{}.jsonl", kTrainSplit);
  const std::filesystem::path test_file = dir / fmt::format("{}.jsonl", kTestSplit);
  const std::filesystem::path metadata_file = dir / kOpenaiMetadataFile;
  write_file(train_file, train);
  if (result.test > 0)
    write_file(test_file, test);
  else
    std::filesystem::remove(test_file);
  if (format == ExportFormat::openai) {  // OpenAI's upload takes messages alone: what each line is, apart
    std::filesystem::create_directories(metadata_file.parent_path());
    write_file(metadata_file, train_meta + test_meta);  // the train split's lines, then the test split's
  } else if (std::filesystem::remove(metadata_file) &&
             std::filesystem::is_empty(metadata_file.parent_path())) {
    std::filesystem::remove(metadata_file.parent_path());
  }

  json card = card_extra.is_object() ? card_extra : json::object();
  const std::string name = card.value("name", std::string("(unnamed)"));
  card["examples"] = {{kTrainSplit, result.train}, {kTestSplit, result.test}};
  json files = {{kTrainSplit, train_file.filename().string()}};
  if (result.test > 0) files[kTestSplit] = test_file.filename().string();
  if (format == ExportFormat::openai) files["metadata"] = kOpenaiMetadataFile;
  card["files"] = files;
  card["counts"] = counts;
  card["teachers"] = teachers;
  card["reasoners"] = reasoners;
  card["judge_versions"] = judges;
  card["prompts"] = prompts;
  card["exported_by"] = "ptxbench " PTXBENCH_VERSION;
  card["license"] = "Apache-2.0";
  card["holdout_globs"] = holdout;
  card["heldout_tasks"] = heldout_tasks;
  card["train_tasks"] = train_tasks;
  card["format"] = to_string(format);
  card["trainer"] = trainer_of(format);
  card["loss"] = loss_of(format);
  result.card = card;
  write_file(dir / "card.json", json_text(card, 2) + "\n");

  std::string md = front_matter(name, result.train, result.test);
  md += fmt::format("\n# Fixit data card: {}\n\n{}\n\n", name, card.value("about", std::string()));
  md += fmt::format("- examples: {} train (train.jsonl), {} test: the held-out tasks ({}); format {}\n",
                    result.train, result.test, result.test > 0 ? "test.jsonl" : "no file",
                    card["format"].get<std::string>());
  md += fmt::format("- read by: {}\n", card["trainer"].get<std::string>());
  md += fmt::format("- loss: {}\n", card["loss"].get<std::string>());
  if (format == ExportFormat::openai)
    md += fmt::format("- each line's metadata: {}, with its split and line\n", kOpenaiMetadataFile);
  md += fmt::format("- prompt: {}\n",
                    prompts.empty() ? "(no example)"
                                    : fmt::format("{}", fmt::join(prompts, ", ")) +
                                          " (statement: the task statement alone; agent: the agent's first "
                                          "message, with the kit files)");
  md += fmt::format("- teacher: {}\n- reasoner: {}\n- judge: the verdicts' ptxbench {}; exported by {}\n",
                    teachers.empty() ? "none" : fmt::format("{}", fmt::join(teachers, ", ")),
                    reasoners.empty() ? "none" : fmt::format("{}", fmt::join(reasoners, ", ")),
                    judges.empty() ? "(no example)" : fmt::format("{}", fmt::join(judges, ", ")),
                    card["exported_by"].get<std::string>());
  md += fmt::format("- held out: tasks matching {}: {}\n",
                    holdout.empty() ? "(none)" : fmt::format("{}", fmt::join(holdout, " ")),
                    heldout_tasks.empty() ? "no example" : fmt::format("{}", fmt::join(heldout_tasks, ", ")));
  md += "- every example's code is the submission of the evaluation named in its metadata (\"evaluation_id\"), "
        "whose verdict passed every stage\n";
  md += "- licence: Apache-2.0, ptxbench's\n";
  md += fmt::format(
      "\n## Loading\n\n`datasets.load_dataset(\"path/to/this/folder\")` reads the splits the front matter "
      "names "
      "({}).{}\n",
      result.test > 0 ? "train and test" : "train",
      format == ExportFormat::prompt_completion
          ? " TRL: `SFTTrainer(model=..., train_dataset=dataset[\"train\"])` trains on the completions."
          : "");
  md += "\n## Counts\n";
  md += count_table("Per task", counts["task"]);
  md += count_table("Per error class", counts["error_class"]);
  md += count_table("Per turn of the failure", counts["turn"]);
  md += count_table("Per source model", counts["source_model"]);
  md += count_table("Per knowledge level of the source run", counts["knowledge"]);
  write_file(dir / "README.md", md);
  return result;
}

}  // namespace ptxbench::fixit
