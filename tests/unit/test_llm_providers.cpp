// The providers against local fake servers that speak each wire protocol: what goes over the wire, what is
// read back, and how failures (429, 5xx, broken JSON, cut replies, timeouts, refusals) are retried or
// reported.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "agent/models.h"
#include "agent/trajectory.h"
#include "llm/http.h"
#include "llm/protocols.h"
#include "llm/provider.h"
#include "util/errors.h"

namespace ptxbench::llm {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr const char* kKeyEnv = "PTXBENCH_TEST_LLM_KEY";
constexpr const char* kKey = "sk-test-not-a-real-key";

// One scripted answer of the fake server.
struct Scripted {
  int status = 200;
  std::string body;
  httplib::Headers headers;
  double delay_s = 0;     // before answering
  bool truncate = false;  // announce the whole body's Content-Length, send half of it, drop the connection
};

struct Recorded {
  std::string path;
  httplib::Headers headers;
  std::string body;
  Clock::time_point at;
};

// An HTTP server on 127.0.0.1 and a free port, answering POSTs from a script (then `fallback` forever),
// recording every request and the most requests it ever had in flight at once.
class FakeServer {
 public:
  explicit FakeServer(std::vector<Scripted> script = {}, Scripted fallback = {})
      : script_(script.begin(), script.end()), fallback_(std::move(fallback)) {
    // More workers than any test has clients, so that the server never limits concurrency itself.
    server_.new_task_queue = [] { return new httplib::ThreadPool(32); };
    server_.Post(".*", [this](const httplib::Request& req, httplib::Response& res) { handle(req, res); });
    port_ = server_.bind_to_any_port("127.0.0.1");
    if (port_ <= 0) throw std::runtime_error("fake server: no free port");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeServer() {
    server_.stop();
    thread_.join();
  }
  FakeServer(const FakeServer&) = delete;
  FakeServer& operator=(const FakeServer&) = delete;

  std::string url(const std::string& prefix) const {
    return "http://127.0.0.1:" + std::to_string(port_) + prefix;
  }
  std::vector<Recorded> requests() const {
    const std::lock_guard lock(mutex_);
    return requests_;
  }
  int max_in_flight() const { return max_in_flight_; }

 private:
  void handle(const httplib::Request& req, httplib::Response& res) {
    const int now = ++in_flight_;
    for (int seen = max_in_flight_; now > seen && !max_in_flight_.compare_exchange_weak(seen, now);) {
    }
    Scripted answer;
    {
      const std::lock_guard lock(mutex_);
      requests_.push_back({req.path, req.headers, req.body, Clock::now()});
      if (script_.empty()) {
        answer = fallback_;
      } else {
        answer = script_.front();
        script_.pop_front();
      }
    }
    if (answer.delay_s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(answer.delay_s));
    res.status = answer.status;
    for (const auto& [name, value] : answer.headers) res.set_header(name.c_str(), value);
    if (answer.truncate) {
      const std::string body = answer.body;
      res.set_content_provider(
          body.size(), "application/json", [body](size_t, size_t, httplib::DataSink& sink) {
            sink.write(body.data(), body.size() / 2);
            return false;  // cancel: httplib closes the connection short of Content-Length
          });
    } else {
      res.set_content(answer.body, "application/json");
    }
    --in_flight_;
  }

  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  mutable std::mutex mutex_;
  std::deque<Scripted> script_;
  Scripted fallback_;
  std::vector<Recorded> requests_;
  std::atomic<int> in_flight_{0};
  std::atomic<int> max_in_flight_{0};
};

// --- canned replies of each protocol ---

std::string openai_ok(const std::string& text) {
  return json{
      {"id", "chatcmpl-1"},
      {"object", "chat.completion"},
      {"choices",
       {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", text}}}, {"finish_reason", "stop"}}}},
      {"usage",
       {{"prompt_tokens", 120},
        {"completion_tokens", 900},
        {"total_tokens", 1020},
        {"completion_tokens_details", {{"reasoning_tokens", 700}}}}}}
      .dump();
}

std::string anthropic_ok(const std::string& text) {
  return json{{"id", "msg_1"},
              {"type", "message"},
              {"role", "assistant"},
              {"content",
               {{{"type", "thinking"}, {"thinking", "SECRET REASONING"}, {"signature", "abc"}},
                {{"type", "text"}, {"text", text.substr(0, text.size() / 2)}},
                {{"type", "text"}, {"text", text.substr(text.size() / 2)}}}},
              {"stop_reason", "end_turn"},
              {"usage", {{"input_tokens", 50}, {"cache_read_input_tokens", 10}, {"output_tokens", 400}}}}
      .dump();
}

std::string gemini_ok(const std::string& text) {
  return json{{"candidates",
               {{{"content",
                  {{"role", "model"},
                   {"parts", {{{"text", "SECRET REASONING"}, {"thought", true}}, {{"text", text}}}}}},
                 {"finishReason", "STOP"}}}},
              {"usageMetadata",
               {{"promptTokenCount", 77},
                {"candidatesTokenCount", 300},
                {"thoughtsTokenCount", 250},
                {"totalTokenCount", 627}}}}
      .dump();
}

// A spec aimed at `server`, named after the running test so no two tests share a concurrency semaphore.
ModelSpec spec_for(const std::string& provider, const std::string& base_url) {
  setenv(kKeyEnv, kKey, 1);
  ModelSpec spec;
  spec.name =
      std::string("test-") + testing::UnitTest::GetInstance()->current_test_info()->name() + "-" + provider;
  spec.provider = provider;
  spec.base_url = base_url;
  spec.model_id = provider + "-test-model";
  spec.api_key_env = kKeyEnv;
  spec.max_tokens = 4096;
  spec.timeout_s = 5;
  spec.max_attempts = 4;
  spec.retry_base_s = 0.01;
  return spec;
}

Request conversation() {
  return Request{
      "You write CUDA kernels.",
      {{"user", "Write a GEMM."}, {"assistant", "```cuda\nbroken\n```"}, {"user", "It failed: fix it."}}};
}

std::string header(const Recorded& r, const std::string& name) {
  const auto it = r.headers.find(name);  // httplib::Headers compares names case-insensitively
  return it == r.headers.end() ? std::string("<absent>") : it->second;
}

Scripted ok_reply(const std::string& body) {
  return Scripted{200, body};
}

// --- wire content, one test per protocol ---

TEST(LlmOpenAi, RequestAndReplyOnTheWire) {
  FakeServer server({ok_reply(openai_ok("```cuda\nfixed\n```"))});
  ModelSpec spec = spec_for("openai", server.url("/v1/"));
  spec.temperature = 0.25;
  spec.reasoning = {{"effort", "high"}};
  const Reply reply = make_provider(spec)->complete(conversation());

  ASSERT_TRUE(reply.ok) << reply.error;
  EXPECT_EQ(reply.text, "```cuda\nfixed\n```");
  EXPECT_EQ(reply.finish_reason, "stop");
  EXPECT_EQ(reply.usage.input_tokens, 120);
  EXPECT_EQ(reply.usage.output_tokens, 900);
  EXPECT_EQ(reply.usage.reasoning_tokens, 700);
  EXPECT_TRUE(reply.usage.reported);
  EXPECT_EQ(agent::reply_meta(reply)["usage"]["reasoning_tokens"], 700);
  EXPECT_EQ(reply.attempts, 1);
  EXPECT_EQ(reply.http_status, 200);
  EXPECT_GT(reply.latency_s, 0);

  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  const Recorded& r = requests[0];
  EXPECT_EQ(r.path, "/v1/chat/completions");
  EXPECT_EQ(header(r, "Authorization"), std::string("Bearer ") + kKey);
  EXPECT_EQ(header(r, "Content-Type"), "application/json");
  const json body = json::parse(r.body);
  EXPECT_EQ(body["model"], "openai-test-model");
  const json expected_messages = json::array({{{"role", "system"}, {"content", "You write CUDA kernels."}},
                                              {{"role", "user"}, {"content", "Write a GEMM."}},
                                              {{"role", "assistant"}, {"content", "```cuda\nbroken\n```"}},
                                              {{"role", "user"}, {"content", "It failed: fix it."}}});
  EXPECT_EQ(body["messages"], expected_messages);
  // Not api.openai.com: the field every compatible server knows.
  EXPECT_EQ(body["max_tokens"], 4096);
  EXPECT_FALSE(body.contains("max_completion_tokens"));
  EXPECT_EQ(body["temperature"], 0.25);
  EXPECT_EQ(body["reasoning_effort"], "high");
  EXPECT_EQ(reply.request_body, body);
  EXPECT_EQ(reply.request_body.dump().find(kKey), std::string::npos);
  EXPECT_EQ(reply.response_body, openai_ok("```cuda\nfixed\n```"));
}

// What users of OpenAI-compatible servers set: sampling, extra body fields (vLLM's chat_template_kwargs,
// OpenRouter's provider routing) and headers; the reasoning text such servers return is kept with the reply.
TEST(LlmOpenAi, ExtraSettingsGoOnTheWireAndReasoningIsKept) {
  const std::string vllm_reply =
      R"({"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"the code",)"
      R"("reasoning_content":"first I tile M"}}],"usage":{"prompt_tokens":10,"completion_tokens":20}})";
  FakeServer server({ok_reply(vllm_reply)});
  const json entry = {{"name", "local"},
                      {"provider", "openai"},
                      {"base_url", server.url("/v1")},
                      {"model_id", "qwen"},
                      {"top_p", 0.95},
                      {"seed", 7},
                      {"stop", {"<|im_end|>"}},
                      {"extra_body", {{"chat_template_kwargs", {{"enable_thinking", true}}}, {"top_k", 20}}},
                      {"extra_headers", {{"HTTP-Referer", "https://example.org/ptxbench"}, {"X-Title", "ptxbench"}}}};
  ModelSpec spec = read_model_spec(entry, "test");
  spec.max_attempts = 1;
  const Reply reply = make_provider(spec)->complete(conversation());
  ASSERT_TRUE(reply.ok) << reply.error;
  EXPECT_EQ(reply.text, "the code");
  EXPECT_EQ(reply.reasoning, "first I tile M");
  EXPECT_EQ(agent::reply_meta(reply)["reasoning"], "first I tile M");
  const Recorded r = server.requests().at(0);
  const json body = json::parse(r.body);
  EXPECT_EQ(body["top_p"], 0.95);
  EXPECT_EQ(body["seed"], 7);
  EXPECT_EQ(body["stop"], json::array({"<|im_end|>"}));
  EXPECT_EQ(body["chat_template_kwargs"]["enable_thinking"], true);
  EXPECT_EQ(body["top_k"], 20);
  EXPECT_EQ(body["model"], "qwen") << "extra_body never replaces what ptxbench sets";
  EXPECT_EQ(header(r, "HTTP-Referer"), "https://example.org/ptxbench");
  EXPECT_EQ(header(r, "X-Title"), "ptxbench");
  // Stored with a run and read back the same (a resumed run sends the same request).
  EXPECT_EQ(agent::to_json(read_model_spec(agent::to_json(spec), "stored")), agent::to_json(spec));
  // OpenRouter names the field `reasoning`.
  WireReply openrouter = openai_reply(json::parse(
      R"({"choices":[{"finish_reason":"stop","message":{"content":"x","reasoning":"thought"}}]})"));
  EXPECT_EQ(openrouter.reasoning, "thought");
  // Anthropic and Gemini take the sampling settings under their own names.
  ModelSpec claude = spec_for("anthropic", "https://api.anthropic.com/v1");
  claude.top_p = 0.9;
  claude.stop = {"END"};
  const WireRequest to_claude = anthropic_request(claude, "k", conversation());
  EXPECT_EQ(to_claude.body["top_p"], 0.9);
  EXPECT_EQ(to_claude.body["stop_sequences"], json::array({"END"}));
  ModelSpec gemini = spec_for("gemini", "https://generativelanguage.googleapis.com/v1beta");
  gemini.seed = 3;
  EXPECT_EQ(gemini_request(gemini, "k", conversation()).body["generationConfig"]["seed"], 3);
}

TEST(LlmUsage, AReplyWithoutUsageStoresNoCounts) {
  // The reference model and a server that sends no usage: no counts, rather than 0 tokens that the report's
  // token figures would average in.
  llm::Reply reply{.ok = true, .text = "x"};
  EXPECT_FALSE(reply.usage.reported);
  EXPECT_FALSE(agent::reply_meta(reply).contains("usage"));
}

TEST(LlmOpenAi, OpenAiItselfGetsMaxCompletionTokens) {
  ModelSpec spec = spec_for("openai", "https://api.openai.com/v1");
  const WireRequest wire = openai_request(spec, "k", conversation());
  EXPECT_EQ(wire.url, "https://api.openai.com/v1/chat/completions");
  EXPECT_EQ(wire.body["max_completion_tokens"], 4096);
  EXPECT_FALSE(wire.body.contains("max_tokens"));
  EXPECT_FALSE(wire.body.contains("temperature"));
  EXPECT_FALSE(wire.body.contains("reasoning_effort"));
}

TEST(LlmOpenAi, LocalServerWithoutKeyGetsNoAuthorization) {
  FakeServer server({ok_reply(openai_ok("hi"))});
  ModelSpec spec = spec_for("openai", server.url("/v1"));
  spec.api_key_env.clear();
  const Reply reply = make_provider(spec)->complete({"", {{"user", "hello"}}});
  ASSERT_TRUE(reply.ok) << reply.error;
  const auto r = server.requests().at(0);
  EXPECT_EQ(header(r, "Authorization"), "<absent>");
  // No system prompt: no system message.
  EXPECT_EQ(json::parse(r.body)["messages"], json::parse(R"([{"role":"user","content":"hello"}])"));
}

TEST(LlmAnthropic, RequestAndReplyOnTheWire) {
  FakeServer server({ok_reply(anthropic_ok("```cuda\nfixed\n```"))});
  ModelSpec spec = spec_for("anthropic", server.url("/v1"));
  spec.reasoning = {{"budget_tokens", 2048}};
  const Reply reply = make_provider(spec)->complete(conversation());

  ASSERT_TRUE(reply.ok) << reply.error;
  EXPECT_EQ(reply.text, "```cuda\nfixed\n```");  // both text blocks, no thinking
  EXPECT_EQ(reply.text.find("SECRET"), std::string::npos);
  EXPECT_EQ(reply.finish_reason, "end_turn");
  EXPECT_EQ(reply.usage.input_tokens, 60);  // input + cache reads
  EXPECT_EQ(reply.usage.output_tokens, 400);
  EXPECT_EQ(reply.usage.reasoning_tokens, 0);

  const auto r = server.requests().at(0);
  EXPECT_EQ(r.path, "/v1/messages");
  EXPECT_EQ(header(r, "x-api-key"), kKey);
  EXPECT_EQ(header(r, "anthropic-version"), "2023-06-01");
  EXPECT_EQ(header(r, "Authorization"), "<absent>");
  const json body = json::parse(r.body);
  EXPECT_EQ(body["model"], "anthropic-test-model");
  EXPECT_EQ(body["system"], "You write CUDA kernels.");
  const json expected_messages = json::array({{{"role", "user"}, {"content", "Write a GEMM."}},
                                              {{"role", "assistant"}, {"content", "```cuda\nbroken\n```"}},
                                              {{"role", "user"}, {"content", "It failed: fix it."}}});
  EXPECT_EQ(body["messages"], expected_messages);
  EXPECT_EQ(body["max_tokens"], 4096);
  EXPECT_EQ(body["thinking"], json::parse(R"({"type":"enabled","budget_tokens":2048})"));
  EXPECT_FALSE(body.contains("temperature"));
}

TEST(LlmAnthropic, DefaultBaseUrlAndTemperature) {
  ModelSpec spec = spec_for("anthropic", "https://api.anthropic.com/v1");
  spec.temperature = 0.5;
  const WireRequest wire = anthropic_request(spec, "", {"", {{"user", "x"}}});
  EXPECT_EQ(wire.url, "https://api.anthropic.com/v1/messages");
  EXPECT_EQ(wire.body["temperature"], 0.5);
  EXPECT_FALSE(wire.body.contains("system"));
  EXPECT_FALSE(wire.body.contains("thinking"));
}

TEST(LlmGemini, RequestAndReplyOnTheWire) {
  FakeServer server({ok_reply(gemini_ok("```cuda\nfixed\n```"))});
  ModelSpec spec = spec_for("gemini", server.url("/v1beta"));
  spec.temperature = 1.0;
  spec.reasoning = {{"thinking_budget", 8000}};
  const Reply reply = make_provider(spec)->complete(conversation());

  ASSERT_TRUE(reply.ok) << reply.error;
  EXPECT_EQ(reply.text, "```cuda\nfixed\n```");
  EXPECT_EQ(reply.finish_reason, "STOP");
  EXPECT_EQ(reply.usage.input_tokens, 77);
  EXPECT_EQ(reply.usage.output_tokens, 550);  // candidates + thoughts
  EXPECT_EQ(reply.usage.reasoning_tokens, 250);

  const auto r = server.requests().at(0);
  EXPECT_EQ(r.path, "/v1beta/models/gemini-test-model:generateContent");
  EXPECT_EQ(header(r, "x-goog-api-key"), kKey);
  EXPECT_EQ(header(r, "Authorization"), "<absent>");
  const json body = json::parse(r.body);
  EXPECT_EQ(body["systemInstruction"], json::parse(R"({"parts":[{"text":"You write CUDA kernels."}]})"));
  const json expected_contents = json::parse(R"([
    {"role":"user","parts":[{"text":"Write a GEMM."}]},
    {"role":"model","parts":[{"text":"```cuda\nbroken\n```"}]},
    {"role":"user","parts":[{"text":"It failed: fix it."}]}])");
  EXPECT_EQ(body["contents"], expected_contents);
  EXPECT_EQ(
      body["generationConfig"],
      json::parse(R"({"maxOutputTokens":4096,"temperature":1.0,"thinkingConfig":{"thinkingBudget":8000}})"));
  EXPECT_FALSE(body.contains("model"));  // the model travels in the path
}

// --- retries ---

TEST(LlmRetry, RetryAfterIsHonoured) {
  Scripted busy{429, R"({"error":{"message":"Rate limit reached"}})", {{"Retry-After", "1"}}};
  FakeServer server({busy, ok_reply(openai_ok("done"))});
  const Reply reply = make_provider(spec_for("openai", server.url("/v1")))->complete(conversation());
  ASSERT_TRUE(reply.ok) << reply.error;
  EXPECT_EQ(reply.attempts, 2);
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);
  // Backoff alone would wait ~10 ms; Retry-After says a second.
  EXPECT_GE(std::chrono::duration<double>(requests[1].at - requests[0].at).count(), 0.95);
  EXPECT_GE(reply.latency_s, 0.95);
}

TEST(LlmRetry, ServerErrorThenSuccess) {
  FakeServer server({{500, "internal error"}, ok_reply(anthropic_ok("done"))});
  const Reply reply = make_provider(spec_for("anthropic", server.url("/v1")))->complete(conversation());
  ASSERT_TRUE(reply.ok) << reply.error;
  EXPECT_EQ(reply.attempts, 2);
  EXPECT_EQ(reply.text, "done");
  EXPECT_EQ(server.requests().size(), 2u);
}

TEST(LlmRetry, MalformedJsonThenSuccess) {
  FakeServer server({ok_reply(R"({"candidates": [{"content": )"), ok_reply(gemini_ok("done"))});
  const Reply reply = make_provider(spec_for("gemini", server.url("/v1beta")))->complete(conversation());
  ASSERT_TRUE(reply.ok) << reply.error;
  EXPECT_EQ(reply.attempts, 2);
  EXPECT_EQ(reply.text, "done");
}

TEST(LlmRetry, TheUsageOfARetriedReplyIsCounted) {
  // OpenRouter answers HTTP 200 with the upstream's error, and may bill the tokens it spent.
  const std::string upstream_failed =
      R"({"error":{"code":502,"message":"upstream died"},"usage":{"prompt_tokens":120,"completion_tokens":30}})";
  FakeServer server({ok_reply(upstream_failed), ok_reply(openai_ok("done"))});
  const Reply reply = make_provider(spec_for("openai", server.url("/v1")))->complete(conversation());
  ASSERT_TRUE(reply.ok) << reply.error;
  EXPECT_EQ(reply.attempts, 2);
  EXPECT_EQ(reply.usage.input_tokens, 240);
  EXPECT_EQ(reply.usage.output_tokens, 930);
  EXPECT_EQ(reply.usage.reasoning_tokens, 700);
}

TEST(LlmRetry, TruncatedReplyThenSuccess) {
  Scripted cut{200, openai_ok("a long answer that the connection cuts short")};
  cut.truncate = true;
  FakeServer server({cut, ok_reply(openai_ok("done"))});
  const Reply reply = make_provider(spec_for("openai", server.url("/v1")))->complete(conversation());
  ASSERT_TRUE(reply.ok) << reply.error;
  EXPECT_EQ(reply.attempts, 2);
  EXPECT_EQ(reply.text, "done");
}

TEST(LlmRetry, TruncatedEveryTimeSaysSo) {
  Scripted cut{200, openai_ok("never whole")};
  cut.truncate = true;
  FakeServer server({}, cut);
  ModelSpec spec = spec_for("openai", server.url("/v1"));
  spec.max_attempts = 2;
  const Reply reply = make_provider(spec)->complete(conversation());
  EXPECT_FALSE(reply.ok);
  EXPECT_EQ(reply.attempts, 2);
  EXPECT_NE(reply.error.find("no complete reply"), std::string::npos) << reply.error;
  EXPECT_NE(reply.error.find("gave up after 2 attempts"), std::string::npos) << reply.error;
}

TEST(LlmRetry, TimeoutThenSuccess) {
  Scripted slow = ok_reply(openai_ok("too late"));
  slow.delay_s = 0.6;
  FakeServer server({slow, ok_reply(openai_ok("done"))});
  ModelSpec spec = spec_for("openai", server.url("/v1"));
  spec.timeout_s = 0.2;
  const Reply reply = make_provider(spec)->complete(conversation());
  ASSERT_TRUE(reply.ok) << reply.error;
  EXPECT_EQ(reply.attempts, 2);
  EXPECT_EQ(reply.text, "done");
}

TEST(LlmRetry, UnauthorizedIsNotRetried) {
  FakeServer server({}, Scripted{401, R"({"error":{"message":"Incorrect API key provided","type":"auth"}})"});
  const Reply reply = make_provider(spec_for("openai", server.url("/v1")))->complete(conversation());
  EXPECT_FALSE(reply.ok);
  EXPECT_EQ(reply.attempts, 1);
  EXPECT_EQ(reply.http_status, 401);
  EXPECT_NE(reply.error.find("HTTP 401"), std::string::npos) << reply.error;
  EXPECT_NE(reply.error.find("Incorrect API key provided"), std::string::npos) << reply.error;
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST(LlmRetry, AMalformedAddressIsNotRetried) {
  ModelSpec spec = spec_for("openai", "htp://localhost:1/v1");  // a typo: no such protocol
  const Reply reply = make_provider(spec)->complete(conversation());
  EXPECT_FALSE(reply.ok);
  EXPECT_EQ(reply.attempts, 1) << reply.error;
}

// A proxy that echoes the request's headers in its error page: the key is not kept.
TEST(LlmProvider, TheKeyIsRedactedFromWhatIsKept) {
  FakeServer server({}, Scripted{400, std::string("bad request; you sent Authorization: Bearer ") + kKey});
  const Reply reply = make_provider(spec_for("openai", server.url("/v1")))->complete(conversation());
  EXPECT_FALSE(reply.ok);
  EXPECT_EQ(reply.error.find(kKey), std::string::npos) << reply.error;
  EXPECT_EQ(reply.response_body.find(kKey), std::string::npos) << reply.response_body;
  EXPECT_NE(reply.response_body.find("[key redacted]"), std::string::npos) << reply.response_body;
}

// A server echoes the key in whatever form it had it in: JSON-escaped ("\/" for "/"), percent-encoded,
// base64. None of these is kept either.
TEST(LlmProvider, TheKeyIsRedactedInEveryFormItTakesOnTheWire) {
  const std::string key = "sk-ab/cd+ef=gh:ij\u00e9";  // a '/', a '+', an '=', a ':' and a non-ASCII letter
  const std::string echoed =
      "json \"sk-ab\\/cd+ef=gh:ij\u00e9\"; ascii \"sk-ab/cd+ef=gh:ij\\u00e9\"; "
      "url sk-ab%2Fcd%2Bef%3Dgh%3Aij%C3%A9; lower sk-ab%2fcd%2bef%3dgh%3aij%c3%a9; "
      "base64 c2stYWIvY2QrZWY9Z2g6aWrDqQ; url-safe c2stYWIvY2QrZWY9Z2g6aWrDqQ";
  FakeServer server({}, Scripted{400, "bad request; you sent " + echoed});
  const ModelSpec spec = spec_for("openai", server.url("/v1"));  // sets the test's usual key
  setenv(kKeyEnv, key.c_str(), 1);
  const Reply reply = make_provider(spec)->complete(conversation());
  setenv(kKeyEnv, kKey, 1);
  for (const char* form :
       {"sk-ab\\/cd", "sk-ab/cd", "ij\\u00e9", "sk-ab%2Fcd", "sk-ab%2fcd", "c2stYWIvY2QrZWY9Z2g6aWrDqQ"})
    EXPECT_EQ(reply.response_body.find(form), std::string::npos) << form << "\n" << reply.response_body;
  EXPECT_NE(reply.response_body.find("json \"[key redacted]\"; ascii \"[key redacted]\"; url [key redacted]; "
                                     "lower [key redacted]; base64 [key redacted]"),
            std::string::npos)
      << reply.response_body;
  EXPECT_EQ(reply.error.find("sk-ab"), std::string::npos) << reply.error;
}

// A model may repeat the key (a prompt that leaked it, a reply quoting its context). What is kept of an
// answer has it redacted as an error page does: the text, the raw body with its reasoning, and a refusal's
// error.
TEST(LlmProvider, TheKeyIsRedactedFromAnswersAndReasoning) {
  const std::string quoting = std::string("the key is ") + kKey + ", once more: " + kKey;
  const auto reasoning_quoting = [&](std::string body) {
    return body.replace(body.find("SECRET REASONING"), 16, quoting);
  };
  const struct {
    std::string provider, prefix, body;
    bool answered;
  } cases[] = {
      {"openai", "/v1", openai_ok(quoting), true},
      {"anthropic", "/v1", reasoning_quoting(anthropic_ok(quoting)), true},
      {"gemini", "/v1beta", reasoning_quoting(gemini_ok(quoting)), true},
      {"openai", "/v1",
       json{{"choices",
             {{{"message", {{"content", nullptr}, {"refusal", quoting}}}, {"finish_reason", "stop"}}}}}
           .dump(),
       false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.provider + ": " + c.body);
    FakeServer server({}, ok_reply(c.body));
    const Reply reply = make_provider(spec_for(c.provider, server.url(c.prefix)))->complete(conversation());
    EXPECT_EQ(reply.ok, c.answered) << reply.error;
    for (const std::string* kept : {&reply.text, &reply.error, &reply.response_body})
      EXPECT_EQ(kept->find(kKey), std::string::npos) << *kept;
    const std::string& answer = c.answered ? reply.text : reply.error;
    EXPECT_NE(answer.find("the key is [key redacted], once more: [key redacted]"), std::string::npos)
        << answer;
    EXPECT_NE(reply.response_body.find("[key redacted]"), std::string::npos) << reply.response_body;
  }
}

TEST(LlmRetry, GivesUpAfterMaxAttempts) {
  FakeServer server({}, Scripted{503, R"({"error":{"message":"overloaded"}})"});
  ModelSpec spec = spec_for("anthropic", server.url("/v1"));
  spec.max_attempts = 3;
  const Reply reply = make_provider(spec)->complete(conversation());
  EXPECT_FALSE(reply.ok);
  EXPECT_EQ(reply.attempts, 3);
  EXPECT_EQ(reply.http_status, 503);
  EXPECT_EQ(server.requests().size(), 3u);
  EXPECT_NE(reply.error.find("overloaded"), std::string::npos) << reply.error;
  EXPECT_NE(reply.error.find("gave up after 3 attempts"), std::string::npos) << reply.error;
  EXPECT_FALSE(reply.no_text) << "no answer at all";
}

TEST(LlmRetry, ConnectionRefusedIsRetried) {
  std::string url;
  {
    FakeServer gone;
    url = gone.url("/v1");
  }  // nothing listens there now
  ModelSpec spec = spec_for("gemini", url);
  spec.max_attempts = 2;
  const Reply reply = make_provider(spec)->complete(conversation());
  EXPECT_FALSE(reply.ok);
  EXPECT_EQ(reply.attempts, 2);
  EXPECT_EQ(reply.http_status, 0);
  EXPECT_NE(reply.error.find("onnect"), std::string::npos) << reply.error;
}

TEST(LlmRetry, ErrorObjectInsideHttp200IsRetriedWhenTransient) {
  // OpenRouter passes an upstream failure as HTTP 200 with an error object.
  FakeServer server({ok_reply(R"({"error":{"message":"upstream provider returned 502","code":502}})"),
                     ok_reply(openai_ok("done"))});
  const Reply reply = make_provider(spec_for("openai", server.url("/v1")))->complete(conversation());
  ASSERT_TRUE(reply.ok) << reply.error;
  EXPECT_EQ(reply.attempts, 2);
}

// --- HTTP 200 without text: a clear failure, not retried ---

TEST(LlmNoText, EachProviderReportsIt) {
  struct Case {
    std::string provider, prefix, body, expect;
  };
  const std::vector<Case> cases = {
      {"openai", "/v1", R"({"choices":[]})", "no choices"},
      {"openai", "/v1",
       R"({"choices":[{"message":{"role":"assistant","content":null,"refusal":"I cannot help"},
           "finish_reason":"content_filter"}]})",
       "I cannot help"},
      {"openai", "/v1",
       R"({"choices":[{"message":{"role":"assistant","content":""},"finish_reason":"length"}],
           "usage":{"prompt_tokens":5,"completion_tokens":4096,"completion_tokens_details":{"reasoning_tokens":4096}}})",
       "token limit"},
      {"anthropic", "/v1", R"({"type":"message","content":[{"type":"thinking","thinking":"hm"}],
           "stop_reason":"max_tokens","usage":{"input_tokens":3,"output_tokens":4096}})",
       "max_tokens"},
      {"gemini", "/v1beta", R"({"promptFeedback":{"blockReason":"SAFETY"}})", "blockReason SAFETY"},
      {"gemini", "/v1beta", R"({"candidates":[{"content":{"parts":[]},"finishReason":"RECITATION"}]})",
       "RECITATION"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.provider + ": " + c.body);
    FakeServer server({}, ok_reply(c.body));
    const Reply reply = make_provider(spec_for(c.provider, server.url(c.prefix)))->complete(conversation());
    EXPECT_FALSE(reply.ok);
    EXPECT_TRUE(reply.no_text) << "an answer, if an empty one";
    EXPECT_EQ(reply.attempts, 1);
    EXPECT_EQ(reply.http_status, 200);
    EXPECT_TRUE(reply.text.empty());
    EXPECT_NE(reply.error.find(c.expect), std::string::npos) << reply.error;
  }
}

