#include <gtest/gtest.h>

#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

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

// The message of the StoreError that `attempt` throws; "" when it throws none.
template <typename Open>
std::string store_error(Open attempt) {
  try {
    attempt();
  } catch (const StoreError& e) {
    return e.what();
  }
  return "";
}

// A store holding one evaluation, closed again.
void store_with_one_evaluation(const fs::path& db) {
  Store(db).add_evaluation(verdict_for("task-a", "h1", StageStatus::passed), "source one");
}

// Runs `body` in a forked child and returns its exit status (-1 when it did not exit). `unprivileged`: the
// child first gives up the privilege to ignore file permissions (root becomes nobody), as a user has none.
template <typename Body>
int exit_status_of_child(Body body, bool unprivileged = false) {
  const pid_t child = fork();
  if (child == 0) {
    constexpr uid_t kNobody = 65534;
    if (unprivileged && geteuid() == 0 &&
        (setgroups(0, nullptr) != 0 || setgid(kNobody) != 0 || setuid(kNobody) != 0))
      _exit(100);
    _exit(body());
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
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
  EXPECT_EQ(store.evaluations({.task_globs = {"task-b"}}).size(), 2u);
  EXPECT_EQ(store.evaluations({.task_globs = {"task-b", "task-a*"}}).size(), store.evaluations({}).size());
  EXPECT_EQ(store.evaluations({.task_globs = {}}).size(), 0u);
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
  const std::string message = store_error([&] { Store store(db); });
  EXPECT_NE(message.find(db.string() + ": cannot use it: its schema 99 is newer"), std::string::npos)
      << message;
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
    EXPECT_THROW(store.begin_turn(trajectory, 2, request), StoreError);  // one row per turn index
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

// --- failures name the database and what could not be done; a folder the user cannot write still reads ---

TEST(StoreErrors, AFolderThatCannotBeMadeIsNamed) {
  const fs::path dir = fresh_db("blocked").parent_path();
  fs::create_directories(dir);
  std::ofstream(dir / "plain-file") << "not a folder\n";
  const fs::path db = dir / "plain-file" / "data" / "ptxbench.db";
  const std::string message = store_error([&] { Store store(db); });
  EXPECT_NE(message.find("results store " + db.string() + ": cannot create its folder"), std::string::npos)
      << message;
}

TEST(StoreErrors, ReadingAStoreThatIsNotThereSaysSo) {
  const fs::path db = fresh_db("absent");
  const std::string message = store_error([&] { Store store(db, StoreAccess::read_only); });
  EXPECT_NE(message.find(db.string() + ": cannot open it read-only: no such file"), std::string::npos)
      << message;
  EXPECT_NE(message.find("the folder " + db.parent_path().string() + " does not exist"), std::string::npos)
      << message;
  EXPECT_FALSE(fs::exists(db.parent_path())) << "reading creates nothing";
}

TEST(StoreErrors, ReadOnlyReadsAndRefusesEveryWrite) {
  const fs::path db = fresh_db("read-only");
  store_with_one_evaluation(db);
  Store store(db, StoreAccess::read_only);
  EXPECT_EQ(store.evaluations({}).size(), 1u);
  EXPECT_EQ(store.source("h1"), "source one");
  const std::string message = store_error([&] { store.begin_run("solutions", {}); });
  EXPECT_NE(message.find(db.string() + ": cannot record a new run: attempt to write a readonly database"),
            std::string::npos)
      << message;
}

TEST(StoreErrors, ReadOnlyRefusesAnOlderSchemaItCannotUpgrade) {
  const fs::path db = fresh_db("read-only-old");
  store_with_one_evaluation(db);
  SQLite::Database(db.string(), SQLite::OPEN_READWRITE).exec("PRAGMA user_version = 1");
  const std::string message = store_error([&] { Store store(db, StoreAccess::read_only); });
  EXPECT_NE(message.find("its schema 1 is older"), std::string::npos) << message;
}

// The data folder the user cannot write (chmod 555): a read still works, from a store closed cleanly (no -wal
// file: read as an immutable snapshot) and from one whose writer died (its -wal holds the last evaluation),
// while opening it to write says the folder is not writable.
class StoreInAReadOnlyFolder : public testing::TestWithParam<bool> {};

TEST_P(StoreInAReadOnlyFolder, ReadsAndSaysWhyItCannotWrite) {
  const bool writer_died = GetParam();
  const fs::path db = fresh_db(writer_died ? "ro-folder-wal" : "ro-folder");
  store_with_one_evaluation(db);
  if (writer_died) {
    const int died = exit_status_of_child([&]() -> int {
      Store store(db);
      store.add_evaluation(verdict_for("task-b", "h2", StageStatus::failed), "source two");
      _exit(0);  // the connection still open: its WAL is not checkpointed into the file
    });
    ASSERT_EQ(died, 0);
    ASSERT_TRUE(fs::exists(db.string() + "-wal")) << "the evaluation left in the WAL";
  }
  const size_t stored = writer_died ? 2 : 1;
  fs::permissions(db.parent_path(), fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write,
                  fs::perm_options::remove);
  enum : int { ok = 0, cannot_read = 1, wrong_count = 2, wrote = 3, unclear = 4 };
  const int read = exit_status_of_child(
      [&]() -> int {
        try {
          return Store(db, StoreAccess::read_only).evaluations({}).size() == stored ? ok : wrong_count;
        } catch (const StoreError& e) {
          std::fprintf(stderr, "%s\n", e.what());
          return cannot_read;
        }
      },
      /*unprivileged=*/true);
  const int write = exit_status_of_child(
      [&]() -> int {
        const std::string message = store_error([&] { Store store(db); });
        if (message.empty()) return wrote;
        const bool named = message.find(db.string() + ": cannot open it for writing") != std::string::npos &&
                           message.find("is not writable") != std::string::npos;
        if (!named) std::fprintf(stderr, "%s\n", message.c_str());
        return named ? ok : unclear;
      },
      /*unprivileged=*/true);
  fs::permissions(db.parent_path(), fs::perms::owner_write, fs::perm_options::add);
  EXPECT_EQ(read, ok);
  EXPECT_EQ(write, ok);
}

INSTANTIATE_TEST_SUITE_P(ClosedOrNot, StoreInAReadOnlyFolder, testing::Bool(),
                         [](const auto& test) { return test.param ? "WriterDied" : "ClosedCleanly"; });
