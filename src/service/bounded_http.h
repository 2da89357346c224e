// httplib's server with the bounds a service facing untrusted clients needs, which httplib 0.11 lacks: its
// read time-out is per recv(), so a client that sends one header line every few seconds holds a request
// thread for as long as it likes, and enough of them hold them all (64 such connections left /v1/health
// unanswered). Here each request's reading (its request line, headers and body) ends at a deadline, and one
// peer holds at most so many connections at once; the others are answered 429 at once and closed.
#pragma once

#include <httplib.h>

#include <map>
#include <mutex>
#include <string>

#include "service/server.h"

namespace ptxbench::service {

class BoundedServer final : public httplib::Server {
 public:
  explicit BoundedServer(ConnectionBounds bounds) : bounds_(bounds) {}

  // After bind_to_port: the bound socket's queue of connections not yet accepted made as long as the system
  // allows (SOMAXCONN, which the kernel caps at net.core.somaxconn). httplib listens with a queue of 5, and a burst of clients past it has its SYNs
  // dropped: each such connection is made only at the client's retransmission, 1, 3 or 7 s later.
  bool widen_backlog();

 private:
  // httplib's accept loop hands each connection here, on a thread of its task queue: the keep-alive loop
  // of httplib's own, over a stream whose reads end at the request's deadline.
  bool process_and_close_socket(socket_t sock) override;
  bool admit(const std::string& peer);
  void leave(const std::string& peer);

  ConnectionBounds bounds_;
  std::mutex mutex_;
  std::map<std::string, int> connections_;  // by peer address
};

}  // namespace ptxbench::service
