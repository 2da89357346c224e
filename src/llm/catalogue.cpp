// The model catalogue (models.json): a JSON array of ModelSpec objects, checked field by field so that a typo
// is reported with the file, the entry and the field rather than surfacing as an HTTP 400 mid-run.
#include <algorithm>
#include <cctype>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "llm/protocols.h"
#include "llm/provider.h"
#include "util/errors.h"
#include "util/json_file.h"

namespace ptxbench::llm {

using nlohmann::json;

namespace {

const std::set<std::string> kFields = {
    "name",       "provider",       "base_url",      "model_id",  "api_key_env",
    "max_tokens", "context_tokens", "temperature",   "top_p",     "seed",
    "stop",       "extra_body",     "extra_headers", "reasoning", "concurrency",
    "timeout_s",  "max_attempts",   "retry_base_s",  "note"};

std::string default_base_url(const std::string& provider) {
  if (provider == "openai") return "https://api.openai.com/v1";
  if (provider == "anthropic") return "https://api.anthropic.com/v1";
  if (provider == "gemini") return "https://generativelanguage.googleapis.com/v1beta";
  return {};
}

// Reads one entry; every complaint names file, index, entry name and field.
class EntryReader {
 public:
  EntryReader(const std::string& file, size_t index, const json& entry)
      : file_(file), index_(index), entry_(entry) {}

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    std::string where = file_ + ": entry " + std::to_string(index_);
    if (!name_.empty()) where += " (\"" + name_ + "\")";
    if (!field.empty()) where += ", field \"" + field + "\"";
    throw ConfigError(where + ": " + what);
  }

  void set_name(const std::string& name) { name_ = name; }
  bool has(const char* field) const { return entry_.contains(field) && !entry_[field].is_null(); }
  const json& at(const char* field) const { return entry_[field]; }

  std::string text(const char* field, bool required) const {
    if (!has(field)) {
      if (required) fail(field, "missing (a string)");
      return {};
    }
    if (!at(field).is_string()) fail(field, "must be a string, not " + at(field).dump());
    std::string value = at(field).get<std::string>();
    if (required && value.empty()) fail(field, "must not be empty");
    return value;
  }

