// The results store: SQLite (WAL), one file. Submissions by content hash, runs, and one row per evaluation
// holding its verdict document. Safe to open from several processes at once.
#pragma once

#include <SQLiteCpp/Database.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eval/verdict.h"

namespace ptxbench {

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
  std::string task_glob = "*";
  int limit = 100;
};

class Store {
 public:
  static constexpr int kSchemaVersion = 1;

  explicit Store(const std::filesystem::path& file);

  int64_t begin_run(const std::string& kind, const nlohmann::json& args);
  void finish_run(int64_t run_id);
  // Stores the submission (once per content hash) and the verdict; returns the evaluation id.
  int64_t add_evaluation(const Verdict& verdict, const std::string& source, int64_t run_id = 0);

  std::vector<RunRow> runs(int limit = 20);
  std::vector<EvaluationRow> evaluations(const EvaluationFilter& filter);
  std::optional<Verdict> verdict(int64_t evaluation_id);
  std::optional<std::string> source(const std::string& submission_hash);

 private:
  void migrate();
  SQLite::Database db_;
};

}  // namespace ptxbench
