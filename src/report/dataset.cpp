#include "report/dataset.h"

#include <algorithm>
#include <climits>
#include <stdexcept>

#include <fmt/format.h>

#include "eval/verdict.h"

namespace ptxbench::report {

using nlohmann::json;

namespace {

std::optional<int64_t> token_count(const json& usage, const char* key) {
  if (!usage.is_object() || !usage.contains(key) || !usage[key].is_number_integer()) return std::nullopt;
  return usage[key].get<int64_t>();
}

// Task ids end with their architecture ("-sm90a"); a task no longer in the registry keeps what its id says.
std::string arch_from_id(const std::string& id) {
  const size_t dash = id.rfind("-sm");
  if (dash == std::string::npos) return "?";
  std::string digits = id.substr(dash + 3);
  return "sm_" + digits;
}

bool listed(const std::vector<std::string>& list, const std::string& value) {
  return list.empty() || std::find(list.begin(), list.end(), value) != list.end();
}

}  // namespace

TurnRecord turn_record(const TurnRow& turn, const Verdict* verdict) {
  TurnRecord r{.index = turn.index,
               .error_class = turn.error_class,
               .code_hash = turn.code_hash,
               .outcome = turn.outcome,
               .feedback = turn.feedback};
  const json usage = turn.reply_meta.value("usage", json::object());
  r.input_tokens = token_count(usage, "input_tokens");
  r.output_tokens = token_count(usage, "output_tokens");
  r.reasoning_tokens = token_count(usage, "reasoning_tokens");
  if (turn.reply_meta.contains("latency_s") && turn.reply_meta["latency_s"].is_number())
    r.latency_s = turn.reply_meta["latency_s"].get<double>();
  if (turn.reply_meta.contains("reasoning") && turn.reply_meta["reasoning"].is_string())
    r.reasoning = turn.reply_meta["reasoning"].get<std::string>();
  if (!verdict) {  // no code: the turn failed before any stage
    r.correct = false;
    r.verified = false;
    return r;
  }
  r.correct = verdict->correct();
  r.verified = verdict->verified();
  if (r.verified.value_or(false)) {
    r.speedup = verdict->speedup;
    r.kernel_speedup = verdict->kernel_speedup();
  }
  r.host = verdict->host;
  for (const auto& stage : verdict->stages) {
    if (stage.status == StageStatus::skipped) continue;
    const bool cached = stage.name == "compile" && stage.details.value("cached", false);
    r.stages.push_back({cached ? "compile (cached)" : stage.name, stage.wall_s});
  }
  return r;
}

Dataset load(Store& store, const TaskRegistry& registry, const Selection& selection) {
  std::vector<RunRow> runs;
  if (selection.runs.empty()) {
    for (auto& run : store.runs(INT_MAX))
      if (run.kind == "agent") runs.push_back(std::move(run));
    std::reverse(runs.begin(), runs.end());  // oldest first
  } else {
    for (const int64_t id : selection.runs) {
      auto run = store.run(id);
      if (!run)
        throw std::invalid_argument(fmt::format("no run {} (ptxbench results --runs lists them)", id));
      if (run->kind != "agent")
        throw std::invalid_argument(
            fmt::format("run {} is a {} run, not an agent run; a report is made of agent runs (ptxbench "
                        "results --runs lists them by kind)",
                        id, run->kind));
      runs.push_back(std::move(*run));
    }
  }

  const TaskSelection selected = registry.select(selection.task_glob);
  Dataset data;
  for (const auto& run : runs) {
    RunInfo info{.id = run.id,
                 .model = run.args.value("model", std::string("?")),
                 .knowledge = run.args.value("knowledge", std::string("?")),
                 .track = run.args.value("track", std::string("cuda")),  // a run stored before tracks: CUDA
                 .started_at = run.started_at,
                 .finished_at = run.finished_at,
                 .max_turns = run.args.value("turns", 0),
                 .samples = run.args.value("samples", 0),
                 .cpu_only = run.args.value("cpu_only", false),
                 .context = run.args.value("context", std::string("compact")),
                 .feedback = run.args.value("feedback", std::string("verdict"))};
    if (!listed(selection.models, info.model)) continue;
    for (const auto& row : store.trajectories(run.id)) {
      // The trajectory's level: a run may split its trajectories among several (--knowledge a,b).
      if (!selected.matches(row.task_id) || !listed(selection.knowledge, row.knowledge)) continue;
      // The agent compared is the model with its context policy and its feedback: a choice other than the
      // default is part of its name in every grouped table and chart, so that two agents are never pooled.
      std::string agent = row.model;
      if (info.context != "compact") agent += " [" + info.context + " context]";
      if (info.feedback != "verdict") agent += " [" + info.feedback + " feedback]";
      TrajectoryRecord t{.run_id = run.id,
                         .trajectory_id = row.id,
                         .model = agent,
                         .knowledge = row.knowledge,
                         .task = row.task_id,
                         .track = info.track,
                         .sample = row.sample,
                         .status = row.status,
                         .max_turns = info.max_turns};
      if (const Task* task = registry.find(row.task_id)) {
        t.arch = task->arch;
        t.family = task->family;
      } else {
        t.arch = arch_from_id(row.task_id);
        t.family = row.task_id.substr(0, row.task_id.find('-'));
      }
      for (const auto& turn : store.turns(row.id)) {
        if (!turn.finished()) {
          ++t.unfinished_turns;
          continue;
        }
        std::optional<Verdict> verdict;
        if (turn.evaluation_id) verdict = store.verdict(turn.evaluation_id);
        t.turns.push_back(turn_record(turn, verdict ? &*verdict : nullptr));
        if (!turn.code_hash.empty() && !data.code.count(turn.code_hash))
          if (auto source = store.source(turn.code_hash)) data.code[turn.code_hash] = *source;
      }
      data.trajectories.push_back(std::move(t));
      ++info.trajectories;
    }
    if (info.trajectories > 0) data.runs.push_back(info);
  }
  return data;
}

}  // namespace ptxbench::report
