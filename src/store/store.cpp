#include "store/store.h"

#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

#include <fmt/format.h>

#include "eval/evaluate.h"

namespace ptxbench {
namespace {

SQLite::Database open_database(const std::filesystem::path& file) {
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path());
  SQLite::Database db(file.string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  db.setBusyTimeout(10000);  // other ptxbench processes may be writing
  db.exec("PRAGMA journal_mode=WAL");
  db.exec("PRAGMA foreign_keys=ON");
  return db;
}

std::optional<double> optional_double(const SQLite::Column& column) {
  if (column.isNull()) return std::nullopt;
  return column.getDouble();
}

void bind_optional(SQLite::Statement& statement, int index, std::optional<double> value) {
  if (value) statement.bind(index, *value);
  else statement.bind(index);
}

}  // namespace

Store::Store(const std::filesystem::path& file) : db_(open_database(file)) { migrate(); }

void Store::migrate() {
  SQLite::Transaction transaction(db_);
  const int version = db_.execAndGet("PRAGMA user_version").getInt();
  if (version > kSchemaVersion)
    throw std::runtime_error(fmt::format("{}: store schema {} is newer than this ptxbench ({})",
                                         db_.getFilename(), version, kSchemaVersion));
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
  db_.exec(fmt::format("PRAGMA user_version = {}", kSchemaVersion));
  transaction.commit();
}

int64_t Store::begin_run(const std::string& kind, const nlohmann::json& args) {
  SQLite::Statement insert(db_, "INSERT INTO runs (kind, started_at, args) VALUES (?, ?, ?)");
  insert.bind(1, kind);
  insert.bind(2, utc_now_iso8601());
  insert.bind(3, args.dump());
  insert.exec();
  return db_.getLastInsertRowid();
}

void Store::finish_run(int64_t run_id) {
  SQLite::Statement update(db_, "UPDATE runs SET finished_at = ? WHERE id = ?");
  update.bind(1, utc_now_iso8601());
  update.bind(2, run_id);
  update.exec();
}

int64_t Store::add_evaluation(const Verdict& verdict, const std::string& source, int64_t run_id) {
  SQLite::Transaction transaction(db_);
  SQLite::Statement submission(db_, "INSERT OR IGNORE INTO submissions (hash, source, first_seen) VALUES (?, ?, ?)");
  submission.bind(1, verdict.submission_hash);
  submission.bind(2, source);
  submission.bind(3, verdict.created_at);
  submission.exec();
  SQLite::Statement insert(db_, R"sql(
    INSERT INTO evaluations (run_id, submission, task_id, source_name, status, speedup, coverage, created_at, verdict)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?))sql");
  if (run_id) insert.bind(1, run_id);
  else insert.bind(1);
  insert.bind(2, verdict.submission_hash);
  insert.bind(3, verdict.task_id);
  insert.bind(4, verdict.source_name);
  insert.bind(5, to_string(verdict.overall()));
  bind_optional(insert, 6, verdict.speedup);
  bind_optional(insert, 7, verdict.coverage);
  insert.bind(8, verdict.created_at);
  insert.bind(9, to_json(verdict).dump());
  insert.exec();
  const int64_t id = db_.getLastInsertRowid();
  transaction.commit();
  return id;
}

std::vector<RunRow> Store::runs(int limit) {
  SQLite::Statement query(db_, R"sql(
    SELECT r.id, r.kind, r.started_at, COALESCE(r.finished_at, ''), r.args,
           (SELECT COUNT(*) FROM evaluations e WHERE e.run_id = r.id)
    FROM runs r ORDER BY r.id DESC LIMIT ?)sql");
  query.bind(1, limit);
  std::vector<RunRow> rows;
  while (query.executeStep())
    rows.push_back({query.getColumn(0).getInt64(), query.getColumn(1).getString(), query.getColumn(2).getString(),
                    query.getColumn(3).getString(), nlohmann::json::parse(query.getColumn(4).getString()),
                    query.getColumn(5).getInt()});
  return rows;
}

std::vector<EvaluationRow> Store::evaluations(const EvaluationFilter& filter) {
  SQLite::Statement query(db_, R"sql(
    SELECT id, COALESCE(run_id, 0), task_id, submission, source_name, status, speedup, coverage, created_at,
           json_extract(verdict, '$.summary')
    FROM evaluations
    WHERE task_id GLOB ? AND (? IS NULL OR run_id = ?)
    ORDER BY id DESC LIMIT ?)sql");
  query.bind(1, filter.task_glob);
  if (filter.run_id) query.bind(2, *filter.run_id), query.bind(3, *filter.run_id);
  else query.bind(2), query.bind(3);
  query.bind(4, filter.limit);
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
}

std::optional<Verdict> Store::verdict(int64_t evaluation_id) {
  SQLite::Statement query(db_, "SELECT verdict FROM evaluations WHERE id = ?");
  query.bind(1, evaluation_id);
  if (!query.executeStep()) return std::nullopt;
  return verdict_from_json(nlohmann::json::parse(query.getColumn(0).getString()));
}

std::optional<std::string> Store::source(const std::string& submission_hash) {
  SQLite::Statement query(db_, "SELECT source FROM submissions WHERE hash = ?");
  query.bind(1, submission_hash);
  if (!query.executeStep()) return std::nullopt;
  return query.getColumn(0).getString();
}

}  // namespace ptxbench
