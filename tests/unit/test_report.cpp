// ptxbench report on tests/report/fixture_store.h's small store: the numbers in metrics.csv, report.json and
// report.html against values computed by hand from the fixture's turns, and the pieces (Wilson intervals, what a
// trajectory counts at a turn limit, diffs).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "../report/fixture_store.h"
#include "report/diff.h"
#include "report/metrics.h"
#include "store/store.h"
#include "util/format.h"
#include "util/subprocess.h"

using namespace ptxbench;
using namespace ptxbench::report;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const char* kTask = "gemm-bf16-n4096-k4096-sm90a";

std::string slurp(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// `ptxbench report` of the store in `data`, written to `out`, with `extra` arguments.
ProcessResult run_report(const fs::path& data, const fs::path& out,
                         const std::vector<std::string>& extra = {},
                         std::chrono::milliseconds limit = std::chrono::minutes(1)) {
  std::vector<std::string> argv = {PTXBENCH_BINARY, "--root", PTXBENCH_SOURCE_DIR, "--data", data.string(),
                                   "report", "--out", out.string()};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return run_process({.argv = argv, .time_limit = limit});
}

// The report's side-by-side view that varies `dimension` ("model", "track"); null when it has none.
const json* side_by_side_view(const json& report, const std::string& dimension) {
  for (const auto& view : report["side_by_side"])
    if (view["view"] == dimension) return &view;
  return nullptr;
}

// metrics.csv as rows of column -> text (the fixture's fields hold no commas or quotes).
std::vector<std::map<std::string, std::string>> read_csv(const fs::path& file) {
  std::istringstream in(slurp(file));
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  std::stringstream h(line);
  for (std::string cell; std::getline(h, cell, ',');) header.push_back(cell);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    std::map<std::string, std::string> row;
    std::vector<std::string> cells;
    size_t start = 0;
    for (size_t comma = line.find(','); ; comma = line.find(',', start)) {
      cells.push_back(line.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    EXPECT_EQ(cells.size(), header.size()) << line;
    for (size_t i = 0; i < header.size() && i < cells.size(); ++i) row[header[i]] = cells[i];
    rows.push_back(row);
  }
  return rows;
}

class ReportOfTheFixture : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    base_ = fs::temp_directory_path() / ("ptxbench-report-" + std::to_string(getpid()));
    fs::remove_all(base_);
    report_fixture::write_fixture_store(base_ / "data" / "ptxbench.db");
    const ProcessResult r = run_report(base_ / "data", base_ / "out", {}, std::chrono::minutes(2));
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    json_ = json::parse(slurp(base_ / "out" / "report.json"));
    csv_ = read_csv(base_ / "out" / "metrics.csv");
    html_ = slurp(base_ / "out" / "report.html");
  }
  static void TearDownTestSuite() { fs::remove_all(base_); }

  static const json& metric(const std::string& model, const std::string& task, const std::string& limit) {
    for (const auto& row : json_["metrics"])
      if (row["model"] == model && row["task"] == task && row["turn_limit"] == limit) return row;
    static const json none;
    ADD_FAILURE() << "no metrics row " << model << " " << task << " " << limit;
    return none;
  }
  static std::map<std::string, std::string> csv_row(const std::string& model, const std::string& task,
                                                    const std::string& limit) {
    for (const auto& row : csv_)
      if (row.at("model") == model && row.at("task") == task && row.at("turn_limit") == limit) return row;
    ADD_FAILURE() << "no metrics.csv row " << model << " " << task << " " << limit;
    return {};
  }
  // The text of a cell of the HTML table row whose data-key is `key`.
  static std::string html_cell(const std::string& table, const std::string& key, const std::string& column) {
    const size_t at = html_.find("<table id=\"" + table + "\"");
    EXPECT_NE(at, std::string::npos) << table;
    const size_t row = html_.find("<tr data-key=\"" + key + "\">", at);
    if (row == std::string::npos) {
      ADD_FAILURE() << "no row " << key << " in " << table;
      return "";
    }
    const std::string tr = html_.substr(row, html_.find("</tr>", row) - row);
    std::smatch m;
    if (!std::regex_search(tr, m, std::regex("<td data-col=\"" + column + "\">([^<]*)</td>"))) {
      ADD_FAILURE() << "no column " << column << " in " << key;
      return "";
    }
    return m[1];
  }
  // The JSON the page draws its charts from (the same document as report.json).
  static json html_data() {
    const std::string open = "<script type=\"application/json\" id=\"report-data\">";
    const size_t at = html_.find(open) + open.size();
    return json::parse(html_.substr(at, html_.find("</script>", at) - at));
  }

  static inline fs::path base_;
  static inline json json_;
  static inline std::vector<std::map<std::string, std::string>> csv_;
  static inline std::string html_;
};

