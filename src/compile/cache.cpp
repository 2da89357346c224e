#include "compile/cache.h"

#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace ptxbench {
namespace fs = std::filesystem;

namespace {

constexpr const char* kRecord = "compile.json";  // written last, so its age is the entry's last use
constexpr const char* kWorkPrefix = "tmp-";      // a compile in progress (compile.cpp's fresh_work_dir)
constexpr const char* kTrashPrefix = "trash-";   // an entry being deleted (discard_cache_entry)
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

fs::file_time_type last_use_of(const fs::path& entry) {
  std::error_code ec;
  const auto time = fs::last_write_time(entry / kRecord, ec);
  return ec ? fs::file_time_type::min() : time;  // no record: half made or foreign, unused long ago
}

struct Folder {
  fs::path dir;
  std::uintmax_t bytes = 0;
  enum class Kind { entry, work, trash, lock } kind = Kind::entry;  // lock: a plain file (cache.h)
  fs::file_time_type last_use = fs::file_time_type::min();          // work folders and locks: when made
};

std::vector<Folder> list_folders(const fs::path& cache_dir) {
  std::vector<Folder> folders;
  std::error_code ec;
  for (const auto& item : fs::directory_iterator(cache_dir, ec)) {
    if (!item.is_directory(ec)) {
      if (item.path().filename().string().starts_with(kCompileLockPrefix))
        folders.push_back(
            {.dir = item.path(), .kind = Folder::Kind::lock, .last_use = item.last_write_time(ec)});
      continue;
    }
    const std::string name = item.path().filename().string();
    Folder folder{.dir = item.path(), .bytes = folder_bytes(item.path())};
    if (name.starts_with(kTrashPrefix)) {
      folder.kind = Folder::Kind::trash;
    } else if (name.starts_with(kWorkPrefix)) {
      folder.kind = Folder::Kind::work;
      if (const auto time = fs::last_write_time(item.path(), ec); !ec) folder.last_use = time;
    } else {
      folder.last_use = last_use_of(item.path());
    }
    folders.push_back(std::move(folder));
  }
  return folders;
}

}  // namespace

CacheUsage compile_cache_usage(const fs::path& cache_dir) {
  CacheUsage usage;
  for (const auto& folder : list_folders(cache_dir)) {
    usage.entries += folder.kind == Folder::Kind::entry ? 1 : 0;
    usage.bytes += folder.bytes;
  }
  return usage;
}

CachePruning prune_compile_cache(const fs::path& cache_dir, std::uintmax_t limit_bytes,
                                 std::chrono::seconds keep_recent) {
  std::vector<Folder> folders = list_folders(cache_dir);
  CachePruning result;
  for (const auto& folder : folders) {
    result.before.entries += folder.kind == Folder::Kind::entry ? 1 : 0;
    result.before.bytes += folder.bytes;
  }
  const auto now = fs::file_time_type::clock::now();
  auto removed = [&](const Folder& folder) {
    result.removed.entries += folder.kind == Folder::Kind::entry ? 1 : 0;
    result.removed.bytes += folder.bytes;
  };

  // What killed processes left: trash at once, a compile's work folder and its lock file after a day.
  std::erase_if(folders, [&](const Folder& folder) {
    if (folder.kind == Folder::Kind::entry) return false;
    std::error_code ec;
    if (folder.kind == Folder::Kind::trash || now - folder.last_use > kAbandonedAfter)
      if (fs::remove_all(folder.dir, ec); !ec) removed(folder);
    return true;
  });

  std::sort(folders.begin(), folders.end(),
            [](const Folder& a, const Folder& b) { return a.last_use < b.last_use; });
  std::uintmax_t bytes = result.before.bytes - result.removed.bytes;
  for (const auto& entry : folders) {
    if (bytes <= limit_bytes) break;
    // Oldest first, so from the first entry in use on all are. The record is read again: another process may
    // have used the entry since the listing.
    if (now - last_use_of(entry.dir) < keep_recent) break;
    if (!discard_cache_entry(entry.dir)) continue;
    removed(entry);
    bytes -= entry.bytes;
  }
  result.over_limit_bytes = bytes > limit_bytes ? bytes - limit_bytes : 0;
  return result;
}

void mark_cache_entry_used(const fs::path& entry) {
  std::error_code ec;  // a read-only cache still serves hits; its entries just age
  fs::last_write_time(entry / kRecord, fs::file_time_type::clock::now(), ec);
}

bool discard_cache_entry(const fs::path& entry) {
  thread_local std::mt19937_64 names{std::random_device{}()};
  const fs::path trash = entry.parent_path() / fmt::format("{}{}-{:016x}", kTrashPrefix, getpid(), names());
  std::error_code ec;
  fs::rename(entry, trash, ec);
  if (ec) return false;
  fs::remove_all(trash, ec);  // what is left goes at the next pruning
  return true;
}

}  // namespace ptxbench
