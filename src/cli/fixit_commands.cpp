// `ptxbench fixit`: mine, repair, reason, export, build, show (docs/fixit.md).
#include "cli/fixit_commands.h"

#include <fmt/format.h>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "agent/feedback.h"
#include "agent/models.h"
#include "agent/prompt.h"
#include "cli/helpers.h"
#include "cli/validators.h"
#include "eval/evaluator.h"
#include "eval/settings.h"
#include "fixit/build.h"
#include "fixit/dataset.h"
#include "fixit/fixit.h"
#include "report/table.h"
#include "util/documents.h"
#include "util/files.h"
#include "util/json_file.h"
#include "util/text.h"

namespace ptxbench {

using nlohmann::json;

CLI::App* add_fixit_command(CLI::App& app, FixitCommandOptions& o, const std::function<void(CLI::App*)>& add_json) {
  auto* fixit = app.add_subcommand(
      "fixit",
      "Fine-tuning data from failed turns: mine them, repair them with a teacher (verified by the judge), "
      "explain the fixes with a reasoner, export a Hugging Face dataset folder for TRL or OpenAI fine-tuning "
      "with a data card; or build a whole variant from a spec (docs/fixit.md)");
  fixit->require_subcommand(1);
  auto models = [&](CLI::App* sub) {
    sub->add_option("--models", o.models, "The model catalogue [$PTXBENCH_MODELS, else <root>/models.json]");
  };
  auto judge = [&](CLI::App* sub) {
    sub->add_flag("--cpu-only", o.cpu_only, "Run only the CPU stages (no fix can then be verified)");
    sub->add_option("--stage-time-limit", o.stage_time_limit_s, "Seconds each GPU stage's process may run")
        ->check(kPositiveFinite);
    sub->add_option("--parallel", o.parallel, "Trajectories driven at once")->check(CLI::Range(1, 256));
  };
  auto filters = [&](CLI::App* sub) {
    sub->add_option("--runs", o.runs, "Agent runs to mine (comma-separated; default: every agent run)")
        ->delimiter(',');
    sub->add_option("--model", o.model, "Only turns of this model");
    sub->add_option("--tasks", o.tasks, "Only these tasks: globs over task ids or @group, comma-separated");
  };

  auto* mine = fixit->add_subcommand(
      "mine", "Select failed turns (or, with --correct, verified ones) and store the set as a run");
  o.mine = mine;
  filters(mine);
  std::vector<std::string> classes;
  for (const auto c : agent::kFailureClasses)
    if (fixit::minable_class(c)) classes.push_back(agent::to_string(c));
  mine->add_option("--error-classes", o.error_classes,
                   fmt::format("Only these classes ({})", fmt::join(classes, ", ")))
      ->delimiter(',');
  mine->add_option("--min-turn", o.min_turn, "Only turns from this one on")->check(CLI::PositiveNumber);
  mine->add_option("--max-turn", o.max_turn, "Only turns up to this one")->check(CLI::PositiveNumber);
  mine->add_flag("--correct", o.correct, "Verified turns instead (direct-generation data)");
  mine->add_option("--per-task", o.per_task,
                   "At most N per task, drawn in turn from each (error class, turn) stratum; none: unbalanced")
      ->check(CLI::PositiveNumber);
  mine->add_option("--per-class", o.per_class, "At most N per task and error class")->check(CLI::PositiveNumber);
  mine->add_option("--seed", o.seed, "Which turns a quota keeps");
  add_json(mine);

  auto* repair = fixit->add_subcommand(
      "repair", "A teacher fixes each mined failure through the agent loop; only verified fixes count");
  o.repair = repair;
  repair->add_option("--mined", o.mined, "The mined set's run id (fixit mine)");
  repair->add_option("--teacher", o.teacher, "The teacher: a catalogue name, or 'reference'");
  repair->add_option("--turns", o.turns, "Fix turns per failure at most")->check(CLI::Range(1, 100));
  repair->add_option("--knowledge", o.knowledge, "What the teacher is shown of the kit")
      ->check(CLI::IsMember(kKnowledgeLevelNames));
  repair->add_option("--resume", o.resume, "Continue this repair run")->check(CLI::PositiveNumber);
  models(repair);
  judge(repair);
  add_json(repair);

  auto* reason = fixit->add_subcommand(
      "reason", "A reasoning model explains each verified fix, checked for length and for pasted code");
  o.reason = reason;
  reason->add_option("--repair-run", o.repair_run, "The repair run");
  reason->add_option("--reasoner", o.reasoner, "A catalogue name (the student itself too), or 'reference'");
  reason->add_option("--min-chars", o.min_chars, "Shortest reasoning accepted");
  reason->add_option("--max-chars", o.max_chars, "Longest reasoning accepted");
  reason->add_option("--max-code-lines", o.max_code_lines, "Code lines it may quote verbatim");
  reason->add_option("--attempts", o.attempts, "Asks per fix")->check(CLI::Range(1, 10));
  reason->add_option("--resume", o.resume, "Continue this reasoning run")->check(CLI::PositiveNumber);
  models(reason);
  add_json(reason);

  auto* exp = fixit->add_subcommand(
      "export",
      "Write a dataset folder: train.jsonl, test.jsonl (held-out tasks), README.md (the data card)");
  o.export_cmd = exp;
  exp->add_option("--repair-run", o.repair_run, "Fix examples from this repair run's verified fixes");
  exp->add_option("--reason-run", o.reason_run, "With their reasoning from this run (else the fix alone)");
  exp->add_option("--mined", o.mined, "Direct-generation examples from this mined set of verified turns");
  exp->add_option("--out", o.out, "Output folder")->required();
  auto format_and_prompt = [&](CLI::App* sub) {
    sub->add_option("--format", o.format,
                    "prompt-completion (TRL's SFTTrainer: the loss on the fix alone), messages (the whole "
                    "conversation with weights) or openai (OpenAI fine-tuning)")
        ->check(CLI::IsMember({"prompt-completion", "messages", "openai"}));
    sub->add_option("--prompt", o.prompt,
                    "The example's first user message: statement (the task statement) or agent (the agent's "
                    "first message as the source run asked it, with its kit files: many times longer)")
        ->check(CLI::IsMember({"statement", "agent"}));
  };
  format_and_prompt(exp);
  exp->add_option("--holdout", o.holdout, "Tasks whose examples go to test.jsonl: globs or @group (@held-out), comma-separated")
      ->delimiter(',');
  exp->add_option("--name", o.name, "The data card's name");
  add_json(exp);

  auto* build = fixit->add_subcommand(
      "build", "Build a variant from a spec file (fixit/s0.json ... s6.json): every step stored, resumable");
  o.build = build;
  build->add_option("spec", o.spec, "The spec file")->required();
  build->add_option("--out", o.out, "Output folder (its state.json makes the same command resume)")->required();
  format_and_prompt(build);
  filters(build);
  build->add_option("--teacher", o.teacher, "Instead of the spec's teacher");
  build->add_option("--reasoner", o.reasoner, "Instead of the spec's reasoner");
  build->add_option("--holdout", o.holdout, "Instead of the spec's held-out task globs")->delimiter(',');
  models(build);
  judge(build);
  add_json(build);

  auto* show = fixit->add_subcommand("show", "Show a fixit run: a mined set, a repair run or a reasoning run");
  o.show = show;
  show->add_option("run", o.show_run, "The run id")->required();
  add_json(show);
  return fixit;
}

namespace {

// Providers for names, kept alive for the command.
class Models {
 public:
  Models(const Context& ctx, std::filesystem::path catalogue) : ctx_(ctx), catalogue_(std::move(catalogue)) {}
  fixit::ChosenModel teacher(const std::string& name, const json& stored) {
    agent::ModelChoice choice =
        agent::choose_model(name, catalogue_, ctx_.paths.solutions(), ctx_.registry, cuda_track(), stored);
    owned_.push_back(std::move(choice.provider));
    return {owned_.back().get(), choice.spec};
  }
  fixit::ChosenModel reasoner(const std::string& name, const json& stored) {
    if (name == "reference") {
      owned_.push_back(std::make_unique<fixit::ReferenceReasoner>());
      return {owned_.back().get(), json{{"name", "reference"}, {"provider", "reference"}}};
    }
    return teacher(name, stored);
  }