// Expected numbers of one metrics row, worked out from fixture_store.h's table of turns.
struct Expected {
  int trajectories, correct_k, correct_n;
  double correct_lo, correct_hi;
  int verified_k, verified_n;
  double verified_lo, verified_hi;
  int speedup_n;
  std::optional<double> speedup_mean, speedup_max, speedup_min, speedup_sd;
  std::optional<double> turns_to_verified;
};

void expect_row(const json& row, const std::map<std::string, std::string>& csv, const Expected& e) {
  auto number = [](const json& v) { return v.get<double>(); };
  EXPECT_EQ(row["trajectories"], e.trajectories);
  EXPECT_EQ(row["correct_k"], e.correct_k);
  EXPECT_EQ(row["correct_n"], e.correct_n);
  EXPECT_NEAR(number(row["correct_rate"]), double(e.correct_k) / e.correct_n, 1e-12);
  EXPECT_NEAR(number(row["correct_lo"]), e.correct_lo, 1e-6);
  EXPECT_NEAR(number(row["correct_hi"]), e.correct_hi, 1e-6);
  EXPECT_EQ(row["verified_k"], e.verified_k);
  EXPECT_EQ(row["verified_n"], e.verified_n);
  EXPECT_NEAR(number(row["verified_lo"]), e.verified_lo, 1e-6);
  EXPECT_NEAR(number(row["verified_hi"]), e.verified_hi, 1e-6);
  EXPECT_EQ(row["speedup_n"], e.speedup_n);
  auto optional_near = [&](const char* key, std::optional<double> v) {
    if (!v) {
      EXPECT_TRUE(row[key].is_null()) << key;
      EXPECT_EQ(csv.at(key), "") << key;
      return;
    }
    EXPECT_NEAR(number(row[key]), *v, 1e-9) << key;
    EXPECT_NEAR(std::stod(csv.at(key)), *v, 1e-9) << key;  // the CSV holds the same number
  };
  optional_near("speedup_mean", e.speedup_mean);
  optional_near("speedup_max", e.speedup_max);
  optional_near("speedup_min", e.speedup_min);
  optional_near("speedup_sd", e.speedup_sd);
  optional_near("turns_to_verified_mean", e.turns_to_verified);
  for (const char* key : {"trajectories", "correct_k", "correct_n", "verified_k", "verified_n", "speedup_n"})
    EXPECT_EQ(std::stoi(csv.at(key)), row[key].get<int>()) << key;
  for (const char* key : {"correct_lo", "correct_hi", "verified_lo", "verified_hi"})
    EXPECT_NEAR(std::stod(csv.at(key)), number(row[key]), 1e-12) << key;
}

}  // namespace

TEST(ReportNumbers, WilsonIntervalsOfTextbookCases) {
  const Rate none = wilson(0, 0);
  EXPECT_FALSE(none.rate);
  const Rate zero = wilson(0, 4);
  EXPECT_DOUBLE_EQ(*zero.lo, 0);
  EXPECT_NEAR(*zero.hi, 0.489891, 1e-6);  // z^2 / (n + z^2)
  const Rate half = wilson(1, 2);
  EXPECT_NEAR(*half.lo, 0.094531, 1e-6);
  EXPECT_NEAR(*half.hi, 0.905469, 1e-6);
  const Rate all = wilson(3, 3);
  EXPECT_NEAR(*all.lo, 0.438503, 1e-6);
  EXPECT_DOUBLE_EQ(*all.hi, 1);
}

TEST(ReportNumbers, SpreadOfASample) {
  const Spread s = spread({1.2, 0.9, 0.6});
  EXPECT_EQ(s.n, 3);
  EXPECT_NEAR(*s.mean, 0.9, 1e-12);
  EXPECT_NEAR(*s.median, 0.9, 1e-12);
  EXPECT_NEAR(*s.sd, 0.3, 1e-12);
  EXPECT_FALSE(spread({2.0}).sd);  // one value has no spread
}

