#include "compile/cache.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "util/errors.h"

namespace ptxbench {
namespace fs = std::filesystem;

namespace {

constexpr const char* kRecord = "compile.json";  // written last, so its age is the entry's last use
constexpr const char* kWorkPrefix = "tmp-";      // a compile in progress (compile.cpp's fresh_work_dir)
// A compile runs for minutes at most (its time limit); a work folder this old belongs to a killed process.
constexpr auto kAbandonedAfter = std::chrono::hours(24);

std::uintmax_t folder_bytes(const fs::path& dir) {
  std::uintmax_t bytes = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    std::error_code file_ec;
    if (!it->is_regular_file(file_ec)) continue;
    if (const std::uintmax_t size = it->file_size(file_ec); !file_ec) bytes += size;
  }
  return bytes;
}

struct Entry {
  fs::path dir;
  fs::file_time_type last_use;
  std::uintmax_t bytes = 0;
  bool work_folder = false;
};

// Every folder in the cache; a folder without a record (half removed, or foreign) counts as unused long ago.
std::vector<Entry> list_entries(const fs::path& cache_dir) {
  std::vector<Entry> entries;
  std::error_code ec;
  for (const auto& item : fs::directory_iterator(cache_dir, ec)) {
    if (!item.is_directory(ec)) continue;
    Entry entry{
        .dir = item.path(), .last_use = fs::file_time_type::min(), .bytes = folder_bytes(item.path())};
    entry.work_folder = item.path().filename().string().starts_with(kWorkPrefix);
    const fs::path stamp = entry.work_folder ? item.path() : item.path() / kRecord;
    if (auto time = fs::last_write_time(stamp, ec); !ec) entry.last_use = time;
    entries.push_back(std::move(entry));
  }
  return entries;
}

}  // namespace

std::uintmax_t compile_cache_limit() {
  const char* text = std::getenv("PTXBENCH_CACHE_LIMIT_MB");
  if (!text || !*text) return std::uintmax_t{4} << 30;
  const char* end = text + std::strlen(text);
  std::uintmax_t megabytes = 0;
  const auto parsed = std::from_chars(text, end, megabytes);
  if (parsed.ec != std::errc() || parsed.ptr != end || megabytes > (UINTMAX_MAX >> 20))
    throw ConfigError(std::string("PTXBENCH_CACHE_LIMIT_MB must be a whole number of megabytes, not '") +
                      text + "'");
  return megabytes << 20;
}

CacheUsage compile_cache_usage(const fs::path& cache_dir) {
  CacheUsage usage;
  for (const auto& entry : list_entries(cache_dir)) {
    usage.entries += entry.work_folder ? 0 : 1;
    usage.bytes += entry.bytes;
  }
  return usage;
}

CachePruning prune_compile_cache(const fs::path& cache_dir, std::uintmax_t limit_bytes,
                                 std::chrono::seconds keep_recent) {
  std::vector<Entry> entries = list_entries(cache_dir);
  CachePruning result;
  for (const auto& entry : entries) {
    result.before.entries += entry.work_folder ? 0 : 1;
    result.before.bytes += entry.bytes;
  }
  const auto now = fs::file_time_type::clock::now();
  auto remove = [&](const Entry& entry) {
    std::error_code ec;
    fs::remove_all(entry.dir, ec);
    if (ec) return;
    result.removed.entries += entry.work_folder ? 0 : 1;
    result.removed.bytes += entry.bytes;
  };

  std::erase_if(entries, [&](const Entry& entry) {
    if (!entry.work_folder) return false;
    if (now - entry.last_use > kAbandonedAfter) remove(entry);
    return true;  // a compile in progress: its folder is left alone
  });
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.last_use < b.last_use; });
  std::uintmax_t bytes = result.before.bytes - result.removed.bytes;
  for (const auto& entry : entries) {
    if (bytes <= limit_bytes) break;
    if (now - entry.last_use < keep_recent) {
      ++result.kept_in_use;
      continue;
    }
    const std::uintmax_t removed_before = result.removed.bytes;
    remove(entry);
    bytes -= result.removed.bytes - removed_before;
  }
  return result;
}

void mark_cache_entry_used(const fs::path& entry) {
  std::error_code ec;  // a read-only cache still serves hits; its entries just age
  fs::last_write_time(entry / kRecord, fs::file_time_type::clock::now(), ec);
}

}  // namespace ptxbench