 private:
  const Context& ctx_;
  std::filesystem::path catalogue_;
  std::vector<std::unique_ptr<llm::Provider>> owned_;
};

void print_mined(const std::vector<fixit::Mined>& items) {
  TextTable table({"TASK", "CLASS", "TURN", "MODEL", "RUN", "EVALUATION", "CODE"});
  for (const auto& m : items)
    table.add_row({m.task_id, m.error_class.empty() ? "verified" : m.error_class, std::to_string(m.turn), m.model,
                   std::to_string(m.run_id), std::to_string(m.evaluation_id), m.code_hash.substr(0, 12)});
  std::cout << table.render();
}

json mined_json(int64_t run_id, const std::vector<fixit::Mined>& items) {
  json list = json::array();
  for (const auto& i : items) list.push_back(to_json(i));
  return tagged(documents::fixit_mined, {{"run_id", run_id}, {"items", list}});
}

json repairs_json(int64_t run_id, const std::vector<fixit::Repair>& repairs) {
  json out = json::array();
  for (const auto& r : repairs)
    out.push_back({{"failure", to_json(r.failure)},
                   {"trajectory", r.trajectory_id},
                   {"status", r.status},
                   {"fix_turn", or_null(r.fix_turn)},
                   {"fix_evaluation_id", or_null(r.fix_evaluation_id)},
                   {"fix_submission", or_null(r.fix_hash)},
                   {"teacher", r.teacher}});
  return tagged(documents::fixit_repairs, {{"run_id", run_id}, {"repairs", out}});
}

void print_repairs(const std::vector<fixit::Repair>& repairs) {
  TextTable table({"TASK", "CLASS", "FAILED TURN", "STATUS", "FIX TURN", "FIX EVALUATION"});
  std::map<std::string, int> counts;
  for (const auto& r : repairs) {
    ++counts[r.status];
    table.add_row({r.failure.task_id, r.failure.error_class, std::to_string(r.failure.turn), r.status,
                   r.fix_turn ? std::to_string(r.fix_turn) : "-",
                   r.fix_evaluation_id ? std::to_string(r.fix_evaluation_id) : "-"});
  }
  std::cout << table.render();
  std::vector<std::string> parts;
  for (const auto& [status, n] : counts) parts.push_back(fmt::format("{} {}", n, status));
  std::cout << fmt::format("\n{} failures: {}. Only verified fixes become examples; correct-only ones (correct, "
                           "the required instructions not verified) are listed apart and never exported.\n",
                           repairs.size(), fmt::join(parts, ", "));
}

int mine_command(const CommonOptions& common, const FixitCommandOptions& o) {
  Context ctx = open_project(common);
  Store store(ctx.paths.store());
  fixit::MineOptions m{.runs = std::vector<int64_t>(o.runs.begin(), o.runs.end()),
                       .model = o.model,
                       .tasks = o.tasks,
                       .error_classes = o.error_classes,
                       .min_turn = o.min_turn,
                       .max_turn = o.max_turn,
                       .correct = o.correct,
                       .quotas = {.per_task = o.per_task, .per_class = o.per_class},
                       .seed = o.seed};
  if (o.correct && !o.error_classes.empty()) {
    std::fprintf(stderr, "ptxbench: --correct mines verified turns, which have no error class\n");
    return kExitUsage;
  }
  for (const auto& c : o.error_classes)
    if (!agent::error_class_from_string(c) || c == "extraction" || c == "harness" || c == "provider" ||
        c == "none") {
      std::fprintf(stderr, "ptxbench: '%s' is not the class of a failed turn with code\n", c.c_str());
      return kExitUsage;
    }
  std::vector<fixit::Mined> items;
  try {
    items = fixit::mine(store, ctx.registry, m);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "ptxbench: %s\n", e.what());
    return kExitUsage;
  }
  const int64_t run_id = fixit::store_mined(store, m, items);
  if (common.json) {
    std::cout << json_text(mined_json(run_id, items), 2) << "\n";
  } else {
    print_mined(items);
    std::cout << fmt::format("\nmined set: run {} ({} {}; {}). Next: ptxbench fixit repair --mined {} --teacher "
                             "NAME\n",
                             run_id, items.size(), o.correct ? "verified turns" : "failed turns",
                             m.quotas.any() ? fmt::format("at most {} per task, {} per task and class",
                                                          m.quotas.per_task ? std::to_string(m.quotas.per_task) : "any",
                                                          m.quotas.per_class ? std::to_string(m.quotas.per_class) : "any")
                                            : "unbalanced",
                             run_id);
  }
  return kExitOk;
}

LocalEvaluator make_judge(const Context& ctx, const HostSettings& host, const GpuInfo& gpu,
                          double stage_time_limit_s) {
  return LocalEvaluator(
      [&ctx, &host, gpu, stage_time_limit_s](const Task& task) {
        return eval_options(ctx.paths, host, task, false, gpu, stage_time_limit_s);
      },
      std::vector<std::string>{}, host.sandbox);  // one GPU, as the runner inherits it
}

void print_turn(const agent::TurnEvent& e) {
  if (e.phase != agent::TurnPhase::done) return;  // a model call or an evaluation begun: said when it ends
  if (e.turn == 0) {
    std::cerr << fmt::format("  {} #{}: {}{}\n", e.task_id, e.sample, e.status,
                             e.status == agent::kError ? ": " + e.outcome : "");
    return;
  }
  std::cerr << fmt::format("  {} #{} turn {}: {:<13} {}\n", e.task_id, e.sample, e.turn,
                           e.error_class.empty() ? "ok" : e.error_class, e.outcome.substr(0, 160));
}

int repair_command(const CommonOptions& common, const FixitCommandOptions& o) {
  Context ctx = open_project(common);
  const HostSettings host = host_settings();
  keep_compile_cache_within_limit(ctx.paths, host);
  Store store(ctx.paths.store());
  Models models(ctx, catalogue_path(ctx.paths, o.models));
  int64_t run_id = o.resume;
  fixit::RepairSettings settings;
  if (run_id) {
    const auto run = store.run(run_id);
    if (!run || run->kind != fixit::kRepairKind) {
      std::fprintf(stderr, "ptxbench: no fixit repair run %lld\n", o.resume);
      return kExitUsage;
    }
    if (o.mined || !o.teacher.empty()) {
      std::fprintf(stderr, "ptxbench: --resume continues with the stored settings; no --mined or --teacher\n");
      return kExitUsage;
    }
    if (!lock_run(ctx.paths, run_id)) {
      std::fprintf(stderr, "ptxbench: run %lld is being driven by another ptxbench process\n", o.resume);
      return kExitUsage;
    }
    settings = fixit::repair_settings_from_json(run->args);
    store.reopen_run(run_id);
  } else {
    if (!o.mined || o.teacher.empty()) {
      std::fprintf(stderr, "ptxbench: fixit repair needs --mined RUN and --teacher NAME (or --resume RUN)\n");
      return kExitUsage;
    }
    settings = {.teacher = o.teacher, .mine_run = o.mined, .turns = o.turns, .knowledge = o.knowledge,
                .cpu_only = o.cpu_only};
  }
  fixit::ChosenModel teacher;
  try {
    teacher = models.teacher(settings.teacher, run_id ? settings.teacher_spec : json(nullptr));
    if (!run_id) {
      settings.teacher_spec = teacher.spec;
      const auto items = fixit::mined_set(store, settings.mine_run);
      for (const auto& m : items)
        if (m.error_class.empty()) throw std::invalid_argument("the mined set holds verified turns: nothing to repair");
      run_id = fixit::start_repair(store, settings, items);
      lock_run(ctx.paths, run_id);
    }
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "ptxbench: %s\n", e.what());
    return kExitUsage;
  }
  const GpuInfo gpu = gpu_for(settings.cpu_only, host);
  LocalEvaluator judge = make_judge(ctx, host, gpu, o.stage_time_limit_s);
  std::cerr << fmt::format("repair run {}{}: teacher {}, up to {} turns per failure; {}\n", run_id,
                           o.resume ? " (resumed)" : "", settings.teacher, settings.turns,
                           gpu.present ? gpu.describe() : gpu.absent_reason);
  const auto result = fixit::run_repair(run_id, store, ctx.registry, *teacher.provider, judge,
                                        ctx.paths.root / "kits", o.parallel, print_turn);
  const auto repairs = fixit::repairs(store, run_id);
  if (common.json) {
    json doc = repairs_json(run_id, repairs);
    doc["errors"] = result.errors;
    std::cout << json_text(doc, 2) << "\n";
  } else {
    print_repairs(repairs);
    if (!gpu.present)
      std::cout << "GPU stages skipped: " << gpu.absent_reason << ": no fix can be verified here.\n";
    std::cout << fmt::format("repair run {}. Next: ptxbench fixit reason --repair-run {} --reasoner NAME\n", run_id,
                             run_id);
    if (result.errors)
      std::cout << fmt::format("{} stopped on an error; continue with: ptxbench fixit repair --resume {}\n",
                               result.errors, run_id);
  }
  return result.errors ? kExitHarness : kExitOk;
}