TEST(ReportNumbers, WhatATrajectoryCountsAtATurnLimit) {
  auto turn = [](int index, std::optional<bool> correct, std::optional<bool> verified,
                 std::optional<double> speedup = {}) {
    return TurnRecord{.index = index, .correct = correct, .verified = verified, .speedup = speedup};
  };
  TrajectoryRecord running{.status = "error", .max_turns = 8};
  running.turns = {turn(1, false, false), turn(2, true, true, 1.1)};
  EXPECT_TRUE(within(running, 2).counted);
  EXPECT_FALSE(within(running, 4).counted) << "two turns of eight, still to be resumed: not yet known at 4";
  EXPECT_FALSE(within(running, 16).counted) << "beyond the run's budget";
  const WithinLimit at2 = within(running, 2);
  EXPECT_EQ(at2.verified, true);
  EXPECT_EQ(at2.first_verified, 2);
  EXPECT_DOUBLE_EQ(*at2.best_speedup, 1.1);

  TrajectoryRecord solved{.status = "solved", .max_turns = 8};
  solved.turns = {turn(1, true, true, 0.7)};
  EXPECT_TRUE(within(solved, 8).counted) << "it stopped when verified: what it is at 8 is known";

  TrajectoryRecord cpu{.status = "unverified", .max_turns = 2};
  cpu.turns = {turn(1, false, false), turn(2, std::nullopt, std::nullopt)};
  EXPECT_EQ(within(cpu, 1).correct, false) << "a failed compile decides: not correct within one turn";
  EXPECT_FALSE(within(cpu, 2).correct) << "nothing failed, nothing judged: undecided";
}

TEST(ReportNumbers, DiffsAreUnified) {
  EXPECT_EQ(unified_diff("a\nb\n", "a\nb\n"), "");
  const std::string d = unified_diff("a\nb\nc\n", "a\nB\nc\n");
  EXPECT_NE(d.find("@@ -1,3 +1,3 @@"), std::string::npos) << d;
  EXPECT_NE(d.find("-b\n"), std::string::npos) << d;
  EXPECT_NE(d.find("+B\n"), std::string::npos) << d;
}

TEST(ReportNumbers, OnePercentFormat) {
  EXPECT_EQ(percent(2.0 / 3), "66.7%");
  EXPECT_EQ(percent(0.00012), "0.012%");
  EXPECT_EQ(percent(0.0), "0.0%");
  EXPECT_EQ(percent(std::nullopt), "-");
}

TEST_F(ReportOfTheFixture, WritesEveryFile) {
  for (const char* f : {"report.html", "report.md", "report.json", "metrics.csv", "error_classes.csv",
                        "tokens_per_turn.csv", "tokens_per_verified_trajectory.csv", "stage_times.csv",
                        "trajectories.csv"})
    EXPECT_TRUE(fs::exists(base_ / "out" / f)) << f;
  EXPECT_EQ(json_["runs"].size(), 2u);
  EXPECT_EQ(json_["trajectories"].size(), 5u);
}

