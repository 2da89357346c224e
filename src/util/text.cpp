#include "util/text.h"

#include <nlohmann/json.hpp>

namespace ptxbench {

namespace {
bool continuation(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}
}  // namespace

std::string utf8_head(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  size_t end = max_bytes;
  while (end > 0 && continuation(text[end])) --end;  // text[end] starts the first character left out
  return std::string(text.substr(0, end));
}

std::string utf8_tail(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  size_t begin = text.size() - max_bytes;
  while (begin < text.size() && continuation(text[begin])) ++begin;
  return std::string(text.substr(begin));
}

std::string json_text(const nlohmann::json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string json_text(const nlohmann::ordered_json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace ptxbench