TEST(LlmNoText, UsageIsKeptOnAFailedReply) {
  FakeServer server({}, ok_reply(R"({"choices":[{"message":{"content":""},"finish_reason":"length"}],
                                     "usage":{"prompt_tokens":5,"completion_tokens":99,
                                              "completion_tokens_details":{"reasoning_tokens":99}}})"));
  const Reply reply = make_provider(spec_for("openai", server.url("/v1")))->complete(conversation());
  EXPECT_FALSE(reply.ok);
  EXPECT_EQ(reply.usage.output_tokens, 99);
  EXPECT_EQ(reply.usage.reasoning_tokens, 99);
  EXPECT_EQ(reply.finish_reason, "length");
}

// --- concurrency ---

TEST(LlmConcurrency, LimitIsSharedByAllProvidersOfAModel) {
  Scripted slow = ok_reply(openai_ok("done"));
  slow.delay_s = 0.1;
  FakeServer server({}, slow);
  ModelSpec spec = spec_for("openai", server.url("/v1"));
  spec.concurrency = 3;
  constexpr int kThreads = 9;
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&] {
      // A provider per thread, as separate agent trajectories would make.
      if (make_provider(spec)->complete(conversation()).ok) ++ok;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok, kThreads);
  EXPECT_EQ(server.requests().size(), static_cast<size_t>(kThreads));
  EXPECT_EQ(server.max_in_flight(), 3);  // never more, and not needlessly fewer
}

