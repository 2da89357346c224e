#include <gtest/gtest.h>

#include <filesystem>

#include "store/store.h"

using namespace ptxbench;
namespace fs = std::filesystem;

namespace {

fs::path fresh_db(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("ptxbench-store-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(dir);
  return dir / "ptxbench.db";
}

Verdict verdict_for(const std::string& task, const std::string& hash, StageStatus correct) {
  Verdict v;
  v.task_id = task;
  v.arch = "sm_90a";
  v.submission_hash = hash;
  v.source_name = "s.cu";
  v.created_at = "2026-11-30T00:00:00Z";
  v.ptxbench_version = "test";
  v.host = "no GPU";
  v.stages = {{.name = "compile", .status = StageStatus::passed}, {.name = "correct", .status = correct}};
  if (correct == StageStatus::passed) v.speedup = 1.25;
  return v;
}

}  // namespace

TEST(Store, RoundTripsVerdictsAndSources) {
  const fs::path db = fresh_db("roundtrip");
  int64_t id = 0;
  {
    Store store(db);
    const int64_t run = store.begin_run("solutions", {{"tasks", "*"}});
    id = store.add_evaluation(verdict_for("task-a", "h1", StageStatus::passed), "source one", run);
    store.add_evaluation(verdict_for("task-b", "h1", StageStatus::failed), "source one", run);
    store.add_evaluation(verdict_for("task-b", "h2", StageStatus::failed), "source two");
    store.finish_run(run);
  }
  Store store(db);  // reopened: everything is on disk
  auto verdict = store.verdict(id);
  ASSERT_TRUE(verdict);
  EXPECT_EQ(verdict->task_id, "task-a");
  EXPECT_EQ(verdict->speedup, 1.25);
  EXPECT_EQ(store.source("h1"), "source one");
  EXPECT_EQ(store.source("h2"), "source two");
  EXPECT_FALSE(store.source("h3"));
  EXPECT_FALSE(store.verdict(9999));

  EXPECT_EQ(store.evaluations({}).size(), 3u);
  EXPECT_EQ(store.evaluations({.task_glob = "task-b"}).size(), 2u);
  const auto in_run = store.evaluations({.run_id = 1});
  ASSERT_EQ(in_run.size(), 2u);
  EXPECT_EQ(in_run[0].status, "failed");  // newest first
  EXPECT_EQ(in_run[1].status, "passed");
  EXPECT_EQ(in_run[1].speedup, 1.25);
  const auto runs = store.runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].evaluations, 2);
  EXPECT_FALSE(runs[0].finished_at.empty());
  EXPECT_EQ(runs[0].args["tasks"], "*");
}

TEST(Store, UsesWriteAheadLogging) {
  const fs::path db = fresh_db("wal");
  Store store(db);
  SQLite::Database raw(db.string());
  EXPECT_EQ(raw.execAndGet("PRAGMA journal_mode").getString(), "wal");
  EXPECT_EQ(raw.execAndGet("PRAGMA user_version").getInt(), Store::kSchemaVersion);
}

TEST(Store, RefusesANewerSchema) {
  const fs::path db = fresh_db("newer");
  { Store store(db); }
  {
    SQLite::Database raw(db.string(), SQLite::OPEN_READWRITE);
    raw.exec("PRAGMA user_version = 99");
  }
  EXPECT_THROW(Store{db}, std::runtime_error);
}

TEST(Store, TwoConnectionsCanWrite) {
  const fs::path db = fresh_db("two");
  Store a(db), b(db);
  a.add_evaluation(verdict_for("t", "x", StageStatus::passed), "x");
  b.add_evaluation(verdict_for("t", "x", StageStatus::passed), "x");
  EXPECT_EQ(a.evaluations({}).size(), 2u);
}