TEST_F(ReportOfTheFixture, RatesAndSpeedupsAtEachTurnLimit) {
  // m1 within 1 turn: #1 compile (not correct), #2 verified 0.5x, #3 no code.
  expect_row(metric("m1", kTask, "1"), csv_row("m1", kTask, "1"),
             {3, 1, 3, 0.061492, 0.79234, 1, 3, 0.061492, 0.79234, 1, 0.5, 0.5, 0.5, std::nullopt, 1.0});
  // m1 within 4: #1 verified (best 1.2x, first at turn 2), #2 verified (best 0.9x, at 1), #3 correct at turn 4
  // (its instructions failed), never verified.
  expect_row(metric("m1", kTask, "4"), csv_row("m1", kTask, "4"),
             {3, 3, 3, 0.438503, 1.0, 2, 3, 0.20766, 0.938508, 2, 1.05, 1.2, 0.9, 0.2121320343559642, 1.5});
  // m2 within 1: #1 verified 1.5x, #2 compile.
  expect_row(metric("m2", kTask, "1"), csv_row("m2", kTask, "1"),
             {2, 1, 2, 0.094531, 0.905469, 1, 2, 0.094531, 0.905469, 1, 1.5, 1.5, 1.5, std::nullopt, 1.0});
  // m2 within its run's 2 turns: #1 solved at turn 1 (counted: it ended), #2 numerical at turn 2.
  const json& max = metric("m2", kTask, "max");
  EXPECT_EQ(max["max_turns"], "2");
  expect_row(max, csv_row("m2", kTask, "max"),
             {2, 1, 2, 0.094531, 0.905469, 1, 2, 0.094531, 0.905469, 1, 1.5, 1.5, 1.5, std::nullopt, 1.0});
  // Limits past a run's budget are not shown; m1's budget is 4, a standard limit, so no "max" row either.
  for (const auto& row : json_["metrics"]) {
    EXPECT_FALSE(row["model"] == "m1" && (row["turn_limit"] == "8" || row["turn_limit"] == "max")) << row;
    EXPECT_FALSE(row["model"] == "m2" && (row["turn_limit"] == "4" || row["turn_limit"] == "8")) << row;
  }
  // The family's row and the architecture's (every family) hold the one task's numbers.
  int rows = 0;
  for (const auto& row : json_["metrics"])
    if (row["model"] == "m1" && row["task"] == "all" && row["turn_limit"] == "4") {
      ++rows;
      EXPECT_EQ(row["verified_k"], 2) << row;
      EXPECT_EQ(row["verified_n"], 3) << row;
    }
  EXPECT_EQ(rows, 2) << "family gemm and family all";
}

TEST_F(ReportOfTheFixture, TheHtmlShowsTheSameNumbers) {
  const std::string key = std::string("m1|contracts|sm_90a|cuda|gemm|") + kTask + "|4";
  EXPECT_EQ(html_cell("metrics-tasks", key, "turn_limit"), "≤ 4");
  EXPECT_EQ(html_cell("metrics-tasks", key, "trajectories"), "3");
  EXPECT_EQ(html_cell("metrics-tasks", key, "correct"), "100.0% (3/3) [43.9%, 100.0%]");
  EXPECT_EQ(html_cell("metrics-tasks", key, "verified"), "66.7% (2/3) [20.8%, 93.9%]");
  EXPECT_EQ(html_cell("metrics-tasks", key, "speedup_best"), "1.200x");
  EXPECT_EQ(html_cell("metrics-tasks", key, "speedup_spread"), "1.050x ± 0.212 (0.900x-1.200x, n=2)");
  EXPECT_EQ(html_cell("metrics-tasks", key, "turns_to_verified"), "1.50 (n=2)");
  const std::string m2 = std::string("m2|contracts|sm_90a|cuda|gemm|") + kTask + "|max";
  EXPECT_EQ(html_cell("metrics-tasks", m2, "turn_limit"), "max (2)");
  EXPECT_EQ(html_cell("metrics-tasks", m2, "verified"), "50.0% (1/2) [9.5%, 90.5%]");
  EXPECT_EQ(html_cell("metrics-families", "m1|contracts|sm_90a|cuda|all|all|1", "verified"),
            "33.3% (1/3) [6.1%, 79.2%]");
  // The page's charts draw from the same document as report.json.
  EXPECT_EQ(html_data(), json_);
  // The markdown report has the same cell.
  EXPECT_NE(slurp(base_ / "out" / "report.md").find("| 66.7% (2/3) [20.8%, 93.9%] | 1.200x |"), std::string::npos);
}

TEST_F(ReportOfTheFixture, OutcomesPerTurn) {
  std::map<std::string, int> m1;  // "turn outcome" -> turns, family "all"
  for (const auto& row : json_["error_classes"])
    if (row["model"] == "m1" && row["family"] == "all")
      m1[std::to_string(row["turn"].get<int>()) + " " + row["outcome"].get<std::string>()] = row["turns"];
  const std::map<std::string, int> expected = {
      {"1 compile", 1},     {"1 verified", 1},  {"1 extraction", 1}, {"2 verified", 2},  {"2 compile", 1},
      {"3 verified", 1},    {"3 instruction", 1}, {"3 numerical", 1}, {"4 numerical", 1}, {"4 extraction", 1},
      {"4 instruction", 1}};
  EXPECT_EQ(m1, expected);
  EXPECT_EQ(html_cell("error-classes", "m1|contracts|sm_90a|cuda|all|2", "verified"), "2");
  EXPECT_EQ(html_cell("error-classes", "m1|contracts|sm_90a|cuda|all|2", "turns"), "3");
}