  int integer(const char* field, int fallback, int min) const {
    if (!has(field)) return fallback;
    const json& v = at(field);
    if (!v.is_number_integer() || v.get<int64_t>() < min || v.get<int64_t>() > 1'000'000'000)
      fail(field, "must be an integer of at least " + std::to_string(min) + ", not " + v.dump());
    return v.get<int>();
  }

  double number(const char* field, double fallback, double min, double max) const {
    if (!has(field)) return fallback;
    const json& v = at(field);
    if (!v.is_number() || v.get<double>() < min || v.get<double>() > max)
      fail(field,
           "must be a number from " + json(min).dump() + " to " + json(max).dump() + ", not " + v.dump());
    return v.get<double>();
  }

 private:
  const std::string& file_;
  size_t index_;
  const json& entry_;
  std::string name_;
};

// Each provider takes its own reasoning setting; anything else in the object is a typo or a wrong provider.
void check_reasoning(const EntryReader& r, const ModelSpec& spec) {
  if (spec.reasoning.is_null()) return;
  if (!spec.reasoning.is_object())
    r.fail("reasoning", "must be an object or null, not " + spec.reasoning.dump());
  if (spec.reasoning.empty()) return;
  const auto only = [&](const char* key) {
    for (const auto& [k, v] : spec.reasoning.items())
      if (k != key)
        r.fail("reasoning",
               "provider \"" + spec.provider + "\" takes only {\"" + key + "\": ...}, not \"" + k + "\"");
  };
  const auto& value = spec.reasoning.begin().value();
  if (spec.provider == "openai") {
    only("effort");
    if (!value.is_string() || value.get<std::string>().empty())
      r.fail("reasoning", "effort must be a string such as \"low\", \"medium\" or \"high\"");
  } else if (spec.provider == "anthropic") {
    only("budget_tokens");
    // The Messages API wants at least 1024 and less than max_tokens, and refuses temperature with thinking
    // on.
    if (!value.is_number_integer() || value.get<int64_t>() < 1024 || value.get<int64_t>() >= spec.max_tokens)
      r.fail("reasoning", "budget_tokens must be an integer from 1024 to below max_tokens (" +
                              std::to_string(spec.max_tokens) + "), not " + value.dump());
    if (spec.temperature) r.fail("temperature", "cannot be set with thinking on (reasoning.budget_tokens)");
  } else if (spec.provider == "gemini") {
    only("thinking_budget");
    if (!value.is_number_integer() || value.get<int64_t>() < -1)
      r.fail("reasoning", "thinking_budget must be an integer (-1: dynamic, 0: off), not " + value.dump());
  } else {
    r.fail("reasoning", "provider \"" + spec.provider + "\" takes no reasoning settings");
  }
}

// Headers that carry credentials: a key goes only through api_key_env (read from the environment, never
// stored).
bool credential_header(std::string name) {
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name == "authorization" || name == "proxy-authorization" || name == "cookie" ||
         name == "x-api-key" || name == "api-key" || name == "x-goog-api-key" ||
         name.find("token") != std::string::npos || name.find("secret") != std::string::npos;
}

// The extra settings of an entry: sampling (top_p, seed, stop), body fields and headers.
void read_extras(const EntryReader& r, ModelSpec& spec) {
  if (r.has("top_p")) spec.top_p = r.number("top_p", 1, 0, 1);
  if (r.has("seed")) {
    if (!r.at("seed").is_number_integer()) r.fail("seed", "must be an integer, not " + r.at("seed").dump());
    if (spec.provider == "anthropic") r.fail("seed", "the Messages API takes no seed");
    spec.seed = r.at("seed").get<int64_t>();
  }
  if (r.has("stop")) {
    const json& stop = r.at("stop");
    const json list = stop.is_string() ? json::array({stop}) : stop;
    if (!list.is_array()) r.fail("stop", "must be a string or a list of strings, not " + stop.dump());
    for (const json& sequence : list) {
      if (!sequence.is_string() || sequence.get<std::string>().empty())
        r.fail("stop", "must be non-empty strings");
      spec.stop.push_back(sequence.get<std::string>());
    }
    if (spec.stop.empty() || spec.stop.size() > 4) r.fail("stop", "takes 1 to 4 sequences");
  }
  if (r.has("extra_body")) {
    if (!r.at("extra_body").is_object())
      r.fail("extra_body", "must be an object, not " + r.at("extra_body").dump());
    const auto& own = fields_set_by_ptxbench(spec.provider);
    for (const auto& [key, value] : r.at("extra_body").items())
      if (std::find(own.begin(), own.end(), key) != own.end())
        r.fail("extra_body", "\"" + key + "\" is set by ptxbench (use the entry's own field, if it has one)");
    spec.extra_body = r.at("extra_body");
  }
  if (r.has("extra_headers")) {
    if (!r.at("extra_headers").is_object())
      r.fail("extra_headers", "must be an object of header names and string values");
    for (const auto& [name, value] : r.at("extra_headers").items()) {
      const bool token = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
      });
      if (!token) r.fail("extra_headers", "\"" + name + "\" is not a header name");
      if (!value.is_string() ||
          std::any_of(value.get_ref<const std::string&>().begin(), value.get_ref<const std::string&>().end(),
                      [](char c) { return c < 0x20 || c == 0x7f; }))
        r.fail("extra_headers", "the value of \"" + name + "\" must be a string of printable characters");
      if (credential_header(name))
        r.fail("extra_headers", "\"" + name +
                                    "\" carries a credential: give the key's variable as api_key_env "
                                    "(a run stores its model entry, never a key)");
      spec.extra_headers.emplace_back(name, value.get<std::string>());
    }
  }
}

