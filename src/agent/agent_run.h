// Many trajectories at once: every (task, sample) of a run, driven by a pool of threads (model calls in
// parallel; the provider limits its own concurrency, the evaluator serialises the GPU). The run's settings
// are stored with it, so `--resume` needs nothing but the run id.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eval/evaluator.h"
#include "agent/trajectory.h"
#include "llm/provider.h"
#include "store/store.h"
#include "task/task.h"

namespace ptxbench::agent {

struct AgentRunSettings {
  std::string model;                 // the --model name
  nlohmann::json model_spec;         // the catalogue entry, as stored (no key: only its variable's name)
  // A knowledge level, or levels comma-separated (prompt.h's knowledge_levels_from_string).
  std::string knowledge = "params";
  std::string context = "compact";   // compact | full | last-pair (prompt.h's ContextPolicy)
  // verdict: each turn shows the verdict; profile: and a summary of the instruction stage's profile of the
  // main shape (eval/profile_summary.h), which the evaluations then collect
  std::string feedback = "verdict";
  std::string track = "cuda";        // the language the model writes (track/track.h)
  std::string tasks_pattern = "*";
  std::vector<std::string> archs;
  std::vector<std::string> task_ids;  // the tasks, fixed when the run starts
  int samples = 1;
  LoopOptions loop;
  bool cpu_only = false;
};

nlohmann::json to_json(const AgentRunSettings& settings);
// Throws std::invalid_argument for what is not an agent run's settings (a run stored before tracks is
// CUDA's).
AgentRunSettings agent_settings_from_json(const nlohmann::json& args);

// Begins the run in the store with one pending trajectory per task and sample; returns the run id.
int64_t start_agent_run(Store& store, const AgentRunSettings& settings);

struct AgentRunContext {
  Store* store = nullptr;
  const TaskRegistry* registry = nullptr;
  llm::Provider* provider = nullptr;
  Evaluator* evaluator = nullptr;
  std::filesystem::path kits_dir;
  int parallel = 4;                                // trajectories driven at once
  std::function<void(const TurnEvent&)> on_event;  // called under a lock, one event at a time
  // When set, each trajectory's first message (fixit's repair prompt: the task with a failed attempt);
  // otherwise the task's own (first_message). Called once per trajectory not yet terminal.
  std::function<std::string(const TrajectoryRow&, const Task&, const std::string& knowledge)>
      first_message_for;
};

struct AgentRunResult {
  int trajectories = 0;  // in the run
  int driven = 0;        // not terminal when this call began
  int errors = 0;        // ended in kError (resume to retry)
};

// Drives every trajectory of the run that is not terminal to its end, then marks the run finished (when none
// ended in error).
AgentRunResult run_agent(int64_t run_id, const AgentRunSettings& settings, const AgentRunContext& context);

}  // namespace ptxbench::agent
