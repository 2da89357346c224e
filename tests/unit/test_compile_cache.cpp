// The compile cache's upkeep: least recently used entries go first, entries in use and compiles in progress
// stay.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "compile/cache.h"
#include "eval/settings.h"
#include "util/errors.h"
#include "util/files.h"

using namespace ptxbench;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

class CompileCache : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ptxbench-cache-" + std::to_string(getpid()) + "-" +
                                        testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // An entry of `megabytes` last used `age` ago, as compile_solution leaves it.
  fs::path entry(const std::string& key, int megabytes, std::chrono::seconds age) {
    const fs::path folder = dir_ / key;
    fs::create_directories(folder);
    write_file(folder / "solution.so", std::string(static_cast<size_t>(megabytes) << 20, 'x'));
    write_file(folder / "compile.json", "{}");
    fs::last_write_time(folder / "compile.json", fs::file_time_type::clock::now() - age);
    return folder;
  }
  // The work folder of a compile in progress (or of one that was killed), started `age` ago.
  fs::path work_folder(const std::string& name, std::chrono::seconds age) {
    const fs::path folder = dir_ / name;
    fs::create_directories(folder / "keep");
    write_file(folder / "solution.cu", "// a solution");
    fs::last_write_time(folder, fs::file_time_type::clock::now() - age);
    return folder;
  }

  fs::path dir_;
};

constexpr std::uintmax_t kMiB = 1 << 20;

}  // namespace

TEST_F(CompileCache, UsageCountsEntriesAndTheirBytes) {
  entry("a", 1, 10s);
  entry("b", 2, 10s);
  const CacheUsage usage = compile_cache_usage(dir_);
  EXPECT_EQ(usage.entries, 2);
  EXPECT_EQ(usage.bytes, 3 * kMiB + 4);  // the libraries and two "{}" records
  EXPECT_EQ(compile_cache_usage(dir_ / "absent").entries, 0);
}

TEST_F(CompileCache, PruningRemovesTheLeastRecentlyUsedUntilTheCacheFits) {
  const fs::path oldest = entry("oldest", 2, 72h), old = entry("old", 2, 48h),
                 recent = entry("recent", 2, 3h);
  const CachePruning pruned = prune_compile_cache(dir_, 5 * kMiB);
  EXPECT_EQ(pruned.before.entries, 3);
  EXPECT_EQ(pruned.removed.entries, 1);
  EXPECT_FALSE(fs::exists(oldest));
  EXPECT_TRUE(fs::exists(old));
  EXPECT_TRUE(fs::exists(recent));
  EXPECT_LE(compile_cache_usage(dir_).bytes, 5 * kMiB);

  EXPECT_EQ(prune_compile_cache(dir_, 5 * kMiB).removed.entries, 0) << "within its limit: nothing to do";
}

TEST_F(CompileCache, AnEntryUsedWithinTheLastHourIsNeverRemoved) {
  const fs::path stale = entry("stale", 2, 2h), in_use = entry("in-use", 2, 10min);
  const CachePruning pruned = prune_compile_cache(dir_, 0);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(in_use)) << "another evaluation may be about to load it";
  EXPECT_EQ(pruned.removed.entries, 1);
  EXPECT_EQ(pruned.over_limit_bytes, compile_cache_usage(dir_).bytes);
}

TEST_F(CompileCache, AKilledCompilesWorkFolderGoesAndOneInProgressStays) {
  const fs::path abandoned = work_folder("tmp-1234-00000000000000aa", 48h);
  const fs::path running = work_folder("tmp-1234-00000000000000bb", 1min);
  const CachePruning pruned = prune_compile_cache(dir_, std::uintmax_t{1} << 40);
  EXPECT_FALSE(fs::exists(abandoned));
  EXPECT_TRUE(fs::exists(running));
  EXPECT_EQ(pruned.removed.entries, 0) << "work folders are not entries";
  EXPECT_GT(pruned.removed.bytes, 0u);
}

TEST_F(CompileCache, WhatAKilledPruningLeftGoesAtTheNextOne) {
  const fs::path trash = dir_ / "trash-1234-00000000000000cc";
  fs::create_directories(trash);
  write_file(trash / "solution.so", "half deleted");
  const CachePruning pruned = prune_compile_cache(dir_, std::uintmax_t{1} << 40);
  EXPECT_FALSE(fs::exists(trash));
  EXPECT_EQ(pruned.removed.entries, 0);
}

TEST_F(CompileCache, ADiscardedEntryIsGoneAtOnce) {
  const fs::path doomed = entry("doomed", 1, 1h);
  EXPECT_TRUE(discard_cache_entry(doomed));
  EXPECT_FALSE(fs::exists(doomed));
  EXPECT_EQ(compile_cache_usage(dir_).bytes, 0u);
  EXPECT_FALSE(discard_cache_entry(doomed)) << "nothing left to move";
}

TEST_F(CompileCache, MarkingAnEntryUsedRenewsItsPlace) {
  const fs::path first = entry("first", 2, 72h), second = entry("second", 2, 48h);
  mark_cache_entry_used(first);
  prune_compile_cache(dir_, 3 * kMiB, 0s);
  EXPECT_TRUE(fs::exists(first));
  EXPECT_FALSE(fs::exists(second));
}

TEST_F(CompileCache, TheLimitComesFromTheEnvironmentAndABadOneIsAConfigError) {
  auto limit = [](const char* value) {
    return host_settings([value](const char* name) -> std::optional<std::string> {
             if (std::string(name) == "PTXBENCH_CACHE_LIMIT_MB" && value) return value;
             return std::nullopt;
           })
        .compile_cache_limit;
  };
  EXPECT_EQ(limit(nullptr), std::uintmax_t{4} << 30);
  EXPECT_EQ(limit("100"), 100 * kMiB);
  for (const char* bad : {"lots", "-5", "10x", " 7"}) EXPECT_THROW(limit(bad), ConfigError) << bad;
}
