#include "service/server.h"

#include <httplib.h>
#include <openssl/crypto.h>

#include <fmt/format.h>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "eval/evaluate.h"
#include "service/bounded_http.h"

namespace ptxbench::service {

using nlohmann::json;

namespace {

void reply(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump() + "\n", "application/json");
}

void refuse(httplib::Response& res, int status, const std::string& message) {
  reply(res, status, json{{"error", message}});
}

// Idle Redis connections for the request threads (a hiredis connection serves one thread at a time).
class RedisPool {
 public:
  explicit RedisPool(RedisAddress address) : address_(std::move(address)) {}
  struct Lease {
    RedisPool& pool;
    std::unique_ptr<Redis> redis;
    ~Lease() { pool.give_back(std::move(redis)); }
  };
  Lease lease() {
    std::lock_guard lock(mutex_);
    if (idle_.empty()) return {*this, std::make_unique<Redis>(address_)};
    std::unique_ptr<Redis> redis = std::move(idle_.back());
    idle_.pop_back();
    return {*this, std::move(redis)};
  }

 private:
  void give_back(std::unique_ptr<Redis> redis) {
    std::lock_guard lock(mutex_);
    idle_.push_back(std::move(redis));
  }
  RedisAddress address_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Redis>> idle_;
};

std::string over_the_body_limit(size_t limit) {
  return fmt::format("the request body is over the limit of {} bytes", limit);
}

bool token_matches(const std::string& header, const std::string& token) {
  const std::string prefix = "Bearer ";
  if (!header.starts_with(prefix)) return false;
  const std::string given = header.substr(prefix.size());
  return given.size() == token.size() && CRYPTO_memcmp(given.data(), token.data(), token.size()) == 0;
}

}  // namespace

struct Server::Impl {
  ServerSettings settings;
  const TaskRegistry& registry;
  RedisPool redis;
  BoundedServer http;