TEST_F(ReportOfTheFixture, TokensLatencyAndStageTimes) {
  for (const auto& row : json_["tokens_per_turn"])
    if (row["model"] == "m1" && row["turn"] == 2) {
      EXPECT_EQ(row["turns"], 3);
      EXPECT_DOUBLE_EQ(row["input_tokens_mean"].get<double>(), 2000);
      EXPECT_DOUBLE_EQ(row["reasoning_tokens_mean"].get<double>(), 100);
      EXPECT_DOUBLE_EQ(row["latency_s_mean"].get<double>(), 4.0);
    }
  // m1's verified trajectories: #1 (turns 1-2: 3000 input, 150 reasoning tokens, 6 s), #2 (turn 1: 1000, 50, 2 s).
  bool seen = false;
  for (const auto& row : json_["tokens_per_verified_trajectory"])
    if (row["model"] == "m1" && row["family"] == "all") {
      seen = true;
      EXPECT_EQ(row["trajectories"], 3);
      EXPECT_EQ(row["verified"], 2);
      EXPECT_DOUBLE_EQ(row["turns_mean"].get<double>(), 1.5);
      EXPECT_DOUBLE_EQ(row["input_tokens_mean"].get<double>(), 2000);
      EXPECT_DOUBLE_EQ(row["reasoning_tokens_mean"].get<double>(), 100);
      EXPECT_DOUBLE_EQ(row["latency_s_mean"].get<double>(), 4.0);
    }
  EXPECT_TRUE(seen);
  EXPECT_EQ(html_cell("tokens-per-verified", "m1|contracts|cuda|all", "input_tokens_mean"), "2000");
  // 13 verdicts (two turns had no code): 5 verified (all six stages), failed at compile (3: 1 s each),
  // correct (3: numerical) and instructions (2).
  std::map<std::string, std::pair<int, double>> stages;
  for (const auto& row : json_["stage_times"])
    stages[row["stage"]] = {row["evaluations"].get<int>(), row["mean_s"].get<double>()};
  EXPECT_EQ(stages["compile"].first, 13);
  EXPECT_NEAR(stages["compile"].second, (3 * 1.0 + 10 * 2.0) / 13, 1e-12);
  EXPECT_EQ(stages["correct"].first, 10);
  EXPECT_EQ(stages["instructions"].first, 7);
  EXPECT_EQ(stages["time"].first, 5);
  EXPECT_EQ(html_cell("stage-times", "NVIDIA H200 (sm_90)|time", "total_s"), "25.0 s");
}

TEST_F(ReportOfTheFixture, ModelsSideBySideAtTheirCommonLimit) {
  const json* view = side_by_side_view(json_, "model");
  ASSERT_NE(view, nullptr);
  EXPECT_EQ((*view)["turn_limit"], "1") << "budgets 4 and 2: compared within the first turn";
  EXPECT_EQ((*view)["columns"], json::array({"m1", "m2"}));
  for (const auto& row : (*view)["rows"])
    if (row["task"] == "gemm-bf16-n4096-k4096") {
      EXPECT_EQ(row["cells"]["m1"]["verified_k"], 1);
      EXPECT_EQ(row["cells"]["m1"]["verified_n"], 3);
      EXPECT_EQ(row["cells"]["m2"]["verified_k"], 1);
      EXPECT_EQ(row["cells"]["m2"]["verified_n"], 2);
    }
  EXPECT_EQ(html_cell("view-1", "gemm|gemm-bf16-n4096-k4096", "m2"), "50.0% (1/2) [9.5%, 90.5%]; best 1.500x");
}

