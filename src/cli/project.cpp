#include "cli/project.h"

#include <cstdlib>
#include <stdexcept>

#include "util/errors.h"

namespace ptxbench {

std::vector<std::filesystem::path> ProjectPaths::include_dirs(const std::string& kit) const {
  return {root / "include", root / "kits" / "common" / "ptx", root / "kits" / kit / "ptx"};
}

ProjectPaths find_project(const std::string& root_option, const std::string& data_option) {
  auto pick = [](const std::string& option, const char* variable, const std::string& fallback) {
    if (!option.empty()) return option;
    if (const char* value = std::getenv(variable); value && *value) return std::string(value);
    return fallback;
  };
  ProjectPaths paths;
  paths.root =
      std::filesystem::absolute(pick(root_option, "PTXBENCH_ROOT", PTXBENCH_SOURCE_DIR)).lexically_normal();
  paths.data =
      std::filesystem::absolute(pick(data_option, "PTXBENCH_DATA", "ptxbench-data")).lexically_normal();
  if (const char* cache = std::getenv("PTXBENCH_COMPILE_CACHE"); cache && *cache)
    paths.shared_compile_cache = std::filesystem::absolute(cache).lexically_normal();
  if (!std::filesystem::is_directory(paths.tasks()))
    throw ConfigError(paths.root.string() + " is not a ptxbench folder (no tasks/ in it); use --root");
  return paths;
}

}  // namespace ptxbench