TEST(LlmConcurrency, OtherModelsAreNotHeldBack) {
  Scripted slow = ok_reply(openai_ok("done"));
  slow.delay_s = 0.1;
  FakeServer server({}, slow);
  ModelSpec a = spec_for("openai", server.url("/v1"));
  a.concurrency = 1;
  ModelSpec b = a;
  b.name += "-other";
  std::vector<std::thread> threads;
  for (const ModelSpec* s : {&a, &a, &b, &b})
    threads.emplace_back([s] { make_provider(*s)->complete(conversation()); });
  for (auto& t : threads) t.join();
  EXPECT_EQ(server.max_in_flight(), 2);
}

// --- providers from the catalogue ---

TEST(LlmProvider, MissingKeyIsRejected) {
  ModelSpec spec = spec_for("openai", "http://127.0.0.1:9/v1");
  spec.api_key_env = "PTXBENCH_TEST_LLM_KEY_THAT_IS_NOT_SET";
  unsetenv(spec.api_key_env.c_str());
  try {
    make_provider(spec);
    FAIL() << "a missing key was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("PTXBENCH_TEST_LLM_KEY_THAT_IS_NOT_SET"), std::string::npos)
        << e.what();
  }
}

TEST(LlmProvider, ReferenceAndUnknownProvidersAreRejected) {
  ModelSpec spec;
  spec.name = "reference";
  spec.provider = "reference";
  try {
    make_provider(spec);
    FAIL() << "reference got an HTTP provider";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("built-in"), std::string::npos) << e.what();
  }
  spec.provider = "cohere";
  EXPECT_THROW(make_provider(spec), std::invalid_argument);
}

