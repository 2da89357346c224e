// Google Gemini API, generateContent.
#include "llm/protocols.h"

namespace ptxbench::llm {

using nlohmann::json;

WireRequest gemini_request(const ModelSpec& spec, const std::string& key, const Request& request) {
  json contents = json::array();
  for (const auto& m : request.messages) {
    check_role(m);
    contents.push_back({{"role", m.role == "assistant" ? "model" : "user"},
                        {"parts", json::array({{{"text", m.content}}})}});
  }
  json config = {{"maxOutputTokens", spec.max_tokens}};
  if (spec.temperature) config["temperature"] = *spec.temperature;
  if (spec.top_p) config["topP"] = *spec.top_p;
  if (spec.seed) config["seed"] = *spec.seed;
  if (!spec.stop.empty()) config["stopSequences"] = spec.stop;
  if (spec.reasoning.is_object() && spec.reasoning.contains("thinking_budget"))
    config["thinkingConfig"] = {{"thinkingBudget", spec.reasoning["thinking_budget"]}};

  json body = {{"contents", contents}, {"generationConfig", config}};
  if (!request.system.empty())
    body["systemInstruction"] = {{"parts", json::array({{{"text", request.system}}})}};

  // The key goes in a header, not the ?key= query parameter, so URLs can be logged.
  WireRequest wire{join_url(spec.base_url, "models/" + spec.model_id + ":generateContent"),
                   {"Content-Type: application/json"},
                   std::move(body)};
  if (!key.empty()) wire.headers.push_back("x-goog-api-key: " + key);
  add_extras(spec, wire);
  return wire;
}

WireReply gemini_reply(const json& reply) {
  WireReply out;
  const json& usage = member(reply, "usageMetadata");
  out.usage.reported = usage.is_object();
  out.usage.input_tokens = token_count(usage, "promptTokenCount");
  out.usage.reasoning_tokens = token_count(usage, "thoughtsTokenCount");
  // candidatesTokenCount leaves the thoughts out; Usage::output_tokens counts them in, like the other
  // providers.
  out.usage.output_tokens = token_count(usage, "candidatesTokenCount") + out.usage.reasoning_tokens;

  const json& candidates = member(reply, "candidates");
  if (!candidates.is_array() || candidates.empty() || !candidates[0].is_object()) {
    const std::string block = string_member(member(reply, "promptFeedback"), "blockReason");
    if (!block.empty())
      out.error = "the prompt was blocked (blockReason " + block + ")";
    else if (!member(reply, "error").is_null())
      out.error = "the server reported an error: " + error_text(reply.dump());
    else
      out.error = "the reply has no candidates";
    return out;
  }
  const json& candidate = candidates[0];
  out.finish_reason = string_member(candidate, "finishReason");
  const json& parts = member(member(candidate, "content"), "parts");
  if (parts.is_array())
    for (const auto& part : parts)
      if (member(part, "thought") != true)
        out.text += string_member(part, "text");  // thought parts: reasoning
  if (out.text.empty()) out.error = "the reply has no text (finishReason \"" + out.finish_reason + "\")";
  return out;
}

}  // namespace ptxbench::llm
