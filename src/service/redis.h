// One connection to Redis through hiredis: a command is a list of arguments (binary-safe), its reply a value
// tree. A connection that failed is dropped and made again by the next command, so a Redis restart costs the
// commands sent while it was down (they throw RedisError), never the connection's owner.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

struct redisContext;

namespace ptxbench::service {

// Redis could not be reached, or answered a command with an error.
struct RedisError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct RedisValue {
  enum class Kind { nil, integer, string, array, status } kind = Kind::nil;
  int64_t integer = 0;
  std::string text;  // string or status
  std::vector<RedisValue> items;

  bool nil() const { return kind == Kind::nil; }
  // The text of a string (or status) reply; nothing for nil.
  std::optional<std::string> string() const;
  // An array reply of field, value pairs (HGETALL, a stream entry's fields) as a lookup; "" when absent.
  std::string field(const std::string& name) const;
};

// "redis://[:password@]host[:port]" or "host[:port]"; port 6379 by default.
struct RedisAddress {
  std::string host = "127.0.0.1";
  int port = 6379;
  std::string password;
  std::string describe() const;  // host:port, never the password
};
RedisAddress parse_redis_address(const std::string& text);  // throws std::invalid_argument

class Redis {
 public:
  explicit Redis(RedisAddress address, double timeout_s = 10);
  ~Redis();
  Redis(const Redis&) = delete;
  Redis& operator=(const Redis&) = delete;

  // Sends one command and waits for its reply. Throws RedisError when Redis cannot be reached (the
  // connection is dropped and made again next time) or answers with an error.
  RedisValue command(const std::vector<std::string>& argv);
  const RedisAddress& address() const { return address_; }

 private:
  void connect();
  RedisAddress address_;
  double timeout_s_;
  redisContext* context_ = nullptr;
};

}  // namespace ptxbench::service