ModelSpec read_entry(const std::string& file, size_t index, const json& entry) {
  EntryReader r(file, index, entry);
  if (!entry.is_object()) r.fail("", "must be an object, not " + entry.dump());
  ModelSpec spec;
  spec.name = r.text("name", true);
  r.set_name(spec.name);
  for (const auto& [key, value] : entry.items())
    if (!kFields.contains(key))
      r.fail(
          key,
          "unknown field (known: name, provider, base_url, model_id, api_key_env, "
          "max_tokens, context_tokens, temperature, top_p, seed, stop, extra_body, extra_headers, reasoning, "
          "concurrency, timeout_s, max_attempts, retry_base_s, note)");

  spec.provider = r.text("provider", true);
  if (spec.provider != "reference" && default_base_url(spec.provider).empty())
    r.fail("provider", "\"" + spec.provider + "\" is not one of openai, anthropic, gemini, reference");
  const bool remote = spec.provider != "reference";
  spec.base_url = r.has("base_url") ? r.text("base_url", true) : default_base_url(spec.provider);
  if (remote && spec.base_url.find("://") == std::string::npos)
    r.fail("base_url", "must be a URL such as https://host/v1, not \"" + spec.base_url + "\"");
  spec.model_id = r.text("model_id", remote);
  spec.api_key_env = r.text("api_key_env", false);
  spec.max_tokens = r.integer("max_tokens", spec.max_tokens, 1);
  spec.context_tokens = r.integer("context_tokens", spec.context_tokens, 1);
  if (r.has("context_tokens") && spec.context_tokens <= spec.max_tokens)
    r.fail("context_tokens", "must be more than max_tokens (" + std::to_string(spec.max_tokens) +
                                 "): the window holds the request and the answer");
  if (r.has("temperature")) spec.temperature = r.number("temperature", 0, 0, 2);
  read_extras(r, spec);
  spec.reasoning = r.has("reasoning") ? r.at("reasoning") : json();
  spec.concurrency = r.integer("concurrency", spec.concurrency, 1);
  spec.timeout_s = r.number("timeout_s", spec.timeout_s, 0.001, 86400);
  spec.max_attempts = r.integer("max_attempts", spec.max_attempts, 1);
  spec.retry_base_s = r.number("retry_base_s", spec.retry_base_s, 0, 600);
  r.text("note", false);
  check_reasoning(r, spec);
  return spec;
}

}  // namespace

ModelSpec read_model_spec(const json& entry, const std::string& where) {
  return read_entry(where, 0, entry);
}

std::vector<ModelSpec> load_model_catalogue(const std::string& path) {
  const json entries = read_json_file(path);
  if (!entries.is_array()) throw ConfigError(path + ": must be a JSON array of model entries");

  std::vector<ModelSpec> catalogue;
  for (size_t i = 0; i < entries.size(); ++i) {
    ModelSpec spec = read_entry(path, i, entries[i]);
    for (size_t j = 0; j < catalogue.size(); ++j)
      if (catalogue[j].name == spec.name)
        throw ConfigError(path + ": entry " + std::to_string(i) + ": the name \"" + spec.name +
                          "\" is taken by entry " + std::to_string(j));
    catalogue.push_back(std::move(spec));
  }
  return catalogue;
}

const ModelSpec& find_model(const std::vector<ModelSpec>& catalogue, const std::string& name) {
  std::vector<std::string> names;
  for (const auto& spec : catalogue) {
    if (spec.name == name) return spec;
    names.push_back(spec.name);
  }
  throw std::invalid_argument(
      fmt::format("unknown model \"{}\"; the catalogue has: {}", name,
                  names.empty() ? "(nothing)" : fmt::format("{}", fmt::join(names, ", "))));
}

}  // namespace ptxbench::llm