TEST(LlmProvider, BadRoleFailsWithoutASend) {
  FakeServer server({}, ok_reply(openai_ok("x")));
  const Reply reply =
      make_provider(spec_for("openai", server.url("/v1")))->complete({"", {{"system", "not here"}}});
  EXPECT_FALSE(reply.ok);
  EXPECT_EQ(reply.attempts, 0);
  EXPECT_NE(reply.error.find("role"), std::string::npos) << reply.error;
  EXPECT_TRUE(server.requests().empty());
}

TEST(LlmHttp, RetryAfterValues) {
  EXPECT_EQ(parse_retry_after("1"), 1.0);
  EXPECT_EQ(parse_retry_after(" 120\r\n"), 120.0);
  EXPECT_EQ(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), 0.0);  // a date in the past: no wait
  EXPECT_EQ(parse_retry_after("soon"), std::nullopt);
  EXPECT_EQ(parse_retry_after(""), std::nullopt);
}

// --- the catalogue ---

class LlmCatalogue : public testing::Test {
 protected:
  // Writes `content` as a catalogue file and returns the message load_model_catalogue throws ("" if none).
  std::string load_error(const std::string& content) {
    const auto path =
        std::filesystem::temp_directory_path() / ("ptxbench-models-" + std::to_string(::getpid()) + ".json");
    std::ofstream(path) << content;
    std::string message;
    try {
      load_model_catalogue(path.string());
    } catch (const ConfigError& e) {
      message = e.what();
    }
    std::filesystem::remove(path);
    return message;
  }
};

