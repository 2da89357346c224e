// Model providers over one small interface. Each speaks its real wire protocol over HTTPS: OpenAI-compatible
// Chat Completions, Anthropic Messages, Gemini generateContent. Keys come from environment variables named in
// the model catalogue (models.json); nothing secret is stored.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ptxbench::llm {

struct Message {
  std::string role;  // "user" or "assistant"; the system prompt travels separately
  std::string content;
};

// One entry of the model catalogue.
struct ModelSpec {
  std::string name;         // what --model takes: "gpt-5", "claude-opus", "qwen3-coder-local"
  std::string provider;     // "openai" (any OpenAI-compatible server), "anthropic", "gemini", "reference"
  std::string base_url;     // "https://api.openai.com/v1", "http://localhost:8000/v1", ...
  std::string model_id;     // the provider's own model name
  std::string api_key_env;  // environment variable holding the key; empty: no key (local servers)
  int max_tokens = 16384;
  int context_tokens = 0;  // the model's window, prompt and answer together; 0: unknown (no trimming)
  std::optional<double> temperature;
  std::optional<double> top_p;
  std::optional<int64_t> seed;
  std::vector<std::string> stop;  // stop sequences
  // Merged into the request body as the provider takes it (vLLM's chat_template_kwargs, OpenRouter's provider
  // routing): never a field ptxbench sets itself. Headers, "Name: value" (OpenRouter's HTTP-Referer): never a
  // credential, which only api_key_env carries, so that nothing secret is stored with a run.
  nlohmann::json extra_body;  // an object, or null
  std::vector<std::pair<std::string, std::string>> extra_headers;
  nlohmann::json reasoning;  // provider-specific: {"effort": "high"} (OpenAI), {"budget_tokens": 8000}
                             // (Anthropic thinking), {"thinking_budget": 8000} (Gemini); null: none
  int concurrency = 4;       // requests in flight at once to this model
  double timeout_s = 600;    // one HTTP request
  int max_attempts = 6;      // retries on 429, 5xx, timeouts and broken replies
  double retry_base_s = 2;  // first backoff wait, doubled per attempt (with jitter); Retry-After overrides it
};

struct Request {
  std::string system;
  std::vector<Message> messages;
};

struct Usage {
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;     // including reasoning tokens
  int64_t reasoning_tokens = 0;  // where the provider reports them
  bool reported = false;  // the provider said: a model without an API (the reference model) reports nothing

  Usage& operator+=(const Usage& other) {
    reported = reported || other.reported;
    input_tokens += other.input_tokens;
    output_tokens += other.output_tokens;
    reasoning_tokens += other.reasoning_tokens;
    return *this;
  }
};

struct Reply {
  bool ok = false;
  std::string text;           // the assistant's answer (reasoning text, if any, is not included)
  std::string reasoning;      // the reasoning text the server returned beside it (vLLM, SGLang, OpenRouter)
  std::string finish_reason;  // as the provider says: "stop", "length", "end_turn", "MAX_TOKENS", ...
  Usage usage;                // summed over the attempts: a retried reply may have been billed too
  std::string error;          // when !ok: what went wrong, for people
  int http_status = 0;        // of the last attempt
  int attempts = 0;
  double latency_s = 0;         // all attempts, waits included
  nlohmann::json request_body;  // as sent (the last attempt), without headers: no key
  std::string response_body;    // as received (the last attempt)
  // With !ok: the model did answer, but with no text (a refusal, a content filter, the token limit spent on
  // reasoning). Not retried; for the agent a turn without code, not a failed call.
  bool no_text = false;
};

class Provider {
 public:
  virtual ~Provider() = default;
  // Blocking; safe to call from several threads (the concurrency limit is enforced inside).
  virtual Reply complete(const Request& request) = 0;
};

// The catalogue: a JSON array of ModelSpec objects (field names as above). Errors name the file and the
// entry. Throws ptxbench::ConfigError (util/errors.h).
std::vector<ModelSpec> load_model_catalogue(const std::string& path);

// The entry called `name`; throws std::invalid_argument listing the names there are.
const ModelSpec& find_model(const std::vector<ModelSpec>& catalogue, const std::string& name);

// One catalogue entry, checked as the catalogue's are (a run's stored copy); `where` names it in errors.
ModelSpec read_model_spec(const nlohmann::json& entry, const std::string& where);

// A provider for spec.provider "openai", "anthropic" or "gemini"; throws std::invalid_argument otherwise, or
// when the key's environment variable is named but unset.
std::unique_ptr<Provider> make_provider(const ModelSpec& spec);

}  // namespace ptxbench::llm