int reason_command(const CommonOptions& common, const FixitCommandOptions& o) {
  Context ctx = open_project(common);
  Store store(ctx.paths.store());
  Models models(ctx, catalogue_path(ctx.paths, o.models));
  int64_t run_id = o.resume;
  fixit::ReasonSettings settings;
  try {
    if (run_id) {
      const auto run = store.run(run_id);
      if (!run || run->kind != fixit::kReasonKind)
        throw std::invalid_argument(fmt::format("no fixit reasoning run {}", run_id));
      if (!lock_run(ctx.paths, run_id))
        throw std::invalid_argument(fmt::format("run {} is being driven by another ptxbench process", run_id));
      settings = fixit::reason_settings_from_json(run->args);
      store.reopen_run(run_id);
    } else {
      if (!o.repair_run || o.reasoner.empty())
        throw std::invalid_argument("fixit reason needs --repair-run RUN and --reasoner NAME (or --resume RUN)");
      settings = {.reasoner = o.reasoner,
                  .repair_run = o.repair_run,
                  .limits = {.min_chars = o.min_chars, .max_chars = o.max_chars, .max_code_lines = o.max_code_lines},
                  .attempts = o.attempts};
      if (settings.limits.min_chars >= settings.limits.max_chars)
        throw std::invalid_argument("--min-chars must be below --max-chars");
    }
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "ptxbench: %s\n", e.what());
    return kExitUsage;
  }
  fixit::ChosenModel model;
  try {
    model = models.reasoner(settings.reasoner, run_id ? settings.reasoner_spec : json(nullptr));
    if (!run_id) {
      settings.reasoner_spec = model.spec;
      run_id = fixit::start_reasoning(store, settings);
      lock_run(ctx.paths, run_id);
    }
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "ptxbench: %s\n", e.what());
    return kExitUsage;
  }
  std::cerr << fmt::format("reasoning run {}: reasoner {} on the verified fixes of repair run {}\n", run_id,
                           settings.reasoner, settings.repair_run);
  const auto r = fixit::run_reasoning(run_id, store, ctx.registry, *model.provider,
                                      [](const std::string& line) { std::cerr << line << "\n"; });
  if (common.json)
    std::cout << json_text(tagged(documents::fixit_reasoning, {{"run_id", run_id},
                                                               {"fixes", r.fixes},
                                                               {"accepted", r.accepted},
                                                               {"refused", r.refused},
                                                               {"errors", r.errors}}),
                           2)
              << "\n";
  else
    std::cout << fmt::format(
        "reasoning run {}: {} verified fixes, {} reasonings accepted, {} refused, {} stopped on an error{}\n", run_id,
        r.fixes, r.accepted, r.refused, r.errors,
        r.errors ? fmt::format(" (continue: ptxbench fixit reason --resume {})", run_id) : "");
  return r.errors ? kExitHarness : kExitOk;
}

