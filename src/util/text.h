// Text that crosses into JSON: model replies, compiler output and error pages are bytes, and may not be UTF-8
// (a Latin-1 page, a cut through a multi-byte character). Cutting here keeps whole characters, tool output is
// made valid before it becomes verdict text, and printing JSON replaces what is still invalid, so such text
// never stops a verdict or a trajectory from being stored.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace ptxbench {

// The first / last at most `max_bytes` bytes of `text`, never cutting through a UTF-8 sequence.
std::string utf8_head(std::string_view text, size_t max_bytes);
std::string utf8_tail(std::string_view text, size_t max_bytes);

// `text` with each invalid UTF-8 sequence (a Latin-1 byte, a character cut short, an encoded surrogate)
// replaced by U+FFFD, one per maximal invalid subpart as Unicode recommends (and as json_text does): the text
// around it is kept. Valid text comes back unchanged.
std::string valid_utf8(std::string_view text);
// `value` with valid_utf8 applied to every string in it, object keys included.
nlohmann::json with_valid_utf8(const nlohmann::json& value);

// `text` without its leading and trailing blanks (spaces, tabs, '\r', '\n'): a view into `text`, and a copy.
std::string_view trim_view(std::string_view text);
std::string trim(std::string_view text);

// The lines of `text`, without their '\n' (a last line without one counts; an empty text has none).
std::vector<std::string> split_lines(const std::string& text);
// The parts of `text` between the `separator`s ("a,,b" is "a", "", "b"; "" is one empty part).
std::vector<std::string> split(const std::string& text, char separator);

// json.dump(indent) with invalid UTF-8 replaced by U+FFFD rather than thrown on.
std::string json_text(const nlohmann::json& value, int indent = -1);
std::string json_text(const nlohmann::ordered_json& value, int indent = -1);

}  // namespace ptxbench
