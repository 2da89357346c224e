// Upkeep of the compile cache (one folder per cache key, see compile.h). Each entry's last use is the
// modification time of its compile.json, renewed on every hit. Pruning removes the least recently used
// entries until the cache fits its limit, but never one used within `keep_recent`: an evaluation in another
// process may still be about to load it. It also removes the work folders of compiles that were killed
// midway.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>

namespace ptxbench {

// The lock file of a key's compile (compile.cpp: one compile of a key at a time across processes): an empty
// file beside the entries while the compile runs; one a killed process left is removed by pruning once it is
// a day old.
inline constexpr const char* kCompileLockPrefix = "lock-";

struct CacheUsage {
  int entries = 0;
  std::uintmax_t bytes = 0;
};

struct CachePruning {
  CacheUsage before;
  CacheUsage removed;                   // entries and bytes taken away, abandoned work folders included
  std::uintmax_t over_limit_bytes = 0;  // what is left above the limit: entries used too recently to remove
};

CacheUsage compile_cache_usage(const std::filesystem::path& cache_dir);

CachePruning prune_compile_cache(const std::filesystem::path& cache_dir, std::uintmax_t limit_bytes,
                                 std::chrono::seconds keep_recent = std::chrono::hours(1));

// Renews an entry's last use (compile_solution calls it on a hit).
void mark_cache_entry_used(const std::filesystem::path& entry);

// Takes an entry away at once (one rename, so that a reader never finds it half removed), then deletes it.
// Returns false when it could not be moved.
bool discard_cache_entry(const std::filesystem::path& entry);

}  // namespace ptxbench