TEST_F(ReportOfTheFixture, TheViewerHasEachTurnsCodeFeedbackAndDiff) {
  const std::string open = "<script type=\"application/json\" id=\"viewer-data\">";
  const size_t at = html_.find(open) + open.size();
  const json viewer = json::parse(html_.substr(at, html_.find("</script>", at) - at));
  ASSERT_EQ(viewer["trajectories"].size(), 5u);
  const json& t = viewer["trajectories"][1];  // m1 #2
  EXPECT_EQ(t["sample"], 2);
  ASSERT_EQ(t["turns"].size(), 4u);
  EXPECT_TRUE(t["turns"][0]["diff"].is_null());  // the first code
  EXPECT_EQ(t["turns"][1]["diff_against"], 1);
  const std::string diff = t["turns"][1]["diff"];
  EXPECT_NE(diff.find("-int tile = 64;"), std::string::npos) << diff;
  EXPECT_NE(diff.find("+int tile = 128;"), std::string::npos) << diff;
  EXPECT_TRUE(t["turns"][3]["code"].is_null());  // no code in the reply
  EXPECT_EQ(t["turns"][3]["feedback"], "Feedback on turn 4: extraction");
  EXPECT_EQ(viewer["code"][t["turns"][0]["code"].get<std::string>()].get<std::string>().rfind("// m1 sample 2 turn 1", 0),
            0u);
}

TEST(ReportCommand, SelectsRunsAndRefusesAnEmptySelection) {
  const fs::path base = fs::temp_directory_path() / ("ptxbench-report-select-" + std::to_string(getpid()));
  fs::remove_all(base);
  report_fixture::write_fixture_store(base / "ptxbench.db");
  auto report = [&](const std::vector<std::string>& extra) { return run_report(base, base / "out", extra); };
  EXPECT_EQ(report({"--model", "nobody"}).exit_code, 2);
  EXPECT_EQ(report({"--run", "9"}).exit_code, 2);
  {  // A run of another kind is named by its kind.
    Store store(base / "ptxbench.db");
    const int64_t manifest = store.begin_run("solutions", {{"solutions", "solutions"}});
    const ProcessResult other = report({"--run", std::to_string(manifest)});
    EXPECT_EQ(other.exit_code, 2);
    EXPECT_NE(other.err.find(fmt::format("run {} is a solutions run, not an agent run", manifest)),
              std::string::npos)
        << other.err;
  }
  const ProcessResult one = report({"--run", "2", "--json"});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(json::parse(one.out)["trajectories"], 2);
  const ProcessResult glob = report({"--tasks", "attention-*"});
  EXPECT_EQ(glob.exit_code, 2);
  fs::remove_all(base);
}

// Two context policies are two agents, and so are two feedbacks: their runs are never pooled, and the runs
// table says which is which.
TEST(ReportCommand, ContextPoliciesAndFeedbacksAreNeverPooled) {
  const fs::path base = fs::temp_directory_path() / ("ptxbench-report-context-" + std::to_string(getpid()));
  fs::remove_all(base);
  report_fixture::write_two_context_store(base / "ptxbench.db");
  const ProcessResult r = run_report(base, base / "out");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json report = json::parse(slurp(base / "out" / "report.json"));
  EXPECT_EQ(report["runs"][0]["context"], "compact");
  EXPECT_EQ(report["runs"][1]["context"], "full");
  EXPECT_EQ(report["runs"][2]["feedback"], "profile");
  std::set<std::string> models;
  for (const auto& row : report["metrics"]) models.insert(row["model"].get<std::string>());
  EXPECT_EQ(models, (std::set<std::string>{"m1", "m1 [full context]", "m1 [profile feedback]"}));
  const std::string markdown = slurp(base / "out" / "report.md");
  EXPECT_NE(markdown.find("| 2 | m1 | contracts | full | verdict | cuda | 2 |"), std::string::npos)
      << markdown.substr(0, 800);
  EXPECT_NE(markdown.find("| 3 | m1 | contracts | compact | profile | cuda | 2 |"), std::string::npos)
      << markdown.substr(0, 800);
  fs::remove_all(base);
}

