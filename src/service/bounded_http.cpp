#include "service/bounded_http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace ptxbench::service {

namespace {

using Clock = std::chrono::steady_clock;

int milliseconds(Clock::duration d) {
  return static_cast<int>(
      std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::milliseconds>(d).count()));
}

// poll() for `events` up to `timeout_ms`; whether they came.
bool wait_for(socket_t sock, short events, int timeout_ms) {
  pollfd fd{.fd = sock, .events = events, .revents = 0};
  int n;
  do {
    n = ::poll(&fd, 1, timeout_ms);
  } while (n < 0 && errno == EINTR);
  return n > 0 && (fd.revents & (events | POLLHUP | POLLERR)) != 0;
}

void address_of(socket_t sock, bool peer, std::string& ip, int& port) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  const int got = peer ? ::getpeername(sock, reinterpret_cast<sockaddr*>(&address), &length)
                       : ::getsockname(sock, reinterpret_cast<sockaddr*>(&address), &length);
  ip.clear();
  port = -1;
  if (got != 0) return;
  char text[INET6_ADDRSTRLEN] = {};
  if (address.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&address);
    ::inet_ntop(AF_INET, &v4->sin_addr, text, sizeof(text));
    port = ntohs(v4->sin_port);
  } else if (address.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&address);
    ::inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof(text));
    port = ntohs(v6->sin6_port);
  }
  ip = text;
}

// A connection's stream, buffered as httplib's own (its header parser reads a byte at a time), whose reads
// end at the current request's deadline as well as at the per-read time-out.
class DeadlineStream final : public httplib::Stream {
 public:
  DeadlineStream(socket_t sock, Clock::duration read_timeout, Clock::duration write_timeout)
      : sock_(sock), read_timeout_(read_timeout), write_timeout_(write_timeout) {}

  void start_request(Clock::duration allowed) { deadline_ = Clock::now() + allowed; }
  bool buffered() const { return begin_ < end_; }

  bool is_readable() const override { return buffered() || wait_for(sock_, POLLIN, read_wait_ms()); }
  bool is_writable() const override { return wait_for(sock_, POLLOUT, milliseconds(write_timeout_)); }

  ssize_t read(char* ptr, size_t size) override {
    if (!buffered()) {
      if (!wait_for(sock_, POLLIN, read_wait_ms())) return -1;  // the per-read time-out or the deadline
      ssize_t n;
      do {
        n = ::recv(sock_, buffer_, sizeof(buffer_), 0);
      } while (n < 0 && errno == EINTR);
      if (n <= 0) return n;
      begin_ = 0;
      end_ = static_cast<size_t>(n);
    }
    const size_t n = std::min(size, end_ - begin_);
    std::memcpy(ptr, buffer_ + begin_, n);
    begin_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!is_writable()) return -1;
    ssize_t n;
    do {
      n = ::send(sock_, ptr, size, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    return n;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    address_of(sock_, true, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    address_of(sock_, false, ip, port);
  }
  socket_t socket() const override { return sock_; }

 private:
  int read_wait_ms() const {
    return std::min(milliseconds(read_timeout_), milliseconds(deadline_ - Clock::now()));
  }

  socket_t sock_;
  Clock::duration read_timeout_, write_timeout_;
  Clock::time_point deadline_ = Clock::time_point::max();
  char buffer_[4096];
  size_t begin_ = 0, end_ = 0;
};

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

}  // namespace

bool BoundedServer::widen_backlog() {
  return svr_sock_ != INVALID_SOCKET && ::listen(svr_sock_, SOMAXCONN) == 0;
}

bool BoundedServer::admit(const std::string& peer) {
  std::lock_guard lock(mutex_);
  int& held = connections_[peer];
  if (bounds_.connections_per_peer > 0 && held >= bounds_.connections_per_peer) {
    if (held == 0) connections_.erase(peer);
    return false;
  }
  ++held;
  return true;
}

void BoundedServer::leave(const std::string& peer) {
  std::lock_guard lock(mutex_);
  if (--connections_[peer] <= 0) connections_.erase(peer);
}

bool BoundedServer::process_and_close_socket(socket_t sock) {
  std::string peer;
  int peer_port = -1;
  address_of(sock, true, peer, peer_port);
  DeadlineStream stream(
      sock, std::chrono::seconds(read_timeout_sec_) + std::chrono::microseconds(read_timeout_usec_),
      std::chrono::seconds(write_timeout_sec_) + std::chrono::microseconds(write_timeout_usec_));
  bool ok = false;
  if (!admit(peer)) {
    // Said in one write and closed: nothing of the request is read.
    const std::string body =
        fmt::format("{{\"error\": \"{} connections from {} are open already: close one, or wait\"}}\n",
                    bounds_.connections_per_peer, peer);
    const std::string answer = fmt::format(
        "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nContent-Length: {}\r\n"
        "Connection: close\r\n\r\n{}",
        body.size(), body);
    stream.write(answer.data(), answer.size());
  } else {
    struct Left {
      BoundedServer& server;
      const std::string& peer;
      ~Left() { server.leave(peer); }
    } left_when_done{*this, peer};
    // As httplib's keep-alive loop: each request awaited up to the keep-alive time-out, the last one of
    // keep_alive_max_count_ answered with "Connection: close"; and each one's reading ends at its deadline.
    for (size_t left = keep_alive_max_count_; left > 0 && svr_sock_ != INVALID_SOCKET; --left) {
      if (!stream.buffered() && !wait_for(sock, POLLIN, static_cast<int>(keep_alive_timeout_sec_ * 1000)))
        break;
      stream.start_request(seconds(bounds_.request_read_s));
      bool closed = false;
      ok = process_request(stream, left == 1, closed, [&](httplib::Request& req) {
        stream.get_remote_ip_and_port(req.remote_addr, req.remote_port);
        stream.get_local_ip_and_port(req.local_addr, req.local_port);
      });
      if (!ok || closed) break;
    }
  }
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ok;
}

}  // namespace ptxbench::service
