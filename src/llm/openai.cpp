// OpenAI Chat Completions, and every server that copies it (vLLM, SGLang, OpenRouter, hosted GLM and Qwen).
#include "llm/protocols.h"

namespace ptxbench::llm {

using nlohmann::json;

namespace {

// OpenAI's own API rejects max_tokens for its reasoning models and wants max_completion_tokens; the
// compatible servers (vLLM, SGLang, OpenRouter, GLM, Qwen) all accept max_tokens, and some older ones know
// nothing else.
const char* max_tokens_field(const std::string& base_url) {
  return url_host(base_url) == "api.openai.com" ? "max_completion_tokens" : "max_tokens";
}

// content is a string, null (a refusal), or (some servers) an array of {type:"text", text} parts.
std::string content_text(const json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string text;
  if (content.is_array())
    for (const auto& part : content)
      if (string_member(part, "type") == "text") text += string_member(part, "text");
  return text;
}

}  // namespace

WireRequest openai_request(const ModelSpec& spec, const std::string& key, const Request& request) {
  json messages = json::array();
  if (!request.system.empty()) messages.push_back({{"role", "system"}, {"content", request.system}});
  for (const auto& m : request.messages) {
    check_role(m);
    messages.push_back({{"role", m.role}, {"content", m.content}});
  }
  json body = {{"model", spec.model_id}, {"messages", messages}};
  body[max_tokens_field(spec.base_url)] = spec.max_tokens;
  if (spec.temperature) body["temperature"] = *spec.temperature;
  if (spec.top_p) body["top_p"] = *spec.top_p;
  if (spec.seed) body["seed"] = *spec.seed;
  if (!spec.stop.empty()) body["stop"] = spec.stop;
  if (const auto& effort = member(spec.reasoning, "effort"); !effort.is_null())
    body["reasoning_effort"] = effort;

  WireRequest wire{
      join_url(spec.base_url, "chat/completions"), {"Content-Type: application/json"}, std::move(body)};
  if (!key.empty()) wire.headers.push_back("Authorization: Bearer " + key);
  add_extras(spec, wire);
  return wire;
}

WireReply openai_reply(const json& reply) {
  WireReply out;
  const json& usage = member(reply, "usage");
  out.usage.reported = usage.is_object();
  out.usage.input_tokens = token_count(usage, "prompt_tokens");
  out.usage.output_tokens = token_count(usage, "completion_tokens");  // reasoning included
  out.usage.reasoning_tokens = token_count(member(usage, "completion_tokens_details"), "reasoning_tokens");

  const json& choices = member(reply, "choices");
  if (!choices.is_array() || choices.empty() || !choices[0].is_object()) {
    // OpenRouter and some proxies answer HTTP 200 with an error object carrying the upstream status.
    if (const json& err = member(reply, "error"); !err.is_null()) {
      out.error = "the server reported an error: " + error_text(reply.dump());
      const int64_t code = token_count(err, "code");
      out.transient = code == 429 || code >= 500;
    } else {
      out.error = "the reply has no choices";
    }
    return out;
  }
  const json& choice = choices[0];
  out.finish_reason = string_member(choice, "finish_reason");
  const json& message = member(choice, "message");
  out.text = content_text(member(message, "content"));
  // vLLM and SGLang return the reasoning as reasoning_content, OpenRouter as reasoning.
  out.reasoning = string_member(message, "reasoning_content");
  if (out.reasoning.empty()) out.reasoning = string_member(message, "reasoning");
  if (out.text.empty()) {
    out.error = "the reply has no text (finish_reason \"" + out.finish_reason + "\"";
    if (const std::string refusal = string_member(message, "refusal"); !refusal.empty())
      out.error += ", refusal: " + refusal;
    if (out.finish_reason == "length")
      out.error += ": the token limit was reached, " + std::to_string(out.usage.reasoning_tokens) +
                   " tokens of it spent on reasoning";
    out.error += ")";
  }
  return out;
}

}  // namespace ptxbench::llm
