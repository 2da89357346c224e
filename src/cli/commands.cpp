#include "cli/commands.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>

#include "agent/agent_run.h"
#include "agent/feedback.h"
#include "agent/models.h"
#include "agent/prompt.h"
#include "agent/reference_model.h"
#include "agent/summary.h"
#include "arch/profile.h"
#include "cli/helpers.h"
#include "cli/progress.h"
#include "cli/project.h"
#include "compile/cache.h"
#include "compile/compile.h"
#include "eval/evaluate.h"
#include "eval/evaluator.h"
#include "eval/python_bytecode.h"
#include "eval/sandbox.h"
#include "eval/settings.h"
#include "eval/solution_run.h"
#include "report/dataset.h"
#include "report/metrics.h"
#include "report/table.h"
#include "report/write.h"
#include "store/store.h"
#include "task/task.h"
#include "util/documents.h"
#include "util/files.h"
#include "util/format.h"
#include "util/text.h"

namespace ptxbench {
namespace {

using nlohmann::json;

}  // namespace

// Shared with the other commands' files (cli/helpers.h).
Context open_project(const CommonOptions& common) {
  Context ctx{find_project(common.root, common.data), {}};
  ctx.registry = TaskRegistry::load(ctx.paths.tasks());
  return ctx;
}

namespace {

const Task* find_task_or_complain(const Context& ctx, const std::string& id) {
  const Task* task = ctx.registry.find(id);
  if (!task) std::fprintf(stderr, "ptxbench: no task '%s' (ptxbench tasks lists them)\n", id.c_str());
  return task;
}

// The track a solution file is judged in: --track, else the one its extension names (a .py file is
// Triton's), else CUDA. Nothing, after saying why, when --track contradicts the file's extension or the task
// does not accept the track.
const Track* track_for_solution(const std::string& option, const std::string& file, const Task& task) {
  const Track* of_file = track_of_file(file);
  const Track* track = !option.empty() ? find_track(option) : of_file ? of_file : &cuda_track();
  if (of_file && of_file != track) {
    std::fprintf(stderr, "ptxbench: %s is a %s file (%s), not a %s one: give --track %s\n", file.c_str(),
                 of_file->title().c_str(), of_file->extension().c_str(), track->title().c_str(),
                 of_file->name().c_str());
    return nullptr;
  }
  if (!accepts(task, *track)) {
    std::fprintf(stderr, "ptxbench: %s\n", not_accepted(task, *track).c_str());
    return nullptr;
  }
  return track;
}

bool read_solution(const std::string& file, std::string& source) {
  try {
    source = read_solution_file(file);
    return true;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ptxbench: %s\n", e.what());
    return false;
  }
}

// The sandbox nvcc runs in, resolved once in this process (its probe starts a process).
const SandboxStatus& compile_sandbox(const HostSettings& host) {
  static std::once_flag once;
  static SandboxStatus status;
  std::call_once(once, [&] { status = resolve_sandbox(host.sandbox); });
  return status;
}

CompileOptions compile_options(const ProjectPaths& paths, const HostSettings& host, const Task& task,
                               bool no_cache) {
  CompileOptions options;
  options.sandbox = compile_sandbox(host);
  options.min_free_bytes = host.compile_min_free_bytes;
  options.nvcc = host.nvcc;
  options.cache_dir = paths.compile_cache();
  options.display_root = paths.root;
  options.include_dirs = paths.include_dirs(find_arch(task.arch)->kit);
  options.use_cache = !no_cache;
  options.python = host.python;
  return options;
}

}  // namespace

// Every command that compiles first brings the compile cache within its limit, least recently used entries
// first (compile/cache.h says why entries in use are safe).
void keep_compile_cache_within_limit(const ProjectPaths& paths, const HostSettings& host) {
  const CachePruning pruned = prune_compile_cache(paths.compile_cache(), host.compile_cache_limit);
  if (pruned.removed.bytes > 0)
    std::fprintf(stderr, "ptxbench: compile cache over its limit: removed %d entries (%.0f MB)\n",
                 pruned.removed.entries, static_cast<double>(pruned.removed.bytes) / (1 << 20));
}

GpuInfo gpu_for(bool cpu_only, const HostSettings& host) {
  if (!cpu_only) return detect_gpu(host.visible_devices);
  return {.absent_reason = "--cpu-only: GPU stages not requested"};
}

EvalOptions eval_options(const ProjectPaths& paths, const HostSettings& host, const Task& task, bool no_cache,
                         const GpuInfo& gpu, double stage_time_limit_s,
                         const std::vector<std::string>& stages) {
  EvalOptions options{compile_options(paths, host, task, no_cache), gpu, {}};
  options.tools.runner = host.runner;
  options.tools.scratch = paths.data / "scratch" / std::to_string(getpid());
  options.tools.project_root = paths.root;
  options.tools.python = host.python;
  options.tools.python_bytecode = paths.data / "cache" / "python";
  options.tools.sandbox_data_bytes = host.sandbox_data_bytes;
  if (stage_time_limit_s > 0) options.tools.set_all_limits(stage_time_limit_s);
  if (!stages.empty()) options.tools.stages = stages;
  return options;
}

namespace {

int exit_code_for(OverallStatus status) {
  switch (status) {
    case OverallStatus::passed:
      return kExitOk;
    case OverallStatus::failed:
      return kExitRejected;
    case OverallStatus::incomplete:
      return kExitIncomplete;
    case OverallStatus::error:
      return kExitHarness;
  }
  return kExitHarness;
}

json number_or_null(std::optional<double> value) {
  return value ? json(*value) : json(nullptr);
}

std::string ratio(std::optional<double> value) {
  return value ? fmt::format("{:.3f}x", *value) : "-";
}

// One cell per stage: "ok", "FAIL", "TIME", "CRASH", "-" (skipped), "ERR" (harness).
std::string stage_cell(const Verdict& v, const std::string& name) {
  const StageResult* s = v.stage(name);
  if (!s) return "?";
  switch (s->status) {
    case StageStatus::passed:
      return "ok";
    case StageStatus::failed:
      return "FAIL";
    case StageStatus::timeout:
      return "TIME";
    case StageStatus::runtime_error:
      return "CRASH";
    case StageStatus::skipped:
      return "-";
    case StageStatus::harness_error:
      return "ERR";
  }
  return "?";
}

void print_verdict_text(const Verdict& v) {
  std::cout << fmt::format("task      {}\nsolution  {} ({})\nhost      {}\nverdict   {}\n", v.task_id,
                           v.source_name, v.submission_hash.substr(0, 12), v.host, v.summary());
  if (const auto kernels = v.kernel_speedup())
    std::cout << fmt::format(
        "kernels   {:.3f}x the baseline by the CUPTI time of its kernels alone, without the "
        "host time inside the call\n",
        *kernels);
  std::cout << "\n";
  for (const auto& s : v.stages) {
    const bool cached = s.name == "compile" && s.details.is_object() && s.details.value("cached", false);
    std::cout << fmt::format("[{:<12}] {:<13} {:6.2f} s{}\n", s.name, to_string(s.status), s.wall_s,
                             cached ? " (cached)" : "");
    if (!s.message.empty()) {
      std::string indented = "    " + s.message;
      for (size_t p = indented.find('\n'); p != std::string::npos; p = indented.find('\n', p + 1))
        indented.insert(p + 1, "    ");
      std::cout << indented << "\n";
    }
  }
  if (const std::string profile = agent::profile_feedback(v); !profile.empty()) std::cout << "\n" << profile;
}

void print_task_text(const Task& t) {
  const Family& family = t.family_spec();
  const ArchProfile* arch = find_arch(t.arch);
  std::cout << fmt::format("{}\n{}\n\n{}\n\n", t.id, t.title, t.description);
  std::cout << fmt::format("family        {} ({})\narchitecture  {} ({}), {}\ndtype         {}\n", t.family,
                           family.summary, t.arch, arch->marketing,
                           t.mode == TaskMode::full ? "run, checked and timed on a GPU"
                                                    : "static-only: compiled and checked, not run",
                           t.dtype);
  std::cout << "shapes\n";
  size_t label_width = 0;
  for (const auto& s : t.all_shapes()) label_width = std::max(label_width, s.label.size());
  for (const auto& s : t.all_shapes())
    std::cout << fmt::format("  {:<{}} {}   ({:.3g} GFLOP)\n", s.label, label_width, s.to_string(),
                             static_cast<double>(t.flops(s)) / 1e9);
  if (const std::string parameters = describe_parameters(t); !parameters.empty())
    std::cout << fmt::format("parameters    {}\n", parameters);
  std::cout << fmt::format(
      "FLOPs         {}\ntolerance     {} for every element (fp32 reference; NaN and Inf never pass)\n",
      family.flops, describe_tolerances(t));
  std::cout << "must execute\n";
  for (const auto& f : t.required)
    std::cout << fmt::format("  {:<12} PTX {:<36} SASS {}{}\n", f.name,
                             fmt::format("{}", fmt::join(f.ptx, ", ")), fmt::join(f.sass, ", "),
                             f.does_the_math ? "  (does the math)" : "");
  if (t.coverage_threshold > 0)
    std::cout << fmt::format("coverage      the MMA family must account for >= {:.0f}% of the FLOPs\n",
                             t.coverage_threshold * 100);
  else
    std::cout << "coverage      none: no family does the math (a memory-bound task)\n";
  std::cout << fmt::format("baseline      {}\n\nentry point (include/ptxbench/abi.h):\n{}\n\n",
                           describe_baseline(t), c_declarations(family));
  std::cout << fmt::format(
      "Solutions may include the ABI and the {} kit:\n  #include <ptxbench/abi.h>\n  #include <{}.cuh>   // "
      "kits/{}/ptx and kits/common/ptx: PTX template functions\n",
      arch->marketing, arch->kit, arch->kit);
  std::cout << fmt::format("\ntracks        {} (ptxbench eval --track)\n", fmt::join(t.tracks, ", "));
  for (const std::string& name : t.tracks)
    if (const Track* track = find_track(name); track && track != &cuda_track())
      std::cout << fmt::format("\n{} track: {}\n", track->title(), track->entry_point(family));
}

}  // namespace

int tasks_command(const CommonOptions& common, const TasksOptions& options) {
  Context ctx = open_project(common);
  if (!options.id.empty()) {
    const Task* task = find_task_or_complain(ctx, options.id);
    if (!task) return kExitUsage;
    if (common.json)
      std::cout << json_text(tagged(documents::task, to_json(*task)), 2) << "\n";
    else
      print_task_text(*task);
    return kExitOk;
  }
  json list = json::array();
  TextTable table({"TASK", "ARCH", "MODE", "TRACKS", "MAIN SHAPE", "MUST EXECUTE"});
  for (const auto& t : ctx.registry.all()) {
    if (!options.arch.empty() && t.arch != options.arch) continue;
    std::vector<std::string> names;
    for (const auto& f : t.required) names.push_back(f.name);
    table.add_row({t.id, t.arch, to_string(t.mode), fmt::format("{}", fmt::join(t.tracks, ", ")),
                   t.main_shape.to_string(), fmt::format("{}", fmt::join(names, ", "))});
    list.push_back(to_json(t));
  }
  if (common.json)
    std::cout << json_text(tagged(documents::task_list, {{"tasks", list}}), 2) << "\n";
  else
    std::cout << table.render();
  return kExitOk;
}

int compile_command(const CommonOptions& common, const CompileCommandOptions& options) {
  Context ctx = open_project(common);
  const HostSettings host = host_settings();
  keep_compile_cache_within_limit(ctx.paths, host);
  const Task* task = find_task_or_complain(ctx, options.task);
  if (!task) return kExitUsage;
  const Track* track = track_for_solution(options.track, options.solution, *task);
  std::string source;
  if (!track || !read_solution(options.solution, source)) return kExitUsage;
  const CompileResult result =
      compile_solution(*track, source, *task, compile_options(ctx.paths, host, *task, options.no_cache));
  const std::string submitted = std::filesystem::path(options.solution).filename().string();
  StageResult compile = compile_stage(result);
  compile.message = with_file_name(compile.message, track->source_name(), submitted);
  const StageResult checks = static_stage(result);
  if (common.json) {
    json doc = to_json(result);
    doc["diagnostics"] = with_file_name(result.diagnostics, track->source_name(), submitted);
    doc["task"] = task->id;
    doc["static_status"] = to_string(checks.status);
    doc["library"] = result.library.string();
    doc["wall_s"] = result.wall_s;  // a cache hit's: the lookup
    std::cout << json_text(tagged(documents::compile, doc), 2) << "\n";
  } else {
    std::cout << fmt::format("compile: {} in {:.2f} s{}\n", to_string(compile.status), result.wall_s,
                             result.cached ? " (cached)" : "");
    if (!compile.message.empty()) std::cout << compile.message << "\n";
    for (const auto& k : result.kernels)
      std::cout << fmt::format("kernel {}: {} registers, {} B static smem, {} B stack, {} B spilled\n",
                               k.name, k.registers, k.shared_bytes, k.stack_bytes,
                               k.spill_store_bytes + k.spill_load_bytes);
    if (result.ok()) {
      // A family absent from the compiled code is never executed: said now, not at the GPU's instruction
      // stage.
      for (const auto& [family, count] : result.inventory.required_counts)
        std::cout << fmt::format("required family {}: {} PTX instruction(s){}\n", family, count,
                                 count == 0 ? ": warning: not in the compiled code, so the instruction "
                                              "stage will fail (it counts the instructions executed)"
                                            : "");
      std::cout << fmt::format("static: {}{}{}\n", to_string(checks.status),
                               checks.message.empty() ? "" : ": ", checks.message);
      if (!result.library.empty()) std::cout << "library: " << result.library.string() << "\n";
    }
  }
  if (compile.status == StageStatus::harness_error) return kExitHarness;
  return compile.status == StageStatus::passed && checks.status == StageStatus::passed ? kExitOk
                                                                                       : kExitRejected;
}

int eval_command(const CommonOptions& common, const EvalCommandOptions& options) {
  Context ctx = open_project(common);
  const HostSettings host = host_settings();
  keep_compile_cache_within_limit(ctx.paths, host);
  const Task* task = find_task_or_complain(ctx, options.task);
  if (!task) return kExitUsage;
  const Track* track = track_for_solution(options.track, options.solution, *task);
  std::string source;
  if (!track || !read_solution(options.solution, source)) return kExitUsage;
  // Opened first: a store that cannot be written stops the command before the evaluation, not after it.
  std::optional<Store> store;
  if (!options.no_store) store.emplace(ctx.paths.store());
  EvalOptions eval = eval_options(ctx.paths, host, *task, options.no_cache, gpu_for(options.cpu_only, host),
                                  options.stage_time_limit_s, options.stages);
  eval.tools.profile_sections = options.profile;
  LocalEvaluator evaluator([&](const Task&) { return eval; }, {}, host.sandbox);
  const Verdict verdict =
      evaluator.evaluate({source, std::filesystem::path(options.solution).filename().string(), track}, *task);
  int64_t id = 0;
  if (store) id = store->add_evaluation(verdict, source);
  if (common.json) {
    json doc = to_json(verdict);
    if (id) doc["evaluation_id"] = id;
    std::cout << json_text(doc, 2) << "\n";
  } else {
    print_verdict_text(verdict);
    if (id) std::cout << fmt::format("\nstored as evaluation {} in {}\n", id, ctx.paths.store().string());
  }
  return exit_code_for(verdict.overall());
}

// One process drives a run at a time: a second --resume of it, or one while the first still runs, would ask
// the model twice for the same turns, or judge the same pairs twice. The lock is the kernel's (flock), so it
// goes with the process however it ends. Returns false when another process holds it.
bool lock_run(const ProjectPaths& paths, int64_t run_id) {
  const std::filesystem::path file = paths.data / "runs" / fmt::format("{}.lock", run_id);
  std::filesystem::create_directories(file.parent_path());
  const int fd = open(file.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (fd < 0)
    throw std::runtime_error(fmt::format("cannot open {}: {}", file.string(), std::strerror(errno)));
  if (flock(fd, LOCK_EX | LOCK_NB) == 0) return true;  // held, on purpose, until the process ends
  close(fd);
  return false;
}

namespace {

// Whether a shipped solution's verdict is what its manifest entry expects: "yes", "yes (2 unchecked)", or
// "NO:" and the first difference.
std::string as_expected(const SolutionRunRow& row) {
  if (!row.mismatches.empty()) return "NO: " + row.mismatches.front();
  return row.unchecked ? fmt::format("yes ({} unchecked)", row.unchecked) : "yes";
}

// What an interrupted run says before it ends as the signal ends it (exit status 130 for Ctrl-C):
// the message is made before the handler is installed, and the handler only writes it and raises the signal
// again with its default action. A signal the run was started with ignored (nohup, a background job) stays
// ignored.
char interrupt_message[256];
size_t interrupt_message_size = 0;

void say_on_interrupt(const std::string& message) {
  interrupt_message_size = std::min(message.size(), sizeof(interrupt_message));
  std::memcpy(interrupt_message, message.data(), interrupt_message_size);
  struct sigaction action {};
  action.sa_handler = [](int signal) {
    (void)!write(STDERR_FILENO, interrupt_message, interrupt_message_size);
    ::signal(signal, SIG_DFL);
    ::raise(signal);
  };
  sigemptyset(&action.sa_mask);
  for (const int signal : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction before {};
    if (sigaction(signal, nullptr, &before) == 0 && before.sa_handler != SIG_IGN)
      sigaction(signal, &action, nullptr);
  }
}

// --evaluator URL: the service that judges instead of this machine.
RemoteChoice remote_choice(const RunCommandOptions& options, bool cpu_only) {
  return {.url = options.evaluator,
          .token_file = options.evaluator_token_file,
          .stages = options.stages,
          .cpu_only = cpu_only,
          .stage_time_limit_s = options.stage_time_limit_s,
          .queue_wait_s = options.evaluator_queue_wait_s};
}

// The judge a run uses; nothing (after saying why) for a bad --evaluator URL or token.
std::unique_ptr<Evaluator> judge_for_run(std::unique_ptr<LocalEvaluator> local, const RemoteChoice& remote,
                                         const ProjectPaths& paths, const HostSettings& host) {
  try {
    return run_evaluator(std::move(local), remote, paths, host);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "ptxbench: %s\n", e.what());
    return nullptr;
  }
}

// Where the verdicts come from, for the run's first line.
std::string judged_where(const GpuInfo& gpu, const std::string& evaluator) {
  if (!evaluator.empty()) return "judged by the evaluation service at " + evaluator;
  return gpu.present ? gpu.describe() : gpu.absent_reason;
}

// The task architectures a run covers: --arch A, all, or (default) the local GPU's, else the first profile
// whose GPU stages run here (Hopper): its tasks' CPU stages still run. False for an unknown architecture
// (after saying so).
bool select_archs(const std::string& arch, const GpuInfo& gpu, std::vector<std::string>& archs) {
  if (arch == "all") {
    for (const auto& a : all_archs()) archs.push_back(a.name);
  } else if (!arch.empty()) {
    if (!find_arch(arch)) {
      std::fprintf(stderr, "ptxbench: unknown architecture '%s'\n", arch.c_str());
      return false;
    }
    archs.push_back(arch);
  } else {
    const ArchProfile* local = gpu.present ? arch_of_compute_capability(gpu.compute_capability) : nullptr;
    for (const auto& a : all_archs())
      if (local == nullptr && a.runs) local = &a;
    archs.push_back(local->name);
  }
  return true;
}

// Whether the command line gave the option `name` ("--tasks").
bool given(const RunCommandOptions& options, const char* name) {
  return std::find(options.given.begin(), options.given.end(), name) != options.given.end();
}

// Whether the command line leaves alone what a resumed run takes from its stored settings (`fixed`); false
// after naming the first option it gives anyway.
bool leaves_stored_settings(const RunCommandOptions& options, std::span<const char* const> fixed) {
  for (const char* name : fixed)
    if (given(options, name)) {
      std::fprintf(
          stderr,
          "ptxbench: --resume continues run %lld with its stored settings; %s cannot be given with it\n",
          options.resume, name);
      return false;
    }
  return true;
}

// What run --resume takes from a stored manifest run, and so refuses on the command line: what is judged, and
// how (--gpu-share and --evaluator may change; the judge must be the same, as resume_manifest_run checks).
constexpr const char* kFixedByManifestResume[] = {"--solutions", "--only",  "--tasks",  "--arch",
                                                  "--cpu-only",  "--track", "--stages", "--stage-time-limit"};

// A manifest run's settings: what it judges, and the judge (its version and where it judged), which a
// resumption must share with it.
json manifest_run_args(const RunCommandOptions& options, const SolutionRunOptions& run_options,
                       const std::string& judged) {
  json args = {{"tasks", options.tasks},         {"only", options.only},
               {"archs", run_options.archs},     {"gpu_share", options.gpu_share},
               {"solutions", options.solutions}, {"cpu_only", options.cpu_only},
               {"stages", options.stages},       {"stage_time_limit_s", options.stage_time_limit_s},
               {"version", PTXBENCH_VERSION},    {"judged", judged}};
  if (run_options.track) args["track"] = run_options.track->name();
  return args;
}

// The stored settings of the manifest run that --resume names, into `options`; false (after saying why) when
// options fix what the run fixed, there is no such manifest run, or it was begun before runs could resume.
bool resumed_manifest_settings(const Context& ctx, Store& store, RunCommandOptions& options, json& args) {
  if (!leaves_stored_settings(options, kFixedByManifestResume)) return false;
  const auto run = store.run(options.resume);
  if (!run || run->kind != "solutions") {
    std::fprintf(stderr, "ptxbench: no manifest run %lld in %s (ptxbench results --runs lists them)\n",
                 options.resume, ctx.paths.store().string().c_str());
    return false;
  }
  args = run->args;
  if (!args.is_object() || !args.contains("judged")) {
    std::fprintf(stderr,
                 "ptxbench: run %lld was begun by a ptxbench that did not store what resuming needs\n",
                 options.resume);
    return false;
  }
  try {
    options.tasks = args.at("tasks").get<std::string>();
    options.only = args.at("only").get<std::string>();
    options.solutions = args.at("solutions").get<std::string>();
    options.cpu_only = args.at("cpu_only").get<bool>();
    options.stages = args.at("stages").get<std::vector<std::string>>();
    options.stage_time_limit_s = args.at("stage_time_limit_s").get<double>();
    (void)args.at("archs").get<std::vector<std::string>>();  // taken as it is (run_manifest_command)
    options.track = args.value("track", std::string());
    if (!options.track.empty() && !find_track(options.track))
      throw std::invalid_argument("no track " + options.track);
    if (!given(options, "--gpu-share")) options.gpu_share = args.at("gpu_share").get<int>();
  } catch (const std::exception& e) {  // json::exception, std::invalid_argument
    std::fprintf(stderr, "ptxbench: run %lld's stored settings are broken: %s\n", options.resume, e.what());
    return false;
  }
  return true;
}

// A resumed run's judge is the one that began it (the same ptxbench, the same GPU or service), so that its
// verdicts and speedups compare; false after saying what differs. Then its verdicts, those of the host's
// failures left out (judged again), and the run marked unfinished until it ends.
bool resume_manifest_run(const Context& ctx, Store& store, int64_t run_id, const json& args,
                         const std::string& judged, PriorVerdicts& prior) {
  const std::string version = args.value("version", std::string());
  const std::string judged_then = args.value("judged", std::string());
  if (version != PTXBENCH_VERSION || judged_then != judged) {
    std::fprintf(stderr,
                 "ptxbench: run %lld was judged by ptxbench %s (%s); this one is %s (%s): its verdicts would "
                 "not compare with the run's. Begin a new run.\n",
                 static_cast<long long>(run_id), version.c_str(), judged_then.c_str(), PTXBENCH_VERSION,
                 judged.c_str());
    return false;
  }
  if (!lock_run(ctx.paths, run_id)) {
    std::fprintf(stderr, "ptxbench: run %lld is being driven by another ptxbench process\n",
                 static_cast<long long>(run_id));
    return false;
  }
  std::vector<EvaluationRow> stored = store.evaluations({.run_id = run_id, .limit = -1});
  std::reverse(stored.begin(), stored.end());  // oldest first
  for (const EvaluationRow& row : stored) {
    std::optional<Verdict> verdict = store.verdict(row.id);
    if (verdict && verdict->overall() != OverallStatus::error)
      prior.add(row.source_name, std::move(*verdict), row.id);
  }
  store.reopen_run(run_id);
  return true;
}

int run_manifest_command(const CommonOptions& common, const RunCommandOptions& given_options) {
  Context ctx = open_project(common);
  const HostSettings host = host_settings();
  keep_compile_cache_within_limit(ctx.paths, host);
  Store store(ctx.paths.store());
  RunCommandOptions options = given_options;
  json stored_args;
  if (options.resume && !resumed_manifest_settings(ctx, store, options, stored_args)) return kExitUsage;
  const GpuInfo gpu = gpu_for(options.cpu_only, host);
  PriorVerdicts prior;
  SolutionRunOptions run_options{.task_glob = options.tasks,
                                 .solution_glob = options.only,
                                 .parallel = options.gpu_share,
                                 .prior = &prior};
  if (!options.track.empty()) run_options.track = find_track(options.track);
  if (options.resume)
    run_options.archs = stored_args.at("archs").get<std::vector<std::string>>();
  else if (!select_archs(options.arch, gpu, run_options.archs))
    return kExitUsage;

  const std::filesystem::path solutions =
      options.solutions.empty() ? ctx.paths.solutions() : std::filesystem::path(options.solutions);
  const auto manifest = load_solution_manifest(solutions);  // a broken one stops here, before a run is begun

  const std::unique_ptr<Evaluator> evaluator =
      judge_for_run(std::make_unique<LocalEvaluator>(
                        [&](const Task& task) {
                          return eval_options(ctx.paths, host, task, false, gpu, options.stage_time_limit_s,
                                              options.stages);
                        },
                        std::vector<std::string>{}, host.sandbox, options.gpu_share),
                    remote_choice(options, options.cpu_only), ctx.paths, host);
  if (!evaluator) return kExitUsage;

  const std::string judged = judged_where(gpu, options.evaluator);
  int64_t run_id = options.resume;
  if (run_id) {
    if (!resume_manifest_run(ctx, store, run_id, stored_args, judged, prior)) return kExitUsage;
  } else {
    run_id = store.begin_run("solutions", manifest_run_args(options, run_options, judged));
    lock_run(ctx.paths, run_id);  // new: nobody else has it
  }
  say_on_interrupt(fmt::format(
      "\nptxbench: run {} interrupted; what it judged is stored: continue it with ptxbench run --resume {}\n",
      run_id, run_id));
  if (!common.json)
    std::cerr << fmt::format("run {}{}: shipped solutions on {} tasks matching '{}' ({}; store {})\n", run_id,
                             options.resume ? " (resumed)" : "", fmt::join(run_options.archs, ", "),
                             options.tasks, judged, ctx.paths.store().string());
  // Each verdict with its expectation as it comes: a run stopped before its table has still said both.
  auto record = [&](const ShippedSolution& solution, SolutionRunRow& row) {
    row.evaluation_id = store.add_evaluation(row.verdict, solution.source, run_id);
    if (!common.json)
      std::cerr << fmt::format("  {:<34} {:<40} {} [as expected: {}]\n", row.task_id, row.solution,
                               row.verdict.summary(), as_expected(row));
  };
  const auto rows = run_shipped_solutions(manifest, ctx.registry, run_options, *evaluator, record);
  store.finish_run(run_id);
  if (rows.empty()) {
    // Nothing judged is nothing shown: a glob or a manifest that matches no task must not read as a pass.
    const std::string in_track = run_options.track ? " in the " + run_options.track->name() + " track" : "";
    const std::string only = options.only == "*" ? "" : " matching --only '" + options.only + "'";
    std::fprintf(stderr, "ptxbench: no solution of %s%s%s applies to a task of %s matching '%s'\n",
                 (solutions / "solutions.json").string().c_str(), in_track.c_str(), only.c_str(),
                 fmt::format("{}", fmt::join(run_options.archs, ", ")).c_str(), options.tasks.c_str());
    return kExitUsage;
  }

  int mismatched = 0;
  for (const auto& row : rows) mismatched += !row.mismatches.empty();
  if (common.json) {
    json out = json::array();
    for (const auto& row : rows)
      out.push_back({{"evaluation_id", row.evaluation_id},
                     {"task", row.task_id},
                     {"solution", row.solution},
                     {"status", to_string(row.verdict.overall())},
                     {"summary", row.verdict.summary()},
                     {"speedup", number_or_null(row.verdict.speedup)},
                     {"kernel_speedup", number_or_null(row.verdict.kernel_speedup())},
                     {"coverage", number_or_null(row.verdict.coverage)},
                     {"expectation_mismatches", row.mismatches},
                     {"expectations_unchecked", row.unchecked}});
    std::cout << json_text(tagged(documents::solutions_run, {{"run_id", run_id},
                                                             {"host", gpu.describe()},
                                                             {"judged_before_resuming", prior.taken()},
                                                             {"evaluations", out}}),
                           2)
              << "\n";
  } else {
    TextTable table({"TASK", "SOLUTION", "VERDICT", "COMPILE", "STATIC", "SANITIZE", "CORRECT", "INSTR",
                     "TIME", "SPEEDUP", "KERNELS", "COVERAGE", "AS EXPECTED"});
    for (const auto& row : rows) {
      const Verdict& v = row.verdict;
      table.add_row({row.task_id, row.solution, to_string(v.overall()), stage_cell(v, "compile"),
                     stage_cell(v, "static"), stage_cell(v, "sanitize"), stage_cell(v, "correct"),
                     stage_cell(v, "instructions"), stage_cell(v, "time"), ratio(v.speedup),
                     ratio(v.kernel_speedup()), percent(v.coverage), as_expected(row)});
    }
    std::cout << table.render();
    std::cout << fmt::format(
        "\n{} evaluations in run {} on {}{}; {} differ from their expectation.\n", rows.size(), run_id,
        gpu.describe(),
        options.resume ? fmt::format(" ({} judged before it was resumed)", prior.taken()) : "", mismatched);
    if (!gpu.present && options.evaluator.empty())
      std::cout << "GPU stages (sanitize, correct, instructions, time) skipped: " << gpu.absent_reason
                << ".\n";
    std::cout << fmt::format("Verdicts: ptxbench results --run {}  |  one in full: ptxbench results --id N\n",
                             run_id);
  }
  return mismatched ? kExitRejected : kExitOk;
}

// The options of agent mode (any of them selects it explicitly).
constexpr const char* kAgentOptions[] = {
    "--model",   "--models",         "--knowledge",          "--context",  "--feedback", "--turns",
    "--samples", "--target-speedup", "--stop-when-verified", "--parallel", "--gpus",     "--progress"};
// What --resume takes from the stored run and so refuses on the command line.
constexpr const char* kFixedByResume[] = {
    "--model",   "--models",         "--knowledge",          "--context", "--feedback", "--turns",
    "--samples", "--target-speedup", "--stop-when-verified", "--tasks",   "--arch",     "--cpu-only",
    "--track"};

}  // namespace

std::filesystem::path catalogue_path(const ProjectPaths& paths, const std::string& option) {
  if (!option.empty()) return option;
  if (const char* env = std::getenv("PTXBENCH_MODELS"); env && *env) return env;
  return paths.root / "models.json";
}

namespace {

// The settings of a resumed run, as stored; nothing (after saying why) when options fix what the run fixed,
// the run is not an agent run, or another process drives it.
std::optional<agent::AgentRunSettings> resumed_settings(const Context& ctx, Store& store,
                                                        const RunCommandOptions& options) {
  if (!leaves_stored_settings(options, kFixedByResume)) return std::nullopt;
  const auto run = store.run(options.resume);
  if (!run || run->kind != "agent") {
    std::fprintf(stderr, "ptxbench: no agent run %lld in %s (ptxbench results --runs lists them)\n",
                 options.resume, ctx.paths.store().string().c_str());
    return std::nullopt;
  }
  if (!lock_run(ctx.paths, options.resume)) {
    std::fprintf(stderr, "ptxbench: run %lld is being driven by another ptxbench process\n", options.resume);
    return std::nullopt;
  }
  agent::AgentRunSettings settings = agent::agent_settings_from_json(run->args);
  store.reopen_run(options.resume);
  return settings;
}

// The settings of a new run from the options; nothing (after saying why) for an unknown knowledge level.
std::optional<agent::AgentRunSettings> new_run_settings(const RunCommandOptions& options) {
  if (!agent::knowledge_levels_from_string(options.knowledge)) {
    std::fprintf(stderr, "ptxbench: unknown or repeated knowledge level in '%s' (%s, one or several)\n",
                 options.knowledge.c_str(),
                 fmt::format("{}", fmt::join(agent::kKnowledgeLevels, ", ")).c_str());
    return std::nullopt;
  }
  agent::AgentRunSettings settings;
  settings.model = options.model;
  settings.knowledge = options.knowledge;
  settings.context = options.context;
  settings.feedback = options.feedback;
  settings.track = options.track.empty() ? cuda_track().name() : options.track;
  settings.tasks_pattern = options.tasks;
  settings.samples = options.samples;
  settings.loop.max_turns = options.turns ? options.turns : options.model == "reference" ? 2 : 8;
  settings.cpu_only = options.cpu_only;
  if (options.target_speedup > 0) settings.loop.target_speedup = options.target_speedup;
  // A target speed only means something as a stop condition; the reference model has nothing more to try
  // once its solution passed.
  settings.loop.stop_when_verified =
      options.stop_when_verified || settings.loop.target_speedup || options.model == "reference";
  return settings;
}

// The devices the run judges on: --gpus of this machine's GPUs like its first; nothing (after saying why) for
// more than it has.
std::optional<std::vector<std::string>> run_devices(const GpuInfo& gpu, int gpus) {
  std::vector<std::string> devices = gpu.devices;
  if (gpus > static_cast<int>(devices.size()) && gpu.present) {
    std::fprintf(stderr, "ptxbench: --gpus %d, but this machine has %zu GPU(s) like its first (%s)\n", gpus,
                 devices.size(), gpu.describe().c_str());
    return std::nullopt;
  }
  if (gpus > 0) devices.resize(std::min<size_t>(devices.size(), gpus));
  return devices;
}

// A new run's tasks: those of its architectures matching its pattern that accept its track. False (after
// saying why) when none does.
bool choose_run_tasks(const Context& ctx, const Track& track, agent::AgentRunSettings& settings) {
  std::vector<std::string> not_accepting;
  for (const Task* task : ctx.registry.matching(settings.tasks_pattern))
    if (std::find(settings.archs.begin(), settings.archs.end(), task->arch) != settings.archs.end())
      (accepts(*task, track) ? settings.task_ids : not_accepting).push_back(task->id);
  std::sort(settings.task_ids.begin(), settings.task_ids.end());
  if (settings.task_ids.empty()) {
    const std::string why = not_accepting.empty() ? "ptxbench tasks lists them"
                                                  : fmt::format("{} match but do not", not_accepting.size());
    std::fprintf(stderr, "ptxbench: no task of %s matching '%s' accepts the %s track (%s)\n",
                 fmt::format("{}", fmt::join(settings.archs, ", ")).c_str(), settings.tasks_pattern.c_str(),
                 track.name().c_str(), why.c_str());
    return false;
  }
  if (!not_accepting.empty())
    std::fprintf(stderr, "ptxbench: left out, as they do not accept the %s track: %s\n", track.name().c_str(),
                 fmt::format("{}", fmt::join(not_accepting, ", ")).c_str());
  return true;
}

// What the store already holds of the run (a resumed run's turns and ended trajectories), for the progress
// view.
ProgressState progress_so_far(Store& store, int64_t run_id, const agent::AgentRunSettings& settings) {
  ProgressState state{.max_turns = settings.loop.max_turns};
  for (const auto& t : store.trajectories(run_id)) {
    ProgressState::Trajectory& p = state.trajectories[{t.task_id, t.sample}];
    for (const auto& turn : store.turns(t.id)) p.finished_turns += turn.finished();
    p.turn = p.finished_turns;
    state.turns_before += p.finished_turns;
    if (agent::is_terminal(t.status)) {
      p.ended = true;
      ++state.ended_before;
    }
    if (p.ended || p.finished_turns > 0) p.status = t.status;
  }
  state.title = fmt::format("run {}: {}, {} knowledge, up to {} turns", run_id, settings.model,
                            settings.knowledge, settings.loop.max_turns);
  return state;
}

ProgressMode progress_mode(const std::string& option) {
  if (option == "live") return ProgressMode::live;
  if (option == "plain") return ProgressMode::plain;
  return ProgressMode::automatic;
}

// The reference model checks the system itself: the trajectories whose task has a shipped solution and whose
// last verdict failed.
std::vector<std::string> reference_failures(Store& store, int64_t run_id, const agent::ModelChoice& model) {
  std::vector<std::string> failures;
  const auto* reference = dynamic_cast<const agent::ReferenceModel*>(model.provider.get());
  if (!model.reference || !reference) return failures;
  for (const auto& t : store.trajectories(run_id)) {
    if (!reference->has_reference(t.task_id)) continue;
    const auto turns = store.turns(t.id);
    std::optional<Verdict> last;
    if (!turns.empty() && turns.back().evaluation_id) last = store.verdict(turns.back().evaluation_id);
    if (!last || !agent::nothing_failed(*last))
      failures.push_back(fmt::format("{} #{}", t.task_id, t.sample));
  }
  return failures;
}

void print_run_text(const agent::RunSummary& summary, int64_t run_id, const agent::AgentRunResult& result,
                    const agent::AgentRunSettings& settings, const GpuInfo& gpu, const std::string& evaluator,
                    const std::vector<std::string>& failures) {
  std::cout << agent::render(summary);
  std::cout << fmt::format("\nRun {}: {} trajectories of {} ({} knowledge, {} context, {} track) on {}.\n",
                           run_id, result.trajectories, settings.model, settings.knowledge, settings.context,
                           find_track(settings.track)->title(), gpu.describe());
  if (!gpu.present && evaluator.empty())
    std::cout << "GPU stages skipped: " << gpu.absent_reason
              << ": correctness and instructions cannot be verified here.\n";
  if (result.errors)
    std::cout << fmt::format(
        "{} trajectories stopped on an error; continue them with: ptxbench run --resume {}\n", result.errors,
        run_id);
  for (const auto& f : failures) std::cout << "The reference model's last verdict failed: " << f << "\n";
  std::cout << fmt::format(
      "Turns: ptxbench results --run {}  |  trajectories as JSON: ptxbench results --run {} --export FILE\n",
      run_id, run_id);
}

int run_agent_command(const CommonOptions& common, const RunCommandOptions& options) {
  Context ctx = open_project(common);
  const HostSettings host = host_settings();
  keep_compile_cache_within_limit(ctx.paths, host);
  Store store(ctx.paths.store());

  int64_t run_id = options.resume;
  std::optional<agent::AgentRunSettings> chosen =
      run_id ? resumed_settings(ctx, store, options) : new_run_settings(options);
  if (!chosen) return kExitUsage;
  agent::AgentRunSettings& settings = *chosen;

  const GpuInfo gpu = gpu_for(settings.cpu_only, host);
  const Track& track = *find_track(settings.track);  // checked by the option, or when the run was read
  agent::ModelChoice model;
  try {
    model =
        agent::choose_model(settings.model, catalogue_path(ctx.paths, options.models), ctx.paths.solutions(),
                            ctx.registry, track, run_id ? settings.model_spec : nullptr);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "ptxbench: %s\n", e.what());
    return kExitUsage;
  }

