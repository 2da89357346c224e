#include "report/metrics.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "agent/feedback.h"
#include "agent/prompt.h"
#include "agent/trajectory.h"
#include "eval/verdict.h"
#include "runner/statistics.h"

namespace ptxbench::report {

using nlohmann::ordered_json;

namespace {

constexpr double kZ95 = 1.959963984540054;  // the standard normal's 97.5% quantile

ordered_json optional(std::optional<double> v) {
  return v ? ordered_json(*v) : ordered_json(nullptr);
}

// Sorts "all" before any other value of a key column.
std::string order_key(const std::string& value) {
  return value == kAll ? std::string() : value;
}

}  // namespace

int knowledge_rank(const std::string& knowledge) {
  const auto level = agent::knowledge_level_from_string(knowledge);
  return static_cast<int>(level ? static_cast<size_t>(*level) : agent::kKnowledgeLevels.size());
}

namespace {

// Sorts knowledge levels in the ablation's order (params, templates, contracts), any other after them.
std::pair<int, std::string> knowledge_key(const std::string& knowledge) {
  return {knowledge_rank(knowledge), knowledge};
}

}  // namespace

Rate wilson(int k, int n) {
  Rate r{.k = k, .n = n};
  if (n <= 0) return r;
  const double nn = n, p = k / nn, z2 = kZ95 * kZ95;
  const double denominator = 1 + z2 / nn;
  const double centre = (p + z2 / (2 * nn)) / denominator;
  const double half = kZ95 * std::sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn)) / denominator;
  r.rate = p;
  r.lo = std::max(0.0, centre - half);
  r.hi = std::min(1.0, centre + half);
  return r;
}

Spread spread(std::vector<double> values) {
  Spread s{.n = static_cast<int>(values.size())};
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  const double n = static_cast<double>(values.size());
  const double mean = std::accumulate(values.begin(), values.end(), 0.0) / n;
  s.mean = mean;
  s.median = runner::percentile(values, 0.5);
  s.min = values.front();
  s.max = values.back();
  if (values.size() >= 2) {
    double squares = 0;
    for (const double v : values) squares += (v - mean) * (v - mean);
    s.sd = std::sqrt(squares / (n - 1));
  }
  return s;
}

WithinLimit within(const TrajectoryRecord& t, int limit) {
  WithinLimit w;
  const int finished = t.turns.empty() ? 0 : t.turns.back().index;
  w.counted = limit <= t.max_turns && (agent::is_terminal(t.status) || finished >= limit);
  bool any_correct = false, correct_undecided = false, any_verified = false, verified_undecided = false;
  int considered = 0;
  for (const auto& turn : t.turns) {
    if (turn.index > limit) break;
    ++considered;
    if (turn.correct == true) any_correct = true;
    if (!turn.correct) correct_undecided = true;
    if (turn.verified == true) {
      any_verified = true;
      if (!w.first_verified) w.first_verified = turn.index;
      keep_best_speedup(w.best_speedup, w.best_kernel_speedup, turn.speedup, turn.kernel_speedup);
    }
    if (!turn.verified) verified_undecided = true;
  }
  if (considered == 0) return w;
  if (any_correct)
    w.correct = true;
  else if (!correct_undecided)
    w.correct = false;
  if (any_verified)
    w.verified = true;
  else if (!verified_undecided)
    w.verified = false;
  return w;
}

