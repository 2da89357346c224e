// The three wire protocols as pure functions: a Request becomes URL, headers and JSON body; a reply's JSON
// becomes text, finish reason and usage. No I/O here, so each format can be tested on its own; providers.cpp
// adds HTTP, retries and the concurrency limit.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "llm/provider.h"

namespace ptxbench::llm {

struct WireRequest {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"; the key header is among them, so never log these
  nlohmann::json body;
};

struct WireReply {
  std::string text;
  std::string reasoning;  // the reasoning text beside the answer, where the server returns it
  std::string finish_reason;
  Usage usage;
  std::string error;  // non-empty: no usable text in the reply (filtered, empty, an error object)
  bool transient =
      false;  // the error is the server's passing trouble (an error object saying 429/5xx): retry
};

// Build functions throw std::invalid_argument on a request no protocol can carry (an unknown role).
WireRequest openai_request(const ModelSpec& spec, const std::string& key, const Request& request);
WireReply openai_reply(const nlohmann::json& reply);

WireRequest anthropic_request(const ModelSpec& spec, const std::string& key, const Request& request);
WireReply anthropic_reply(const nlohmann::json& reply);

WireRequest gemini_request(const ModelSpec& spec, const std::string& key, const Request& request);
WireReply gemini_reply(const nlohmann::json& reply);

// Helpers the protocols share.
std::string join_url(const std::string& base, const std::string& path);  // one '/' between them
std::string url_host(const std::string& url);                            // lower case, no port
// Readers that never throw: a reply may lack any field, or carry null or the wrong type in it.
const nlohmann::json& member(const nlohmann::json& object, const char* field);  // null json when absent
std::string string_member(const nlohmann::json& object, const char* field);  // "" when absent or not a string
int64_t token_count(const nlohmann::json& object, const char* field);        // 0 when absent or not a number
std::string error_text(const std::string& body);  // {"error":{"message":...}} or the body's start, for people
void check_role(const Message& message);          // "user" or "assistant", else std::invalid_argument
// The catalogue entry's extra body fields (merged at the top level) and headers, after the protocol's own.
void add_extras(const ModelSpec& spec, WireRequest& wire);
// The body fields each protocol sets itself, which extra_body may not override.
const std::vector<std::string>& fields_set_by_ptxbench(const std::string& provider);

}  // namespace ptxbench::llm