  // The judge, before a run is begun: a bad --gpus, URL or token stops here.
  const std::optional<std::vector<std::string>> devices = run_devices(gpu, options.gpus);
  if (!devices) return kExitUsage;
  // The profiler feedback: the instruction stage collects the profile's sections, here or in the evaluation
  // service's workers (the job's "profile").
  RemoteChoice remote = remote_choice(options, settings.cpu_only);
  remote.profile = settings.feedback == "profile";
  const std::unique_ptr<Evaluator> evaluator = judge_for_run(
      std::make_unique<LocalEvaluator>(
          [&](const Task& task) {
            EvalOptions eval = eval_options(ctx.paths, host, task, false, gpu, options.stage_time_limit_s);
            eval.tools.profile_sections = settings.feedback == "profile";
            return eval;
          },
          *devices, host.sandbox, options.gpu_share),
      remote, ctx.paths, host);
  if (!evaluator) return kExitUsage;

  if (!run_id) {
    if (!select_archs(options.arch, gpu, settings.archs) || !choose_run_tasks(ctx, track, settings))
      return kExitUsage;
    settings.model_spec = model.spec;
    run_id = agent::start_agent_run(store, settings);
    lock_run(ctx.paths, run_id);  // new: nobody else has it
  }
  say_on_interrupt(fmt::format(
      "\nptxbench: run {} interrupted; what it judged is stored: continue it with ptxbench run --resume {}\n",
      run_id, run_id));

