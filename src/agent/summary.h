// What a run of trajectories came to, per task, and the trajectories themselves as JSON (the export).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/feedback.h"
#include "store/store.h"

namespace ptxbench::agent {

// What the summary needs of one turn.
struct TurnFacts {
  int index = 0;
  bool finished = false;
  std::string error_class;  // empty: did not fail
  // Verdict::correct() and verified(): nothing when the turn's verdict could not decide (no GPU here).
  std::optional<bool> correct;
  std::optional<bool> verified;
  std::optional<double> speedup;
  std::optional<double> kernel_speedup;  // Verdict::kernel_speedup(): its kernels alone
};

struct TrajectoryFacts {
  std::string task_id;
  int sample = 0;
  std::string status;
  std::vector<TurnFacts> turns;
};

struct TaskSummary {
  std::string task_id;
  int trajectories = 0;
  int finished_turns = 0;
  // Shares of the trajectories whose outcome was decided (report.md's meaning): none when none was.
  std::optional<double> correct_rate;   // with a correct turn
  std::optional<double> verified_rate;  // with a verified turn (correct + instructions executed + timed)
  std::optional<double> best_speedup;   // over verified turns
  std::optional<double> best_kernel_speedup;  // that turn's kernels alone
  std::optional<double>
      turns_to_verified_mean;  // the first verified turn's index, over trajectories that have one
  std::map<std::string, int> error_classes;  // failed turns by class (docs/agent.md)
};

struct RunSummary {
  int64_t run_id = 0;
  std::vector<TaskSummary> tasks;
  TaskSummary total;  // task_id "all"
};

TurnFacts turn_facts(const TurnRow& turn, const Verdict* verdict);
RunSummary summarize(int64_t run_id, const std::vector<TrajectoryFacts>& trajectories);
RunSummary summarize_run(Store& store, int64_t run_id);

nlohmann::json to_json(const TaskSummary& summary);
nlohmann::json to_json(const RunSummary& summary);
std::string render(const RunSummary& summary);  // a text table

// Every trajectory of the run: task, sample, model, knowledge, status, and each turn's request, reply, code,
// verdict, error class and feedback. `timestamps` false leaves out what differs between two equal runs
// (times, latencies, evaluation ids, the verdict's creation time, and the stages' wall times and details:
// compiler output names anonymous namespaces with a per-compile hash): for comparing runs with a
// deterministic judge.
nlohmann::json export_trajectories(Store& store, int64_t run_id, bool timestamps = true);

}  // namespace ptxbench::agent
