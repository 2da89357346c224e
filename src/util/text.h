// Text that crosses into JSON: model replies, compiler output and error pages are bytes, and may not be UTF-8
// (a Latin-1 page, a cut through a multi-byte character). Cutting here keeps whole characters, and printing
// JSON replaces what is still invalid, so such text never stops a verdict or a trajectory from being stored.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace ptxbench {

// The first / last at most `max_bytes` bytes of `text`, never cutting through a UTF-8 sequence.
std::string utf8_head(std::string_view text, size_t max_bytes);
std::string utf8_tail(std::string_view text, size_t max_bytes);

// json.dump(indent) with invalid UTF-8 replaced by U+FFFD rather than thrown on.
std::string json_text(const nlohmann::json& value, int indent = -1);
std::string json_text(const nlohmann::ordered_json& value, int indent = -1);

}  // namespace ptxbench