// --models names a file: a device such as /dev/zero is refused at once, not read without end.
TEST_F(LlmCatalogue, ACatalogueThatIsNoFileIsRefused) {
  try {
    load_model_catalogue("/dev/zero");
    ADD_FAILURE() << "/dev/zero was taken for a catalogue";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("/dev/zero"), std::string::npos) << e.what();
  }
}

TEST_F(LlmCatalogue, ShippedCatalogueLoads) {
  const auto catalogue = load_model_catalogue(PTXBENCH_SOURCE_DIR "/models.json");
  for (const char* name : {"reference", "gpt-5", "claude-opus-4", "gemini-2.5-pro", "qwen3-coder-local",
                           "glm-4.6-openrouter", "qwen3-coder-openrouter"})
    EXPECT_NO_THROW(find_model(catalogue, name)) << name;
  const ModelSpec& local = find_model(catalogue, "qwen3-coder-local");
  EXPECT_EQ(local.base_url, "http://localhost:8000/v1");
  EXPECT_TRUE(local.api_key_env.empty());
  EXPECT_NO_THROW(make_provider(local));  // no key needed
  EXPECT_EQ(find_model(catalogue, "claude-opus-4").base_url, "https://api.anthropic.com/v1");  // the default
  EXPECT_EQ(find_model(catalogue, "reference").provider, "reference");
  EXPECT_THROW(make_provider(find_model(catalogue, "reference")), std::invalid_argument);
  try {
    find_model(catalogue, "gpt-9");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("gpt-5"), std::string::npos) << e.what();
  }
}

