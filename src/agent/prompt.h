// What the model is told: the system prompt, the task statement, the architecture knowledge at one of three
// levels (params | templates | contracts, the mission's knowledge ablation), and the text of every later
// turn.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "llm/provider.h"
#include "task/task.h"
#include "track/track.h"

namespace ptxbench::agent {

// What is shown of the track's kit (KitLayout: CUDA's kits/<kit>/, Triton's kits/<kit>/triton/).
enum class KnowledgeLevel {
  params,     // params.md: the architecture's numbers
  templates,  // + every template file (CUDA: ptx/*.cuh, the PTX template functions a solution may #include)
  contracts,  // + contracts.md: the rules those instructions must be used by
};

std::string to_string(KnowledgeLevel level);
std::optional<KnowledgeLevel> knowledge_level_from_string(const std::string& text);

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

// What a later turn shows about the one before it and the turns before that.
struct PreviousTurn {
  int index = 0;
  std::optional<std::string> code;  // the code extracted from its reply, if any
  std::string reply;                // its reply, shown (trimmed) when it had no code
  std::string feedback;             // compact verdict, or why there was no verdict
  bool passed = false;              // every stage passed: the next turn asks for speed, not fixes
};
struct EarlierTurn {
  int index = 0;
  std::string outcome;  // one line
};

// The request of turn `index` (1-based). Turn 1: the first message. Later turns: the first message, the
// previous reply as the assistant's message (its code alone, so the context stays small), then the verdict on
// it, one line per earlier turn, and what to do next.
llm::Request build_request(const Track& track, const std::string& first_user_message, int index,
                           const std::optional<PreviousTurn>& previous,
                           const std::vector<EarlierTurn>& earlier);

nlohmann::json to_json(const llm::Request& request);
llm::Request request_from_json(const nlohmann::json& doc);

// The fence a model's code is shown in (and asked for): the track's (```cuda, ```python).
std::string fenced(const Track& track, const std::string& code);

}  // namespace ptxbench::agent
