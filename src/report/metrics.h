// The report's numbers: every table as rows of named columns, from which report.json, the CSV files, report.md
// and report.html are all written, so they hold the same numbers (docs/report.md defines each column).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/dataset.h"

namespace ptxbench::report {

// k of n with its 95% Wilson score interval; rate and interval none when n is 0.
struct Rate {
  int k = 0, n = 0;
  std::optional<double> rate, lo, hi;
};
Rate wilson(int k, int n);

// A sample's spread: mean, median, min, max and the sample standard deviation (none under two values).
struct Spread {
  int n = 0;
  std::optional<double> mean, median, min, max, sd;
};
Spread spread(std::vector<double> values);

// The turn limits every report shows, besides each run's own maximum.
inline constexpr int kTurnLimits[] = {1, 4, 8};

// A knowledge level's place in the ablation's order (agent::kKnowledgeLevels; tables, views and charts keep
// it, docs/report.md); any other level after them all.
int knowledge_rank(const std::string& knowledge);

// What a trajectory had come to within its first `limit` turns. It counts at a limit within its run's budget
// once it has that many finished turns or has ended (it stopped when verified, or on a host that cannot judge).
struct WithinLimit {
  bool counted = false;
  std::optional<bool> correct, verified;      // none: undecided (nothing failed, but nothing could be judged)
  std::optional<double> best_speedup;         // over verified turns
  std::optional<double> best_kernel_speedup;  // that turn's kernels alone
  std::optional<int> first_verified;          // the first verified turn's index
};
WithinLimit within(const TrajectoryRecord& trajectory, int limit);

using Row = nlohmann::ordered_json;  // one value per column, in the table's column order

struct Table {
  std::string name;  // the CSV file's base name and the JSON key
  std::vector<std::string> columns;
  std::vector<Row> rows;
};

// Key columns' value for a row that sums over every value of the column.
inline constexpr const char* kAll = "all";

struct Report {
  nlohmann::ordered_json about;  // ptxbench version, the selection, the runs
  Table metrics;                 // per model x knowledge x arch x family x task, per turn limit
  Table turn_curve;              // per model x knowledge x arch x family, at every turn limit 1..max turns
  Table error_classes;           // per model x knowledge x arch x family, per turn index
  Table tokens_per_turn;         // per model x knowledge x track, per turn index
  Table tokens_per_verified;     // per model x knowledge x track x family: the cost of a verified trajectory
  Table stage_times;             // per host x stage
  Table trajectories;            // one row per trajectory
  nlohmann::ordered_json side_by_side = nlohmann::ordered_json::array();  // the comparisons (views)

  std::vector<const Table*> tables() const {
    return {&metrics, &turn_curve, &error_classes, &tokens_per_turn, &tokens_per_verified, &stage_times, &trajectories};
  }
};

Report build_report(const Dataset& data, const Selection& selection);

}  // namespace ptxbench::report