void print_export(const CommonOptions& common, const fixit::ExportResult& r, const std::string& out) {
  if (common.json) {
    std::cout << json_text(tagged(documents::fixit_export,
                                  {{"train", r.train}, {"test", r.test}, {"card", r.card}}),
                           2)
              << "\n";
    return;
  }
  std::cout << fmt::format(
      "{} train examples in {}/train.jsonl, {} test (held-out tasks){}; the data card in "
      "README.md and card.json\n",
      r.train, out, r.test, r.test > 0 ? " in test.jsonl" : "");
}

// Why no example came out, from the counts of what went in: {"mined": N} of a mined set, or {"repairs":
// {status: count}} of a repair run and, when reasoning was asked for, {"reasoning_accepted": N} (a build's
// pipeline).
std::string why_nothing_exported(const json& counts) {
  if (counts.value("mined", json(1)) == 0) return "the mined set is empty";
  if (counts.contains("repairs")) {
    const auto by_status = counts["repairs"].get<std::map<std::string, int>>();
    int total = 0;
    std::vector<std::string> parts;
    for (const auto& [status, n] : by_status) {
      total += n;
      parts.push_back(fmt::format("{} {}", n, status));
    }
    if (total == 0) return "there was no failure to repair";
    const auto verified = by_status.find(fixit::kVerified);
    if (verified == by_status.end() || verified->second == 0)
      return fmt::format(
          "no fix was verified ({}){}", fmt::join(parts, ", "),
          by_status.contains(fixit::kUnverifiedFix)
              ? "; an unverified one failed nothing, but its GPU stages were skipped, so it is no fix"
              : "");
  }
  if (counts.value("balanced_after_repair", json(1)) == 0) return "balancing kept no verified fix";
  if (counts.value("reasoning_accepted", json(1)) == 0) return "no verified fix has an accepted reasoning";
  return "no example came out";
}

