// What the three protocols share: the key, HTTP, retries with backoff, the per-model concurrency limit.
#include <openssl/evp.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <mutex>
#include <random>
#include <semaphore>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "llm/http.h"
#include "llm/protocols.h"
#include "llm/provider.h"
#include "util/text.h"

namespace ptxbench::llm {

namespace {

using Clock = std::chrono::steady_clock;
using Slots = std::counting_semaphore<>;

constexpr double kMaxBackoffS = 60;      // exponential growth stops here
constexpr double kMaxRetryAfterS = 300;  // a server asking for longer is treated as asking for this

// One semaphore per model name for the whole process, so every Provider of one model shares the limit. The
// first spec seen for a name sets its size.
std::shared_ptr<Slots> slots_for(const ModelSpec& spec) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<Slots>> registry;
  const std::lock_guard lock(mutex);
  auto& slots = registry[spec.name];
  if (!slots) slots = std::make_shared<Slots>(std::max<std::ptrdiff_t>(1, spec.concurrency));
  return slots;
}

struct SlotGuard {
  Slots& slots;
  explicit SlotGuard(Slots& s) : slots(s) { slots.acquire(); }
  ~SlotGuard() { slots.release(); }
  SlotGuard(const SlotGuard&) = delete;
  SlotGuard& operator=(const SlotGuard&) = delete;
};

// Equal jitter: half the exponential wait fixed, half random, so clients that failed together spread out.
double backoff_s(double base_s, int attempt) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  const double wait = std::min(kMaxBackoffS, base_s * std::pow(2.0, attempt - 1));
  return wait / 2 + std::uniform_real_distribution<double>(0, wait / 2)(rng);
}

using BuildFn = WireRequest (*)(const ModelSpec&, const std::string&, const Request&);
using ParseFn = WireReply (*)(const nlohmann::json&);

// What one attempt came to.
struct Outcome {
  enum Kind { kDone, kFatal, kRetry } kind = kRetry;
  WireReply reply;       // kDone; on kFatal whatever could be read (usage of a filtered reply)
  std::string error;     // kFatal, kRetry
  bool no_text = false;  // kFatal: an HTTP 200 whose reply has no text
};

bool retryable_status(int status) {
  return status == 408 || status == 429 || status >= 500;
}

Outcome judge(const HttpResponse& http, ParseFn parse) {
  Outcome out;
  if (http.status == 0) {
    out.kind = http.transient ? Outcome::kRetry : Outcome::kFatal;
    out.error = (http.timed_out ? "timed out: " : "no complete reply: ") + http.error;
    return out;
  }
  if (http.status < 200 || http.status >= 300) {
    out.kind = retryable_status(http.status) ? Outcome::kRetry : Outcome::kFatal;
    out.error = "HTTP " + std::to_string(http.status) + ": " + error_text(http.body);
    return out;
  }
  const auto json = nlohmann::json::parse(http.body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) {
    out.error = "HTTP " + std::to_string(http.status) + " with a body that is not JSON (" +
                std::to_string(http.body.size()) + " bytes): " + error_text(http.body);
    return out;
  }
  try {
    out.reply = parse(json);
  } catch (const std::exception& e) {  // the parsers do not throw by design; a bug here must not kill a run
    out.error = std::string("could not read the reply: ") + e.what();
    return out;
  }
  if (out.reply.error.empty()) {
    out.kind = Outcome::kDone;
  } else {
    out.kind = out.reply.transient ? Outcome::kRetry : Outcome::kFatal;
    out.no_text = !out.reply.transient;
    out.error = out.reply.error;
  }
  return out;
}

constexpr std::string_view kRedacted = "[key redacted]";

// The forms a key takes on the wire, where a server may echo it: as sent; escaped in a JSON string (with
// "\/" for "/", as some servers write it, and with every character outside ASCII as \u escapes);
// percent-encoded in a URL or a form, with upper- or lower-case hex; in base64 (standard and URL-safe, as in
// a Basic authorisation header). Longest first, each once.
std::vector<std::string> wire_forms(const std::string& key) {
  // nlohmann's dump of the key as a JSON string, quotes dropped (invalid UTF-8 replaced: a key is bytes).
  const auto escaped = [&](bool ascii) {
    const std::string quoted =
        nlohmann::json(key).dump(-1, ' ', ascii, nlohmann::json::error_handler_t::replace);
    return quoted.substr(1, quoted.size() - 2);
  };
  std::vector<std::string> forms = {key, escaped(false), escaped(true)};
  std::string slashes;
  for (const char c : forms[1]) slashes += c == '/' ? std::string("\\/") : std::string(1, c);
  forms.push_back(slashes);
  for (const char* hex : {"0123456789ABCDEF", "0123456789abcdef"}) {
    std::string percent;
    for (const unsigned char c : key) {
      if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
        percent += static_cast<char>(c);
      } else {
        percent += '%';
        percent += hex[c >> 4];
        percent += hex[c & 15];
      }
    }
    forms.push_back(percent);
  }
  std::string base64(4 * ((key.size() + 2) / 3) + 1, '\0');
  base64.resize(static_cast<size_t>(EVP_EncodeBlock(reinterpret_cast<unsigned char*>(base64.data()),
                                                    reinterpret_cast<const unsigned char*>(key.data()),
                                                    static_cast<int>(key.size()))));
  while (!base64.empty() && base64.back() == '=') base64.pop_back();  // a prefix of any longer encoding
  forms.push_back(base64);
  std::string url_safe = base64;
  std::replace(url_safe.begin(), url_safe.end(), '+', '-');
  std::replace(url_safe.begin(), url_safe.end(), '/', '_');
  forms.push_back(url_safe);
  std::sort(forms.begin(), forms.end(),
            [](const auto& a, const auto& b) { return a.size() != b.size() ? a.size() > b.size() : a < b; });
  forms.erase(std::unique(forms.begin(), forms.end()), forms.end());
  return forms;
}

