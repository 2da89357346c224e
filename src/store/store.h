// The results store: SQLite (WAL), one file. Submissions by content hash, runs, one row per evaluation
// holding its verdict document, and (schema 2) the agent's trajectories and their turns. Safe to open from
// several processes at once, and to share between threads (one connection, calls serialised). Every failure
// is a StoreError naming the database file and what could not be done.
#pragma once

#include <SQLiteCpp/Database.h>

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "eval/verdict.h"

namespace ptxbench {

// "results store /data/ptxbench.db: cannot record an evaluation: attempt to write a readonly database (the
// folder /data is not writable)".
struct StoreError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class StoreAccess {
  read_write,  // created when missing, its schema brought up to date
  read_only,   // must exist with the current schema; works in a folder the user cannot write
};

struct RunRow {
  int64_t id = 0;
  std::string kind;  // "solutions", "agent"
  std::string started_at;
  std::string finished_at;  // empty while running (or after a crash)
  nlohmann::json args;
  int evaluations = 0;
};

struct EvaluationRow {
  int64_t id = 0;
  int64_t run_id = 0;  // 0: not part of a run (ptxbench eval)
  std::string task_id;
  std::string submission_hash;
  std::string source_name;
  std::string status;  // the verdict's overall status
  std::optional<double> speedup;
  std::optional<double> coverage;
  std::string created_at;
  std::string summary;
};

struct EvaluationFilter {
  std::optional<int64_t> run_id;
  std::vector<std::string> task_globs = {"*"};  // a task id matching any of them (TaskSelection::globs)
  int limit = 100;
};

// One agent trajectory: a (task, sample) of a run, asked of one model at one knowledge level.
struct TrajectoryRow {
  int64_t id = 0;
  int64_t run_id = 0;
  std::string task_id;
  int sample = 0;  // 1-based
  std::string model;
  std::string knowledge;  // params | templates | contracts
  std::string status;     // pending | running | solved | unverified | finished | error (docs/agent.md)
  std::string created_at;
  std::string updated_at;
};

// One turn: the request, the model's reply, the extracted code and the verdict. A turn is finished when
// finished_at is set (its verdict is stored, or it failed before evaluation: no code, or the model's error).
struct TurnRow {
  int64_t id = 0;
  int64_t trajectory_id = 0;
  int index = 0;                     // 1-based
  nlohmann::json request;            // {"system": ..., "messages": [{"role", "content"}, ...]}
  std::optional<std::string> reply;  // absent until the model answered
  nlohmann::json reply_meta =
      nlohmann::json::object();  // finish_reason, usage, attempts, latency_s, error, ...
  std::string code_hash;         // the extracted code in submissions; empty: no code
  int64_t evaluation_id = 0;     // 0: not evaluated
  std::string error_class;       // empty: the turn did not fail
  std::string outcome;           // one line: the verdict's summary or why there was no verdict
  std::string feedback;          // the compact text the next turn shows the model
  std::string requested_at, replied_at, finished_at;

  bool answered() const { return reply.has_value(); }
  bool finished() const { return !finished_at.empty(); }
};

// How a turn ends, stored in one transaction with its verdict (when there is one).
struct TurnEnd {
  std::string error_class;
  std::string outcome;
  std::string feedback;
};

class Store {
 public:
  static constexpr int kSchemaVersion = 2;

  explicit Store(const std::filesystem::path& file, StoreAccess access = StoreAccess::read_write);

  int64_t begin_run(const std::string& kind, const nlohmann::json& args);
  void finish_run(int64_t run_id);
  // Stores the submission (once per content hash) and the verdict; returns the evaluation id.
  int64_t add_evaluation(const Verdict& verdict, const std::string& source, int64_t run_id = 0);

  std::vector<RunRow> runs(int limit = 20);
  std::optional<RunRow> run(int64_t run_id);
  void reopen_run(int64_t run_id);  // a resumed run is unfinished again until it ends
  std::vector<EvaluationRow> evaluations(const EvaluationFilter& filter);
  std::optional<Verdict> verdict(int64_t evaluation_id);
  std::optional<std::string> source(const std::string& submission_hash);

  // Trajectories. add_trajectory is idempotent on (run, task, sample) and returns the row's id.
  int64_t add_trajectory(int64_t run_id, const std::string& task_id, int sample, const std::string& model,
                         const std::string& knowledge);
  std::vector<TrajectoryRow> trajectories(int64_t run_id);  // by task id, then sample
  void set_trajectory_status(int64_t trajectory_id, const std::string& status);

  // Turns, written as they happen: the request before the model is asked, the reply when it comes, the end
  // (with the verdict) when it is judged.
  int64_t begin_turn(int64_t trajectory_id, int index, const nlohmann::json& request);
  void mark_turn_requested(int64_t turn_id);  // asked again after a crash: a new requested_at
  // The reply and, when code was extracted, the code (stored once by content hash).
  void record_reply(int64_t turn_id, const std::string& reply, const nlohmann::json& reply_meta,
                    const std::optional<std::string>& code);
  void record_reply_error(int64_t turn_id, const nlohmann::json& reply_meta);  // the model call failed
  // Ends the turn; with a verdict, stores the evaluation in the same transaction. Returns the evaluation id
  // (0).
  int64_t finish_turn(int64_t turn_id, const TurnEnd& end, const Verdict* verdict, const std::string& source,
                      int64_t run_id);
  // Ends the turn with an evaluation already stored (an earlier turn's, of the same code): judged once, it
  // counts once wherever evaluations are counted.
  void finish_turn_judged_before(int64_t turn_id, const TurnEnd& end, int64_t evaluation_id);
  std::vector<TurnRow> turns(int64_t trajectory_id);

 private:
  void migrate();
  void check_schema();
  int64_t insert_evaluation(const Verdict& verdict, const std::string& source, int64_t run_id);
  void end_turn(int64_t turn_id, const TurnEnd& end,
                int64_t evaluation_id);  // within the caller's transaction
  // Runs `body` under the lock; a SQLite failure in it becomes a StoreError saying it could not `action`.
  template <class Body>
  auto guarded(std::string_view action, Body&& body);

  std::filesystem::path file_;
  SQLite::Database db_;
  std::recursive_mutex mutex_;  // one connection shared by the agent's threads
};

}  // namespace ptxbench