// The two tracks side by side: one model's CUDA run and Triton run on the same task, judged alike.
TEST(ReportCommand, TracksAreComparedSideBySidePerTask) {
  const fs::path base = fs::temp_directory_path() / ("ptxbench-report-tracks-" + std::to_string(getpid()));
  fs::remove_all(base);
  report_fixture::write_two_track_store(base / "ptxbench.db");
  const ProcessResult r = run_report(base, base / "out");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json report = json::parse(slurp(base / "out" / "report.json"));
  EXPECT_EQ(report["tracks"], json::array({"cuda", "triton"}));
  EXPECT_EQ(report["runs"][1]["track"], "triton");
  const json* view = side_by_side_view(report, "track");
  ASSERT_NE(view, nullptr);
  EXPECT_EQ((*view)["columns"], json::array({"cuda", "triton"}));
  EXPECT_EQ((*view)["turn_limit"], "max") << "both runs have 2 turns";
  for (const auto& row : (*view)["rows"])
    if (row["task"] == "gemm-bf16-n4096-k4096") {
      EXPECT_EQ(row["cells"]["cuda"]["verified_k"], 2);
      EXPECT_EQ(row["cells"]["cuda"]["verified_n"], 2);
      EXPECT_EQ(row["cells"]["triton"]["verified_k"], 1);
      EXPECT_EQ(row["cells"]["triton"]["speedup_max"], 0.9);
      EXPECT_DOUBLE_EQ(row["cells"]["triton"]["kernel_speedup_of_best"].get<double>(), 1.25);
      EXPECT_TRUE(row["cells"]["cuda"]["kernel_speedup_of_best"].is_null())
          << "no launch log in its verdicts";
    }
  const std::string markdown = slurp(base / "out" / "report.md");
  EXPECT_NE(markdown.find("| 2 | m1 | contracts | compact | verdict | triton | 2 |"), std::string::npos)
      << markdown.substr(0, 800);
  EXPECT_NE(markdown.find("; best 0.900x (its kernels 1.250x) |"), std::string::npos) << markdown;
  // The tables by family and by task keep the tracks apart: one row each, named.
  for (const char* track : {"cuda", "triton"}) {
    EXPECT_NE(markdown.find(fmt::format("| m1 | contracts | sm_90a | {} | all | all | max (2) |", track)),
              std::string::npos)
        << track;
    int rows = 0;
    for (const auto& row : report["error_classes"]) rows += row["track"] == track && row["family"] == "all";
    EXPECT_GT(rows, 0) << track;
  }
  fs::remove_all(base);
}

// The step curve: the correct and verified rates at every turn limit from 1 to the run's turns, counted as the
// metrics table counts them (fixture_store.h's m1, 4 turns, and m2, 2 turns).
TEST_F(ReportOfTheFixture, CorrectAndVerifiedRatesAtEveryTurn) {
  std::map<std::string, std::vector<std::string>> curves;  // model -> "turn correct_k/n verified_k/n"
  for (const auto& row : json_["turn_curve"])
    if (row["family"] == "all" && row["track"] == "cuda")
      curves[row["model"]].push_back(fmt::format("{} {}/{} {}/{}", row["turn"].get<int>(),
                                                 row["correct_k"].get<int>(), row["correct_n"].get<int>(),
                                                 row["verified_k"].get<int>(), row["verified_n"].get<int>()));
  // m1: #2 correct and verified at turn 1, #1 at turn 2; #3 correct at turn 4 (its instructions failed).
  EXPECT_EQ(curves["m1"], (std::vector<std::string>{"1 1/3 1/3", "2 2/3 2/3", "3 2/3 2/3", "4 3/3 2/3"}));
  // m2: #1 solved at turn 1 (counted at 2: it ended), #2 compile then numerical.
  EXPECT_EQ(curves["m2"], (std::vector<std::string>{"1 1/2 1/2", "2 1/2 1/2"}));
  // At the standard limits the curve holds the metrics table's numbers.
  for (const auto& row : json_["turn_curve"])
    if (row["model"] == "m1" && row["family"] == "gemm" && row["turn"] == 4) {
      EXPECT_NEAR(row["correct_rate"].get<double>(), 1.0, 1e-12);
      EXPECT_NEAR(row["correct_lo"].get<double>(), 0.438503, 1e-6);
      EXPECT_NEAR(row["verified_rate"].get<double>(), 2.0 / 3, 1e-12);
    }
  EXPECT_TRUE(fs::exists(base_ / "out" / "turn_curve.csv"));
  EXPECT_EQ(html_data()["turn_curve"], json_["turn_curve"]);
}