  std::cerr << fmt::format(
      "run {}{}: model {} on {} task(s) x {} sample(s) per knowledge level, {} track, knowledge {}, {} "
      "context, "
      "{} feedback, up to {} turns{}; "
      "{}; store {}\n",
      run_id, options.resume ? " (resumed)" : "", settings.model, settings.task_ids.size(), settings.samples,
      settings.track, settings.knowledge, settings.context, settings.feedback, settings.loop.max_turns,
      settings.loop.stop_when_verified ? ", stopping when verified" : "",
      !options.evaluator.empty() || !gpu.present ? judged_where(gpu, options.evaluator)
      : devices->size() > 1                      ? fmt::format("{} x {}", devices->size(), gpu.describe())
                                                 : gpu.describe(),
      ctx.paths.store().string());
  RunProgress progress_view(progress_mode(options.progress), progress_so_far(store, run_id, settings));
  const agent::AgentRunResult result =
      agent::run_agent(run_id, settings,
                       {.store = &store,
                        .registry = &ctx.registry,
                        .provider = model.provider.get(),
                        .evaluator = evaluator.get(),
                        .kits_dir = ctx.paths.root / "kits",
                        .parallel = std::max(1, options.parallel),
                        .on_event = [&](const agent::TurnEvent& e) { progress_view.on_event(e); }});
  progress_view.finish();

