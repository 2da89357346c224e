#include "service/redis.h"

#include <hiredis/hiredis.h>

#include <fmt/format.h>
#include <cmath>

namespace ptxbench::service {
namespace {

RedisValue value_of(const redisReply* reply) {
  RedisValue value;
  switch (reply->type) {
    case REDIS_REPLY_INTEGER:
      value.kind = RedisValue::Kind::integer;
      value.integer = reply->integer;
      break;
    case REDIS_REPLY_STRING:
      value.kind = RedisValue::Kind::string;
      value.text.assign(reply->str, reply->len);
      break;
    case REDIS_REPLY_STATUS:
      value.kind = RedisValue::Kind::status;
      value.text.assign(reply->str, reply->len);
      break;
    case REDIS_REPLY_ARRAY:
      value.kind = RedisValue::Kind::array;
      for (size_t i = 0; i < reply->elements; ++i) value.items.push_back(value_of(reply->element[i]));
      break;
    default:  // nil (errors are thrown before)
      break;
  }
  return value;
}

timeval timeval_of(double seconds) {
  const double whole = std::floor(seconds);
  return {static_cast<time_t>(whole), static_cast<suseconds_t>((seconds - whole) * 1e6)};
}

}  // namespace

std::optional<std::string> RedisValue::string() const {
  if (kind == Kind::string || kind == Kind::status) return text;
  return std::nullopt;
}

std::string RedisValue::field(const std::string& name) const {
  for (size_t i = 0; i + 1 < items.size(); i += 2)
    if (items[i].text == name) return items[i + 1].text;
  return "";
}

std::string RedisAddress::describe() const {
  return fmt::format("{}:{}", host, port);
}

RedisAddress parse_redis_address(const std::string& text) {
  std::string rest = text;
  RedisAddress address;
  if (rest.starts_with("redis://")) rest = rest.substr(8);
  if (const size_t at = rest.rfind('@'); at != std::string::npos) {
    std::string user_info = rest.substr(0, at);
    rest = rest.substr(at + 1);
    address.password = user_info.substr(user_info.find(':') == std::string::npos ? 0 : user_info.find(':') + 1);
  }
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  if (const size_t colon = rest.rfind(':'); colon != std::string::npos) {
    const std::string port = rest.substr(colon + 1);
    rest = rest.substr(0, colon);
    try {
      size_t used = 0;
      address.port = std::stoi(port, &used);
      if (used != port.size() || address.port <= 0 || address.port > 65535) throw std::out_of_range(port);
    } catch (const std::exception&) {
      throw std::invalid_argument(fmt::format("'{}' is not a Redis address: the port '{}' is not a number "
                                              "from 1 to 65535",
                                              text, port));
    }
  }
  if (rest.empty() || rest.find('/') != std::string::npos)
    throw std::invalid_argument(
        fmt::format("'{}' is not a Redis address (redis://[:password@]host[:port])", text));
  address.host = rest;
  return address;
}

Redis::Redis(RedisAddress address, double timeout_s) : address_(std::move(address)), timeout_s_(timeout_s) {}

Redis::~Redis() {
  if (context_) redisFree(context_);
}

void Redis::connect() {
  const timeval timeout = timeval_of(timeout_s_);
  context_ = redisConnectWithTimeout(address_.host.c_str(), address_.port, timeout);
  if (!context_ || context_->err) {
    const std::string why = context_ ? context_->errstr : "out of memory";
    if (context_) redisFree(context_);
    context_ = nullptr;
    throw RedisError(fmt::format("Redis at {} cannot be reached: {}", address_.describe(), why));
  }
  redisSetTimeout(context_, timeout);
  if (!address_.password.empty()) command({"AUTH", address_.password});
}

RedisValue Redis::command(const std::vector<std::string>& argv) {
  if (!context_) connect();
  std::vector<const char*> args;
  std::vector<size_t> lengths;
  for (const auto& a : argv) {
    args.push_back(a.data());
    lengths.push_back(a.size());
  }
  auto* reply = static_cast<redisReply*>(
      redisCommandArgv(context_, static_cast<int>(args.size()), args.data(), lengths.data()));
  if (!reply) {  // the connection failed: it cannot be used again
    const std::string why = context_->errstr;
    redisFree(context_);
    context_ = nullptr;
    throw RedisError(fmt::format("Redis at {} failed during {}: {}", address_.describe(), argv.front(), why));
  }
  const std::unique_ptr<redisReply, void (*)(void*)> owned(reply, freeReplyObject);
  if (reply->type == REDIS_REPLY_ERROR)
    throw RedisError(fmt::format("Redis at {} refused {}: {}", address_.describe(), argv.front(),
                                 std::string(reply->str, reply->len)));
  return value_of(reply);
}

}  // namespace ptxbench::service
