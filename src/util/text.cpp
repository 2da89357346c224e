#include "util/text.h"

#include <nlohmann/json.hpp>
#include <sstream>

namespace ptxbench {

namespace {
bool continuation(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

struct Sequence {
  size_t length = 1;
  bool valid = false;
};

// The UTF-8 sequence that `text` (not empty) starts with: its length when it is well formed, else the length
// of its maximal subpart, the longest start of a well-formed sequence (at least one byte). The ranges are
// Unicode's table of well-formed byte sequences: no overlong forms, surrogates or code points past U+10FFFF.
Sequence next_sequence(std::string_view text) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return {1, true};
  size_t trailing = 0;
  unsigned char low = 0x80, high = 0xBF;  // the range of the second byte; later ones are always 80..BF
  if (lead >= 0xC2 && lead <= 0xDF) {
    trailing = 1;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    trailing = 2;
    if (lead == 0xE0) low = 0xA0;   // overlong
    if (lead == 0xED) high = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    trailing = 3;
    if (lead == 0xF0) low = 0x90;   // overlong
    if (lead == 0xF4) high = 0x8F;  // past U+10FFFF
  } else {
    return {1, false};  // a continuation byte, C0, C1 or F5..FF: never a start
  }
  for (size_t i = 1; i <= trailing; ++i, low = 0x80, high = 0xBF)
    if (i >= text.size() || byte(i) < low || byte(i) > high) return {i, false};
  return {trailing + 1, true};
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

std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const Sequence sequence = next_sequence(text);
    out += sequence.valid ? text.substr(0, sequence.length) : kReplacement;
    text.remove_prefix(sequence.length);
  }
  return out;
}

nlohmann::json with_valid_utf8(const nlohmann::json& value) {
  if (value.is_string()) return valid_utf8(value.get_ref<const std::string&>());
  if (value.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& item : value) out.push_back(with_valid_utf8(item));
    return out;
  }
  if (value.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [key, item] : value.items()) out[valid_utf8(key)] = with_valid_utf8(item);
    return out;
  }
  return value;
}

std::string_view trim_view(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

std::string trim(std::string_view text) {
  return std::string(trim_view(text));
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts(1);
  for (const char c : text) {
    if (c == separator)
      parts.emplace_back();
    else
      parts.back() += c;
  }
  return parts;
}

std::string json_text(const nlohmann::json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string json_text(const nlohmann::ordered_json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace ptxbench