// An export of no example is not a success, for export as for build: its empty files would pass for a data
// set.
int nothing_exported(const std::string& why) {
  std::fprintf(
      stderr,
      "ptxbench: nothing exported: %s. Files without an example are no data set, so this is not a success "
      "(exit 3)\n",
      why.c_str());
  return kExitIncomplete;
}

int export_command(const CommonOptions& common, const FixitCommandOptions& o) {
  Context ctx = open_project(common);
  if (!std::filesystem::exists(ctx.paths.store())) {
    std::fprintf(stderr, "ptxbench: no results yet (%s does not exist)\n", ctx.paths.store().string().c_str());
    return kExitUsage;
  }
  Store store(ctx.paths.store(), StoreAccess::read_only);
  const auto format = fixit::export_format_from_string(o.format);
  const auto prompt = fixit::prompt_source_from_string(o.prompt);
  if (!format || !prompt || (o.repair_run ? 1 : 0) + (o.mined ? 1 : 0) != 1) {
    std::fprintf(stderr, "ptxbench: fixit export takes --repair-run RUN [--reason-run RUN] or --mined RUN\n");
    return kExitUsage;
  }
  fixit::ExportResult exported;
  json counts;  // of what went in, to say why nothing came out
  try {
    std::vector<fixit::Example> examples;
    json card = {{"name", o.name.empty() ? "fixit" : o.name}};
    if (o.mined) {
      const auto items = fixit::mined_set(store, o.mined);
      counts["mined"] = items.size();
      examples = fixit::make_examples(store, ctx.registry, fixit::Layout::direct,
                                      {.correct = items, .prompt = *prompt});
      card["runs"] = {{"mine", o.mined}};
    } else {
      const auto repairs = fixit::repairs(store, o.repair_run);
      std::map<std::string, int> by_status;
      for (const auto& r : repairs) ++by_status[r.status];
      counts["repairs"] = by_status;
      std::map<int64_t, std::string> reasoning;
      std::string reasoner, teacher;
      if (o.reason_run) {
        reasoning = fixit::reasonings(store, o.reason_run);
        reasoner = fixit::reason_settings_from_json(store.run(o.reason_run)->args).reasoner;
        counts["reasoning_accepted"] = reasoning.size();
      }
      if (const auto run = store.run(o.repair_run)) teacher = run->args.value("model", std::string());
      examples = fixit::make_examples(store, ctx.registry, fixit::Layout::fix,
                                      {.repairs = repairs,
                                       .reasoning = reasoning,
                                       .need_reasoning = o.reason_run != 0,
                                       .teacher = teacher,
                                       .reasoner = reasoner,
                                       .prompt = *prompt});
      card["runs"] = {{"repair", o.repair_run}, {"reason", o.reason_run}};
      card["teacher"] = teacher;
      card["reasoner"] = reasoner;
    }
    exported = fixit::export_examples(examples, o.out, *format, o.holdout, ctx.registry.select(o.holdout), card);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "ptxbench: %s\n", e.what());
    return kExitUsage;
  }
  print_export(common, exported, o.out);
  if (exported.train + exported.test == 0) return nothing_exported(why_nothing_exported(counts));
  return kExitOk;
}