namespace {

struct GroupKey {
  std::string model, knowledge, arch, family, task, track;
  auto tied() const {
    return std::make_tuple(model, knowledge_key(knowledge), arch, order_key(family), order_key(task), track);
  }
  bool operator<(const GroupKey& o) const { return tied() < o.tied(); }
};

// Each trajectory in its task's group, its family's ("all" tasks) and the architecture's ("all" families).
std::map<GroupKey, std::vector<const TrajectoryRecord*>> metric_groups(const Dataset& data) {
  std::map<GroupKey, std::vector<const TrajectoryRecord*>> groups;
  for (const auto& t : data.trajectories) {
    GroupKey key{t.model, t.knowledge, t.arch, t.family, t.task, t.track};
    groups[key].push_back(&t);
    key.task = kAll;
    groups[key].push_back(&t);
    key.family = kAll;
    groups[key].push_back(&t);
  }
  return groups;
}

// The limits a group is shown at: each of 1, 4, 8 that some run's budget reaches, and "max" (each trajectory at
// its own run's budget) unless that is one of them for every trajectory.
std::vector<std::string> limits_of(const std::vector<const TrajectoryRecord*>& group) {
  std::set<int> budgets;
  for (const auto* t : group) budgets.insert(t->max_turns);
  std::vector<std::string> limits;
  for (const int limit : kTurnLimits)
    if (limit <= *budgets.rbegin()) limits.push_back(std::to_string(limit));
  const bool max_is_standard = budgets.size() == 1 && std::find(std::begin(kTurnLimits), std::end(kTurnLimits),
                                                                *budgets.begin()) != std::end(kTurnLimits);
  if (!max_is_standard) limits.push_back("max");
  return limits;
}

std::string budgets_text(const std::vector<const TrajectoryRecord*>& group) {
  std::set<int> budgets;
  for (const auto* t : group) budgets.insert(t->max_turns);
  return fmt::format("{}", fmt::join(budgets, "/"));
}

void put_rate(Row& row, const std::string& prefix, const Rate& r) {
  row[prefix + "_k"] = r.k;
  row[prefix + "_n"] = r.n;
  row[prefix + "_rate"] = optional(r.rate);
  row[prefix + "_lo"] = optional(r.lo);
  row[prefix + "_hi"] = optional(r.hi);
}

void put_spread(Row& row, const std::string& prefix, const Spread& s) {
  row[prefix + "_n"] = s.n;
  row[prefix + "_mean"] = optional(s.mean);
  row[prefix + "_median"] = optional(s.median);
  row[prefix + "_min"] = optional(s.min);
  row[prefix + "_max"] = optional(s.max);
  row[prefix + "_sd"] = optional(s.sd);
}

std::vector<std::string> columns_of(const std::vector<Row>& rows, std::vector<std::string> fallback) {
  if (rows.empty()) return fallback;
  std::vector<std::string> columns;
  for (const auto& [key, value] : rows.front().items()) columns.push_back(key);
  return columns;
}

// The trajectories of a group at one turn limit, as the rates count them: those not counted there yet, and of
// the counted, how many were correct and verified among those decided.
struct RateCounts {
  int counted = 0, not_yet = 0, correct = 0, correct_n = 0, verified = 0, verified_n = 0;

  // Counts one trajectory; false when it is not counted at this limit yet.
  bool add(const WithinLimit& w) {
    if (!w.counted) {
      ++not_yet;
      return false;
    }
    ++counted;
    if (w.correct) correct_n += 1, correct += *w.correct;
    if (w.verified) verified_n += 1, verified += *w.verified;
    return true;
  }

