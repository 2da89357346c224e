// `ptxbench serve`: the evaluation service's HTTP JSON API in front of the Redis job streams (jobs.h). It
// holds nothing itself: every job, state and verdict is in Redis (append-only file on), so the service can
// be restarted, or several run side by side, without a job being lost. docs/service.md has the API.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "service/jobs.h"
#include "service/redis.h"
#include "arch/profile.h"

namespace ptxbench::service {

// What one client may take of the service (bounded_http.h): httplib's own read time-out is per recv().
struct ConnectionBounds {
  double request_read_s = 30;     // the most a request's reading may take, from its first byte awaited
  int connections_per_peer = 16;  // connections one IP address holds at once (0: no bound)
};

struct ServerSettings {
  std::string host = "127.0.0.1";
  int port = 8080;    // 0: any free port (bind() says which)
  std::string token;  // every request but GET /v1/health must carry "Authorization: Bearer <token>"
  size_t max_body_bytes = size_t{4} << 20;  // a 1 MiB source, escaped in JSON, fits with room
  RedisAddress redis;
  double max_wait_s = 60;   // the longest ?wait= a verdict request may hold its connection
  int threads = 64;         // requests served at once (long polls hold one each)
  ConnectionBounds bounds;  // a request's reading, and one client's connections (bounded_http.h)
};

class Server {
 public:
  Server(ServerSettings settings, const TaskRegistry& registry);
  ~Server();
  // Binds the address; returns the port. Throws std::runtime_error when it cannot.
  int bind();
  // Serves until stop() (from another thread or a signal handler's thread).
  void listen();
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ptxbench::service
