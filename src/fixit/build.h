// `ptxbench fixit build`: a variant from its spec, step after step (mine, repair, balance after repair,
// reason, export), each step a stored run. The run ids are kept in <out>/state.json, so the same command run
// again after a kill resumes every step where it stopped, and a finished build is exported again unchanged.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "eval/evaluator.h"
#include "fixit/dataset.h"
#include "llm/provider.h"
#include "store/store.h"
#include "task/task.h"

namespace ptxbench::fixit {

struct ChosenModel {
  llm::Provider* provider = nullptr;  // owned by whoever chose it
  nlohmann::json spec;                // stored with the run (the catalogue entry, no key)
};

struct BuildContext {
  Store* store = nullptr;
  const TaskRegistry* registry = nullptr;
  std::filesystem::path kits_dir;
  // The provider for a model name in a role ("teacher" or "reasoner"), and for a resumed step the entry
  // stored with it.
  std::function<ChosenModel(const std::string& role, const std::string& name, const nlohmann::json& stored_spec)>
      model;
  Evaluator* judge = nullptr;
  int parallel = 4;
  std::function<void(const std::string& line)> say;          // progress, one line at a time
  std::function<void(const agent::TurnEvent&)> on_event;     // the repair's turns
  PromptSource prompt = PromptSource::statement;             // the examples' prompts (an export's choice)
};

struct BuildState {
  int64_t mine_run = 0, repair_run = 0, reason_run = 0;
};

struct BuildResult {
  BuildState state;
  bool complete = false;  // false: a model or judge error stopped a step; the same command resumes it
  ExportResult exported;
};

BuildResult build_variant(const Spec& spec, const std::filesystem::path& out, ExportFormat format,
                          const BuildContext& context);

}  // namespace ptxbench::fixit
