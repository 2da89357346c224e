// JSON documents that people write (task files, the model catalogue), read strictly: a key given twice in one
// object is an error rather than the last value silently winning, as a plain JSON parser would let it.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "util/errors.h"

namespace ptxbench {

// A JSON file that cannot be read or breaks the rules: names the file, where in it ("shapes.check[1].M", or
// "(document)" for the whole), and what is wrong.
struct JsonFileError : ConfigError {
  JsonFileError(const std::filesystem::path& file, const std::string& where, const std::string& problem);
  std::filesystem::path file;
  std::string where;
  std::string problem;
};

// The largest JSON file read: a task, a manifest, a model catalogue, a fixit spec is kilobytes.
inline constexpr size_t kMaxJsonFileBytes = size_t{64} << 20;
// Throws JsonFileError for a document that is not JSON or repeats a key; ConfigError when it cannot be read,
// is not a regular file (a folder, a device such as /dev/zero, a pipe) or holds over kMaxJsonFileBytes.
nlohmann::json read_json_file(const std::filesystem::path& file);
// The same rules for a document held in memory (a request's body); `name` stands for the file in the error
// ("request body: (document): not valid JSON: ...").
nlohmann::json parse_json_text(const std::string& text, const std::string& name);

}  // namespace ptxbench
