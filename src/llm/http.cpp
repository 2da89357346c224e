#include "llm/http.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <memory>
#include <mutex>

#include <curl/curl.h>

namespace ptxbench::llm {

namespace {

// curl_global_init is not thread-safe; do it once, before any handle exists.
void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

size_t on_body(char* data, size_t size, size_t count, void* user) {
  auto& body = *static_cast<std::string*>(user);
  if (body.size() + size * count > kMaxReplyBytes) return 0;  // curl ends the transfer: CURLE_WRITE_ERROR
  body.append(data, size * count);
  return size * count;
}

bool transient(CURLcode rc) {
  switch (rc) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return true;
    default:
      return false;
  }
}

std::string trim(std::string s) {
  auto blank = [](unsigned char c) { return std::isspace(c) != 0; };
  while (!s.empty() && blank(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t start = 0;
  while (start < s.size() && blank(static_cast<unsigned char>(s[start]))) ++start;
  return s.substr(start);
}

size_t on_header(char* data, size_t size, size_t count, void* user) {
  const std::string line(data, size * count);
  const auto colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    // A redirect or 100-continue can bring several header blocks; the last Retry-After wins.
    if (name == "retry-after")
      *static_cast<std::optional<double>*>(user) = parse_retry_after(line.substr(colon + 1));
  }
  return size * count;
}

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

// curl_slist_append returns null only when out of memory; the list so far stays valid then.
void append(curl_slist*& list, const std::string& header) {
  if (curl_slist* grown = curl_slist_append(list, header.c_str())) list = grown;
}

}  // namespace

std::optional<double> parse_retry_after(const std::string& value) {
  const std::string v = trim(value);
  if (v.empty()) return std::nullopt;
  if (std::all_of(v.begin(), v.end(), [](unsigned char c) { return std::isdigit(c) != 0; }))
    return v.size() > 9 ? 1e9 : std::stod(v);
  const time_t when = curl_getdate(v.c_str(), nullptr);
  if (when < 0) return std::nullopt;
  return std::max(0.0, std::difftime(when, std::time(nullptr)));
}

HttpResponse http_post(const HttpRequest& request) {
  global_init();
  HttpResponse response;
  std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
  if (!curl) {
    response.error = "could not create a curl handle";
    return response;
  }
  curl_slist* list = nullptr;
  for (const auto& h : request.headers) append(list, h);
  // Without this curl sends "Expect: 100-continue" for large bodies and waits for an answer some servers
  // never give.
  append(list, "Expect:");
  const std::unique_ptr<curl_slist, SlistDeleter> headers(list);

  const auto timeout_ms = static_cast<long>(std::max(1.0, request.timeout_s * 1000.0));
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(c, CURLOPT_POST, 1L);
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, request.body.data());
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, std::min(timeout_ms, 30000L));
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);         // threads: no SIGALRM-based DNS timeouts
  curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");  // whatever curl can decompress
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &response.body);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &response.retry_after_s);

  char detail[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, detail);
  const CURLcode rc = curl_easy_perform(c);

  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  if (rc != CURLE_OK) {
    // A status line may have arrived before the failure (a body cut short): the reply is still unusable.
    response.status = 0;
    response.timed_out = rc == CURLE_OPERATION_TIMEDOUT;
    response.transient = transient(rc);
    response.error =
        std::string(curl_easy_strerror(rc)) + (detail[0] ? std::string(": ") + detail : std::string());
    if (rc == CURLE_WRITE_ERROR)
      response.error = "the reply was larger than " + std::to_string(kMaxReplyBytes >> 20) + " MiB";
    if (status != 0) response.error += " (after HTTP " + std::to_string(status) + ")";
    return response;
  }
  response.status = static_cast<int>(status);
  return response;
}

}  // namespace ptxbench::llm
