#include <gtest/gtest.h>

#include <filesystem>

#include <SQLiteCpp/SQLiteCpp.h>

#include "store/store.h"
#include "util/hash.h"

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

// `ptxbench results` while a run writes: opening an up-to-date store writes nothing, so it does not fail
// beside another connection's open write transaction.
TEST(Store, OpensWhileAnotherConnectionIsWriting) {
  const fs::path db = fresh_db("busy");
  { Store first(db); }
  SQLite::Database writer(db.string(), SQLite::OPEN_READWRITE);
  SQLite::Transaction writing(writer, SQLite::TransactionBehavior::IMMEDIATE);
  writer.exec("INSERT INTO runs (kind, started_at, args) VALUES ('solutions', 'now', '{}')");
  EXPECT_NO_THROW({
    Store reader(db);
    EXPECT_TRUE(reader.runs(10).empty()) << "the writer has not committed";
  });
  writing.commit();
}

TEST(Store, MigratesASchemaOneStoreKeepingItsRows) {
  const fs::path db = fresh_db("v1");
  fs::create_directories(db.parent_path());
  {
    // A store as schema 1 made it.
    SQLite::Database raw(db.string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    raw.exec(R"sql(
      CREATE TABLE submissions (hash TEXT PRIMARY KEY, source TEXT NOT NULL, first_seen TEXT NOT NULL);
      CREATE TABLE runs (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, started_at TEXT NOT NULL, finished_at TEXT,
                         args TEXT NOT NULL);
      CREATE TABLE evaluations (id INTEGER PRIMARY KEY, run_id INTEGER REFERENCES runs(id),
        submission TEXT NOT NULL REFERENCES submissions(hash), task_id TEXT NOT NULL, source_name TEXT NOT NULL,
        status TEXT NOT NULL, speedup REAL, coverage REAL, created_at TEXT NOT NULL, verdict TEXT NOT NULL);
      CREATE INDEX evaluations_by_task ON evaluations(task_id);
      CREATE INDEX evaluations_by_run ON evaluations(run_id);
      INSERT INTO runs (kind, started_at, args) VALUES ('solutions', '2026-11-01T00:00:00Z', '{}');
      PRAGMA user_version = 1;
    )sql");
  }
  Store store(db);
  EXPECT_EQ(store.runs().size(), 1u);
  EXPECT_EQ(store.runs()[0].kind, "solutions");
  const int64_t trajectory = store.add_trajectory(1, "t", 1, "m", "params");
  EXPECT_GT(trajectory, 0);
  SQLite::Database raw(db.string());
  EXPECT_EQ(raw.execAndGet("PRAGMA user_version").getInt(), 2);
}

TEST(Store, RoundTripsTrajectoriesAndTurns) {
  const fs::path db = fresh_db("trajectories");
  int64_t first_turn = 0, second_turn = 0, evaluation = 0, trajectory = 0;
  const nlohmann::json request = {{"system", "s"},
                                  {"messages", {{{"role", "user"}, {"content", "Task: t"}}}}};
  {
    Store store(db);
    const int64_t run = store.begin_run("agent", {{"model", "m"}});
    trajectory = store.add_trajectory(run, "task-a", 1, "m", "templates");
    EXPECT_EQ(store.add_trajectory(run, "task-a", 1, "m", "templates"), trajectory);  // idempotent
    store.add_trajectory(run, "task-a", 2, "m", "templates");
    first_turn = store.begin_turn(trajectory, 1, request);
    store.record_reply(first_turn, "```cuda\ncode one\n```",
                       {{"finish_reason", "stop"}, {"usage", {{"input_tokens", 7}, {"output_tokens", 9}}}},
                       std::string("code one\n"));
    Verdict v = verdict_for("task-a", sha256_hex("code one\n"), StageStatus::failed);
    evaluation = store.finish_turn(
        first_turn, {.error_class = "numerical", .outcome = "failed at correct", .feedback = "fix it"}, &v,
        "code one\n", run);
    second_turn = store.begin_turn(trajectory, 2, request);
    store.record_reply(second_turn, "no code here", {{"finish_reason", "stop"}}, std::nullopt);
    store.finish_turn(second_turn,
                      {.error_class = "extraction", .outcome = "no code", .feedback = "say it in code"},
                      nullptr, "", run);
    store.begin_turn(store.add_trajectory(run, "task-a", 2, "m", "templates"), 1,
                     request);  // left unanswered
    store.set_trajectory_status(trajectory, "solved");
    EXPECT_THROW(store.begin_turn(trajectory, 2, request), SQLite::Exception);  // one row per turn index
  }
  Store store(db);
  const auto trajectories = store.trajectories(1);
  ASSERT_EQ(trajectories.size(), 2u);
  EXPECT_EQ(trajectories[0].status, "solved");
  EXPECT_EQ(trajectories[0].knowledge, "templates");
  EXPECT_EQ(trajectories[1].status, "pending");
  const auto turns = store.turns(trajectory);
  ASSERT_EQ(turns.size(), 2u);
  EXPECT_EQ(turns[0].request, request);
  EXPECT_EQ(turns[0].reply, "```cuda\ncode one\n```");
  EXPECT_EQ(turns[0].reply_meta["usage"]["output_tokens"], 9);
  EXPECT_EQ(turns[0].code_hash, sha256_hex("code one\n"));
  EXPECT_EQ(store.source(turns[0].code_hash), "code one\n");
  EXPECT_EQ(turns[0].evaluation_id, evaluation);
  EXPECT_EQ(store.verdict(evaluation)->task_id, "task-a");
  EXPECT_EQ(turns[0].error_class, "numerical");
  EXPECT_EQ(turns[0].feedback, "fix it");
  EXPECT_TRUE(turns[0].finished());
  EXPECT_TRUE(turns[1].code_hash.empty());
  EXPECT_EQ(turns[1].evaluation_id, 0);
  EXPECT_EQ(turns[1].error_class, "extraction");
  const auto unanswered = store.turns(trajectories[1].id);
  ASSERT_EQ(unanswered.size(), 1u);
  EXPECT_FALSE(unanswered[0].answered());
  EXPECT_FALSE(unanswered[0].finished());
  SQLite::Database raw(db.string());
  EXPECT_EQ(
      raw.execAndGet("SELECT input_tokens FROM turns WHERE id = " + std::to_string(first_turn)).getInt(), 7);
  EXPECT_EQ(store.run(1)->kind, "agent");
  EXPECT_FALSE(store.run(99));
}