int build_command(const CommonOptions& common, const FixitCommandOptions& o) {
  Context ctx = open_project(common);
  const HostSettings host = host_settings();
  keep_compile_cache_within_limit(ctx.paths, host);
  fixit::Spec spec;
  try {
    json doc = read_json_file(o.spec);  // strict: a key given twice is an error
    // The command line's choices replace the spec's (a store's run ids, the model names of this catalogue).
    if (!o.runs.empty()) doc["runs"] = o.runs;
    if (!o.model.empty()) doc["model"] = o.model;
    if (o.tasks != "*") doc["tasks"] = o.tasks;
    if (!o.teacher.empty() && doc.contains("teacher") && doc["teacher"].is_object())
      doc["teacher"]["model"] = o.teacher;
    if (!o.reasoner.empty() && doc.contains("reasoner") && doc["reasoner"].is_object())
      doc["reasoner"]["model"] = o.reasoner;
    if (!o.holdout.empty()) doc["holdout"] = o.holdout;
    spec = fixit::parse_spec(doc);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ptxbench: %s: %s\n", o.spec.c_str(), e.what());
    return kExitUsage;
  }
  Store store(ctx.paths.store());
  Models models(ctx, catalogue_path(ctx.paths, o.models));
  const GpuInfo gpu = gpu_for(o.cpu_only, host);
  LocalEvaluator judge = make_judge(ctx, host, gpu, o.stage_time_limit_s);
  std::cerr << fmt::format("fixit build {} into {}; {}\n", spec.name, o.out,
                           gpu.present ? gpu.describe() : gpu.absent_reason);
  fixit::BuildResult result;
  try {
    result = fixit::build_variant(
        spec, o.out, *fixit::export_format_from_string(o.format),
        {.store = &store,
         .registry = &ctx.registry,
         .kits_dir = ctx.paths.root / "kits",
         .model =
             [&](const std::string& role, const std::string& name, const json& stored) {
               return role == "teacher" ? models.teacher(name, stored) : models.reasoner(name, stored);
             },
         .judge = &judge,
         .parallel = o.parallel,
         .say = [](const std::string& line) { std::cerr << line << "\n"; },
         .on_event = print_turn,
         .prompt = *fixit::prompt_source_from_string(o.prompt)});
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "ptxbench: %s\n", e.what());
    return kExitUsage;
  }
  if (!result.complete) {
    std::cerr << "the build stopped on a model or judge error: the same command resumes it\n";
    return kExitHarness;
  }
  print_export(common, result.exported, o.out);
  if (!common.json && !gpu.present)
    std::cout << "GPU stages skipped: " << gpu.absent_reason
              << ": no fix or solution can be verified here, and only verified code is exported.\n";
  if (result.exported.train + result.exported.test == 0) {
    const std::string why = why_nothing_exported(result.exported.card.value("pipeline", json::object()));
    return nothing_exported(gpu.present ? why : fmt::format("{} ({})", why, gpu.absent_reason));
  }
  return kExitOk;
}