  const std::vector<std::string> failures = reference_failures(store, run_id, model);
  const agent::RunSummary summary = agent::summarize_run(store, run_id);
  if (common.json) {
    std::cout << json_text(tagged(documents::agent_run, {{"run_id", run_id},
                                                         {"host", gpu.describe()},
                                                         {"settings", agent::to_json(settings)},
                                                         {"errors", result.errors},
                                                         {"reference_failures", failures},
                                                         {"run_summary", agent::to_json(summary)}}),
                           2)
              << "\n";
  } else {
    print_run_text(summary, run_id, result, settings, gpu, options.evaluator, failures);
  }
  if (result.errors) return kExitHarness;
  return failures.empty() ? kExitOk : kExitRejected;
}

}  // namespace

namespace {

// Whether --resume names a manifest run (run --solutions): one is resumed as a manifest run.
bool resumes_manifest_run(const CommonOptions& common, int64_t run_id) {
  const Context ctx = open_project(common);
  Store store(ctx.paths.store());
  const auto run = store.run(run_id);
  return run && run->kind == "solutions";
}

}  // namespace

int run_command(const CommonOptions& common, const RunCommandOptions& options) {
  for (const char* local : {"--gpus", "--gpu-share"})
    if (!options.evaluator.empty() && given(options, local)) {
      std::fprintf(stderr,
                   "ptxbench: %s shares out this machine's GPUs; with --evaluator the service's workers "
                   "judge (one per GPU)\n",
                   local);
      return kExitUsage;
    }
  if (options.manifest || (options.resume && resumes_manifest_run(common, options.resume))) {
    const std::string mode = options.manifest ? "--solutions" : fmt::format("run {}", options.resume);
    for (const char* name : kAgentOptions)
      if (given(options, name)) {
        std::fprintf(stderr, "ptxbench: %s evaluates a manifest; %s belongs to the agent run\n", mode.c_str(),
                     name);
        return kExitUsage;
      }
    return run_manifest_command(common, options);
  }
  if (!options.stages.empty()) {
    // The agent's feedback and its stopping rule need every stage.
    std::fprintf(stderr, "ptxbench: --stages applies to eval and run --solutions, not to the agent run\n");
    return kExitUsage;
  }
  if (given(options, "--only")) {
    std::fprintf(stderr, "ptxbench: --only chooses entries of a manifest: it needs --solutions\n");
    return kExitUsage;
  }
  return run_agent_command(common, options);
}

