// The main job's embedded default: evaluate the solutions shipped in solutions/ on every task they are meant
// for, store the verdicts, and compare each with what its manifest entry expects.
#pragma once

#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "eval/evaluate.h"
#include "eval/evaluator.h"
#include "task/task.h"

namespace ptxbench {

// One entry of solutions/solutions.json.
struct ShippedSolution {
  std::filesystem::path path;  // relative to solutions/
  // "track", else the one the path's extension names (.py: triton), else cuda; the entry applies to the tasks
  // that accept it.
  const Track* track = &cuda_track();
  std::string source;   // what is evaluated: the "prelude" files' text, then the file's own
  std::string tasks;    // glob over task ids
  std::string purpose;  // one line, for people
  // Expected status per stage ("compile": "failed") or "overall". A stage that was skipped here cannot be
  // compared and counts as unchecked, not as a mismatch.
  std::map<std::string, std::string> expect;
  // Text a stage's message must contain ("instructions": "profiled call"): which defence caught a trick, not
  // only that the stage failed.
  std::map<std::string, std::string> expect_message;
};

// Reads DIR/solutions.json and every solution and prelude it names (read_solution_file; together at most
// kMaxSolutionBytes). Throws ConfigError naming the entry for anything wrong, before anything is evaluated.
std::vector<ShippedSolution> load_solution_manifest(const std::filesystem::path& solutions_dir);

struct SolutionRunRow {
  std::string task_id;
  std::string solution;  // path relative to solutions/
  Verdict verdict;
  int64_t evaluation_id = 0;
  std::vector<std::string> mismatches;  // "correct: expected passed, got failed"
  int unchecked = 0;                    // expectations on skipped stages
};

// The verdicts a run already holds, for its resumption (run --resume): those of each (entry's path, task,
// submission: the source's hash, as the verdict keeps it), oldest first, each taken by one pair of the
// manifest, in the manifest's order (two entries may name the same file). A verdict of another source (the
// file changed since) is not taken; the caller leaves out the harness errors (the host's failure), whose
// pairs are judged again.
class PriorVerdicts {
 public:
  void add(const std::string& path, Verdict verdict, int64_t evaluation_id);
  // The oldest verdict left for the pair, as its row (expectations not yet compared), or none.
  std::optional<SolutionRunRow> take(const ShippedSolution& solution, const Task& task);
  size_t taken() const { return taken_; }

 private:
  std::map<std::tuple<std::string, std::string, std::string>, std::deque<SolutionRunRow>> rows_;
  size_t taken_ = 0;
};

struct SolutionRunOptions {
  std::string task_glob = "*";
  std::string solution_glob = "*";  // only the entries whose path (as the manifest gives it) matches
  std::vector<std::string> archs;   // task architectures to include
  const Track* track = nullptr;     // only the entries of this track; nullptr: every entry
  int parallel = 1;                 // evaluations at once
  PriorVerdicts* prior = nullptr;   // a resumed run's verdicts: their pairs are not judged again
};

// Evaluates every (solution, task) pair of `manifest` with `evaluator` (on this machine or through a
// service), a task only when it accepts the solution's track, and compares each verdict with the entry's
// expectations, `parallel` at a time. `record` gets each row as soon as it is judged, with its entry, to
// store it (setting evaluation_id) and report it, one row at a time; the rows come back in the manifest's
// order. A pair that options.prior holds a verdict for takes that one (its row is not recorded again).
std::vector<SolutionRunRow> run_shipped_solutions(
    const std::vector<ShippedSolution>& manifest, const TaskRegistry& registry,
    const SolutionRunOptions& options, Evaluator& evaluator,
    const std::function<void(const ShippedSolution&, SolutionRunRow&)>& record);

}  // namespace ptxbench