  void put(Row& row) const {
    row["trajectories"] = counted;
    row["not_yet_counted"] = not_yet;
    put_rate(row, "correct", wilson(correct, correct_n));
    put_rate(row, "verified", wilson(verified, verified_n));
  }
};

Table metrics_table(const Dataset& data) {
  Table table{.name = "metrics"};
  for (const auto& [key, group] : metric_groups(data)) {
    for (const std::string& limit_text : limits_of(group)) {
      RateCounts counts;
      std::vector<double> speedups, kernel_speedups, turns_to_verified;
      std::optional<double> best, kernels_of_best;  // the best trajectory's speedup, and its kernels'
      for (const auto* t : group) {
        const int limit = limit_text == "max" ? t->max_turns : std::stoi(limit_text);
        if (limit > t->max_turns) continue;  // beyond this run's budget: not part of this limit
        const WithinLimit w = within(*t, limit);
        if (!counts.add(w)) continue;
        if (w.best_speedup) speedups.push_back(*w.best_speedup);
        if (w.best_kernel_speedup) kernel_speedups.push_back(*w.best_kernel_speedup);
        keep_best_speedup(best, kernels_of_best, w.best_speedup, w.best_kernel_speedup);
        if (w.first_verified) turns_to_verified.push_back(*w.first_verified);
      }
      Row row = {{"model", key.model},   {"knowledge", key.knowledge}, {"arch", key.arch},
                 {"family", key.family}, {"task", key.task},           {"track", key.track},
                 {"turn_limit", limit_text}, {"max_turns", budgets_text(group)}};
      counts.put(row);
      put_spread(row, "speedup", spread(speedups));
      put_spread(row, "kernel_speedup", spread(kernel_speedups));
      row["kernel_speedup_of_best"] = optional(kernels_of_best);
      const Spread turns = spread(turns_to_verified);
      row["turns_to_verified_n"] = turns.n;
      row["turns_to_verified_mean"] = optional(turns.mean);
      table.rows.push_back(std::move(row));
    }
  }
  table.columns = columns_of(table.rows, {});
  return table;
}

// The rates at every turn limit from 1 to the group's largest budget: the step curve the page draws. Per
// model x knowledge x arch x family (and "all" families) x track; a trajectory takes part at the limits within
// its run's budget, and is counted at each as metrics_table counts it.
Table turn_curve_table(const Dataset& data) {
  Table table{.name = "turn_curve"};
  for (const auto& [key, group] : metric_groups(data)) {
    if (key.task != kAll) continue;
    int largest = 0;
    for (const auto* t : group) largest = std::max(largest, t->max_turns);
    for (int limit = 1; limit <= largest; ++limit) {
      RateCounts counts;
      for (const auto* t : group)
        if (limit <= t->max_turns) counts.add(within(*t, limit));
      Row row = {{"model", key.model},   {"knowledge", key.knowledge}, {"arch", key.arch},
                 {"family", key.family}, {"track", key.track},         {"turn", limit},
                 {"max_turns", budgets_text(group)}};
      counts.put(row);
      table.rows.push_back(std::move(row));
    }
  }
  table.columns = columns_of(table.rows, {"model", "knowledge", "arch", "family", "track", "turn"});
  return table;
}

// A finished turn's outcome: its error class, else "verified", else "undecided" (nothing failed; this host
// could not judge it).
std::string outcome_of(const TurnRecord& turn) {
  if (!turn.error_class.empty()) return turn.error_class;
  return turn.verified == true ? "verified" : "undecided";
}

std::vector<std::string> outcome_order() {
  std::vector<std::string> order;
  for (const auto c : agent::kFailureClasses) order.push_back(agent::to_string(c));
  order.push_back("verified");
  order.push_back("undecided");
  return order;
}

Table error_class_table(const Dataset& data) {
  // (model, knowledge, arch, family, track) -> turn -> outcome -> count
  std::map<GroupKey, std::map<int, std::map<std::string, int>>> counts;
  for (const auto& t : data.trajectories)
    for (const auto& turn : t.turns) {
      GroupKey key{t.model, t.knowledge, t.arch, t.family, "", t.track};
      ++counts[key][turn.index][outcome_of(turn)];
      key.family = kAll;
      ++counts[key][turn.index][outcome_of(turn)];
    }
  const std::vector<std::string> order = outcome_order();
  Table table{.name = "error_classes",
              .columns = {"model", "knowledge", "arch", "track", "family", "turn", "outcome", "turns", "of",
                          "share"}};
  for (const auto& [key, by_turn] : counts)
    for (const auto& [turn, by_outcome] : by_turn) {
      int of = 0;
      for (const auto& [outcome, n] : by_outcome) of += n;
      for (const auto& outcome : order) {
        auto it = by_outcome.find(outcome);
        if (it == by_outcome.end()) continue;
        table.rows.push_back({{"model", key.model},
                              {"knowledge", key.knowledge},
                              {"arch", key.arch},
                              {"track", key.track},
                              {"family", key.family},
                              {"turn", turn},
                              {"outcome", outcome},
                              {"turns", it->second},
                              {"of", of},
                              {"share", static_cast<double>(it->second) / of}});
      }
    }
  return table;
}

Spread spread_of(const std::vector<std::optional<double>>& values) {
  std::vector<double> present;
  for (const auto& v : values)
    if (v) present.push_back(*v);
  return spread(present);
}

std::optional<double> as_double(std::optional<int64_t> v) {
  return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
}

Table tokens_per_turn_table(const Dataset& data) {
  struct Sums {
    std::vector<std::optional<double>> input, output, reasoning, latency;
  };
  // (model, knowledge, track, turn), knowledge in the ablation's order
  std::map<std::tuple<std::string, std::pair<int, std::string>, std::string, int>, Sums> groups;
  for (const auto& t : data.trajectories)
    for (const auto& turn : t.turns) {
      Sums& s = groups[{t.model, knowledge_key(t.knowledge), t.track, turn.index}];
      s.input.push_back(as_double(turn.input_tokens));
      s.output.push_back(as_double(turn.output_tokens));
      s.reasoning.push_back(as_double(turn.reasoning_tokens));
      s.latency.push_back(turn.latency_s);
    }
  Table table{.name = "tokens_per_turn"};
  for (const auto& [key, s] : groups) {
    const auto& [model, knowledge, track, turn] = key;
    const Spread in = spread_of(s.input), out = spread_of(s.output), reasoning = spread_of(s.reasoning),
                 latency = spread_of(s.latency);
    table.rows.push_back({{"model", model},
                          {"knowledge", knowledge.second},
                          {"track", track},
                          {"turn", turn},
                          {"turns", s.input.size()},
                          {"with_usage", in.n},
                          {"input_tokens_mean", optional(in.mean)},
                          {"output_tokens_mean", optional(out.mean)},
                          {"reasoning_tokens_mean", optional(reasoning.mean)},
                          {"reasoning_tokens_median", optional(reasoning.median)},
                          {"with_latency", latency.n},
                          {"latency_s_mean", optional(latency.mean)},
                          {"latency_s_median", optional(latency.median)},
                          {"latency_s_max", optional(latency.max)}});
  }
  table.columns = columns_of(table.rows, {"model", "knowledge", "track", "turn", "turns"});
  return table;
}

// What a verified trajectory cost up to and including its first verified turn.
Table tokens_per_verified_table(const Dataset& data) {
  struct Costs {
    int trajectories = 0;
    std::vector<double> turns, input, output, reasoning, latency;
  };
  // (model, knowledge, track, family), knowledge in the ablation's order
  std::map<std::tuple<std::string, std::pair<int, std::string>, std::string, std::string>, Costs> groups;
  for (const auto& t : data.trajectories) {
    for (const std::string& family : {t.family, std::string(kAll)}) {
      Costs& c = groups[{t.model, knowledge_key(t.knowledge), t.track, order_key(family)}];
      ++c.trajectories;
      const WithinLimit w = within(t, t.max_turns);
      if (!w.first_verified) continue;
      double in = 0, out = 0, reasoning = 0, latency = 0;
      for (const auto& turn : t.turns) {
        if (turn.index > *w.first_verified) break;
        in += static_cast<double>(turn.input_tokens.value_or(0));
        out += static_cast<double>(turn.output_tokens.value_or(0));
        reasoning += static_cast<double>(turn.reasoning_tokens.value_or(0));
        latency += turn.latency_s.value_or(0);
      }
      c.turns.push_back(*w.first_verified);
      c.input.push_back(in);
      c.output.push_back(out);
      c.reasoning.push_back(reasoning);
      c.latency.push_back(latency);
    }
  }
  Table table{.name = "tokens_per_verified_trajectory"};
  for (const auto& [key, c] : groups) {
    const auto& [model, knowledge, track, family] = key;
    const Spread reasoning = spread(c.reasoning), latency = spread(c.latency);
    table.rows.push_back({{"model", model},
                          {"knowledge", knowledge.second},
                          {"track", track},
                          {"family", family.empty() ? std::string(kAll) : family},
                          {"trajectories", c.trajectories},
                          {"verified", c.turns.size()},
                          {"turns_mean", optional(spread(c.turns).mean)},
                          {"input_tokens_mean", optional(spread(c.input).mean)},
                          {"output_tokens_mean", optional(spread(c.output).mean)},
                          {"reasoning_tokens_mean", optional(reasoning.mean)},
                          {"reasoning_tokens_median", optional(reasoning.median)},
                          {"latency_s_mean", optional(latency.mean)},
                          {"latency_s_median", optional(latency.median)}});
  }
  table.columns =
      columns_of(table.rows, {"model", "knowledge", "track", "family", "trajectories", "verified"});
  return table;
}

Table stage_time_table(const Dataset& data) {
  std::map<std::string, std::map<std::string, std::vector<double>>> times;  // host -> stage -> seconds
  for (const auto& t : data.trajectories)
    for (const auto& turn : t.turns)
      for (const auto& stage : turn.stages) times[turn.host][stage.stage].push_back(stage.wall_s);
  std::vector<std::string> order;
  for (const char* stage : kStageNames) {
    order.push_back(stage);
    if (std::string(stage) == "compile") order.push_back("compile (cached)");
  }
  Table table{.name = "stage_times"};
  for (const auto& [host, by_stage] : times)
    for (const auto& stage : order) {
      auto it = by_stage.find(stage);
      if (it == by_stage.end()) continue;
      std::vector<double> sorted = it->second;
      std::sort(sorted.begin(), sorted.end());
      const Spread s = spread(sorted);
      table.rows.push_back({{"host", host},
                            {"stage", stage},
                            {"evaluations", s.n},
                            {"mean_s", optional(s.mean)},
                            {"median_s", optional(s.median)},
                            {"p90_s", runner::percentile(sorted, 0.9)},
                            {"max_s", optional(s.max)},
                            {"total_s", std::accumulate(sorted.begin(), sorted.end(), 0.0)}});
    }
  table.columns = columns_of(table.rows, {"host", "stage", "evaluations"});
  return table;
}

ordered_json tri_state(std::optional<bool> v) {
  return v ? ordered_json(*v) : ordered_json(nullptr);
}

Table trajectory_table(const Dataset& data) {
  Table table{.name = "trajectories"};
  for (const auto& t : data.trajectories) {
    const WithinLimit w = within(t, t.max_turns);
    std::optional<int64_t> in, out, reasoning;
    double latency = 0;
    auto add = [](std::optional<int64_t>& sum, std::optional<int64_t> v) {
      if (v) sum = sum.value_or(0) + *v;
    };
    for (const auto& turn : t.turns) {
      add(in, turn.input_tokens);
      add(out, turn.output_tokens);
      add(reasoning, turn.reasoning_tokens);
      latency += turn.latency_s.value_or(0);
    }
    auto count = [](std::optional<int64_t> v) { return v ? ordered_json(*v) : ordered_json(nullptr); };
    table.rows.push_back(
        {{"run_id", t.run_id},
         {"model", t.model},
         {"knowledge", t.knowledge},
         {"arch", t.arch},
         {"track", t.track},
         {"family", t.family},
         {"task", t.task},
         {"sample", t.sample},
         {"status", t.status},
         {"max_turns", t.max_turns},
         {"turns", t.turns.size()},
         {"correct", tri_state(w.correct)},
         {"verified", tri_state(w.verified)},
         {"first_verified_turn", w.first_verified ? ordered_json(*w.first_verified) : nullptr},
         {"best_speedup", optional(w.best_speedup)},
         {"best_kernel_speedup", optional(w.best_kernel_speedup)},
         {"input_tokens", count(in)},
         {"output_tokens", count(out)},
         {"reasoning_tokens", count(reasoning)},
         {"latency_s", latency}});
  }
  table.columns =
      columns_of(table.rows, {"run_id", "model", "knowledge", "arch", "track", "family", "task", "sample"});
  return table;
}

// The task's id without its architecture ("gemm-bf16-n4096-k4096"), to set architectures side by side.
std::string task_base(const std::string& task) {
  const size_t dash = task.rfind("-sm");
  return task == kAll || dash == std::string::npos ? task : task.substr(0, dash);
}

// The largest limit every compared trajectory reached within its budget: their common budget when they share
// one, else the largest standard limit within the smallest budget.
std::string common_limit(const std::vector<const TrajectoryRecord*>& compared) {
  std::set<int> budgets;
  for (const auto* t : compared) budgets.insert(t->max_turns);
  const int smallest = *budgets.begin();
  const bool standard =
      std::find(std::begin(kTurnLimits), std::end(kTurnLimits), smallest) != std::end(kTurnLimits);
  if (budgets.size() == 1) return standard ? std::to_string(smallest) : "max";
  std::string limit = "1";
  for (const int l : kTurnLimits)
    if (l <= smallest) limit = std::to_string(l);
  return limit;
}

ordered_json cell_of(const Row& m) {
  ordered_json cell;
  for (const char* key :
       {"trajectories", "correct_k", "correct_n", "correct_rate", "correct_lo", "correct_hi", "verified_k",
        "verified_n", "verified_rate", "verified_lo", "verified_hi", "speedup_n", "speedup_max", "speedup_mean",
        "kernel_speedup_of_best"})
    cell[key] = m[key];
  return cell;
}

// One side-by-side view: `dimension` varies across columns; the other keys are fixed per view.
void add_views(const Dataset& data, const Table& metrics, const std::string& dimension, const std::string& title,
               ordered_json& views) {
  auto value_of = [&](const TrajectoryRecord& t, const std::string& key) -> std::string {
    if (key == "model") return t.model;
    if (key == "knowledge") return t.knowledge;
    if (key == "arch") return t.arch;
    return t.track;
  };
  const std::vector<std::string> all_keys = {"model", "knowledge", "arch", "track"};
  std::vector<std::string> fixed_keys;
  for (const auto& k : all_keys)
    if (k != dimension) fixed_keys.push_back(k);
  // A value's place among its key's: knowledge levels in the ablation's order, other keys' alphabetically.
  auto sort_key = [](const std::string& key, const std::string& value) {
    return std::make_pair(key == "knowledge" ? knowledge_rank(value) : 0, value);
  };
  using SortKey = std::pair<int, std::string>;
  // fixed values (by their sort keys) -> column values (by theirs) -> trajectories
  std::map<std::vector<SortKey>, std::map<SortKey, std::vector<const TrajectoryRecord*>>> by_fixed;
  for (const auto& t : data.trajectories) {
    std::vector<SortKey> fixed;
    for (const auto& k : fixed_keys) fixed.push_back(sort_key(k, value_of(t, k)));
    by_fixed[fixed][sort_key(dimension, value_of(t, dimension))].push_back(&t);
  }
  for (const auto& [fixed_keyed, keyed_columns] : by_fixed) {
    if (keyed_columns.size() < 2) continue;
    std::vector<std::string> fixed;
    for (const auto& f : fixed_keyed) fixed.push_back(f.second);
    std::set<std::string> columns;
    std::vector<const TrajectoryRecord*> compared;
    std::vector<std::string> column_names;
    for (const auto& [name, ts] : keyed_columns) {
      column_names.push_back(name.second);
      columns.insert(name.second);
      compared.insert(compared.end(), ts.begin(), ts.end());
    }
    const std::string limit = common_limit(compared);
    ordered_json fixed_json = ordered_json::object();
    for (size_t i = 0; i < fixed_keys.size(); ++i) fixed_json[fixed_keys[i]] = fixed[i];
    // Rows: (family, task base) pairs, families first.
    std::map<std::pair<std::string, std::string>, ordered_json> rows;
    for (const Row& m : metrics.rows) {
      if (m["turn_limit"] != limit) continue;
      bool matches = true;
      for (size_t i = 0; i < fixed_keys.size(); ++i) matches = matches && m[fixed_keys[i]] == fixed[i];
      if (!matches) continue;
      const std::string column = m[dimension].get<std::string>();
      if (!columns.count(column)) continue;
      const std::string family = m["family"].get<std::string>();
      const std::string task = task_base(m["task"].get<std::string>());
      ordered_json& row = rows[{order_key(family), order_key(task)}];
      row["family"] = family;
      row["task"] = task;
      row["cells"][column] = cell_of(m);
    }
    ordered_json row_list = ordered_json::array();
    for (auto& [key, row] : rows) row_list.push_back(std::move(row));
    views.push_back({{"view", dimension},
                     {"title", title},
                     {"fixed", fixed_json},
                     {"turn_limit", limit},
                     {"columns", column_names},
                     {"rows", row_list}});
  }
}

}  // namespace

