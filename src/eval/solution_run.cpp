#include "eval/solution_run.h"

#include <fnmatch.h>

#include <fmt/format.h>
#include <algorithm>
#include <nlohmann/json.hpp>

#include "util/errors.h"
#include "util/files.h"
#include "util/json_file.h"

namespace ptxbench {

std::vector<ShippedSolution> load_solution_manifest(const std::filesystem::path& solutions_dir) {
  const auto file = solutions_dir / "solutions.json";
  const nlohmann::json doc = read_json_file(file);  // strict: a key given twice is an error
  std::vector<ShippedSolution> out;
  auto fail = [&](size_t i, const std::string& what) {
    throw ConfigError(fmt::format("{}: entry {}: {}", file.string(), i, what));
  };
  if (!doc.is_array()) fail(0, "the manifest must be a JSON array");
  for (size_t i = 0; i < doc.size(); ++i) {
    const auto& e = doc[i];
    if (!e.is_object() || !e.contains("path") || !e.contains("tasks") || !e.contains("purpose"))
      fail(i, "needs \"path\", \"tasks\" and \"purpose\"");
    ShippedSolution s{.path = e["path"].get<std::string>(),
                      .tasks = e["tasks"].get<std::string>(),
                      .purpose = e["purpose"].get<std::string>()};
    // "prelude": a file (or a list of them) whose text goes before the entry's own, so that entries can share
    // code while each evaluated and stored source stays one self-contained submission.
    const nlohmann::json prelude = e.value("prelude", nlohmann::json::array());
    for (const auto& p : prelude.is_array() ? prelude : nlohmann::json::array({prelude})) {
      if (!p.is_string()) fail(i, "\"prelude\" must be a path or a list of paths");
      try {
        s.source += read_solution_file(solutions_dir / p.get<std::string>());
      } catch (const std::runtime_error& error) {
        fail(i, std::string("prelude ") + error.what());
      }
      if (!s.source.ends_with('\n')) s.source += '\n';
    }
    try {
      s.source += read_solution_file(solutions_dir / s.path);
    } catch (const std::runtime_error& error) {
      fail(i, error.what());
    }
    if (s.source.size() > kMaxSolutionBytes)
      fail(i, fmt::format("the prelude and {} hold {} bytes together, over the size limit of {} bytes",
                          s.path.string(), s.source.size(), kMaxSolutionBytes));
    const auto known = [](const std::string& stage) {
      return std::any_of(std::begin(kStageNames), std::end(kStageNames),
                         [&](const char* n) { return stage == n; });
    };
    const nlohmann::json expect = e.value("expect", nlohmann::json::object());
    const nlohmann::json expect_message = e.value("expect_message", nlohmann::json::object());
    for (const auto& [stage, status] : expect.items()) {
      if (stage != "overall" && !known(stage)) fail(i, "expect: unknown stage '" + stage + "'");
      s.expect[stage] = status.get<std::string>();
    }
    for (const auto& [stage, text] : expect_message.items()) {
      if (!known(stage)) fail(i, "expect_message: unknown stage '" + stage + "'");
      s.expect_message[stage] = text.get<std::string>();
    }
    out.push_back(std::move(s));
  }
  return out;
}

namespace {

void compare_with_expectations(const ShippedSolution& solution, SolutionRunRow& row) {
  for (const auto& [stage, expected] : solution.expect) {
    std::string actual;
    if (stage == "overall") {
      actual = to_string(row.verdict.overall());
      if (actual == "incomplete") {  // skipped stages: an overall expectation cannot be checked here
        ++row.unchecked;
        continue;
      }
    } else {
      const StageResult* s = row.verdict.stage(stage);
      actual = s ? to_string(s->status) : "missing";
      if (s && s->status == StageStatus::skipped && expected != "skipped") {
        ++row.unchecked;
        continue;
      }
    }
    if (actual != expected)
      row.mismatches.push_back(fmt::format("{}: expected {}, got {}", stage, expected, actual));
  }
  for (const auto& [stage, text] : solution.expect_message) {
    const StageResult* s = row.verdict.stage(stage);
    if (s && s->status == StageStatus::skipped) {
      ++row.unchecked;
    } else if (!s || s->message.find(text) == std::string::npos) {
      row.mismatches.push_back(fmt::format("{}: expected a message containing \"{}\", got \"{}\"", stage,
                                           text, s ? s->message.substr(0, 200) : "no stage"));
    }
  }
}

}  // namespace

std::vector<SolutionRunRow> run_shipped_solutions(
    const std::vector<ShippedSolution>& manifest, const TaskRegistry& registry,
    const SolutionRunOptions& options, const std::function<EvalOptions(const Task&)>& eval_options,
    Store& store, int64_t run_id, const std::function<void(const SolutionRunRow&)>& progress) {
  std::vector<SolutionRunRow> rows;
  for (const auto& solution : manifest) {
    const std::string& source = solution.source;
    for (const Task* task : registry.matching(solution.tasks)) {
      if (fnmatch(options.task_glob.c_str(), task->id.c_str(), 0) != 0) continue;
      if (std::find(options.archs.begin(), options.archs.end(), task->arch) == options.archs.end()) continue;
      SolutionRunRow row{.task_id = task->id,
                         .solution = solution.path.string(),
                         .verdict = evaluate({source, solution.path.string()}, *task, eval_options(*task))};
      row.evaluation_id = store.add_evaluation(row.verdict, source, run_id);
      compare_with_expectations(solution, row);
      progress(row);
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

}  // namespace ptxbench
