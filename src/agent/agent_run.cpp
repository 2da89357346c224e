#include "agent/agent_run.h"

#include <fmt/format.h>
#include <atomic>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "agent/prompt.h"

namespace ptxbench::agent {

using nlohmann::json;

json to_json(const AgentRunSettings& s) {
  return {{"mode", "agent"},
          {"model", s.model},
          {"model_spec", s.model_spec},
          {"knowledge", s.knowledge},
          {"context", s.context},
          {"feedback", s.feedback},
          {"track", s.track},
          {"tasks", s.tasks_pattern},
          {"archs", s.archs},
          {"task_ids", s.task_ids},
          {"samples", s.samples},
          {"turns", s.loop.max_turns},
          {"stop_when_verified", s.loop.stop_when_verified},
          {"target_speedup", s.loop.target_speedup ? json(*s.loop.target_speedup) : json(nullptr)},
          {"cpu_only", s.cpu_only}};
}

AgentRunSettings agent_settings_from_json(const json& args) {
  try {
    AgentRunSettings s;
    s.model = args.at("model").get<std::string>();
    s.model_spec = args.value("model_spec", json());
    s.knowledge = args.at("knowledge").get<std::string>();
    s.context = args.value("context", std::string("compact"));  // a run stored before policies: the default
    if (!context_policy_from_string(s.context))
      throw std::invalid_argument("unknown context '" + s.context + "'");
    s.feedback = args.value("feedback", std::string("verdict"));  // a run stored before profiles: the verdict
    if (s.feedback != "verdict" && s.feedback != "profile")
      throw std::invalid_argument("unknown feedback '" + s.feedback + "'");
    s.track = args.value("track", std::string("cuda"));
    if (!find_track(s.track)) throw std::invalid_argument("unknown track '" + s.track + "'");
    s.tasks_pattern = args.value("tasks", std::string("*"));
    s.archs = args.value("archs", std::vector<std::string>{});
    s.task_ids = args.at("task_ids").get<std::vector<std::string>>();
    s.samples = args.at("samples").get<int>();
    s.loop.max_turns = args.at("turns").get<int>();
    s.loop.stop_when_verified = args.value("stop_when_verified", false);
    if (args.contains("target_speedup") && !args["target_speedup"].is_null())
      s.loop.target_speedup = args["target_speedup"].get<double>();
    s.cpu_only = args.value("cpu_only", false);
    return s;
  } catch (const json::exception& e) {
    throw std::invalid_argument(std::string("not the settings of an agent run: ") + e.what());
  }
}

int64_t start_agent_run(Store& store, const AgentRunSettings& settings) {
  const auto levels = knowledge_levels_from_string(settings.knowledge);
  if (!levels) throw std::invalid_argument("unknown knowledge level '" + settings.knowledge + "'");
  const int64_t run_id = store.begin_run("agent", to_json(settings));
  // Samples 1..n at the first level, n+1..2n at the second, ...: each trajectory names its own level.
  for (const auto& task : settings.task_ids)
    for (size_t l = 0; l < levels->size(); ++l)
      for (int sample = 1; sample <= settings.samples; ++sample)
        store.add_trajectory(run_id, task, static_cast<int>(l) * settings.samples + sample, settings.model,
                             to_string((*levels)[l]));
  return run_id;
}

AgentRunResult run_agent(int64_t run_id, const AgentRunSettings& settings, const AgentRunContext& context) {
  if (!knowledge_levels_from_string(settings.knowledge))
    throw std::invalid_argument("unknown knowledge level '" + settings.knowledge + "'");
  const Track* track = find_track(settings.track);
  if (!track) throw std::invalid_argument("unknown track '" + settings.track + "'");
  const auto policy = context_policy_from_string(settings.context);
  if (!policy) throw std::invalid_argument("unknown context '" + settings.context + "'");
  // The model's window, from its catalogue entry as the run stored it.
  const auto spec_integer = [&](const char* key) {
    const json& spec = settings.model_spec;
    return spec.is_object() && spec.contains(key) && spec[key].is_number_integer() ? spec[key].get<int64_t>()
                                                                                   : int64_t{0};
  };
  const ContextOptions context_options{
      .policy = *policy,
      .budget_chars = context_budget_chars(spec_integer("context_tokens"), spec_integer("max_tokens"))};

  AgentRunResult result;
  std::vector<TrajectoryRow> pending;
  for (auto& row : context.store->trajectories(run_id)) {
    ++result.trajectories;
    if (!is_terminal(row.status)) pending.push_back(std::move(row));
  }
  result.driven = static_cast<int>(pending.size());

  // The knowledge once per task and level (the trajectory's own): the kit files are read once. The first
  // message per trajectory.
  std::map<std::pair<std::string, std::string>, std::string> knowledge;
  std::map<int64_t, std::string> first_messages;
  for (const auto& row : pending) {
    const Task* task = context.registry->find(row.task_id);
    if (!task)
      throw std::invalid_argument("run " + std::to_string(run_id) +
                                  " has a task that no longer exists: " + row.task_id);
    const auto level = knowledge_level_from_string(row.knowledge);
    if (!level)
      throw std::invalid_argument(
          fmt::format("run {} has a trajectory at an unknown knowledge level '{}'", run_id, row.knowledge));
    const std::pair key(row.task_id, row.knowledge);
    if (!knowledge.count(key)) knowledge[key] = knowledge_text(*track, context.kits_dir, *task, *level);
    first_messages[row.id] = context.first_message_for ? context.first_message_for(row, *task, knowledge[key])
                                                       : first_message(*track, *task, knowledge[key]);
  }

  std::mutex event_mutex;
  auto on_event = [&](const TurnEvent& event) {
    if (!context.on_event) return;
    std::lock_guard lock(event_mutex);
    context.on_event(event);
  };
  std::atomic<size_t> next{0};
  std::atomic<int> errors{0};
  auto worker = [&] {
    for (size_t i = next++; i < pending.size(); i = next++) {
      TrajectoryContext c{.run_id = run_id,
                          .row = pending[i],
                          .task = context.registry->find(pending[i].task_id),
                          .track = track,
                          .first_message = first_messages.at(pending[i].id),
                          .options = settings.loop,
                          .context = context_options,
                          .provider = context.provider,
                          .evaluator = context.evaluator,
                          .store = context.store,
                          .on_event = on_event};
      std::string status;
      try {
        status = run_trajectory(c);
      } catch (const std::exception& e) {  // the store itself failed: leave the trajectory for --resume
        status = kError;
        on_event({.task_id = c.row.task_id, .sample = c.row.sample, .outcome = e.what(), .status = kError});
      }
      if (status == kError) ++errors;
    }
  };
  const int threads = std::max(1, std::min<int>(context.parallel, static_cast<int>(pending.size())));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  result.errors = errors;
  if (result.errors == 0) context.store->finish_run(run_id);
  return result;
}

}  // namespace ptxbench::agent