// A run's stored settings in one line for a table: each plain setting as name=value, a list by its length
// (or its items, when it has at most three), nested objects (a model's specification) left to --json.
std::string run_settings_line(const json& args) {
  if (!args.is_object()) return json_text(args);
  std::vector<std::string> parts;
  for (const auto& [name, value] : args.items()) {
    if (name == "mode" || value.is_null() || value.is_object()) continue;
    if (value.is_array()) {
      const bool short_list = value.size() <= 3 && std::all_of(value.begin(), value.end(),
                                                               [](const json& v) { return v.is_string(); });
      std::vector<std::string> items;
      if (short_list)
        for (const auto& v : value) items.push_back(v.get<std::string>());
      parts.push_back(short_list ? fmt::format("{}={}", name, fmt::join(items, ","))
                                 : fmt::format("{}: {}", name, value.size()));
    } else {
      parts.push_back(
          fmt::format("{}={}", name, value.is_string() ? value.get<std::string>() : value.dump()));
    }
  }
  const std::string line = fmt::format("{}", fmt::join(parts, " "));
  return line.size() <= 200 ? line : line.substr(0, 197) + "...";
}

int results_command(const CommonOptions& common, const ResultsCommandOptions& options) {
  const ProjectPaths paths = find_project(common.root, common.data);
  if (!std::filesystem::exists(paths.store())) {
    std::fprintf(stderr, "ptxbench: no results yet (%s does not exist)\n", paths.store().string().c_str());
    return kExitUsage;
  }
  Store store(paths.store(), StoreAccess::read_only);  // reading needs no write access to the data folder
  if (options.run && !store.run(options.run)) {
    std::fprintf(stderr, "ptxbench: no run %lld (ptxbench results --runs lists them)\n", options.run);
    return kExitUsage;
  }
  if (options.id) {
    auto verdict = store.verdict(options.id);
    if (!verdict) {
      std::fprintf(stderr, "ptxbench: no evaluation %lld\n", options.id);
      return kExitUsage;
    }
    if (common.json) {
      json doc = to_json(*verdict);
      doc["evaluation_id"] = options.id;
      std::cout << json_text(doc, 2) << "\n";
    } else {
      print_verdict_text(*verdict);
    }
    return kExitOk;
  }
  if (options.runs) {
    json out = json::array();
    TextTable table({"RUN", "KIND", "STARTED", "FINISHED", "EVALUATIONS", "SETTINGS"});
    for (const auto& r : store.runs(options.limit)) {
      table.add_row({std::to_string(r.id), r.kind, r.started_at,
                     r.finished_at.empty() ? "(unfinished)" : r.finished_at, std::to_string(r.evaluations),
                     run_settings_line(r.args)});
      out.push_back({{"id", r.id},
                     {"kind", r.kind},
                     {"started_at", r.started_at},
                     {"finished_at", or_null(r.finished_at)},
                     {"evaluations", r.evaluations},
                     {"args", r.args}});
    }
    std::cout << (common.json ? json_text(tagged(documents::runs, {{"runs", out}}), 2) + "\n"
                              : table.render());
    return kExitOk;
  }
  std::optional<RunRow> run;
  if (options.run) run = store.run(options.run);
  const bool agent_run = run && run->kind == "agent";
  if (!options.export_file.empty()) {
    if (!agent_run) {
      std::fprintf(stderr,
                   "ptxbench: --export writes an agent run's trajectories: give --run N of an agent run\n");
      return kExitUsage;
    }
    const json doc =
        tagged(documents::trajectories, {{"run",
                                          {{"id", run->id},
                                           {"kind", run->kind},
                                           {"started_at", run->started_at},
                                           {"finished_at", or_null(run->finished_at)},
                                           {"args", run->args}}},
                                         {"trajectories", agent::export_trajectories(store, run->id)}});
    if (options.export_file == "-") {
      std::cout << json_text(doc, 2) << "\n";
    } else {
      write_output_file(options.export_file, json_text(doc, 2) + "\n");
      std::cerr << fmt::format("wrote {} trajectories of run {} to {}\n", doc["trajectories"].size(), run->id,
                               options.export_file);
    }
    return kExitOk;
  }
  EvaluationFilter filter{.task_globs = TaskRegistry::load(paths.tasks()).select(options.tasks).globs(),
                          .limit = options.limit};
  if (options.run) filter.run_id = options.run;
  json out = json::array();
  TextTable table({"ID", "RUN", "TASK", "SOLUTION", "STATUS", "SPEEDUP", "COVERAGE", "WHEN", "SUMMARY"});
  for (const auto& e : store.evaluations(filter)) {
    table.add_row({std::to_string(e.id), e.run_id ? std::to_string(e.run_id) : "-", e.task_id, e.source_name,
                   e.status, ratio(e.speedup), percent(e.coverage), e.created_at, e.summary});
    out.push_back({{"evaluation_id", e.id},
                   {"run_id", or_null(e.run_id)},
                   {"task", e.task_id},
                   {"submission", e.submission_hash},
                   {"source_name", e.source_name},
                   {"status", e.status},
                   {"speedup", number_or_null(e.speedup)},
                   {"coverage", number_or_null(e.coverage)},
                   {"created_at", e.created_at},
                   {"summary", e.summary}});
  }
  json doc = tagged(documents::evaluations, {{"evaluations", out}});
  if (run) doc["run_id"] = run->id;
  if (agent_run) {  // the run's summary first; in JSON beside the evaluations
    const agent::RunSummary summary = agent::summarize_run(store, run->id);
    if (common.json) {
      doc["run_summary"] = agent::to_json(summary);
      std::cout << json_text(doc, 2) << "\n";
    } else {
      std::cout << fmt::format(
          "Run {} ({}, {} knowledge), {}:\n{}\nEvaluations:\n", run->id,
          run->args.value("model", std::string("?")), run->args.value("knowledge", std::string("?")),
          run->finished_at.empty() ? "unfinished" : "finished " + run->finished_at, agent::render(summary));
      std::cout << table.render();
    }
    return kExitOk;
  }
  std::cout << (common.json ? json_text(doc, 2) + "\n" : table.render());
  return kExitOk;
}