  Impl(ServerSettings s, const TaskRegistry& r)
      : settings(std::move(s)), registry(r), redis(settings.redis), http(settings.bounds) {
    http.new_task_queue = [threads = settings.threads] { return new httplib::ThreadPool(threads); };
    http.set_payload_max_length(settings.max_body_bytes);
    http.set_pre_routing_handler([this](const auto& req, auto& res) { return admit(req, res); });
    http.set_error_handler(
        [limit = settings.max_body_bytes](const httplib::Request&, httplib::Response& res) {
          if (!res.body.empty()) return;  // a handler's own answer
          const std::string what = res.status == 413   ? over_the_body_limit(limit)
                                   : res.status == 404 ? "no such endpoint (docs/service.md lists them)"
                                   : res.status == 400 ? "the request could not be read"
                                                       : "the request failed";
          refuse(res, res.status, what);
        });
    http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr error) {
      try {
        std::rethrow_exception(error);
      } catch (const RedisError& e) {
        refuse(res, 503, fmt::format("the job store is not reachable now, try again: {}", e.what()));
      } catch (const std::exception& e) {
        refuse(res, 500, fmt::format("internal error: {}", e.what()));
      } catch (...) {
        refuse(res, 500, "internal error");
      }
    });
    routes();
  }

  // Before a body is read: the token, and a body of known size (a chunked one has none to check against the
  // limit, so it is refused). httplib reads and drops a body over the limit and answers 413.
  httplib::Server::HandlerResponse admit(const httplib::Request& req, httplib::Response& res) {
    using R = httplib::Server::HandlerResponse;
    if (req.path == "/v1/health") return R::Unhandled;
    if (!token_matches(req.get_header_value("Authorization"), settings.token)) {
      res.set_header("WWW-Authenticate", "Bearer");
      refuse(res, 401, "missing or wrong bearer token (Authorization: Bearer <token>)");
      return R::Handled;
    }
    if (req.has_header("Transfer-Encoding")) {
      refuse(res, 411, "send the body with a Content-Length, not chunked");
      return R::Handled;
    }
    return R::Unhandled;
  }

  void routes() {
    http.Get("/v1/health", [this](const httplib::Request&, httplib::Response& res) {
      try {
        auto r = redis.lease();
        r.redis->command({"PING"});
        reply(res, 200, {{"status", "ok"}, {"redis", settings.redis.describe()}, {"judge", judge_version()}});
      } catch (const RedisError& e) {
        reply(res, 503, {{"status", "degraded"}, {"error", e.what()}});
      }
    });
    http.Get("/v1/tasks", [this](const httplib::Request&, httplib::Response& res) {
      json ids = json::array();
      for (const Task& task : registry.all()) ids.push_back(task.id);
      reply(res, 200, {{"tasks", ids}});
    });
    // The body is read here, whatever its Content-Type says: httplib would parse a form's
    // (application/x-www-form-urlencoded, curl's default for --data) into parameters, and refuse one over 8
    // KB.
    http.Post("/v1/jobs", [this](const httplib::Request& req, httplib::Response& res,
                                 const httplib::ContentReader& content) {
      if (req.is_multipart_form_data())
        return refuse(res, 415, "send the job as a JSON body, not as a multipart form");
      std::string body;
      bool over = false;
      const bool read = content([&](const char* data, size_t size) {
        over = body.size() + size > settings.max_body_bytes;
        if (!over) body.append(data, size);
        return !over;
      });
      if (over || res.status == 413) return refuse(res, 413, over_the_body_limit(settings.max_body_bytes));
      if (!read) return refuse(res, 400, "the request body could not be read");
      submit(body, res);
    });
    http.Get(R"(/v1/jobs/([0-9a-f]{32}))", [this](const httplib::Request& req, httplib::Response& res) {
      auto r = redis.lease();
      JobQueue queue(*r.redis);
      const auto status = queue.status(req.matches[1], false);
      if (!status) return refuse(res, 404, fmt::format("no job {}", std::string(req.matches[1])));
      reply(res, 200, status->to_json(false));
    });
    http.Get(R"(/v1/jobs/([0-9a-f]{32})/verdict)",
             [this](const httplib::Request& req, httplib::Response& res) { verdict(req, res); });
    http.Delete(R"(/v1/jobs/([0-9a-f]{32}))", [this](const httplib::Request& req, httplib::Response& res) {
      auto r = redis.lease();
      JobQueue queue(*r.redis);
      const auto state = queue.cancel(req.matches[1]);
      if (!state) return refuse(res, 404, fmt::format("no job {}", std::string(req.matches[1])));
      if (*state != JobState::cancelled)
        return reply(res, 409,
                     {{"error", fmt::format("the job is {}: it cannot be cancelled", to_string(*state))},
                      {"state", to_string(*state)}});
      reply(res, 200, {{"id", std::string(req.matches[1])}, {"state", "cancelled"}});
    });
    http.Get("/v1/workers", [this](const httplib::Request&, httplib::Response& res) {
      auto r = redis.lease();
      JobQueue queue(*r.redis);
      reply(res, 200, {{"workers", queue.workers()}});
    });
  }

  void submit(const std::string& body, httplib::Response& res) {
    JobRequest request;
    try {
      request = parse_job_request(body, registry);
    } catch (const RequestError& e) {
      return refuse(res, e.status, e.what());
    }
    auto r = redis.lease();
    JobQueue queue(*r.redis);
    const Submitted submitted = queue.submit(request, *registry.find(request.task));
    res.set_header("Location", "/v1/jobs/" + submitted.id);
    if (submitted.state == JobState::done) {
      // The verdict of an identical submission: the answer at once.
      const auto status = queue.status(submitted.id, true);
      json doc = status->to_json(true);
      doc["cached"] = true;
      return reply(res, 200, doc);
    }
    reply(res, 202,
          {{"id", submitted.id}, {"state", to_string(submitted.state)}, {"created", submitted.created}});
  }

  // The verdict when there is one; with ?wait=S, waits up to S seconds for it.
  void verdict(const httplib::Request& req, httplib::Response& res) {
    double wait_s = 0;
    if (req.has_param("wait")) {
      const std::string text = req.get_param_value("wait");
      char* end = nullptr;
      wait_s = std::strtod(text.c_str(), &end);
      if (text.empty() || *end || !std::isfinite(wait_s) || wait_s < 0 || wait_s > settings.max_wait_s)
        return refuse(res, 400,
                      fmt::format("wait must be a number of seconds from 0 to {:g}", settings.max_wait_s));
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
    auto r = redis.lease();
    JobQueue queue(*r.redis);
    for (auto pause = std::chrono::milliseconds(20);;
         pause = std::min(pause * 2, std::chrono::milliseconds(250))) {
      const auto status = queue.status(req.matches[1], false);
      if (!status) return refuse(res, 404, fmt::format("no job {}", std::string(req.matches[1])));
      if (status->state == JobState::done)
        return reply(res, 200, queue.status(req.matches[1], true)->to_json(true));
      if (status->state == JobState::cancelled || status->state == JobState::dead) {
        json doc = status->to_json(false);
        doc["error"] = status->state == JobState::cancelled ? "the job was cancelled: it has no verdict"
                                                            : "the job has no verdict: " + status->error;
        return reply(res, 409, doc);
      }
      if (std::chrono::steady_clock::now() >= deadline) return reply(res, 202, status->to_json(false));
      std::this_thread::sleep_for(pause);
    }
  }
};

Server::Server(ServerSettings settings, const TaskRegistry& registry)
    : impl_(std::make_unique<Impl>(std::move(settings), registry)) {}

Server::~Server() = default;

int Server::bind() {
  auto& s = impl_->settings;
  if (s.port == 0) {
    s.port = impl_->http.bind_to_any_port(s.host);
  } else if (!impl_->http.bind_to_port(s.host, s.port)) {
    s.port = -1;
  }
  if (s.port >= 0 && !impl_->http.widen_backlog())
    throw std::runtime_error(fmt::format("cannot listen on {}:{}: {}", s.host, s.port, std::strerror(errno)));
  if (s.port < 0)
    throw std::runtime_error(
        fmt::format("cannot listen on {}: the address is taken or not "
                    "this host's",
                    s.host));
  return s.port;
}

void Server::listen() {
  impl_->http.listen_after_bind();
}

void Server::stop() {
  impl_->http.stop();
}

}  // namespace ptxbench::service