int show_command(const CommonOptions& common, const FixitCommandOptions& o) {
  const ProjectPaths paths = find_project(common.root, common.data);
  Store store(paths.store(), StoreAccess::read_only);
  const auto run = store.run(o.show_run);
  if (!run) {
    std::fprintf(stderr, "ptxbench: no run %lld\n", o.show_run);
    return kExitUsage;
  }
  if (run->kind == fixit::kMineKind) {
    const auto items = fixit::mined_set(store, run->id);
    if (common.json)
      std::cout << json_text(mined_json(run->id, items), 2) << "\n";
    else
      print_mined(items);
  } else if (run->kind == fixit::kRepairKind) {
    const auto repairs = fixit::repairs(store, run->id);
    if (common.json)
      std::cout << json_text(repairs_json(run->id, repairs), 2) << "\n";
    else
      print_repairs(repairs);
  } else if (run->kind == fixit::kReasonKind) {
    const auto texts = fixit::reasonings(store, run->id);
    json out = json::object();
    for (const auto& [trajectory, text] : texts) out[std::to_string(trajectory)] = text;
    if (common.json) {
      std::cout << json_text(tagged(documents::fixit_reasonings, {{"run_id", run->id}, {"reasonings", out}}),
                             2)
                << "\n";
    } else {
      for (const auto& t : store.trajectories(run->id))
        std::cout << fmt::format("{} #{}: {}\n", t.task_id, t.sample, t.status == agent::kSolved ? "accepted"
                                                                       : t.status == agent::kFinished
                                                                           ? "every attempt refused"
                                                                           : t.status);
    }
  } else {
    std::fprintf(stderr, "ptxbench: run %lld is a '%s' run, not a fixit one\n", o.show_run, run->kind.c_str());
    return kExitUsage;
  }
  return kExitOk;
}

}  // namespace

int fixit_command(const CommonOptions& common, const FixitCommandOptions& o) {
  if (o.mine && o.mine->parsed()) return mine_command(common, o);
  if (o.repair && o.repair->parsed()) return repair_command(common, o);
  if (o.reason && o.reason->parsed()) return reason_command(common, o);
  if (o.export_cmd && o.export_cmd->parsed()) return export_command(common, o);
  if (o.build && o.build->parsed()) return build_command(common, o);
  if (o.show && o.show->parsed()) return show_command(common, o);
  return kExitUsage;
}

}  // namespace ptxbench