int report_command(const CommonOptions& common, const ReportCommandOptions& options) {
  Context ctx = open_project(common);
  if (!std::filesystem::exists(ctx.paths.store())) {
    std::fprintf(stderr, "ptxbench: no results yet (%s does not exist)\n",
                 ctx.paths.store().string().c_str());
    return kExitUsage;
  }
  Store store(ctx.paths.store(), StoreAccess::read_only);
  const report::Selection selection{.runs = {options.runs.begin(), options.runs.end()},
                                    .models = options.models,
                                    .knowledge = options.knowledge,
                                    .task_glob = options.tasks};
  report::Dataset data;
  try {
    data = report::load(store, ctx.registry, selection);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "ptxbench: %s\n", e.what());
    return kExitUsage;
  }
  if (data.trajectories.empty()) {
    // An empty report would read as a result; saying nothing matched is the honest answer.
    std::fprintf(stderr, "ptxbench: no trajectory of an agent run in %s matches the selection\n",
                 ctx.paths.store().string().c_str());
    return kExitUsage;
  }
  // A folder that cannot be made or written is the user's choice to change; a write failing after that (a
  // full disk) is the host's.
  std::error_code made;
  std::filesystem::create_directories(options.out, made);
  if (made || access(options.out.c_str(), W_OK) != 0) {
    std::fprintf(stderr, "ptxbench: --out %s: cannot write a report there (%s)\n", options.out.c_str(),
                 made ? made.message().c_str() : std::strerror(errno));
    return kExitUsage;
  }
  const report::Report built = report::build_report(data, selection);
  const auto files = report::write_report(options.out, data, built);
  if (common.json) {
    json out = tagged(
        documents::report_files,
        {{"runs", json::array()}, {"trajectories", data.trajectories.size()}, {"files", json::array()}});
    for (const auto& r : data.runs) out["runs"].push_back(r.id);
    for (const auto& f : files) out["files"].push_back(f.string());
    std::cout << json_text(out, 2) << "\n";
  } else {
    std::vector<std::string> runs;
    for (const auto& r : data.runs) runs.push_back(fmt::format("{} ({}, {})", r.id, r.model, r.knowledge));
    std::cout << fmt::format("report of {} trajectories of run(s) {}:\n", data.trajectories.size(),
                             fmt::join(runs, ", "));
    for (const auto& f : files) std::cout << "  " << f.string() << "\n";
  }
  return kExitOk;
}

