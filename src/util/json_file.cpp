#include "util/json_file.h"

#include <fmt/format.h>
#include <set>
#include <vector>

#include "util/files.h"

namespace ptxbench {

using nlohmann::json;

JsonFileError::JsonFileError(const std::filesystem::path& file_path, const std::string& where_in_file,
                             const std::string& what)
    : ConfigError(fmt::format("{}: {}: {}", file_path.string(), where_in_file, what)),
      file(file_path),
      where(where_in_file),
      problem(what) {}

namespace {

struct DuplicateKey {
  std::string path;
};

// A parser callback that follows the document's nesting, to find a key given twice in one object and to say
// where it is ("required[2].name"). The parser keeps no record of duplicates itself: it overwrites.
class DuplicateKeyCheck {
 public:
  bool operator()(int /*depth*/, json::parse_event_t event, const json& parsed) {
    using Event = json::parse_event_t;
    switch (event) {
      case Event::object_start:
      case Event::array_start:
        nesting_.push_back({.path = next_element_path(), .is_array = event == Event::array_start});
        break;
      case Event::object_end:
      case Event::array_end:
        nesting_.pop_back();
        break;
      case Event::key:
        add_key(parsed.get<std::string>());
        break;
      case Event::value:
        next_element_path();  // an array counts its plain values too
        break;
    }
    return true;  // keep everything: the check only watches
  }

 private:
  struct Level {
    std::string path;  // "" for the document itself
    bool is_array = false;
    size_t elements = 0;         // arrays: seen so far, the index of the next
    std::set<std::string> keys;  // objects: seen so far
    std::string last_key;
  };

  // The path of the element that begins now, in the level that holds it; in an array, it takes the next
  // index.
  std::string next_element_path() {
    if (nesting_.empty()) return "";
    Level& level = nesting_.back();
    if (level.is_array) return fmt::format("{}[{}]", level.path, level.elements++);
    return level.path.empty() ? level.last_key : fmt::format("{}.{}", level.path, level.last_key);
  }

  void add_key(const std::string& key) {
    Level& level = nesting_.back();
    level.last_key = key;
    if (!level.keys.insert(key).second) throw DuplicateKey{next_element_path()};
  }

  std::vector<Level> nesting_;
};

json parse_strictly(const std::string& text, const std::filesystem::path& file) {
  DuplicateKeyCheck check;
  try {
    // std::ref: the parser copies its callback, and the check's state must live across the whole document.
    return json::parse(text, std::ref(check));
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number such as 1e400
    throw JsonFileError(file, "(document)", fmt::format("not valid JSON: {}", e.what()));
  } catch (const DuplicateKey& duplicate) {
    throw JsonFileError(file, duplicate.path, "given twice in one object (each key may appear once)");
  }
}

}  // namespace

json read_json_file(const std::filesystem::path& file) {
  std::string text;
  try {
    text = read_regular_file(file, kMaxJsonFileBytes);
  } catch (const std::runtime_error& e) {
    throw ConfigError(e.what());  // read_file's message names the file and the reason
  }
  return parse_strictly(text, file);
}

json parse_json_text(const std::string& text, const std::string& name) {
  return parse_strictly(text, name);
}

}  // namespace ptxbench
