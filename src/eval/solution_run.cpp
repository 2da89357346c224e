#include "eval/solution_run.h"

#include <fnmatch.h>

#include <fmt/format.h>
#include <algorithm>
#include <atomic>
#include <exception>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "util/errors.h"
#include "util/files.h"
#include "util/hash.h"
#include "util/json_file.h"

namespace ptxbench {

namespace {

using Fail = std::function<void(const std::string&)>;  // throws ConfigError naming the entry

bool known_stage(const std::string& stage) {
  return std::any_of(std::begin(kStageNames), std::end(kStageNames),
                     [&](const char* n) { return stage == n; });
}

// The submission an entry stands for: its "prelude" files (a path or a list of them: text shared between
// entries) and then its own file, so that every evaluated and stored source is one self-contained file.
std::string submission_of(const std::filesystem::path& dir, const nlohmann::json& entry,
                          const std::filesystem::path& path, const Fail& fail) {
  std::string source;
  const nlohmann::json prelude = entry.value("prelude", nlohmann::json::array());
  for (const auto& part : prelude.is_array() ? prelude : nlohmann::json::array({prelude})) {
    if (!part.is_string()) fail("\"prelude\" must be a path or a list of paths");
    try {
      source += read_solution_file(dir / part.get<std::string>());
    } catch (const std::runtime_error& error) {
      fail(std::string("prelude ") + error.what());
    }
    if (!source.ends_with('\n')) source += '\n';
  }
  try {
    source += read_solution_file(dir / path);
  } catch (const std::runtime_error& error) {
    fail(error.what());
  }
  if (source.size() > kMaxSolutionBytes)
    fail(fmt::format("the prelude and {} hold {} bytes together, over the size limit of {} bytes",
                     path.string(), source.size(), kMaxSolutionBytes));
  return source;
}

// "expect" (a status per stage, or "overall") and "expect_message" (text per stage).
void read_expectations(const nlohmann::json& entry, ShippedSolution& s, const Fail& fail) {
  const nlohmann::json expect = entry.value("expect", nlohmann::json::object());
  const nlohmann::json expect_message = entry.value("expect_message", nlohmann::json::object());
  for (const auto& [stage, status] : expect.items()) {
    if (stage != "overall" && !known_stage(stage)) fail("expect: unknown stage '" + stage + "'");
    s.expect[stage] = status.get<std::string>();
  }
  for (const auto& [stage, text] : expect_message.items()) {
    if (!known_stage(stage)) fail("expect_message: unknown stage '" + stage + "'");
    s.expect_message[stage] = text.get<std::string>();
  }
}

}  // namespace

std::vector<ShippedSolution> load_solution_manifest(const std::filesystem::path& solutions_dir) {
  const auto file = solutions_dir / "solutions.json";
  const nlohmann::json doc = read_json_file(file);  // strict: a key given twice is an error
  if (!doc.is_array()) throw ConfigError(fmt::format("{}: the manifest must be a JSON array", file.string()));
  std::vector<ShippedSolution> out;
  for (size_t i = 0; i < doc.size(); ++i) {
    const Fail fail = [&](const std::string& what) {
      throw ConfigError(fmt::format("{}: entry {}: {}", file.string(), i, what));
    };
    const auto& e = doc[i];
    if (!e.is_object() || !e.contains("path") || !e.contains("tasks") || !e.contains("purpose"))
      fail("needs \"path\", \"tasks\" and \"purpose\"");
    ShippedSolution s{.path = e["path"].get<std::string>(),
                      .tasks = e["tasks"].get<std::string>(),
                      .purpose = e["purpose"].get<std::string>()};
    // As for `ptxbench eval`: the track the file's extension names unless "track" says it, and never another.
    const Track* of_file = track_of_file(s.path.string());
    if (of_file) s.track = of_file;
    if (e.contains("track")) {
      s.track = e["track"].is_string() ? find_track(e["track"].get<std::string>()) : nullptr;
      if (!s.track) fail(fmt::format("\"track\" must be one of {}", track_names()));
      if (of_file && of_file != s.track)
        fail(fmt::format("\"track\" is {} but {} is a {} file", s.track->name(), s.path.string(),
                         of_file->title()));
    }
    s.source = submission_of(solutions_dir, e, s.path, fail);
    read_expectations(e, s, fail);
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

void PriorVerdicts::add(const std::string& path, Verdict verdict, int64_t evaluation_id) {
  const std::string task_id = verdict.task_id, submission = verdict.submission_hash;
  rows_[{path, task_id, submission}].push_back(
      {.task_id = task_id, .solution = path, .verdict = std::move(verdict), .evaluation_id = evaluation_id});
}

std::optional<SolutionRunRow> PriorVerdicts::take(const ShippedSolution& solution, const Task& task) {
  const auto found = rows_.find({solution.path.string(), task.id, sha256_hex(solution.source)});
  if (found == rows_.end() || found->second.empty()) return std::nullopt;
  SolutionRunRow row = std::move(found->second.front());
  found->second.pop_front();
  ++taken_;
  return row;
}

std::vector<SolutionRunRow> run_shipped_solutions(
    const std::vector<ShippedSolution>& manifest, const TaskRegistry& registry,
    const SolutionRunOptions& options, Evaluator& evaluator,
    const std::function<void(const ShippedSolution&, SolutionRunRow&)>& record) {
  std::vector<std::pair<const ShippedSolution*, const Task*>> pairs;
  const TaskSelection selected = registry.select(options.task_glob);
  for (const auto& solution : manifest) {
    if (options.track && solution.track != options.track) continue;
    if (fnmatch(options.solution_glob.c_str(), solution.path.string().c_str(), 0) != 0) continue;
    for (const Task* task : registry.matching(solution.tasks)) {
      if (!selected.matches(task->id)) continue;
      if (std::find(options.archs.begin(), options.archs.end(), task->arch) == options.archs.end()) continue;
      if (accepts(*task, *solution.track)) pairs.emplace_back(&solution, task);
    }
  }
  std::vector<SolutionRunRow> rows(pairs.size());
  std::vector<size_t> to_judge;  // the pairs without a verdict from before
  for (size_t i = 0; i < pairs.size(); ++i) {
    const auto& [solution, task] = pairs[i];
    std::optional<SolutionRunRow> prior =
        options.prior ? options.prior->take(*solution, *task) : std::nullopt;
    if (!prior) {
      to_judge.push_back(i);
      continue;
    }
    compare_with_expectations(*solution, *prior);
    rows[i] = std::move(*prior);
  }
  std::atomic<size_t> next{0};
  std::mutex recording;
  std::atomic<bool> stopped{false};
  std::exception_ptr failure;  // the first evaluation that could not be judged stops the run
  auto judge = [&] {
    for (size_t k; !stopped && (k = next++) < to_judge.size();) {
      const size_t i = to_judge[k];
      const auto& [solution, task] = pairs[i];
      try {
        SolutionRunRow row{.task_id = task->id,
                           .solution = solution->path.string(),
                           .verdict = evaluator.evaluate(
                               {solution->source, solution->path.string(), solution->track}, *task)};
        compare_with_expectations(*solution, row);
        std::lock_guard lock(recording);
        record(*solution, row);
        rows[i] = std::move(row);
      } catch (...) {
        std::lock_guard lock(recording);
        if (!failure) failure = std::current_exception();
        stopped = true;
      }
    }
  };
  std::vector<std::thread> threads;
  for (size_t t = 1; t < std::min(static_cast<size_t>(std::max(1, options.parallel)), to_judge.size()); ++t)
    threads.emplace_back(judge);
  judge();
  for (auto& thread : threads) thread.join();
  if (failure) std::rethrow_exception(failure);
  return rows;
}

}  // namespace ptxbench
