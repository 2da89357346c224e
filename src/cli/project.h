// Where ptxbench finds its data: the project folder (tasks/, kits/, include/, solutions/) and the data folder
// (the results store and the compile cache).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace ptxbench {

struct ProjectPaths {
  std::filesystem::path root;  // holds tasks/, kits/, include/, solutions/
  std::filesystem::path data;  // holds ptxbench.db and cache/
  // $PTXBENCH_COMPILE_CACHE: a compile cache shared by several data folders; empty: the data folder's own.
  std::filesystem::path shared_compile_cache;

  std::filesystem::path tasks() const { return root / "tasks"; }
  std::filesystem::path solutions() const { return root / "solutions"; }
  std::filesystem::path store() const { return data / "ptxbench.db"; }
  std::filesystem::path compile_cache() const {
    return shared_compile_cache.empty() ? data / "cache" / "compile" : shared_compile_cache;
  }
  // The ABI header, the kit every architecture shares and the architecture's own, as a solution for `kit`
  // (e.g. "hopper") sees them.
  std::vector<std::filesystem::path> include_dirs(const std::string& kit) const;
};

// root: `root_option`, else $PTXBENCH_ROOT, else the source tree this binary was built from.
// data: `data_option`, else $PTXBENCH_DATA, else ./ptxbench-data. The compile cache: $PTXBENCH_COMPILE_CACHE,
// else the data folder's cache/compile.
ProjectPaths find_project(const std::string& root_option, const std::string& data_option);

}  // namespace ptxbench
