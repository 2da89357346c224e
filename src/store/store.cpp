#include "store/store.h"

#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <sqlite3.h>
#include <unistd.h>

#include <fmt/format.h>
#include <cerrno>
#include <cstring>

#include "eval/evaluate.h"
#include "util/hash.h"
#include "util/text.h"

namespace ptxbench {
namespace {

constexpr int kBusyTimeoutMs = 10000;  // other ptxbench processes may be writing

std::filesystem::path folder_of(const std::filesystem::path& file) {
  return file.has_parent_path() ? file.parent_path() : std::filesystem::path(".");
}

bool folder_writable(const std::filesystem::path& file) {
  return access(folder_of(file).c_str(), W_OK) == 0;
}

// What the folder may have to do with a failure: missing, or not writable (a WAL database writes its -wal and
// -shm files beside it). "" when neither.
std::string folder_note(const std::filesystem::path& file) {
  const std::filesystem::path folder = folder_of(file);
  std::error_code error;
  if (!std::filesystem::exists(folder, error))
    return fmt::format(" (the folder {} does not exist)", folder.string());
  if (access(folder.c_str(), W_OK) != 0) {
    const int why = errno;
    return fmt::format(" (the folder {} is not writable: {})", folder.string(), std::strerror(why));
  }
  return "";
}

std::string failure(const std::filesystem::path& file, std::string_view action, std::string_view what) {
  return fmt::format("results store {}: cannot {}: {}{}", file.string(), action, what, folder_note(file));
}

SQLite::Database open_read_write(const std::filesystem::path& file) {
  std::filesystem::create_directories(folder_of(file));
  // SQLite would open a write-protected file read-only without a word, and WAL needs the folder writable:
  // either would surface only at the first write, after a run had begun.
  if (!folder_writable(file)) throw StoreError(failure(file, "open it for writing", "read-only"));
  SQLite::Database db(file.string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  if (sqlite3_db_readonly(db.getHandle(), "main") == 1)
    throw StoreError(failure(file, "open it for writing", "the file is read-only"));
  db.setBusyTimeout(kBusyTimeoutMs);
  db.exec("PRAGMA journal_mode=WAL");
  db.exec("PRAGMA foreign_keys=ON");
  return db;
}

// `file` as an SQLite URI with the given query.
std::string sqlite_uri(const std::filesystem::path& file, std::string_view query) {
  std::string uri = "file:";
  for (const char c : file.string())
    uri += c == '%' || c == '?' || c == '#' ? fmt::format("%{:02X}", static_cast<unsigned char>(c))
                                            : std::string(1, c);
  return fmt::format("{}?{}", uri, query);
}

// A WAL database needs its -shm file to be read, which a folder the user cannot write cannot hold. With no
// -wal file beside it either, every committed transaction is in the main file: it is opened immutable (no
// locks, no -shm), a snapshot, which is all a command that only reads needs. Otherwise SQLite's read-only
// mode, which also sees what other processes commit meanwhile.
SQLite::Database open_read_only(const std::filesystem::path& file) {
  std::error_code error;
  if (!std::filesystem::exists(file, error))
    throw StoreError(failure(file, "open it read-only", "no such file"));
  std::filesystem::path wal = file;
  wal += "-wal";
  const bool snapshot = !folder_writable(file) && !std::filesystem::exists(wal, error);
  SQLite::Database db(sqlite_uri(file, snapshot ? "immutable=1" : "mode=ro"),
                      SQLite::OPEN_READONLY | SQLite::OPEN_URI);
  db.setBusyTimeout(kBusyTimeoutMs);
  return db;
}

SQLite::Database open_database(const std::filesystem::path& file, StoreAccess access) {
  const bool read_only = access == StoreAccess::read_only;
  try {
    return read_only ? open_read_only(file) : open_read_write(file);
  } catch (const SQLite::Exception& e) {
    throw StoreError(failure(file, read_only ? "open it read-only" : "open it for writing", e.what()));
  } catch (const std::filesystem::filesystem_error& e) {
    throw StoreError(failure(file, "create its folder", e.code().message()));
  }
}

std::optional<double> optional_double(const SQLite::Column& column) {
  if (column.isNull()) return std::nullopt;
  return column.getDouble();
}

template <class T>
void bind_optional(SQLite::Statement& statement, int index, const std::optional<T>& value) {
  if (value)
    statement.bind(index, *value);
  else
    statement.bind(index);
}

// A row id where 0 means no row: NULL then.
void bind_row_id(SQLite::Statement& statement, int index, int64_t id) {
  bind_optional(statement, index, id ? std::optional<int64_t>(id) : std::nullopt);
}

}  // namespace

template <class Body>
auto Store::guarded(std::string_view action, Body&& body) {
  std::lock_guard lock(mutex_);
  try {
    return body();
  } catch (const SQLite::Exception& e) {
    throw StoreError(failure(file_, action, e.what()));
  } catch (const nlohmann::json::exception& e) {  // a stored document that no longer parses
    throw StoreError(failure(file_, action, e.what()));
  }
}

Store::Store(const std::filesystem::path& file, StoreAccess access)
    : file_(file), db_(open_database(file, access)) {
  if (access == StoreAccess::read_only)
    check_schema();
  else
    migrate();
}

namespace {

StoreError newer_schema(const std::filesystem::path& file, int version) {
  return StoreError(failure(
      file, "use it",
      fmt::format("its schema {} is newer than this ptxbench's ({})", version, Store::kSchemaVersion)));
}

}  // namespace

// Read-only, the schema cannot be brought up to date: it must be the current one.
void Store::check_schema() {
  const int version =
      guarded("read its schema version", [&] { return db_.execAndGet("PRAGMA user_version").getInt(); });
  if (version > kSchemaVersion) throw newer_schema(file_, version);
  if (version < kSchemaVersion)
    throw StoreError(failure(file_, "read it",
                             fmt::format("its schema {} is older than this ptxbench's ({}); a command that "
                                         "writes to it (eval, run) brings it up to date",
                                         version, kSchemaVersion)));
}

void Store::migrate() {
  guarded("bring its schema up to date", [&] {
    // Up to date: nothing to write, so opening never waits on (or fails beside) another process's writes.
    if (db_.execAndGet("PRAGMA user_version").getInt() == kSchemaVersion) return;
    // IMMEDIATE: take the write lock first, waiting out the busy timeout; a deferred transaction that read
    // and then wrote would fail at once when another connection had written in between.
    SQLite::Transaction transaction(db_, SQLite::TransactionBehavior::IMMEDIATE);
    const int version = db_.execAndGet("PRAGMA user_version").getInt();
    if (version > kSchemaVersion) throw newer_schema(file_, version);
    if (version < 1) {
      db_.exec(R"sql(
      CREATE TABLE submissions (
        hash       TEXT PRIMARY KEY,
        source     TEXT NOT NULL,
        first_seen TEXT NOT NULL
      );
      CREATE TABLE runs (
        id          INTEGER PRIMARY KEY,
        kind        TEXT NOT NULL,
        started_at  TEXT NOT NULL,
        finished_at TEXT,
        args        TEXT NOT NULL
      );
      CREATE TABLE evaluations (
        id          INTEGER PRIMARY KEY,
        run_id      INTEGER REFERENCES runs(id),
        submission  TEXT NOT NULL REFERENCES submissions(hash),
        task_id     TEXT NOT NULL,
        source_name TEXT NOT NULL,
        status      TEXT NOT NULL,
        speedup     REAL,
        coverage    REAL,
        created_at  TEXT NOT NULL,
        verdict     TEXT NOT NULL
      );
      CREATE INDEX evaluations_by_task ON evaluations(task_id);
      CREATE INDEX evaluations_by_run ON evaluations(run_id);
    )sql");
    }
    if (version < 2) {
      // The agent's trajectories (docs/agent.md). A turn row is written before the model is asked, so a crash
      // leaves a trace of where it happened; `finished_at` marks a turn that needs nothing more.
      db_.exec(R"sql(
      CREATE TABLE trajectories (
        id         INTEGER PRIMARY KEY,
        run_id     INTEGER NOT NULL REFERENCES runs(id),
        task_id    TEXT NOT NULL,
        sample     INTEGER NOT NULL,
        model      TEXT NOT NULL,
        knowledge  TEXT NOT NULL,
        status     TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (run_id, task_id, sample)
      );
      CREATE TABLE turns (
        id               INTEGER PRIMARY KEY,
        trajectory_id    INTEGER NOT NULL REFERENCES trajectories(id),
        turn             INTEGER NOT NULL,
        request          TEXT NOT NULL,
        reply            TEXT,
        reply_meta       TEXT NOT NULL DEFAULT '{}',
        input_tokens     INTEGER,
        output_tokens    INTEGER,
        reasoning_tokens INTEGER,
        code_hash        TEXT REFERENCES submissions(hash),
        evaluation_id    INTEGER REFERENCES evaluations(id),
        error_class      TEXT,
        outcome          TEXT,
        feedback         TEXT,
        requested_at     TEXT NOT NULL,
        replied_at       TEXT,
        finished_at      TEXT,
        UNIQUE (trajectory_id, turn)
      );
    )sql");
    }
    if (version < kSchemaVersion) db_.exec(fmt::format("PRAGMA user_version = {}", kSchemaVersion));
    transaction.commit();
  });
}

int64_t Store::begin_run(const std::string& kind, const nlohmann::json& args) {
  return guarded("record a new run", [&]() -> int64_t {
    SQLite::Statement insert(db_, "INSERT INTO runs (kind, started_at, args) VALUES (?, ?, ?)");
    insert.bind(1, kind);
    insert.bind(2, utc_now_iso8601());
    insert.bind(3, json_text(args));
    insert.exec();
    return db_.getLastInsertRowid();
  });
}

void Store::finish_run(int64_t run_id) {
  guarded(fmt::format("mark run {} finished", run_id), [&] {
    SQLite::Statement update(db_, "UPDATE runs SET finished_at = ? WHERE id = ?");
    update.bind(1, utc_now_iso8601());
    update.bind(2, run_id);
    update.exec();
  });
}

int64_t Store::add_evaluation(const Verdict& verdict, const std::string& source, int64_t run_id) {
  return guarded("record an evaluation", [&]() -> int64_t {
    SQLite::Transaction transaction(db_);
    const int64_t id = insert_evaluation(verdict, source, run_id);
    transaction.commit();
    return id;
  });
}

int64_t Store::insert_evaluation(const Verdict& verdict, const std::string& source, int64_t run_id) {
  SQLite::Statement submission(
      db_, "INSERT OR IGNORE INTO submissions (hash, source, first_seen) VALUES (?, ?, ?)");
  submission.bind(1, verdict.submission_hash);
  submission.bind(2, source);
  submission.bind(3, verdict.created_at);
  submission.exec();
  SQLite::Statement insert(db_, R"sql(
    INSERT INTO evaluations (run_id, submission, task_id, source_name, status, speedup, coverage, created_at, verdict)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?))sql");
  bind_row_id(insert, 1, run_id);
  insert.bind(2, verdict.submission_hash);
  insert.bind(3, verdict.task_id);
  insert.bind(4, verdict.source_name);
  insert.bind(5, to_string(verdict.overall()));
  bind_optional(insert, 6, verdict.speedup);
  bind_optional(insert, 7, verdict.coverage);
  insert.bind(8, verdict.created_at);
  insert.bind(9, json_text(to_json(verdict)));
  insert.exec();
  return db_.getLastInsertRowid();
}

std::vector<RunRow> Store::runs(int limit) {
  return guarded("list the runs", [&]() -> std::vector<RunRow> {
    SQLite::Statement query(db_, R"sql(
      SELECT r.id, r.kind, r.started_at, COALESCE(r.finished_at, ''), r.args,
             (SELECT COUNT(*) FROM evaluations e WHERE e.run_id = r.id)
      FROM runs r ORDER BY r.id DESC LIMIT ?)sql");
    query.bind(1, limit);
    std::vector<RunRow> rows;
    while (query.executeStep())
      rows.push_back({query.getColumn(0).getInt64(), query.getColumn(1).getString(),
                      query.getColumn(2).getString(), query.getColumn(3).getString(),
                      nlohmann::json::parse(query.getColumn(4).getString()), query.getColumn(5).getInt()});
    return rows;
  });
}

std::vector<EvaluationRow> Store::evaluations(const EvaluationFilter& filter) {
  return guarded("list the evaluations", [&]() -> std::vector<EvaluationRow> {
    // One "task_id GLOB ?" per glob (none: no row), every value bound.
    std::string globs = "0";
    for (size_t k = 0; k < filter.task_globs.size(); ++k) globs += " OR task_id GLOB ?";
    SQLite::Statement query(db_, R"sql(
      SELECT id, COALESCE(run_id, 0), task_id, submission, source_name, status, speedup, coverage, created_at,
             json_extract(verdict, '$.summary')
      FROM evaluations
      WHERE ()sql" + globs + R"sql() AND (? IS NULL OR run_id = ?)
      ORDER BY id DESC LIMIT ?)sql");
    int index = 1;
    for (const std::string& glob : filter.task_globs) query.bind(index++, glob);
    if (filter.run_id) {
      query.bind(index++, *filter.run_id);
      query.bind(index++, *filter.run_id);
    } else {
      query.bind(index++);
      query.bind(index++);
    }
    query.bind(index, filter.limit);
    std::vector<EvaluationRow> rows;
    while (query.executeStep())
      rows.push_back({.id = query.getColumn(0).getInt64(),
                      .run_id = query.getColumn(1).getInt64(),
                      .task_id = query.getColumn(2).getString(),
                      .submission_hash = query.getColumn(3).getString(),
                      .source_name = query.getColumn(4).getString(),
                      .status = query.getColumn(5).getString(),
                      .speedup = optional_double(query.getColumn(6)),
                      .coverage = optional_double(query.getColumn(7)),
                      .created_at = query.getColumn(8).getString(),
                      .summary = query.getColumn(9).getString()});
    return rows;
  });
}

std::optional<Verdict> Store::verdict(int64_t evaluation_id) {
  return guarded(fmt::format("read evaluation {}", evaluation_id), [&]() -> std::optional<Verdict> {
    SQLite::Statement query(db_, "SELECT verdict FROM evaluations WHERE id = ?");
    query.bind(1, evaluation_id);
    if (!query.executeStep()) return std::nullopt;
    return verdict_from_json(nlohmann::json::parse(query.getColumn(0).getString()));
  });
}

std::optional<std::string> Store::source(const std::string& submission_hash) {
  return guarded("read a submission", [&]() -> std::optional<std::string> {
    SQLite::Statement query(db_, "SELECT source FROM submissions WHERE hash = ?");
    query.bind(1, submission_hash);
    if (!query.executeStep()) return std::nullopt;
    return query.getColumn(0).getString();
  });
}

std::optional<RunRow> Store::run(int64_t run_id) {
  return guarded(fmt::format("read run {}", run_id), [&]() -> std::optional<RunRow> {
    SQLite::Statement query(db_, R"sql(
      SELECT r.id, r.kind, r.started_at, COALESCE(r.finished_at, ''), r.args,
             (SELECT COUNT(*) FROM evaluations e WHERE e.run_id = r.id)
      FROM runs r WHERE r.id = ?)sql");
    query.bind(1, run_id);
    if (!query.executeStep()) return std::nullopt;
    return RunRow{query.getColumn(0).getInt64(),
                  query.getColumn(1).getString(),
                  query.getColumn(2).getString(),
                  query.getColumn(3).getString(),
                  nlohmann::json::parse(query.getColumn(4).getString()),
                  query.getColumn(5).getInt()};
  });
}

void Store::reopen_run(int64_t run_id) {
  guarded(fmt::format("reopen run {}", run_id), [&] {
    SQLite::Statement update(db_, "UPDATE runs SET finished_at = NULL WHERE id = ?");
    update.bind(1, run_id);
    update.exec();
  });
}

int64_t Store::add_trajectory(int64_t run_id, const std::string& task_id, int sample,
                              const std::string& model, const std::string& knowledge) {
  return guarded("record a trajectory", [&]() -> int64_t {
    const std::string now = utc_now_iso8601();
    SQLite::Statement insert(db_, R"sql(
      INSERT OR IGNORE INTO trajectories (run_id, task_id, sample, model, knowledge, status, created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, 'pending', ?, ?))sql");
    insert.bind(1, run_id);
    insert.bind(2, task_id);
    insert.bind(3, sample);
    insert.bind(4, model);
    insert.bind(5, knowledge);
    insert.bind(6, now);
    insert.bind(7, now);
    insert.exec();
    SQLite::Statement query(db_,
                            "SELECT id FROM trajectories WHERE run_id = ? AND task_id = ? AND sample = ?");
    query.bind(1, run_id);
    query.bind(2, task_id);
    query.bind(3, sample);
    query.executeStep();
    return query.getColumn(0).getInt64();
  });
}

std::vector<TrajectoryRow> Store::trajectories(int64_t run_id) {
  return guarded(fmt::format("read the trajectories of run {}", run_id), [&]() -> std::vector<TrajectoryRow> {
    SQLite::Statement query(db_, R"sql(
      SELECT id, run_id, task_id, sample, model, knowledge, status, created_at, updated_at
      FROM trajectories WHERE run_id = ? ORDER BY task_id, sample)sql");
    query.bind(1, run_id);
    std::vector<TrajectoryRow> rows;
    while (query.executeStep())
      rows.push_back({.id = query.getColumn(0).getInt64(),
                      .run_id = query.getColumn(1).getInt64(),
                      .task_id = query.getColumn(2).getString(),
                      .sample = query.getColumn(3).getInt(),
                      .model = query.getColumn(4).getString(),
                      .knowledge = query.getColumn(5).getString(),
                      .status = query.getColumn(6).getString(),
                      .created_at = query.getColumn(7).getString(),
                      .updated_at = query.getColumn(8).getString()});
    return rows;
  });
}

void Store::set_trajectory_status(int64_t trajectory_id, const std::string& status) {
  guarded("record a trajectory's status", [&] {
    SQLite::Statement update(db_, "UPDATE trajectories SET status = ?, updated_at = ? WHERE id = ?");
    update.bind(1, status);
    update.bind(2, utc_now_iso8601());
    update.bind(3, trajectory_id);
    update.exec();
  });
}

int64_t Store::begin_turn(int64_t trajectory_id, int index, const nlohmann::json& request) {
  return guarded("record a turn", [&]() -> int64_t {
    SQLite::Statement insert(db_, R"sql(
      INSERT INTO turns (trajectory_id, turn, request, requested_at) VALUES (?, ?, ?, ?))sql");
    insert.bind(1, trajectory_id);
    insert.bind(2, index);
    insert.bind(3, json_text(request));
    insert.bind(4, utc_now_iso8601());
    insert.exec();
    return db_.getLastInsertRowid();
  });
}

void Store::mark_turn_requested(int64_t turn_id) {
  guarded("record a turn asked again", [&] {
    SQLite::Statement update(db_, "UPDATE turns SET requested_at = ? WHERE id = ?");
    update.bind(1, utc_now_iso8601());
    update.bind(2, turn_id);
    update.exec();
  });
}

namespace {

void bind_usage(SQLite::Statement& statement, int first, const nlohmann::json& meta) {
  const nlohmann::json usage = meta.value("usage", nlohmann::json::object());
  int i = first;
  for (const char* key : {"input_tokens", "output_tokens", "reasoning_tokens"}) {
    if (usage.contains(key) && usage[key].is_number_integer())
      statement.bind(i, usage[key].get<int64_t>());
    else
      statement.bind(i);
    ++i;
  }
}

}  // namespace

void Store::record_reply(int64_t turn_id, const std::string& reply, const nlohmann::json& reply_meta,
                         const std::optional<std::string>& code) {
  guarded("record a model's reply", [&] {
    const std::string now = utc_now_iso8601();
    SQLite::Transaction transaction(db_);
    std::optional<std::string> hash;
    if (code) {
      hash = sha256_hex(*code);
      SQLite::Statement submission(
          db_, "INSERT OR IGNORE INTO submissions (hash, source, first_seen) VALUES (?, ?, ?)");
      submission.bind(1, *hash);
      submission.bind(2, *code);
      submission.bind(3, now);
      submission.exec();
    }
    SQLite::Statement update(db_, R"sql(
      UPDATE turns SET reply = ?, reply_meta = ?, input_tokens = ?, output_tokens = ?, reasoning_tokens = ?,
                       code_hash = ?, replied_at = ?
      WHERE id = ?)sql");
    update.bind(1, reply);
    update.bind(2, json_text(reply_meta));
    bind_usage(update, 3, reply_meta);
    bind_optional(update, 6, hash);
    update.bind(7, now);
    update.bind(8, turn_id);
    update.exec();
    transaction.commit();
  });
}

void Store::record_reply_error(int64_t turn_id, const nlohmann::json& reply_meta) {
  guarded("record a failed model call", [&] {
    SQLite::Statement update(db_, "UPDATE turns SET reply_meta = ? WHERE id = ?");
    update.bind(1, json_text(reply_meta));
    update.bind(2, turn_id);
    update.exec();
  });
}

int64_t Store::finish_turn(int64_t turn_id, const TurnEnd& end, const Verdict* verdict,
                           const std::string& source, int64_t run_id) {
  return guarded("record the end of a turn", [&]() -> int64_t {
    SQLite::Transaction transaction(db_);
    const int64_t evaluation_id = verdict ? insert_evaluation(*verdict, source, run_id) : 0;
    end_turn(turn_id, end, evaluation_id);
    transaction.commit();
    return evaluation_id;
  });
}

void Store::finish_turn_judged_before(int64_t turn_id, const TurnEnd& end, int64_t evaluation_id) {
  guarded("record the end of a turn", [&] {
    SQLite::Transaction transaction(db_);
    end_turn(turn_id, end, evaluation_id);
    transaction.commit();
  });
}

void Store::end_turn(int64_t turn_id, const TurnEnd& end, int64_t evaluation_id) {
  SQLite::Statement update(db_, R"sql(
    UPDATE turns SET evaluation_id = ?, error_class = ?, outcome = ?, feedback = ?, finished_at = ? WHERE id = ?)sql");
  bind_row_id(update, 1, evaluation_id);
  update.bind(2, end.error_class);
  update.bind(3, end.outcome);
  update.bind(4, end.feedback);
  update.bind(5, utc_now_iso8601());
  update.bind(6, turn_id);
  update.exec();
}

std::vector<TurnRow> Store::turns(int64_t trajectory_id) {
  return guarded("read the turns of a trajectory", [&]() -> std::vector<TurnRow> {
    SQLite::Statement query(db_, R"sql(
      SELECT id, trajectory_id, turn, request, reply, reply_meta, COALESCE(code_hash, ''), COALESCE(evaluation_id, 0),
             COALESCE(error_class, ''), COALESCE(outcome, ''), COALESCE(feedback, ''), requested_at,
             COALESCE(replied_at, ''), COALESCE(finished_at, '')
      FROM turns WHERE trajectory_id = ? ORDER BY turn)sql");
    query.bind(1, trajectory_id);
    std::vector<TurnRow> rows;
    while (query.executeStep()) {
      TurnRow row{.id = query.getColumn(0).getInt64(),
                  .trajectory_id = query.getColumn(1).getInt64(),
                  .index = query.getColumn(2).getInt(),
                  .request = nlohmann::json::parse(query.getColumn(3).getString())};
      if (!query.getColumn(4).isNull()) row.reply = query.getColumn(4).getString();
      row.reply_meta = nlohmann::json::parse(query.getColumn(5).getString());
      row.code_hash = query.getColumn(6).getString();
      row.evaluation_id = query.getColumn(7).getInt64();
      row.error_class = query.getColumn(8).getString();
      row.outcome = query.getColumn(9).getString();
      row.feedback = query.getColumn(10).getString();
      row.requested_at = query.getColumn(11).getString();
      row.replied_at = query.getColumn(12).getString();
      row.finished_at = query.getColumn(13).getString();
      rows.push_back(std::move(row));
    }
    return rows;
  });
}

}  // namespace ptxbench