// `text` with every occurrence of the key, in every form it takes on the wire, replaced. Proxies echo a
// request's headers in their error pages, and a model may repeat anything it was given: nothing of the key
// may reach the store or a terminal.
std::string redacted(std::string text, const std::string& key) {
  if (key.empty()) return text;
  for (const std::string& form : wire_forms(key))
    for (size_t at = 0; !form.empty() && (at = text.find(form, at)) != std::string::npos;
         at += kRedacted.size())
      text.replace(at, form.size(), kRedacted);
  return text;
}

// A reply with the key redacted from everything in it that came from the provider: the answer, the raw body
// (with any reasoning the reply carried), and errors, which quote the body.
Reply redacted(Reply reply, const std::string& key) {
  for (std::string* text : {&reply.text, &reply.finish_reason, &reply.error, &reply.response_body})
    *text = redacted(std::move(*text), key);
  return reply;
}

class HttpProvider final : public Provider {
 public:
  HttpProvider(ModelSpec spec, std::string key, BuildFn build, ParseFn parse)
      : spec_(std::move(spec)),
        key_(std::move(key)),
        build_(build),
        parse_(parse),
        slots_(slots_for(spec_)) {}

  Reply complete(const Request& request) override { return redacted(call_with_retries(request), key_); }

 private:
  Reply call_with_retries(const Request& request) {
    const auto start = Clock::now();
    Reply reply;
    WireRequest wire;
    try {
      wire = build_(spec_, key_, request);
    } catch (const std::exception& e) {
      reply.error = "model " + spec_.name + ": bad request: " + e.what();
      return reply;
    }
    reply.request_body = wire.body;
    // json_text: a request that holds invalid UTF-8 (an earlier turn's stored text) is sent, not thrown on.
    const HttpRequest http_request{wire.url, wire.headers, json_text(wire.body), spec_.timeout_s};
    const int max_attempts = std::max(1, spec_.max_attempts);

    for (int attempt = 1;; ++attempt) {
      reply.attempts = attempt;
      HttpResponse http;
      {
        const SlotGuard slot(*slots_);  // held for the request only, not during the waits between attempts
        http = http_post(http_request);
      }
      reply.http_status = http.status;
      reply.response_body = http.body;
      Outcome outcome = judge(http, parse_);
      reply.usage += outcome.reply.usage;

      if (outcome.kind != Outcome::kRetry || attempt == max_attempts) {
        reply.ok = outcome.kind == Outcome::kDone;
        reply.text = std::move(outcome.reply.text);
        reply.reasoning = std::move(outcome.reply.reasoning);
        reply.finish_reason = std::move(outcome.reply.finish_reason);
        reply.no_text = outcome.no_text;
        if (!reply.ok) {
          reply.error = "model " + spec_.name + ": " + outcome.error;
          if (outcome.kind == Outcome::kRetry)
            reply.error += " (gave up after " + std::to_string(attempt) + " attempts)";
        }
        break;
      }
      double wait_s = backoff_s(spec_.retry_base_s, attempt);
      if (http.retry_after_s) wait_s = std::min(*http.retry_after_s, kMaxRetryAfterS);
      std::this_thread::sleep_for(std::chrono::duration<double>(wait_s));
    }
    reply.latency_s = std::chrono::duration<double>(Clock::now() - start).count();
    return reply;
  }

  ModelSpec spec_;
  std::string key_;
  BuildFn build_;
  ParseFn parse_;
  std::shared_ptr<Slots> slots_;
};

std::string key_for(const ModelSpec& spec) {
  if (spec.api_key_env.empty()) return {};
  const char* key = std::getenv(spec.api_key_env.c_str());
  if (key == nullptr || *key == '\0')
    throw std::invalid_argument("model " + spec.name + ": the environment variable " + spec.api_key_env +
                                " (the key for " + spec.base_url + ") is not set");
  return key;
}

}  // namespace

std::unique_ptr<Provider> make_provider(const ModelSpec& spec) {
  BuildFn build = nullptr;
  ParseFn parse = nullptr;
  if (spec.provider == "openai") {
    build = openai_request;
    parse = openai_reply;
  } else if (spec.provider == "anthropic") {
    build = anthropic_request;
    parse = anthropic_reply;
  } else if (spec.provider == "gemini") {
    build = gemini_request;
    parse = gemini_reply;
  } else if (spec.provider == "reference") {
    throw std::invalid_argument(
        "model " + spec.name +
        ": provider \"reference\" is the built-in offline model; the agent answers it "
        "from the shipped solutions, no HTTP provider serves it");
  } else {
    throw std::invalid_argument("model " + spec.name + ": unknown provider \"" + spec.provider +
                                "\" (openai, anthropic, gemini or reference)");
  }
  if (spec.base_url.empty()) throw std::invalid_argument("model " + spec.name + ": no base_url");
  return std::make_unique<HttpProvider>(spec, key_for(spec), build, parse);
}

}  // namespace ptxbench::llm
