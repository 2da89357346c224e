#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "llm/protocols.h"
#include "util/text.h"

namespace ptxbench::llm {

std::string join_url(const std::string& base, const std::string& path) {
  std::string joined = base;
  while (!joined.empty() && joined.back() == '/') joined.pop_back();
  if (path.empty() || path.front() != '/') joined += '/';
  return joined + path;
}

std::string url_host(const std::string& url) {
  auto start = url.find("://");
  start = start == std::string::npos ? 0 : start + 3;
  const auto end = url.find_first_of(":/?#", start);
  std::string host = url.substr(start, end == std::string::npos ? std::string::npos : end - start);
  std::transform(host.begin(), host.end(), host.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return host;
}

const nlohmann::json& member(const nlohmann::json& object, const char* field) {
  static const nlohmann::json null_value;
  if (!object.is_object()) return null_value;
  const auto it = object.find(field);
  return it == object.end() ? null_value : *it;
}

std::string string_member(const nlohmann::json& object, const char* field) {
  const auto& value = member(object, field);
  return value.is_string() ? value.get<std::string>() : std::string();
}

int64_t token_count(const nlohmann::json& object, const char* field) {
  const auto& value = member(object, field);
  return value.is_number() ? value.get<int64_t>() : 0;
}

std::string error_text(const std::string& body) {
  const auto parsed = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  const auto& err = member(parsed, "error");
  if (err.is_string()) return err.get<std::string>();
  if (const std::string message = string_member(err, "message"); !message.empty()) return message;
  // Not the usual error object (a proxy's HTML page, say): its start is still the best clue.
  constexpr size_t kShown = 300;
  return body.size() <= kShown ? body : utf8_head(body, kShown) + "...";
}

void check_role(const Message& message) {
  if (message.role != "user" && message.role != "assistant")
    throw std::invalid_argument(
        "message role \"" + message.role +
        "\": only \"user\" and \"assistant\" (the system prompt travels in Request::system)");
}

void add_extras(const ModelSpec& spec, WireRequest& wire) {
  if (spec.extra_body.is_object())
    for (const auto& [key, value] : spec.extra_body.items()) wire.body[key] = value;
  for (const auto& [name, value] : spec.extra_headers) wire.headers.push_back(name + ": " + value);
}

const std::vector<std::string>& fields_set_by_ptxbench(const std::string& provider) {
  static const std::vector<std::string> openai = {
      "model", "messages", "max_tokens", "max_completion_tokens", "temperature",
      "top_p", "seed",     "stop",       "reasoning_effort",      "stream"};
  static const std::vector<std::string> anthropic = {"model",          "messages",    "system",
                                                     "max_tokens",     "temperature", "top_p",
                                                     "stop_sequences", "thinking",    "stream"};
  static const std::vector<std::string> gemini = {"contents", "systemInstruction", "generationConfig"};
  static const std::vector<std::string> none;
  return provider == "openai"      ? openai
         : provider == "anthropic" ? anthropic
         : provider == "gemini"    ? gemini
                                   : none;
}

}  // namespace ptxbench::llm
