#include "agent/summary.h"

#include <fmt/format.h>

#include "eval/verdict.h"
#include "report/table.h"
#include "util/documents.h"
#include "util/format.h"

namespace ptxbench::agent {

using nlohmann::json;

namespace {

// Arithmetic over a set of trajectories (one task, or all of them). A trajectory is correct when a turn was;
// not correct when every turn was decided not to be; otherwise (no GPU of the task's architecture here) it is
// left out of the rate, as the report does: unknown is not 0%. The same for verified.
TaskSummary summarize_group(const std::string& task_id, const std::vector<const TrajectoryFacts*>& group) {
  TaskSummary s{.task_id = task_id, .trajectories = static_cast<int>(group.size())};
  int correct = 0, correct_n = 0, verified = 0, verified_n = 0, turns_to_success = 0;
  for (const auto* t : group) {
    bool any_correct = false, correct_open = false, verified_open = false, any_turn = false;
    std::optional<int> first_success;
    for (const auto& turn : t->turns) {
      if (!turn.finished) continue;
      any_turn = true;
      ++s.finished_turns;
      if (!turn.error_class.empty()) ++s.error_classes[turn.error_class];
      any_correct = any_correct || turn.correct == true;
      correct_open = correct_open || !turn.correct;
      verified_open = verified_open || !turn.verified;
      if (turn.verified == true) {
        if (!first_success) first_success = turn.index;
        keep_best_speedup(s.best_speedup, s.best_kernel_speedup, turn.speedup, turn.kernel_speedup);
      }
    }
    if (any_correct || (any_turn && !correct_open)) correct_n += 1, correct += any_correct;
    if (first_success || (any_turn && !verified_open)) verified_n += 1, verified += first_success.has_value();
    if (first_success) turns_to_success += *first_success;
  }
  if (correct_n > 0) s.correct_rate = static_cast<double>(correct) / correct_n;
  if (verified_n > 0) s.verified_rate = static_cast<double>(verified) / verified_n;
  if (verified > 0) s.turns_to_verified_mean = static_cast<double>(turns_to_success) / verified;
  return s;
}

}  // namespace

TurnFacts turn_facts(const TurnRow& turn, const Verdict* verdict) {
  TurnFacts f{.index = turn.index, .finished = turn.finished(), .error_class = turn.error_class};
  if (!verdict) {  // no code: the turn failed before any stage
    f.correct = f.verified = false;
  } else {
    f.correct = verdict->correct();
    f.verified = verdict->verified();
    f.speedup = verdict->speedup;
    f.kernel_speedup = verdict->kernel_speedup();
  }
  return f;
}

RunSummary summarize(int64_t run_id, const std::vector<TrajectoryFacts>& trajectories) {
  RunSummary summary{.run_id = run_id};
  std::map<std::string, std::vector<const TrajectoryFacts*>> by_task;
  std::vector<const TrajectoryFacts*> all;
  for (const auto& t : trajectories) {
    by_task[t.task_id].push_back(&t);
    all.push_back(&t);
  }
  for (const auto& [task, group] : by_task) summary.tasks.push_back(summarize_group(task, group));
  summary.total = summarize_group("all", all);
  return summary;
}

RunSummary summarize_run(Store& store, int64_t run_id) {
  std::vector<TrajectoryFacts> facts;
  for (const auto& row : store.trajectories(run_id)) {
    TrajectoryFacts t{.task_id = row.task_id, .sample = row.sample, .status = row.status};
    for (const auto& turn : store.turns(row.id)) {
      std::optional<Verdict> verdict;
      if (turn.evaluation_id) verdict = store.verdict(turn.evaluation_id);
      t.turns.push_back(turn_facts(turn, verdict ? &*verdict : nullptr));
    }
    facts.push_back(std::move(t));
  }
  return summarize(run_id, facts);
}

json to_json(const TaskSummary& s) {
  auto optional = [](std::optional<double> v) { return v ? json(*v) : json(nullptr); };
  return {{"task", s.task_id},
          {"trajectories", s.trajectories},
          {"finished_turns", s.finished_turns},
          {"correct_rate", optional(s.correct_rate)},
          {"verified_rate", optional(s.verified_rate)},
          {"best_speedup", optional(s.best_speedup)},
          {"best_kernel_speedup", optional(s.best_kernel_speedup)},
          {"turns_to_verified_mean", optional(s.turns_to_verified_mean)},
          {"error_classes", s.error_classes}};
}

json to_json(const RunSummary& summary) {
  json tasks = json::array();
  for (const auto& t : summary.tasks) tasks.push_back(to_json(t));
  return {{"tasks", tasks}, {"total", to_json(summary.total)}};  // the run's id is the document's
}

std::string render(const RunSummary& summary) {
  std::vector<std::string> header = {"TASK",     "TRAJ",         "TURNS",   "CORRECT",
                                     "VERIFIED", "BEST SPEEDUP", "KERNELS", "TURNS TO OK"};
  for (auto c : kFailureClasses) header.push_back(to_string(c));
  TextTable table(header);
  auto add = [&](const TaskSummary& s) {
    std::vector<std::string> row = {
        s.task_id,
        std::to_string(s.trajectories),
        std::to_string(s.finished_turns),
        percent(s.correct_rate),
        percent(s.verified_rate),
        s.best_speedup ? fmt::format("{:.3f}x", *s.best_speedup) : "-",
        s.best_kernel_speedup ? fmt::format("{:.3f}x", *s.best_kernel_speedup) : "-",
        s.turns_to_verified_mean ? fmt::format("{:.1f}", *s.turns_to_verified_mean) : "-"};
    for (auto c : kFailureClasses) {
      auto it = s.error_classes.find(to_string(c));
      row.push_back(it == s.error_classes.end() ? "0" : std::to_string(it->second));
    }
    table.add_row(row);
  };
  for (const auto& t : summary.tasks) add(t);
  if (summary.tasks.size() > 1) add(summary.total);
  return table.render();
}

json export_trajectories(Store& store, int64_t run_id, bool timestamps) {
  json out = json::array();
  for (const auto& row : store.trajectories(run_id)) {
    json turns = json::array();
    for (const auto& turn : store.turns(row.id)) {
      json t = {{"turn", turn.index},
                {"request", turn.request},
                {"reply", turn.reply ? json(*turn.reply) : json(nullptr)},
                {"code", nullptr},
                {"submission", or_null(turn.code_hash)},
                {"error_class", turn.error_class},
                {"outcome", turn.outcome},
                {"feedback", turn.feedback},
                {"finished", turn.finished()},
                {"verdict", nullptr}};
      if (!turn.code_hash.empty())
        if (auto code = store.source(turn.code_hash)) t["code"] = *code;
      json meta = turn.reply_meta;
      if (turn.evaluation_id)
        if (auto verdict = store.verdict(turn.evaluation_id)) {
          json v = to_json(*verdict);
          if (!timestamps) {
            v.erase("created_at");
            // The stages' numbers differ between two compiles of one source (nvcc names anonymous namespaces
            // with a per-compile hash; the cache decides `cached`; times): statuses and messages remain.
            for (auto& stage : v["stages"]) {
              stage.erase("wall_s");
              stage.erase("details");
            }
          }
          t["verdict"] = v;
        }
      if (timestamps) {
        t["evaluation_id"] = or_null(turn.evaluation_id);
        t["requested_at"] = turn.requested_at;
        t["replied_at"] = or_null(turn.replied_at);
        t["finished_at"] = or_null(turn.finished_at);
      } else {
        meta.erase("latency_s");
      }
      t["reply_meta"] = meta;
      turns.push_back(t);
    }
    json traj = {{"task", row.task_id},        {"sample", row.sample}, {"model", row.model},
                 {"knowledge", row.knowledge}, {"status", row.status}, {"turns", turns}};
    if (timestamps) {
      traj["created_at"] = row.created_at;
      traj["updated_at"] = row.updated_at;
    }
    out.push_back(traj);
  }
  return out;
}

}  // namespace ptxbench::agent
