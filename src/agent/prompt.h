// What the model is told: the system prompt, the task statement, the architecture knowledge at one of four
// levels (params | templates | contracts, the mission's knowledge ablation, and patterns), and the text of
// every later turn.
#pragma once

#include <array>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "llm/provider.h"
#include "task/task.h"
#include "track/track.h"

namespace ptxbench::agent {

// What is shown of the track's kit (KitLayout: CUDA's kits/<kit>/, Triton's kits/<kit>/triton/). Each level
// shows what the one before it does, and more.
enum class KnowledgeLevel {
  params,     // params.md: the architecture's numbers
  templates,  // + every template file (CUDA: ptx/*.cuh, the PTX template functions a solution may #include)
  contracts,  // + contracts.md: the rules those instructions must be used by
  patterns,   // + patterns/*.md: how the pieces combine (pipelines, warp specialisation, dataflows), every
              //   fragment GPU-tested (tests/gpu/kit/patterns_test.cu)
};
// The levels' names, in that order: the order of the ablation's tables.
inline constexpr std::array<const char*, 4> kKnowledgeLevels = {"params", "templates", "contracts",
                                                                "patterns"};

std::string to_string(KnowledgeLevel level);
std::optional<KnowledgeLevel> knowledge_level_from_string(const std::string& text);
// A run's --knowledge: one level, or several comma-separated ("params,patterns"), each task's trajectories
// then split among them. nullopt for an empty list, an unknown level or one named twice.
std::optional<std::vector<KnowledgeLevel>> knowledge_levels_from_string(const std::string& text);

std::string system_prompt(const Track& track);

// Title, description, entry point, shapes, tolerance, required families, architecture, how the file begins
// (the ABI header and the kit, for CUDA). Starts with "Task: <id>" (the reference model reads the id from
// there).
std::string task_statement(const Track& track, const Task& task);

// The track's kit files for the level, verbatim, each under a heading naming it. A kit folder that does not
// exist (yet) is said so in the text, not an error: the model then works from the task statement alone.
std::string knowledge_text(const Track& track, const std::filesystem::path& kits_dir, const Task& task,
                           KnowledgeLevel level);

// The first user message: the task statement, the knowledge, and what to answer.
std::string first_message(const Track& track, const Task& task, const std::string& knowledge);

// A finished turn, as later requests show it.
struct PreviousTurn {
  int index = 0;
  std::optional<std::string> code;  // the code extracted from its reply, if any
  std::string reply;                // its reply, shown (trimmed) when it had no code
  std::string feedback;             // compact verdict, or why there was no verdict
  bool passed = false;              // every stage passed: the next turn asks for speed, not fixes
  std::string outcome;              // one line, where the context shows the turn as a line
};

// What later turns show of the earlier ones (--context; docs/agent.md).
enum class ContextPolicy {
  compact,    // the first message, the previous reply and its verdict, one line per turn before it (default)
  full,       // the first message and every turn's reply and verdict, the oldest made lines when it must fit
  last_pair,  // the first message, the previous reply and its verdict, nothing of the turns before it
};
std::string to_string(ContextPolicy policy);
std::optional<ContextPolicy> context_policy_from_string(const std::string& text);

struct ContextOptions {
  ContextPolicy policy = ContextPolicy::compact;
  // The most characters the system prompt and the messages may take (0: no limit), from the model's window
  // (context_budget_chars).
  size_t budget_chars = 0;
};

// The characters a request may take for a model with a window of `context_tokens` that may answer with up to
// `max_tokens`: (context_tokens - max_tokens) x 3, three characters a token being below what code and English
// average in the tokenizers of the catalogue's models, so that a request within it fits. 0 (no limit) when
// the window is unknown (0).
size_t context_budget_chars(int64_t context_tokens, int64_t max_tokens);

// A request that cannot fit the model's window, whatever is left out: the message names the limit.
class ContextTooLarge : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The request of turn `index` (1-based) after `turns`, the finished turns before it in order. Turn 1: the
// first message. Later turns, by the policy: the first message, the previous reply as the assistant's message
// (its code alone, so the context stays small), then the verdict on it and what to do next; `compact` adds a
// line per earlier turn, `full` shows every earlier reply and verdict as messages, turning the oldest into
// lines until the request fits the budget. Throws ContextTooLarge when even the first message and the
// previous turn do not fit.
llm::Request build_request(const Track& track, const std::string& first_user_message, int index,
                           const std::vector<PreviousTurn>& turns, const ContextOptions& context = {});

nlohmann::json to_json(const llm::Request& request);
llm::Request request_from_json(const nlohmann::json& doc);

// The fence a model's code is shown in (and asked for): the track's (```cuda, ```python).
std::string fenced(const Track& track, const std::string& code);

}  // namespace ptxbench::agent
