// What a report is made of: the trajectories of the selected agent runs, each turn reduced to what the report
// counts (docs/report.md says how each is decided).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/store.h"
#include "task/task.h"

namespace ptxbench::report {

// Which trajectories: every agent run unless runs are named; each list, when not empty, must contain the
// run's value.
struct Selection {
  std::vector<int64_t> runs;
  std::vector<std::string> models;
  std::vector<std::string> knowledge;
  std::string task_glob = "*";  // over task ids, as run --tasks
};

struct StageTime {
  std::string stage;  // "compile", "compile (cached)", "static", ...
  double wall_s = 0;
};

struct TurnRecord {
  int index = 0;
  std::string error_class;  // empty: the turn did not fail
  // Decided by the verdict; none when this host could not tell (no GPU of the task's architecture, a
  // static-only task) and nothing failed that would decide it.
  std::optional<bool> correct;
  std::optional<bool> verified;
  std::optional<double> speedup;         // of a verified turn only
  std::optional<double> kernel_speedup;  // the same, of its kernels alone (Verdict::kernel_speedup)
  std::optional<int64_t> input_tokens, output_tokens, reasoning_tokens;
  std::optional<double> latency_s;  // the model call, retries included
  std::vector<StageTime> stages;    // the stages that ran
  std::string host;                 // the verdict's ("no GPU" or the GPU); empty without a verdict
  std::string code_hash;            // empty: no code
  std::string outcome;
  std::string feedback;  // what the next turn showed the model about this one
  // The reasoning text the server returned beside the reply (vLLM, SGLang, OpenRouter; the turn's
  // reply_meta), empty when it returned none.
  std::string reasoning;
};

struct TrajectoryRecord {
  int64_t run_id = 0;
  int64_t trajectory_id = 0;
  std::string model, knowledge, arch, family, task;
  std::string track = "cuda";  // the run's (track/track.h)
  int sample = 0;
  std::string status;
  int max_turns = 0;               // the run's budget
  std::vector<TurnRecord> turns;   // finished turns, in order
  int unfinished_turns = 0;        // a turn begun but not judged (a killed or failed run)
};

struct RunInfo {
  int64_t id = 0;
  std::string model, knowledge, track, started_at, finished_at;
  int max_turns = 0;
  int samples = 0;
  int trajectories = 0;  // selected
  bool cpu_only = false;
  std::string context = "compact";  // the run's --context (a run stored before policies: the default)
  std::string feedback = "verdict";  // the run's --feedback (a run stored before profiles: the verdict)
};

struct Dataset {
  std::vector<RunInfo> runs;
  std::vector<TrajectoryRecord> trajectories;
  std::map<std::string, std::string> code;  // by hash: every turn's code, once
};

// The agent runs of `store` that `selection` names, with their trajectories. Throws std::invalid_argument for a
// named run that does not exist or is not an agent run.
Dataset load(Store& store, const TaskRegistry& registry, const Selection& selection);

// One turn's facts from its stored row and verdict (null: none, e.g. no code in the reply).
TurnRecord turn_record(const TurnRow& turn, const Verdict* verdict);

}  // namespace ptxbench::report