TEST_F(LlmCatalogue, ErrorsNameFileEntryAndField) {
  const std::string ok = R"({"name":"a","provider":"openai","model_id":"m"})";
  EXPECT_EQ(load_error("[" + ok + "]"), "");
  EXPECT_EQ(load_error(R"([{"name":"w","provider":"openai","model_id":"m","context_tokens":131072}])"), "");
  struct Case {
    std::string entry, expect;
  };
  const std::vector<Case> cases = {
      {R"({"name":"b","provider":"openai","model_id":"m","max_token":5})",
       "entry 1 (\"b\"), field \"max_token\""},
      {R"({"name":"b","provider":"openai"})", "entry 1 (\"b\"), field \"model_id\": missing"},
      {R"({"name":"b","provider":"openai","model_id":"m","max_tokens":0})", "field \"max_tokens\""},
      {R"({"name":"b","provider":"openai","model_id":"m","extra_body":{"messages":[]}})",
       "field \"extra_body\": \"messages\" is set by ptxbench"},
      {R"({"name":"b","provider":"openai","model_id":"m","extra_headers":{"Authorization":"Bearer sk-1"}})",
       "carries a credential: give the key's variable as api_key_env"},
      {R"({"name":"b","provider":"openai","model_id":"m","extra_headers":{"X-Auth-Token":"abc"}})",
       "carries a credential"},
      {R"({"name":"b","provider":"openai","model_id":"m","extra_headers":{"X-Title":"a\r\nX: b"}})",
       "printable characters"},
      {R"({"name":"b","provider":"anthropic","model_id":"m","seed":1})", "takes no seed"},
      {R"({"name":"b","provider":"openai","model_id":"m","stop":["a","b","c","d","e"]})", "1 to 4 sequences"},
      {R"({"name":"b","provider":"openai","model_id":"m","top_p":1.5})", "field \"top_p\""},
      {R"({"name":"b","provider":"openai","model_id":"m","max_tokens":8000,"context_tokens":8000})",
       "field \"context_tokens\": must be more than max_tokens (8000)"},
      {R"({"name":"b","provider":"openai","model_id":"m","temperature":"hot"})", "field \"temperature\""},
      {R"({"name":"b","provider":"openai","model_id":"m","base_url":"localhost:8000"})",
       "field \"base_url\""},
      {R"({"name":"b","provider":"mistral","model_id":"m"})", "field \"provider\""},
      {R"({"provider":"openai","model_id":"m"})", "entry 1, field \"name\""},
      {R"({"name":"a","provider":"openai","model_id":"m"})", "taken by entry 0"},
      {R"({"name":"b","provider":"openai","model_id":"m","reasoning":{"budget_tokens":2000}})", "\"effort\""},
      {R"({"name":"b","provider":"anthropic","model_id":"m","max_tokens":4000,"reasoning":{"budget_tokens":8000}})",
       "budget_tokens"},
      {R"({"name":"b","provider":"anthropic","model_id":"m","temperature":0.5,"reasoning":{"budget_tokens":2000}})",
       "field \"temperature\""},
      {R"({"name":"b","provider":"gemini","model_id":"m","reasoning":{"effort":"high"}})", "thinking_budget"},
      {R"({"name":"b","provider":"reference","reasoning":{"effort":"high"}})", "no reasoning"},
      {R"("gpt-5")", "entry 1: must be an object"},
      {R"({"name":"b","provider":"openai","model_id":"m","model_id":"n"})", "[1].model_id: given twice"},
  };
  for (const auto& c : cases) {
    const std::string message = load_error("[" + ok + ",\n" + c.entry + "]");
    EXPECT_NE(message.find("ptxbench-models-"), std::string::npos) << c.entry << " -> " << message;
    EXPECT_NE(message.find(c.expect), std::string::npos) << c.entry << " -> " << message;
  }
  EXPECT_NE(load_error("{}").find("JSON array"), std::string::npos);
  EXPECT_NE(load_error("[{,]").find("not valid JSON"), std::string::npos);
  EXPECT_THROW(load_model_catalogue("/nonexistent/models.json"), ConfigError);
}

}  // namespace
}  // namespace ptxbench::llm
