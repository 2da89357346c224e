#include "fixit/build.h"

#include <fmt/format.h>
#include <map>
#include <set>
#include <stdexcept>

#include "util/files.h"
#include "util/text.h"

namespace ptxbench::fixit {

using nlohmann::json;

namespace {

BuildState load_state(const std::filesystem::path& file, const json& spec) {
  BuildState state;
  if (!std::filesystem::exists(file)) return state;
  const json doc = json::parse(read_file(file));
  if (doc.value("spec", json()) != spec)
    throw std::invalid_argument(fmt::format(
        "{} holds the build of another spec (or of this one before an edit): build into a fresh folder",
        file.string()));
  state.mine_run = doc.value("mine_run", int64_t{0});
  state.repair_run = doc.value("repair_run", int64_t{0});
  state.reason_run = doc.value("reason_run", int64_t{0});
  return state;
}

// A run the build started before (its id is in the state file): gone from the store is an error.
RunRow started_run(Store& store, int64_t id, const char* what) {
  std::optional<RunRow> run = store.run(id);
  if (!run) throw std::runtime_error(fmt::format("the {} run {} is not in the store", what, id));
  return *std::move(run);
}

void save_state(const std::filesystem::path& file, const json& spec, const BuildState& s) {
  write_file(file, json_text(json{{"spec", spec},
                                  {"mine_run", s.mine_run},
                                  {"repair_run", s.repair_run},
                                  {"reason_run", s.reason_run}},
                             2) +
                       "\n");
}

}  // namespace

BuildResult build_variant(const Spec& spec, const std::filesystem::path& out, ExportFormat format,
                          const BuildContext& c) {
  auto say = [&](const std::string& line) {
    if (c.say) c.say(line);
  };
  std::filesystem::create_directories(out);
  if (spec.reasoner == "@source" && spec.mine.model.empty())
    throw std::invalid_argument(
        "the reasoner is \"@source\", the mined model itself: name that model (\"model\", or --model)");
  const std::string reasoner = spec.reasoner == "@source" ? spec.mine.model : spec.reasoner;
  const json spec_doc = to_json(spec);
  const std::filesystem::path state_file = out / "state.json";
  BuildResult result;
  BuildState& state = result.state;
  state = load_state(state_file, spec_doc);
  Store& store = *c.store;

  // 1. mine (balanced here when the spec balances before repair)
  if (!state.mine_run) {
    const auto items = mine(store, *c.registry, spec.mine);
    state.mine_run = store_mined(store, spec.mine, items);
    save_state(state_file, spec_doc, state);
  }
  const std::vector<Mined> items = mined_set(store, state.mine_run);
  say(fmt::format("mined: {} {} (run {})", items.size(),
                  spec.correct_source ? "verified solutions" : "failed turns", state.mine_run));
  json pipeline = {{"mined", items.size()}};
  json card = {{"name", spec.name}, {"about", spec.about}, {"spec", spec_doc}};

  if (spec.correct_source) {
    const auto examples =
        make_examples(store, *c.registry, Layout::direct, {.correct = items, .prompt = c.prompt});
    card["runs"] = {{"mine", state.mine_run}};
    card["pipeline"] = pipeline;
    result.exported = export_examples(examples, out, format, spec.holdout, c.registry->select(spec.holdout), card);
    result.complete = true;
    return result;
  }

  // 2. repair
  if (!state.repair_run) {
    const ChosenModel teacher = c.model("teacher", spec.teacher, nullptr);
    state.repair_run = start_repair(store,
                                    {.teacher = spec.teacher,
                                     .teacher_spec = teacher.spec,
                                     .mine_run = state.mine_run,
                                     .turns = spec.teacher_turns,
                                     .knowledge = spec.knowledge},
                                    items);
    save_state(state_file, spec_doc, state);
  }
  {
    const RunRow run = started_run(store, state.repair_run, "repair");
    if (run.finished_at.empty()) {
      const ChosenModel teacher = c.model("teacher", spec.teacher, run.args.value("model_spec", json()));
      say(fmt::format("repair: run {}, teacher {}, up to {} turns", state.repair_run, spec.teacher,
                      spec.teacher_turns));
      const auto repaired = run_repair(state.repair_run, store, *c.registry, *teacher.provider, *c.judge,
                                       c.kits_dir, c.parallel, c.on_event);
      if (repaired.errors) {
        say(fmt::format("repair: {} trajectories stopped on an error; run the same command again to resume",
                        repaired.errors));
        return result;
      }
    }
  }
  std::vector<Repair> fixes = repairs(store, state.repair_run);
  std::map<std::string, int> by_status;
  for (const auto& r : fixes) ++by_status[r.status];
  pipeline["repairs"] = by_status;
  say(fmt::format("repair: {}", json(by_status).dump()));

  // 3. balance after repair: over the verified fixes, by their failures' task, class and turn
  std::vector<Repair> kept;
  for (const auto& r : fixes)
    if (r.status == kVerified) kept.push_back(r);
  if (spec.balance == Balance::after_repair) {
    std::vector<const Mined*> pointers;
    for (const auto& r : kept) pointers.push_back(&r.failure);
    std::vector<Repair> balanced;
    for (const size_t i : balance(pointers, spec.quotas, spec.mine.seed)) balanced.push_back(kept[i]);
    kept = std::move(balanced);
    pipeline["balanced_after_repair"] = kept.size();
  }

  // 4. reason
  std::map<int64_t, std::string> reasoning;
  if (!reasoner.empty()) {
    if (!state.reason_run) {
      const ChosenModel model = c.model("reasoner", reasoner, nullptr);
      std::set<int64_t> only;
      for (const auto& r : kept) only.insert(r.trajectory_id);
      state.reason_run = start_reasoning(store,
                                         {.reasoner = reasoner,
                                          .reasoner_spec = model.spec,
                                          .repair_run = state.repair_run,
                                          .limits = spec.limits,
                                          .attempts = spec.reason_attempts},
                                         only);
      save_state(state_file, spec_doc, state);
    }
    const RunRow run = started_run(store, state.reason_run, "reasoning");
    if (run.finished_at.empty()) {
      const ChosenModel model = c.model("reasoner", reasoner, run.args.value("model_spec", json()));
      say(fmt::format("reason: run {}, reasoner {}", state.reason_run, reasoner));
      const ReasonResult r = run_reasoning(state.reason_run, store, *c.registry, *model.provider, c.say);
      if (r.errors) {
        say(fmt::format("reason: {} calls failed; run the same command again to resume", r.errors));
        return result;
      }
    }
    reasoning = reasonings(store, state.reason_run);
    pipeline["reasoning_accepted"] = reasoning.size();
  }

  // 5. export
  const auto examples = make_examples(store, *c.registry, Layout::fix,
                                      {.repairs = kept,
                                       .reasoning = reasoning,
                                       .need_reasoning = !reasoner.empty(),
                                       .teacher = spec.teacher,
                                       .reasoner = reasoner,
                                       .prompt = c.prompt});
  card["runs"] = {{"mine", state.mine_run}, {"repair", state.repair_run}, {"reason", state.reason_run}};
  card["teacher"] = spec.teacher;
  card["reasoner"] = reasoner;
  card["pipeline"] = pipeline;
  result.exported = export_examples(examples, out, format, spec.holdout, c.registry->select(spec.holdout), card);
  result.complete = true;
  return result;
}

}  // namespace ptxbench::fixit
