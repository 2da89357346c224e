// From a --model name to a Provider: "reference" is the built-in offline model; any other name is looked up
// in the model catalogue (models.json, docs/models.md) and served by src/llm.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "llm/provider.h"
#include "task/task.h"
#include "track/track.h"

namespace ptxbench::agent {

struct ModelChoice {
  std::unique_ptr<llm::Provider> provider;
  nlohmann::json
      spec;  // what is stored with the run: the catalogue entry (the key's variable name, never a key)
  bool reference = false;  // the built-in reference model
};

// Throws ConfigError for a broken catalogue or manifest, std::invalid_argument for an unknown model or an
// unset key. The catalogue is read only for names other than "reference" (which needs none), and not at all
// for a resumed run: `stored_spec`, the entry stored with it, is used as it was (only the key comes from the
// environment), so a catalogue edited meanwhile does not change the model under a running experiment. The
// reference model answers in `track`.
ModelChoice choose_model(const std::string& name, const std::filesystem::path& catalogue,
                         const std::filesystem::path& solutions_dir, const TaskRegistry& registry,
                         const Track& track, const nlohmann::json& stored_spec = nullptr);

nlohmann::json to_json(const llm::ModelSpec& spec);

}  // namespace ptxbench::agent
