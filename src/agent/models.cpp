#include "agent/models.h"

#include "agent/reference_model.h"

namespace ptxbench::agent {

using nlohmann::json;

json to_json(const llm::ModelSpec& spec) {
  json out = {{"name", spec.name},
              {"provider", spec.provider},
              {"base_url", spec.base_url},
              {"model_id", spec.model_id},
              {"api_key_env", spec.api_key_env},
              {"max_tokens", spec.max_tokens},
              {"temperature", spec.temperature ? json(*spec.temperature) : json(nullptr)},
              {"reasoning", spec.reasoning},
              {"concurrency", spec.concurrency},
              {"timeout_s", spec.timeout_s},
              {"max_attempts", spec.max_attempts},
              {"retry_base_s", spec.retry_base_s}};
  // The optional settings only where the catalogue gives them, so that a stored entry reads back as it was.
  if (spec.context_tokens) out["context_tokens"] = spec.context_tokens;
  if (spec.top_p) out["top_p"] = *spec.top_p;
  if (spec.seed) out["seed"] = *spec.seed;
  if (!spec.stop.empty()) out["stop"] = spec.stop;
  if (spec.extra_body.is_object()) out["extra_body"] = spec.extra_body;
  if (!spec.extra_headers.empty()) {
    json headers = json::object();
    for (const auto& [name, value] : spec.extra_headers) headers[name] = value;
    out["extra_headers"] = headers;
  }
  return out;
}

ModelChoice choose_model(const std::string& name, const std::filesystem::path& catalogue,
                         const std::filesystem::path& solutions_dir, const TaskRegistry& registry,
                         const Track& track, const nlohmann::json& stored_spec) {
  ModelChoice choice;
  llm::ModelSpec spec{.name = name, .provider = "reference"};
  if (stored_spec.is_object() && stored_spec.value("provider", "") != "reference") {
    spec = llm::read_model_spec(stored_spec, "the run's stored model \"" + name + "\"");
  } else if (name != "reference") {
    if (!std::filesystem::exists(catalogue))
      throw std::invalid_argument("no model catalogue at " + catalogue.string() +
                                  " (--models FILE), so no model '" + name +
                                  "'; --model reference needs none");
    const auto models = llm::load_model_catalogue(catalogue.string());
    spec = llm::find_model(models, name);
  }
  choice.spec = to_json(spec);
  if (spec.provider == "reference") {
    choice.provider = std::make_unique<ReferenceModel>(solutions_dir, registry, track);
    choice.reference = true;
  } else {
    choice.provider = llm::make_provider(spec);
  }
  return choice;
}

}  // namespace ptxbench::agent