Report build_report(const Dataset& data, const Selection& selection) {
  Report report;
  ordered_json runs = ordered_json::array();
  std::set<std::string> tracks;
  for (const auto& r : data.runs) {
    tracks.insert(r.track);
    runs.push_back(
        {{"id", r.id},
         {"model", r.model},
         {"knowledge", r.knowledge},
         {"context", r.context},
         {"feedback", r.feedback},
         {"track", r.track},
         {"max_turns", r.max_turns},
         {"samples", r.samples},
         {"trajectories", r.trajectories},
         {"cpu_only", r.cpu_only},
         {"started_at", r.started_at},
         {"finished_at", r.finished_at.empty() ? ordered_json(nullptr) : ordered_json(r.finished_at)}});
  }
  report.about = {{"ptxbench_version", PTXBENCH_VERSION},
                  {"selection",
                   {{"runs", selection.runs},
                    {"models", selection.models},
                    {"knowledge", selection.knowledge},
                    {"tasks", selection.task_glob}}},
                  {"turn_limits", kTurnLimits},
                  {"runs", runs},
                  {"tracks", tracks}};
  report.metrics = metrics_table(data);
  report.turn_curve = turn_curve_table(data);
  report.error_classes = error_class_table(data);
  report.tokens_per_turn = tokens_per_turn_table(data);
  report.tokens_per_verified = tokens_per_verified_table(data);
  report.stage_times = stage_time_table(data);
  report.trajectories = trajectory_table(data);
  add_views(data, report.metrics, "knowledge", "Knowledge levels (the ablation), one model", report.side_by_side);
  add_views(data, report.metrics, "model", "Models against each other", report.side_by_side);
  add_views(data, report.metrics, "arch", "Architectures", report.side_by_side);
  add_views(data, report.metrics, "track", "Tracks: CUDA with PTX against Triton", report.side_by_side);
  return report;
}

}  // namespace ptxbench::report
