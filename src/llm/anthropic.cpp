// Anthropic Messages API.
#include "llm/protocols.h"

namespace ptxbench::llm {

using nlohmann::json;

WireRequest anthropic_request(const ModelSpec& spec, const std::string& key, const Request& request) {
  json messages = json::array();
  for (const auto& m : request.messages) {
    check_role(m);
    messages.push_back({{"role", m.role}, {"content", m.content}});
  }
  json body = {{"model", spec.model_id}, {"max_tokens", spec.max_tokens}, {"messages", messages}};
  if (!request.system.empty()) body["system"] = request.system;  // top level: Anthropic has no system role
  if (spec.temperature) body["temperature"] = *spec.temperature;
  if (spec.top_p) body["top_p"] = *spec.top_p;
  if (!spec.stop.empty()) body["stop_sequences"] = spec.stop;
  if (spec.reasoning.is_object() && spec.reasoning.contains("budget_tokens"))
    body["thinking"] = {{"type", "enabled"}, {"budget_tokens", spec.reasoning["budget_tokens"]}};

  WireRequest wire{join_url(spec.base_url, "messages"),
                   {"Content-Type: application/json", "anthropic-version: 2023-06-01"},
                   std::move(body)};
  if (!key.empty()) wire.headers.push_back("x-api-key: " + key);
  add_extras(spec, wire);
  return wire;
}

WireReply anthropic_reply(const json& reply) {
  WireReply out;
  if (string_member(reply, "type") == "error") {
    out.error = "the server reported an error: " + error_text(reply.dump());
    const std::string type = string_member(member(reply, "error"), "type");
    out.transient = type == "overloaded_error" || type == "api_error" || type == "rate_limit_error";
    return out;
  }
  const json& usage = member(reply, "usage");
  out.usage.reported = usage.is_object();
  // Cached prompt tokens are reported apart from input_tokens; all of them were read by the model.
  out.usage.input_tokens = token_count(usage, "input_tokens") +
                           token_count(usage, "cache_creation_input_tokens") +
                           token_count(usage, "cache_read_input_tokens");
  out.usage.output_tokens = token_count(usage, "output_tokens");  // thinking included; not reported apart
  out.finish_reason = string_member(reply, "stop_reason");

  // Only "text" blocks are the answer; "thinking" and "redacted_thinking" blocks are the model's reasoning.
  const json& content = member(reply, "content");
  if (content.is_array())
    for (const auto& block : content)
      if (string_member(block, "type") == "text") out.text += string_member(block, "text");
  if (out.text.empty())
    out.error = "the reply has no text blocks (stop_reason \"" + out.finish_reason + "\")";
  return out;
}

}  // namespace ptxbench::llm
