// Fixit's datasets: the declarative spec a variant is built from (fixit/*.json, docs/fixit.md), the examples
// in chat form, and their export: a Hugging Face dataset folder (train.jsonl, test.jsonl, a README.md data
// card whose front matter names the splits) in the form TRL's SFTTrainer or OpenAI fine-tuning reads.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fixit/fixit.h"
#include "store/store.h"
#include "task/task.h"

namespace ptxbench::fixit {

// How an example's messages are laid out.
enum class Layout {
  fix,        // system, user (the problem), assistant (the failed code, no loss), user (the verdict),
              // assistant (the reasoning and the fixed code: the loss)
  direct,     // system, user (the problem), assistant (the verified code: the loss)
};
std::string to_string(Layout layout);
std::optional<Layout> layout_from_string(const std::string& text);

enum class Balance { none, before_repair, after_repair };
std::string to_string(Balance balance);

// A variant (docs/fixit.md has every field).
struct Spec {
  std::string name;
  std::string about;  // one line
  bool correct_source = false;  // "source": "correct" (direct generation) or "failures"
  MineOptions mine;             // runs, model, tasks, error classes, turns, seed; quotas go by `balance`
  Balance balance = Balance::none;
  Quotas quotas;
  std::string teacher;  // "" only with correct_source
  int teacher_turns = 5;
  std::string knowledge = "contracts";  // what the teacher is shown of the kit
  std::string reasoner;  // "": no reasoning; "@source": the model whose turns were mined
  ReasonLimits limits;
  int reason_attempts = 2;
  Layout layout = Layout::fix;
  std::vector<std::string> holdout;  // task globs held out of the training split (a generalisation split)
};

// Throws std::invalid_argument naming the field that is wrong, for a spec that is not an object of the known
// fields with the right types and a coherent combination (a fix layout needs failures and a teacher; direct
// generation needs verified code and no teacher).
Spec parse_spec(const nlohmann::json& doc);
Spec load_spec(const std::filesystem::path& file);
nlohmann::json to_json(const Spec& spec);

// One example: its messages, and what it comes from.
struct Example {
  nlohmann::json messages;  // [{"role", "content"[, "weight"]}]
  nlohmann::json meta;      // task, family, error_class, turn, source model, evaluation ids, ...
  std::string task_id;
};

// What an example's system prompt and first user message are.
enum class PromptSource {
  // The agent's system prompt and the task statement alone: short, the same whatever the run.
  statement,
  // The source turn's own request, as stored: the system prompt and the agent's first message (the statement,
  // the kit files at the run's knowledge level, what to answer), exactly as the model was asked.
  agent,
};
std::string to_string(PromptSource source);
std::optional<PromptSource> prompt_source_from_string(const std::string& text);

struct ExampleSources {
  std::vector<Repair> repairs;              // fix layout: the verified ones are used
  std::map<int64_t, std::string> reasoning;  // by repair trajectory; required for each when `need_reasoning`
  bool need_reasoning = false;
  std::vector<Mined> correct;  // direct layout
  std::string teacher, reasoner;
  PromptSource prompt = PromptSource::statement;
};

// The examples, each checked against the store: its code is the submission of a stored evaluation whose
// verdict passed every stage (throws std::runtime_error otherwise: the data must never hold an unverified
// fix). Each one's metadata names the knowledge level of the run its failure (or solution) came from.
std::vector<Example> make_examples(Store& store, const TaskRegistry& registry, Layout layout,
                                   const ExampleSources& sources);

// Each format's line, and the trainer that reads it (docs/fixit.md).
enum class ExportFormat {
  // {"prompt": [every message but the last], "completion": [the last], "metadata": {...}}: TRL's SFTTrainer,
  // conversational prompt-completion; its loss on the completion alone.
  prompt_completion,
  // {"messages": [...], "metadata": {...}}: the whole conversation with its weights, for `datasets` and tools
  // of one's own. TRL reads it as conversational language modelling and ignores "weight".
  messages,
  // {"messages": [...]} alone: OpenAI's fine-tuning upload, which honours "weight" on assistant messages.
  // Each
  // line's metadata is in metadata/examples.jsonl, with its split and line.
  openai,
};
std::string to_string(ExportFormat format);
std::optional<ExportFormat> export_format_from_string(const std::string& text);

// The split of examples whose tasks match the held-out globs is "test": `datasets` infers it from test.jsonl.
inline constexpr const char* kTrainSplit = "train";
inline constexpr const char* kTestSplit = "test";
// Where the openai format keeps each line's metadata: a name no split pattern of `datasets` matches.
inline constexpr const char* kOpenaiMetadataFile = "metadata/examples.jsonl";

// Writes into `dir` a dataset folder: train.jsonl, test.jsonl (examples of tasks matching `holdout`; written
// only when it has some), README.md (the data card, whose YAML front matter names each split's file, the
// licence and the task category, as the Hugging Face Hub and `datasets.load_dataset` read them) and
// card.json. `card_extra` goes into the card as it is (the spec, the run ids).
struct ExportResult {
  int train = 0;
  int test = 0;
  nlohmann::json card;
};
// `holdout`: the held-out items as given (globs, "@group"), for the card; `held_out`: what they select.
ExportResult export_examples(const std::vector<Example>& examples, const std::filesystem::path& dir,
                             ExportFormat format, const std::vector<std::string>& holdout,
                             const TaskSelection& held_out, const nlohmann::json& card_extra);

}  // namespace ptxbench::fixit
