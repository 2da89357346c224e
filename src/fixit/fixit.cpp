#include "fixit/fixit.h"

#include <fmt/format.h>
#include <algorithm>
#include <set>
#include <stdexcept>

#include "agent/extract.h"
#include "agent/feedback.h"
#include "agent/prompt.h"
#include "agent/trajectory.h"
#include "util/hash.h"
#include "util/text.h"

namespace ptxbench::fixit {

using nlohmann::json;

// --- mine -----------------------------------------------------------------------------------------------

std::string normalize_code(const std::string& code) {
  std::string out;
  out.reserve(code.size());
  bool space = false;
  auto put = [&](char c) {
    if (space && !out.empty()) out += ' ';
    space = false;
    out += c;
  };
  for (size_t i = 0; i < code.size(); ++i) {
    const char c = code[i];
    if (c == '"' || c == '\'') {  // a literal, kept as written (a "//" in it is no comment)
      put(c);
      for (++i; i < code.size() && code[i] != c; ++i) {
        out += code[i];
        if (code[i] == '\\' && i + 1 < code.size()) out += code[++i];
      }
      if (i < code.size()) out += c;
    } else if (c == '/' && i + 1 < code.size() && code[i + 1] == '/') {
      while (i < code.size() && code[i] != '\n') ++i;
      space = true;
    } else if (c == '/' && i + 1 < code.size() && code[i + 1] == '*') {
      const size_t end = code.find("*/", i + 2);
      i = end == std::string::npos ? code.size() : end + 1;
      space = true;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      space = true;
    } else {
      put(c);
    }
  }
  return out;
}

json to_json(const Mined& m) {
  return {{"run_id", m.run_id},
          {"trajectory_id", m.trajectory_id},
          {"turn", m.turn},
          {"task", m.task_id},
          {"model", m.model},
          {"knowledge", m.knowledge},
          {"error_class", m.error_class},
          {"submission", m.code_hash},
          {"evaluation_id", m.evaluation_id},
          {"normalized", m.normalized_hash}};
}

bool minable_class(agent::ErrorClass c) {
  return c != agent::ErrorClass::extraction &&
         std::find(std::begin(agent::kFailureClasses), std::end(agent::kFailureClasses), c) !=
             std::end(agent::kFailureClasses);
}

Mined mined_from_json(const json& d) {
  // Mined sets stored before their items used the other documents' names had run, trajectory, code,
  // evaluation.
  auto field = [&](const char* name, const char* before) -> const json& {
    return d.contains(name) ? d.at(name) : d.at(before);
  };
  return {.run_id = field("run_id", "run").get<int64_t>(),
          .trajectory_id = field("trajectory_id", "trajectory").get<int64_t>(),
          .turn = d.at("turn").get<int>(),
          .task_id = d.at("task").get<std::string>(),
          .model = d.at("model").get<std::string>(),
          .knowledge = d.value("knowledge", std::string()),
          .error_class = d.at("error_class").get<std::string>(),
          .code_hash = field("submission", "code").get<std::string>(),
          .evaluation_id = field("evaluation_id", "evaluation").get<int64_t>(),
          .normalized_hash = d.at("normalized").get<std::string>()};
}

json to_json(const MineOptions& o) {
  return {{"runs", o.runs},
          {"model", o.model},
          {"tasks", o.tasks},
          {"error_classes", o.error_classes},
          {"min_turn", o.min_turn},
          {"max_turn", o.max_turn},
          {"correct", o.correct},
          {"per_task", o.quotas.per_task},
          {"per_class", o.quotas.per_class},
          {"seed", o.seed}};
}

MineOptions mine_options_from_json(const json& d) {
  try {
    MineOptions o;
    o.runs = d.value("runs", std::vector<int64_t>{});
    o.model = d.value("model", std::string());
    o.tasks = d.value("tasks", std::string("*"));
    o.error_classes = d.value("error_classes", std::vector<std::string>{});
    o.min_turn = d.value("min_turn", 1);
    o.max_turn = d.value("max_turn", 0);
    o.correct = d.value("correct", false);
    o.quotas.per_task = d.value("per_task", 0);
    o.quotas.per_class = d.value("per_class", 0);
    o.seed = d.value("seed", uint64_t{1});
    return o;
  } catch (const json::exception& e) {
    throw std::invalid_argument(std::string("not fixit mining options: ") + e.what());
  }
}

namespace {

// A fixed pseudo-random order within a stratum: the seed and the item's identity hashed.
std::string draw_key(uint64_t seed, const Mined& m) {
  return sha256_hex(fmt::format("{}:{}:{}:{}", seed, m.run_id, m.trajectory_id, m.turn));
}

}  // namespace

std::vector<size_t> balance(const std::vector<const Mined*>& items, const Quotas& quotas, uint64_t seed) {
  if (!quotas.any()) {
    std::vector<size_t> all(items.size());
    for (size_t i = 0; i < items.size(); ++i) all[i] = i;
    return all;
  }
  // task -> (class, turn) -> indices, each stratum in its drawing order.
  std::map<std::string, std::map<std::pair<std::string, int>, std::vector<size_t>>> strata;
  for (size_t i = 0; i < items.size(); ++i)
    strata[items[i]->task_id][{items[i]->error_class, items[i]->turn}].push_back(i);
  std::vector<size_t> kept;
  for (auto& [task, by_stratum] : strata) {
    std::vector<std::vector<size_t>*> queues;
    for (auto& [key, indices] : by_stratum) {
      std::sort(indices.begin(), indices.end(),
                [&](size_t a, size_t b) { return draw_key(seed, *items[a]) < draw_key(seed, *items[b]); });
      queues.push_back(&indices);
    }
    std::map<std::string, int> per_class;
    std::vector<size_t> next(queues.size(), 0);
    int taken = 0;
    for (bool progress = true; progress;) {  // one from each stratum per round
      progress = false;
      for (size_t q = 0; q < queues.size(); ++q) {
        if (quotas.per_task > 0 && taken >= quotas.per_task) break;
        if (next[q] >= queues[q]->size()) continue;
        const size_t index = (*queues[q])[next[q]++];
        progress = true;
        int& in_class = per_class[items[index]->error_class];
        if (quotas.per_class > 0 && in_class >= quotas.per_class) continue;
        ++in_class;
        ++taken;
        kept.push_back(index);
      }
    }
  }
  std::sort(kept.begin(), kept.end());
  return kept;
}

std::vector<Mined> mine(Store& store, const TaskRegistry& registry, const MineOptions& options) {
  const TaskSelection selected = registry.select(options.tasks);
  std::set<std::string> classes(options.error_classes.begin(), options.error_classes.end());
  std::vector<int64_t> runs = options.runs;
  if (runs.empty())
    for (const auto& r : store.runs(1 << 30))
      if (r.kind == "agent") runs.push_back(r.id);
  std::sort(runs.begin(), runs.end());
  std::vector<Mined> found;
  std::set<std::pair<std::string, std::string>> seen;  // (task, normalised code)
  for (const int64_t run_id : runs) {
    const auto run = store.run(run_id);
    if (!run || run->kind != "agent")
      throw std::invalid_argument(fmt::format("run {} is not an agent run", run_id));
    // Fixit's prompts and exports are CUDA's (the system prompt, the ```cuda fences): another track's turns
    // are not mined.
    if (const std::string track = run->args.value("track", std::string("cuda"));
        track != cuda_track().name()) {
      if (!options.runs.empty())
        throw std::invalid_argument(
            fmt::format("run {} is a {} run: fixit mines CUDA runs only", run_id, track));
      continue;
    }
    for (const auto& t : store.trajectories(run_id)) {
      if (!options.model.empty() && t.model != options.model) continue;
      if (!selected.matches(t.task_id)) continue;
      for (const auto& turn : store.turns(t.id)) {
        if (!turn.finished() || turn.code_hash.empty() || !turn.evaluation_id) continue;
        if (turn.index < options.min_turn || (options.max_turn > 0 && turn.index > options.max_turn))
          continue;
        const auto verdict = store.verdict(turn.evaluation_id);
        if (!verdict) continue;
        if (options.correct) {
          if (!agent::verified(*verdict)) continue;
        } else {
          if (turn.error_class.empty() || verdict->overall() != OverallStatus::failed) continue;
          if (!classes.empty() && !classes.count(turn.error_class)) continue;
        }
        const auto code = store.source(turn.code_hash);
        if (!code) continue;
        Mined m{.run_id = run_id,
                .trajectory_id = t.id,
                .turn = turn.index,
                .task_id = t.task_id,
                .model = t.model,
                .knowledge = t.knowledge,
                .error_class = options.correct ? "" : turn.error_class,
                .code_hash = turn.code_hash,
                .evaluation_id = turn.evaluation_id,
                .normalized_hash = sha256_hex(normalize_code(*code))};
        if (!seen.insert({m.task_id, m.normalized_hash}).second) continue;
        found.push_back(std::move(m));
      }
    }
  }
  std::vector<const Mined*> pointers;
  for (const auto& m : found) pointers.push_back(&m);
  std::vector<Mined> kept;
  for (const size_t i : balance(pointers, options.quotas, options.seed)) kept.push_back(found[i]);
  std::stable_sort(kept.begin(), kept.end(), [](const Mined& a, const Mined& b) {
    return std::tie(a.task_id, a.error_class, a.turn) < std::tie(b.task_id, b.error_class, b.turn);
  });
  return kept;
}

int64_t store_mined(Store& store, const MineOptions& options, const std::vector<Mined>& items) {
  json list = json::array();
  for (const auto& m : items) list.push_back(to_json(m));
  const int64_t id =
      store.begin_run(kMineKind, {{"mode", kMineKind}, {"options", to_json(options)}, {"items", list}});
  store.finish_run(id);
  return id;
}

std::vector<Mined> mined_set(Store& store, int64_t mine_run) {
  const auto run = store.run(mine_run);
  if (!run || run->kind != kMineKind)
    throw std::invalid_argument(
        fmt::format("run {} is not a mined set (ptxbench fixit mine makes one)", mine_run));
  std::vector<Mined> items;
  for (const auto& d : run->args.at("items")) items.push_back(mined_from_json(d));
  return items;
}

// --- repair ---------------------------------------------------------------------------------------------

std::string repair_message(const std::string& task_first_message, const std::string& failed_code,
                           const std::string& feedback) {
  return fmt::format(
      "{}\n\nAn earlier attempt at this task failed. Its code:\n\n{}\nThe verdict on it:\n\n{}\n\nFind what "
      "is "
      "wrong and answer with the whole corrected file in one ```cuda block.",
      task_first_message, agent::fenced(cuda_track(), failed_code), feedback);
}

namespace {

json repair_args(const RepairSettings& s, const std::vector<Mined>& items,
                 const std::vector<std::string>& task_ids) {
  agent::AgentRunSettings agent;
  agent.model = s.teacher;
  agent.model_spec = s.teacher_spec;
  agent.knowledge = s.knowledge;
  agent.task_ids = task_ids;
  agent.samples = 0;  // trajectories are the mined items, not tasks x samples
  agent.loop.max_turns = s.turns;
  agent.loop.stop_when_verified = true;
  agent.cpu_only = s.cpu_only;
  json args = agent::to_json(agent);
  args["mode"] = kRepairKind;
  args["mine_run"] = s.mine_run;
  json list = json::array();
  for (const auto& m : items) list.push_back(to_json(m));
  args["items"] = list;
  return args;
}

// The items of a repair run by (task, sample): the k-th item of a task is its sample k.
std::map<std::pair<std::string, int>, Mined> items_by_sample(const json& args) {
  std::map<std::pair<std::string, int>, Mined> out;
  std::map<std::string, int> count;
  for (const auto& d : args.at("items")) {
    Mined m = mined_from_json(d);
    const int sample = ++count[m.task_id];
    out[{m.task_id, sample}] = std::move(m);
  }
  return out;
}

const TurnRow* turn_at(const std::vector<TurnRow>& turns, int index) {
  for (const auto& t : turns)
    if (t.index == index) return &t;
  return nullptr;
}

}  // namespace

RepairSettings repair_settings_from_json(const json& args) {
  if (args.value("mode", std::string()) != kRepairKind)
    throw std::invalid_argument("not the settings of a fixit repair run");
  const agent::AgentRunSettings agent = agent::agent_settings_from_json(args);
  return {.teacher = agent.model,
          .teacher_spec = agent.model_spec,
          .mine_run = args.value("mine_run", int64_t{0}),
          .turns = agent.loop.max_turns,
          .knowledge = agent.knowledge,
          .cpu_only = agent.cpu_only};
}

int64_t start_repair(Store& store, const RepairSettings& settings, const std::vector<Mined>& items) {
  std::vector<std::string> task_ids;
  for (const auto& m : items)
    if (std::find(task_ids.begin(), task_ids.end(), m.task_id) == task_ids.end())
      task_ids.push_back(m.task_id);
  const json args = repair_args(settings, items, task_ids);
  const int64_t run_id = store.begin_run(kRepairKind, args);
  for (const auto& [key, m] : items_by_sample(args))
    store.add_trajectory(run_id, key.first, key.second, settings.teacher, settings.knowledge);
  return run_id;
}

agent::AgentRunResult run_repair(int64_t run_id, Store& store, const TaskRegistry& registry,
                                 llm::Provider& teacher, Evaluator& judge,
                                 const std::filesystem::path& kits_dir, int parallel,
                                 std::function<void(const agent::TurnEvent&)> on_event) {
  const auto run = store.run(run_id);
  if (!run || run->kind != kRepairKind)
    throw std::invalid_argument(fmt::format("run {} is not a fixit repair run", run_id));
  agent::AgentRunSettings settings = agent::agent_settings_from_json(run->args);
  const auto items = items_by_sample(run->args);
  auto first_message_for = [&](const TrajectoryRow& row, const Task& task, const std::string& knowledge) {
    const Mined& m = items.at({row.task_id, row.sample});
    const auto turns = store.turns(m.trajectory_id);
    const TurnRow* failed = turn_at(turns, m.turn);
    const auto code = store.source(m.code_hash);
    if (!failed || !code)
      throw std::invalid_argument(fmt::format("the mined turn {} of trajectory {} is no longer in the store",
                                              m.turn, m.trajectory_id));
    return repair_message(agent::first_message(cuda_track(), task, knowledge), *code, failed->feedback);
  };
  return agent::run_agent(run_id, settings,
                          {.store = &store,
                           .registry = &registry,
                           .provider = &teacher,
                           .evaluator = &judge,
                           .kits_dir = kits_dir,
                           .parallel = parallel,
                           .on_event = std::move(on_event),
                           .first_message_for = first_message_for});
}

std::vector<Repair> repairs(Store& store, int64_t repair_run) {
  const auto run = store.run(repair_run);
  if (!run || run->kind != kRepairKind)
    throw std::invalid_argument(fmt::format("run {} is not a fixit repair run", repair_run));
  const auto items = items_by_sample(run->args);
  std::vector<Repair> out;
  for (const auto& t : store.trajectories(repair_run)) {
    Repair r{.failure = items.at({t.task_id, t.sample}), .trajectory_id = t.id, .teacher = t.model};
    // The first verified turn; else the first correct-only one; else the first where nothing failed.
    int rank = 0;  // 3 verified, 2 correct-only, 1 unverified
    for (const auto& turn : store.turns(t.id)) {
      if (!turn.evaluation_id) continue;
      const auto v = store.verdict(turn.evaluation_id);
      if (!v) continue;
      const StageResult* correct = v->stage("correct");
      const int this_rank = agent::verified(*v)                                 ? 3
                            : correct && correct->status == StageStatus::passed ? 2
                            : agent::nothing_failed(*v)                         ? 1
                                                                                : 0;
      if (this_rank > rank) {
        rank = this_rank;
        r.fix_turn = turn.index;
        r.fix_evaluation_id = turn.evaluation_id;
        r.fix_hash = turn.code_hash;
      }
    }
    r.status = rank == 3                      ? kVerified
               : rank == 2                    ? kCorrectOnly
               : rank == 1                    ? kUnverifiedFix
               : agent::is_terminal(t.status) ? kNotFixed
                                              : kPendingFix;
    out.push_back(std::move(r));
  }
  return out;
}

// --- reason ---------------------------------------------------------------------------------------------

namespace {

// The code's lines, trimmed, without the empty ones.
std::set<std::string> line_set(const std::string& code) {
  std::set<std::string> lines;
  size_t start = 0;
  while (start < code.size()) {
    size_t end = code.find('\n', start);
    if (end == std::string::npos) end = code.size();
    if (auto line = trim(code.substr(start, end - start)); !line.empty()) lines.insert(line);
    start = end + 1;
  }
  return lines;
}

// How many of the code's lines of at least 24 characters the text holds verbatim.
size_t quoted_lines(const std::string& text, const std::string& code) {
  size_t quoted = 0;
  for (const auto& line : line_set(code)) quoted += line.size() >= 24 && text.find(line) != std::string::npos;
  return quoted;
}

}  // namespace

std::string check_reasoning(const std::string& text, const std::string& failed_code,
                            const std::string& fix_code, const ReasonLimits& limits) {
  const std::string body = trim(text);
  if (body.size() < limits.min_chars)
    return fmt::format("too short: {} characters, at least {}", body.size(), limits.min_chars);
  if (body.size() > limits.max_chars)
    return fmt::format("too long: {} characters, at most {}", body.size(), limits.max_chars);
  if (agent::extract_code(cuda_track(), body).blocks > 0)
    return "it has a code block; the reasoning must not paste the code";
  const size_t quoted = std::max(quoted_lines(body, fix_code), quoted_lines(body, failed_code));
  if (quoted > limits.max_code_lines)
    return fmt::format("it quotes {} lines of the code verbatim, at most {}", quoted, limits.max_code_lines);
  return "";
}

llm::Request reason_request(const Task& task, const std::string& failed_code, const std::string& feedback,
                            const std::string& fix_code, const ReasonLimits& limits) {
  const std::string system =
      "You explain how a GPU kernel was fixed. You are shown a task, an attempt that failed, the judge's "
      "verdict "
      "on it and a corrected version that passed every check. Write the reasoning an expert would follow "
      "from "
      "the failure to the fix: what the verdict says, which part of the code causes it and why, and what "
      "must "
      "change. Write it as if you were about to write the fix yourself: do not mention that you were shown "
      "it. "
      "Plain prose; no code blocks and no copying of the code (name functions, variables and instructions "
      "instead).";
  const std::string user = fmt::format(
      "{}\n\n----- the failed attempt -----\n{}\n----- the verdict on it -----\n{}\n\n----- the fix that "
      "passed "
      "-----\n{}\nWrite the reasoning, between {} and {} characters.",
      agent::task_statement(cuda_track(), task), agent::fenced(cuda_track(), failed_code), feedback,
      agent::fenced(cuda_track(), fix_code), limits.min_chars, limits.max_chars);
  return {.system = system, .messages = {{"user", user}}};
}

namespace {

json reason_args(const ReasonSettings& s) {
  return {{"mode", kReasonKind},
          {"model", s.reasoner},
          {"model_spec", s.reasoner_spec},
          {"repair_run", s.repair_run},
          {"min_chars", s.limits.min_chars},
          {"max_chars", s.limits.max_chars},
          {"max_code_lines", s.limits.max_code_lines},
          {"attempts", s.attempts}};
}

}  // namespace

ReasonSettings reason_settings_from_json(const json& a) {
  try {
    if (a.value("mode", std::string()) != kReasonKind) throw std::invalid_argument("mode");
    return {.reasoner = a.at("model").get<std::string>(),
            .reasoner_spec = a.value("model_spec", json()),
            .repair_run = a.at("repair_run").get<int64_t>(),
            .limits = {.min_chars = a.at("min_chars").get<size_t>(),
                       .max_chars = a.at("max_chars").get<size_t>(),
                       .max_code_lines = a.at("max_code_lines").get<size_t>()},
            .attempts = a.at("attempts").get<int>()};
  } catch (const std::exception& e) {
    throw std::invalid_argument(std::string("not the settings of a fixit reasoning run: ") + e.what());
  }
}

int64_t start_reasoning(Store& store, const ReasonSettings& settings,
                        const std::optional<std::set<int64_t>>& only) {
  const auto fixes = repairs(store, settings.repair_run);
  const auto rows = store.trajectories(settings.repair_run);
  const int64_t run_id = store.begin_run(kReasonKind, reason_args(settings));
  for (const auto& r : fixes) {
    if (r.status != kVerified || (only && !only->count(r.trajectory_id))) continue;
    for (const auto& row : rows)
      if (row.id == r.trajectory_id)
        store.add_trajectory(run_id, row.task_id, row.sample, settings.reasoner, "reasoning");
  }
  return run_id;
}

ReasonResult run_reasoning(int64_t run_id, Store& store, const TaskRegistry& registry,
                           llm::Provider& reasoner, std::function<void(const std::string&)> on_event) {
  const auto run = store.run(run_id);
  if (!run || run->kind != kReasonKind)
    throw std::invalid_argument(fmt::format("run {} is not a fixit reasoning run", run_id));
  const ReasonSettings settings = reason_settings_from_json(run->args);
  std::map<std::pair<std::string, int>, Repair> by_sample;
  {
    const auto rows = store.trajectories(settings.repair_run);
    for (auto& r : repairs(store, settings.repair_run))
      for (const auto& row : rows)
        if (row.id == r.trajectory_id) by_sample[{row.task_id, row.sample}] = r;
  }
  auto say = [&](const std::string& line) {
    if (on_event) on_event(line);
  };
  ReasonResult result;
  for (const auto& t : store.trajectories(run_id)) {
    ++result.fixes;
    if (t.status == agent::kSolved) {
      ++result.accepted;
      continue;
    }
    if (t.status == agent::kFinished) {
      ++result.refused;
      continue;
    }
    const Repair& r = by_sample.at({t.task_id, t.sample});
    const Task* task = registry.find(t.task_id);
    if (!task) throw std::invalid_argument("no task " + t.task_id);
    const std::string failed = store.source(r.failure.code_hash).value_or("");
    const std::string fix = store.source(r.fix_hash).value_or("");
    std::string feedback;
    for (const auto& turn : store.turns(r.failure.trajectory_id))
      if (turn.index == r.failure.turn) feedback = turn.feedback;
    const llm::Request request = reason_request(*task, failed, feedback, fix, settings.limits);
    std::vector<TurnRow> turns = store.turns(t.id);
    std::string status;
    while (status.empty()) {
      TurnRow turn;
      if (!turns.empty() && turns.back().finished()) {
        if (turns.back().error_class.empty()) {
          status = agent::kSolved;
          break;
        }
        if (turns.back().index >= settings.attempts) {
          status = agent::kFinished;
          break;
        }
      }
      if (!turns.empty() && !turns.back().finished()) {
        turn = turns.back();  // a call cut short (a kill, an error): asked again
        store.mark_turn_requested(turn.id);
      } else {
        turn.index = static_cast<int>(turns.size()) + 1;
        turn.id = store.begin_turn(t.id, turn.index, agent::to_json(request));
      }
      llm::Reply reply;
      try {
        reply = reasoner.complete(request);
      } catch (const std::exception& e) {
        reply.error = e.what();
      }
      if (!reply.ok && !reply.no_text) {
        store.record_reply_error(turn.id, {{"error", reply.error}, {"http_status", reply.http_status}});
        say(fmt::format("  {} #{}: the reasoner's call failed: {}", t.task_id, t.sample, reply.error));
        status = agent::kError;
        break;
      }
      store.record_reply(turn.id, reply.text, agent::reply_meta(reply), std::nullopt);
      const std::string refused = check_reasoning(reply.text, failed, fix, settings.limits);
      store.finish_turn(turn.id,
                        {.error_class = refused.empty() ? "" : "reasoning",
                         .outcome = refused.empty() ? "accepted" : "refused: " + refused,
                         .feedback = refused},
                        nullptr, "", run_id);
      say(fmt::format("  {} #{} attempt {}: {}", t.task_id, t.sample, turn.index,
                      refused.empty() ? "accepted" : "refused: " + refused));
      turns = store.turns(t.id);
    }
    if (status.empty()) status = agent::kFinished;
    store.set_trajectory_status(t.id, status);
    result.accepted += status == agent::kSolved;
    result.refused += status == agent::kFinished;
    result.errors += status == agent::kError;
  }
  if (result.errors == 0) store.finish_run(run_id);
  return result;
}

std::map<int64_t, std::string> reasonings(Store& store, int64_t reason_run) {
  const auto run = store.run(reason_run);
  if (!run || run->kind != kReasonKind)
    throw std::invalid_argument(fmt::format("run {} is not a fixit reasoning run", reason_run));
  const int64_t repair_run = run->args.at("repair_run").get<int64_t>();
  std::map<std::pair<std::string, int>, int64_t> repair_trajectory;
  for (const auto& row : store.trajectories(repair_run))
    repair_trajectory[{row.task_id, row.sample}] = row.id;
  std::map<int64_t, std::string> out;
  for (const auto& t : store.trajectories(reason_run)) {
    if (t.status != agent::kSolved) continue;
    for (const auto& turn : store.turns(t.id))
      if (turn.finished() && turn.error_class.empty() && turn.reply)
        out[repair_trajectory.at({t.task_id, t.sample})] = trim(*turn.reply);
  }
  return out;
}

// --- the built-in reasoner ------------------------------------------------------------------------------

namespace {

// The text between `start` and the next "----- " line (or the end).
std::string section(const std::string& text, const std::string& start) {
  size_t b = text.find(start);
  if (b == std::string::npos) return "";
  b += start.size();
  const size_t e = text.find("\n----- ", b);
  return text.substr(b, e == std::string::npos ? std::string::npos : e - b);
}

}  // namespace

llm::Reply ReferenceReasoner::complete(const llm::Request& request) {
  const std::string& text = request.messages.empty() ? std::string() : request.messages.back().content;
  const std::string failed =
      agent::extract_code(cuda_track(), section(text, "----- the failed attempt -----\n")).code;
  const std::string verdict = trim(section(text, "----- the verdict on it -----\n"));
  const std::string fix =
      agent::extract_code(cuda_track(), section(text, "----- the fix that passed -----\n")).code;
  const auto before = line_set(failed), after = line_set(fix);
  size_t removed = 0, added = 0;
  for (const auto& l : before) removed += !after.count(l);
  for (const auto& l : after) added += !before.count(l);
  const std::string first_line = verdict.substr(0, verdict.find('\n'));
  std::string reply = fmt::format(
      "The judge stopped the attempt with \"{}\". That stage is the first that did not pass, so the error "
      "lies in "
      "what the attempt does before or at that point, not in its speed. Reading the verdict's messages "
      "against "
      "the code locates the statements responsible: those must change, and everything the verdict did not "
      "complain about can stay as it is. The corrected version keeps the rest of the kernel and changes {} "
      "line(s), adding {} and dropping {}, so that the stage passes and the later stages (correctness on "
      "every "
      "shape, the required instructions executed) can run.",
      utf8_head(first_line, 300), std::max(removed, added), added, removed);
  return {.ok = true, .text = reply, .finish_reason = "stop", .attempts = 1};
}

}  // namespace ptxbench::fixit
