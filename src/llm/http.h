// One small HTTP client over libcurl: POST a body, get status, body and Retry-After back. TLS is curl's.
// No retries here: the providers decide what is worth retrying.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ptxbench::llm {

struct HttpRequest {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;
  double timeout_s = 600;  // the whole exchange, connecting included
};

struct HttpResponse {
  int status = 0;                       // 0: no complete HTTP response (see error)
  std::string body;                     // what arrived, even when the transfer broke off
  std::optional<double> retry_after_s;  // the Retry-After header, in seconds (a date is converted)
  std::string error;                    // transport failure (connect, timeout, truncated body); empty if none
  bool timed_out = false;
  // The failure may pass (a refused or reset connection, a timeout, a cut body): worth another attempt. A bad
  // URL, an unsupported protocol, a TLS certificate that does not verify or an oversized reply will not.
  bool transient = false;
};

// The most a reply body may be: a model's reply is kilobytes; past this something is wrong at the other end.
inline constexpr size_t kMaxReplyBytes = 64 << 20;

// Blocking; safe to call from many threads at once (one curl handle per call).
HttpResponse http_post(const HttpRequest& request);

// A Retry-After value: delta-seconds or an HTTP date. nullopt when neither parses.
std::optional<double> parse_retry_after(const std::string& value);

}  // namespace ptxbench::llm