int cache_command(const CommonOptions& common, const CacheCommandOptions& options) {
  const ProjectPaths paths = find_project(common.root, common.data);
  const std::uintmax_t limit = host_settings().compile_cache_limit;
  const auto megabytes = [](std::uintmax_t bytes) { return static_cast<double>(bytes) / (1 << 20); };
  json doc = {{"folder", paths.compile_cache().string()}, {"limit_bytes", limit}};
  if (options.prune) {
    const CachePruning pruned = prune_compile_cache(paths.compile_cache(), limit);
    doc["removed"] = {{"entries", pruned.removed.entries}, {"bytes", pruned.removed.bytes}};
    doc["over_limit_bytes"] = pruned.over_limit_bytes;
    if (!common.json)
      std::cout << fmt::format(
          "removed {} entries ({:.1f} MB){}\n", pruned.removed.entries, megabytes(pruned.removed.bytes),
          pruned.over_limit_bytes
              ? fmt::format("; {:.1f} MB over the limit remain, used within the last hour",
                            megabytes(pruned.over_limit_bytes))
              : "");
  }
  const CacheUsage usage = compile_cache_usage(paths.compile_cache());
  doc["entries"] = usage.entries;
  doc["bytes"] = usage.bytes;
  // The judge's Python bytecode (python_bytecode.h): one folder per interpreter and package versions, the
  // configured python's current; --prune keeps only that one.
  const std::filesystem::path bytecode = paths.data / "cache" / "python";
  const char* search_path = std::getenv("PATH");
  const std::string python = find_program(host_settings().python, search_path ? search_path : "");
  const auto listed = [&](const std::vector<BytecodeFolder>& folders) {
    json list = json::array();
    for (const BytecodeFolder& f : folders)
      list.push_back({{"folder", f.path.filename().string()},
                      {"versions", f.versions.empty() ? json(nullptr) : json(split_lines(f.versions))},
                      {"bytes", f.bytes},
                      {"current", f.current}});
    return list;
  };
  json& python_doc = doc["python_bytecode"] = {{"folder", bytecode.string()}};
  std::vector<BytecodeFolder> folders = bytecode_folders(bytecode, python);
  if (options.prune) python_doc["removed"] = listed(prune_bytecode(bytecode, folders));
  python_doc["folders"] = listed(folders);
  if (common.json) {
    std::cout << json_text(tagged(documents::cache, doc), 2) << "\n";
    return kExitOk;
  }
  std::cout << fmt::format("compile cache {}: {} entries, {:.1f} MB of a {:.0f} MB limit\n",
                           paths.compile_cache().string(), usage.entries, megabytes(usage.bytes),
                           megabytes(limit));
  if (options.prune && !python_doc["removed"].empty())
    std::cout << fmt::format("removed {} Python bytecode folders of other versions\n",
                             python_doc["removed"].size());
  std::cout << fmt::format("Python bytecode {}: {} folders{}\n", bytecode.string(), folders.size(),
                           folders.empty() ? "" : ":");
  for (const BytecodeFolder& f : folders) {
    const std::vector<std::string> lines = split_lines(f.versions);
    std::cout << fmt::format(
        "  {} {:.1f} MB {}{}\n", f.path.filename().string(), megabytes(f.bytes),
        lines.empty() ? "(warm-up not completed)" : fmt::format("{}", fmt::join(lines, ", ")),
        f.current ? " (current: " + python + ")" : "");
  }
  return kExitOk;
}

}  // namespace ptxbench