TEST_F(ReportOfTheFixture, TokenTablesNameTheTrack) {
  for (const char* table : {"tokens_per_turn", "tokens_per_verified_trajectory"})
    for (const auto& row : json_[table]) EXPECT_EQ(row["track"], "cuda") << table;
  EXPECT_EQ(html_cell("tokens-per-turn", "m1|contracts|cuda|2", "track"), "cuda");
  EXPECT_NE(slurp(base_ / "out" / "tokens_per_turn.csv").find("model,knowledge,track,turn,"), std::string::npos);
}

// The knowledge ablation in its order (params, templates, contracts), never the alphabet's, in every table and
// view; the tracks compared beside it (fixture_store.h's write_ablation_store).
TEST(ReportCommand, TheAblationKeepsItsOrder) {
  const fs::path base = fs::temp_directory_path() / ("ptxbench-report-ablation-" + std::to_string(getpid()));
  fs::remove_all(base);
  report_fixture::write_ablation_store(base / "ptxbench.db");
  const ProcessResult r = run_report(base, base / "out");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json report = json::parse(slurp(base / "out" / "report.json"));
  const std::vector<std::string> order = {"params", "templates", "contracts"};
  auto levels = [](const json& rows) {
    std::vector<std::string> seen;
    for (const auto& row : rows)
      if (seen.empty() || seen.back() != row["knowledge"]) seen.push_back(row["knowledge"]);
    return seen;
  };
  for (const char* table : {"metrics", "turn_curve", "error_classes", "tokens_per_turn",
                            "tokens_per_verified_trajectory"})
    EXPECT_EQ(levels(report[table]), order) << table;
  const json* view = side_by_side_view(report, "knowledge");
  ASSERT_NE(view, nullptr);
  EXPECT_EQ((*view)["columns"], json(order));
  EXPECT_EQ((*view)["fixed"]["track"], "cuda");
  // The correct rate within each turn, per level (verified beside it), from the fixture's turns.
  std::map<std::string, std::vector<std::string>> curves;
  for (const auto& row : report["turn_curve"])
    if (row["family"] == "all")
      curves[row["knowledge"].get<std::string>() + " " + row["track"].get<std::string>()].push_back(
          fmt::format("{}/{} {}/{}", row["correct_k"].get<int>(), row["correct_n"].get<int>(),
                      row["verified_k"].get<int>(), row["verified_n"].get<int>()));
  EXPECT_EQ(curves["contracts cuda"], (std::vector<std::string>{"1/2 1/2", "1/2 1/2", "2/2 2/2"}));
  EXPECT_EQ(curves["templates cuda"], (std::vector<std::string>{"0/2 0/2", "0/2 0/2", "1/2 0/2"}));
  EXPECT_EQ(curves["params cuda"], (std::vector<std::string>{"0/2 0/2", "0/2 0/2", "0/2 0/2"}));
  EXPECT_EQ(curves["contracts triton"], (std::vector<std::string>{"0/2 0/2", "1/2 1/2", "2/2 1/2"}));
  const json* tracks = side_by_side_view(report, "track");
  ASSERT_NE(tracks, nullptr);
  EXPECT_EQ((*tracks)["columns"], json::array({"cuda", "triton"}));
  // The tables of report.md and report.html list the levels in the same order.
  for (const std::string& text : {slurp(base / "out" / "report.md"), slurp(base / "out" / "report.html")}) {
    const size_t family = text.find("## By family");  // after the runs, listed as they were stored
    const size_t params = text.find("m1 | params", family), templates = text.find("m1 | templates", family),
                 contracts = text.find("m1 | contracts", family);
    if (text.rfind("# ptxbench", 0) == 0) {
      ASSERT_NE(params, std::string::npos);
      EXPECT_LT(params, templates);
      EXPECT_LT(templates, contracts);
    } else {
      const size_t p = text.find("data-key=\"m1|params|sm_90a|cuda|all|all|1\""),
                   t = text.find("data-key=\"m1|templates|sm_90a|cuda|all|all|1\""),
                   c = text.find("data-key=\"m1|contracts|sm_90a|cuda|all|all|1\"");
      ASSERT_NE(p, std::string::npos);
      EXPECT_LT(p, t);
      EXPECT_LT(t, c);
    }
  }
  fs::remove_all(base);
}
