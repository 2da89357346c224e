#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/fixit_commands.h"
#include "cli/validators.h"
#include "task/task.h"
#include "track/track.h"

using namespace ptxbench;

// What every --tasks takes (task/task.h's TaskSelection).
constexpr const char* kTasksHelp =
    "Only these tasks: comma-separated globs over task ids, or task groups by @name (@gemm, @attention-dense, "
    "@gqa-serving, @held-out)";

int main(int argc, char** argv) {
  CLI::App app{"ptxbench: benchmark GPU kernels that must use an architecture's own PTX instructions"};
  app.set_version_flag("--version", PTXBENCH_VERSION);
  app.require_subcommand(1);
  // The global options (--root, --data) are taken after the subcommand too: its unknown options fall
  // through to this app.
  app.fallthrough();
  CommonOptions common;
  app.add_option("--root", common.root,
                 "Project folder with tasks/, kits/, include/, solutions/ [$PTXBENCH_ROOT]");
  app.add_option("--data", common.data,
                 "Folder for the results store and compile cache [$PTXBENCH_DATA, ./ptxbench-data]");

  auto add_json = [&](CLI::App* sub) { sub->add_flag("--json", common.json, "Print JSON instead of text"); };
  std::vector<std::string> tracks;
  for (const Track* track : all_tracks()) tracks.push_back(track->name());
  auto add_track = [&](CLI::App* sub, std::string& track, const std::string& what) {
    sub->add_option("--track", track, what)->check(CLI::IsMember(tracks));
  };

  TasksOptions tasks;
  auto* tasks_cmd =
      app.add_subcommand("tasks", "List the tasks, or show one (shapes, instructions, tolerances, ABI)");
  tasks_cmd->add_option("id", tasks.id, "Task id to show");
  tasks_cmd->add_option("--arch", tasks.arch, "Only tasks of this architecture (sm_90a, sm_100a)");
  add_json(tasks_cmd);

  CompileCommandOptions compile;
  auto* compile_cmd = app.add_subcommand(
      "compile", "Run the compile stage alone: nvcc, ptxas report, PTX inventory, forbidden-means scan");
  compile_cmd->add_option("solution", compile.solution, "The solution file (.cu; .py for Triton)")
      ->required();
  compile_cmd->add_option("--task", compile.task, "Task id")->required();
  add_track(compile_cmd, compile.track,
            "The solution's language: cuda or triton (default: triton for a .py file, else cuda)");
  compile_cmd->add_flag("--no-cache", compile.no_cache, "Compile again even when a cached result exists");
  add_json(compile_cmd);

  EvalCommandOptions eval;
  auto* eval_cmd = app.add_subcommand("eval", "Evaluate one solution on one task: every stage, one verdict");
  eval_cmd->add_option("solution", eval.solution, "The solution file (.cu; .py for Triton)")->required();
  eval_cmd->add_option("--task", eval.task, "Task id")->required();
  add_track(eval_cmd, eval.track,
            "The solution's language: cuda or triton (default: triton for a .py file, else cuda)");
  eval_cmd->add_flag("--no-cache", eval.no_cache, "Compile again even when a cached result exists");
  eval_cmd->add_flag("--no-store", eval.no_store, "Do not store the verdict");
  eval_cmd->add_flag("--cpu-only", eval.cpu_only, "Run only the CPU stages, even on a GPU host");
  eval_cmd->add_flag(
      "--profile", eval.profile,
      "The instruction stage also collects Nsight Compute's sections on the main shape and the "
      "verdict summarises them (tensor pipe, occupancy, DRAM and L2 throughput, stall reasons, "
      "registers, spills): what run --feedback profile shows a model");
  eval_cmd
      ->add_option(
          "--stages", eval.stages,
          "Only these GPU stages (comma-separated: sanitize, correct, instructions, time; time needs "
          "correct); the others are skipped as not requested")
      ->delimiter(',')
      ->check(CLI::IsMember({"sanitize", "correct", "instructions", "time"}));
  eval_cmd
      ->add_option("--stage-time-limit", eval.stage_time_limit_s,
                   "Seconds each GPU stage's process may run (default: 240 under the sanitizer or profiler, "
                   "120 otherwise)")
      ->check(kPositiveFinite);
  add_json(eval_cmd);

  RunCommandOptions run;
  auto* run_cmd = app.add_subcommand(
      "run",
      "The main job. Default: the agent loop with the built-in reference model (--model reference) on every "
      "task of the local architecture, every turn stored, a summary per task. With --solutions: evaluate a "
      "solutions manifest instead");
  run_cmd->add_option("--tasks", run.tasks, kTasksHelp)->capture_default_str();
  run_cmd->add_option("--arch", run.arch,
                      "Task architecture: sm_90a, sm_100a or all (default: the local GPU's, else sm_90a)");
  run_cmd->add_flag("--cpu-only", run.cpu_only, "Run only the CPU stages, even on a GPU host");
  add_track(
      run_cmd, run.track,
      "Agent: the language the model writes, cuda (default) or triton; the tasks that accept it are run. "
      "With --solutions: only the manifest's entries of this track");
  run_cmd
      ->add_option("--stages", run.stages,
                   "With --solutions: only these GPU stages (sanitize, correct, instructions, time; time "
                   "needs correct); a manifest's expectations for the others are not checked")
      ->delimiter(',')
      ->check(CLI::IsMember({"sanitize", "correct", "instructions", "time"}));
  run_cmd
      ->add_option("--stage-time-limit", run.stage_time_limit_s, "Seconds each GPU stage's process may run")
      ->check(kPositiveFinite);
  auto* solutions_opt = run_cmd->add_option("--solutions", run.solutions,
                                            "Manifest mode: evaluate the solutions listed in "
                                            "DIR/solutions.json (DIR defaults to the project's solutions/)");
  solutions_opt->expected(0, 1);
  run_cmd
      ->add_option("--only", run.only,
                   "With --solutions: only the manifest's entries whose path matches this glob "
                   "('examples/*', 'reference/attention_*')")
      ->capture_default_str();
  run_cmd
      ->add_option("--model", run.model,
                   "Agent: the model, a name in the catalogue, or 'reference' (built in, offline)")
      ->capture_default_str();
  run_cmd->add_option("--models", run.models,
                      "Agent: the model catalogue [$PTXBENCH_MODELS, else <root>/models.json]");
  run_cmd
      ->add_option(
          "--knowledge", run.knowledge,
          "Agent: what the model is shown of the kit: params, templates, contracts or patterns; or "
          "several levels comma-separated (params,patterns), --samples trajectories per task at each")
      ->check(kKnowledgeLevelList)
      ->capture_default_str();
  run_cmd
      ->add_option("--context", run.context,
                   "Agent: what later turns show of the earlier ones: compact (the previous reply and verdict, a "
                   "line per turn before), full (every reply and verdict, the oldest made lines to fit the "
                   "model's window) or last-pair (the previous reply and verdict alone)")
      ->check(CLI::IsMember({"compact", "full", "last-pair"}))
      ->capture_default_str();
  run_cmd
      ->add_option(
          "--feedback", run.feedback,
          "Agent: what each turn shows of its evaluation: verdict, or profile (the verdict and a short "
          "summary of Nsight Compute's profile of the main shape: tensor pipe, occupancy, DRAM and L2 "
          "throughput, stall reasons, registers and spills; the instruction stage then collects it)")
      ->check(CLI::IsMember({"verdict", "profile"}))
      ->capture_default_str();
  run_cmd
      ->add_option("--turns", run.turns,
                   "Agent: turns per trajectory at most (default 8; 2 for the reference model, which has two "
                   "answers)")
      ->check(CLI::Range(1, 100));
  run_cmd->add_option("--samples", run.samples, "Agent: trajectories per task")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  run_cmd
      ->add_option(
          "--target-speedup", run.target_speedup,
          "Agent: stop a trajectory once verified and at least this fast against the baseline (implies "
          "--stop-when-verified)")
      ->check(kPositiveFinite);
  run_cmd->add_flag(
      "--stop-when-verified", run.stop_when_verified,
      "Agent: stop a trajectory at its first verified turn (always on for the reference model)");
  run_cmd
      ->add_option("--resume", run.resume,
                   "Continue this run (killed or stopped on an error) with its stored settings: an agent "
                   "run, or a manifest run (--solutions), whose stored verdicts stand and whose other pairs "
                   "are judged, by the same ptxbench on the same GPU")
      ->check(CLI::PositiveNumber);
  run_cmd->add_option("--parallel", run.parallel, "Agent: trajectories driven at once")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  run_cmd
      ->add_option(
          "--gpus", run.gpus,
          "Agent: GPUs evaluating side by side, each one evaluation at a time (0: every GPU like the "
          "first; CUDA_VISIBLE_DEVICES limits them)")
      ->check(CLI::Range(0, 64))
      ->capture_default_str();
  run_cmd
      ->add_option(
          "--gpu-share", run.gpu_share,
          "Evaluations at a time on one GPU: their compiles and sanitize stages run side by side, "
          "their correct, instruction and time stages with the host alone (with --solutions: also the "
          "evaluations the run makes at once)")
      ->check(CLI::Range(1, 16))
      ->capture_default_str();
  run_cmd
      ->add_option(
          "--progress", run.progress,
          "Agent: how progress is shown on standard error: auto (a live view on a terminal, plain lines "
          "otherwise), live (the view when standard error is a terminal that can show it) or plain")
      ->check(CLI::IsMember({"auto", "live", "plain"}))
      ->capture_default_str();
  run_cmd->add_option("--evaluator", run.evaluator,
                      "Judge through the evaluation service at this URL (http://HOST:PORT) instead of this "
                      "machine; the compile and static stages are judged here first when nvcc works here");
  run_cmd->add_option("--evaluator-token-file", run.evaluator_token_file,
                      "The service's bearer token, in a file [$PTXBENCH_SERVICE_TOKEN]");
  run_cmd
      ->add_option(
          "--evaluator-queue-wait", run.evaluator_queue_wait_s,
          "Seconds a job may wait in the service's queue with no worker taking it (none runs for the "
          "task's architecture) before the evaluation fails as the judge's error")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  add_json(run_cmd);

  ResultsCommandOptions results;
  auto* results_cmd =
      app.add_subcommand("results", "Show what the store holds: evaluations, one verdict, or runs");
  results_cmd->add_option("--id", results.id, "Show the full verdict of this evaluation");
  results_cmd->add_option("--run", results.run, "Only evaluations of this run");
  results_cmd->add_option("--tasks", results.tasks, kTasksHelp)
      ->capture_default_str();
  results_cmd->add_option("--limit", results.limit, "At most this many rows")->capture_default_str();
  results_cmd->add_flag("--runs", results.runs, "List the runs instead");
  results_cmd->add_option(
      "--export", results.export_file,
      "With --run N of an agent run: write its trajectories (prompts, replies, code, verdicts) as "
      "JSON to this file ('-': standard output)");
  add_json(results_cmd);

  ReportCommandOptions report;
  auto* report_cmd = app.add_subcommand(
      "report",
      "Write a report of agent runs: report.html (charts, trajectory viewer; self-contained), report.md, "
      "report.json and CSV files with the same numbers");
  report_cmd
      ->add_option("--run", report.runs,
                   "Only these runs (repeat or comma-separate; default: every agent run)")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  report_cmd->add_option("--model", report.models, "Only runs of these models (repeat or comma-separate)")
      ->delimiter(',');
  report_cmd
      ->add_option("--knowledge", report.knowledge,
                   "Only trajectories at these knowledge levels (repeat or comma-separate)")
      ->delimiter(',')
      ->check(CLI::IsMember(kKnowledgeLevelNames));
  report_cmd->add_option("--tasks", report.tasks, kTasksHelp)
      ->capture_default_str();
  report_cmd->add_option("--out", report.out, "The folder to write the files to")->capture_default_str();
  add_json(report_cmd);

  CacheCommandOptions cache;
  auto* cache_cmd = app.add_subcommand(
      "cache",
      "Show the compile cache's size; --prune brings it within its limit [$PTXBENCH_CACHE_LIMIT_MB, 4096]");
  cache_cmd->add_flag(
      "--prune", cache.prune,
      "Remove the least recently used entries until the cache fits (never one used within the "
      "last hour)");
  add_json(cache_cmd);

  FixitCommandOptions fixit;
  auto* fixit_cmd = add_fixit_command(app, fixit, add_json);

  ServeCommandOptions serve;
  auto* serve_cmd = app.add_subcommand(
      "serve",
      "The evaluation service: an HTTP JSON API that queues submissions in Redis for the workers "
      "(docs/service.md)");
  serve_cmd->add_option("--listen", serve.listen, "HOST:PORT to listen on (port 0: any free one)")
      ->capture_default_str();
  serve_cmd->add_option("--redis", serve.redis,
                        "Redis holding the jobs: redis://[:password@]host[:port] [$PTXBENCH_REDIS, "
                        "redis://127.0.0.1:6379]");
  serve_cmd->add_option("--token-file", serve.token_file,
                        "The bearer token every client must send, in a file [$PTXBENCH_SERVICE_TOKEN]");
  serve_cmd->add_option("--max-body-mb", serve.max_body_mb, "The largest request body, in MiB")
      ->check(CLI::Range(1.0, 64.0))
      ->capture_default_str();
  serve_cmd->add_option("--port-file", serve.port_file, "Write the port listened on to this file");
  serve_cmd
      ->add_option("--request-read-s", serve.request_read_s,
                   "The most seconds one request's reading (its line, headers and body) may take")
      ->check(CLI::Range(1.0, 3600.0))
      ->capture_default_str();
  serve_cmd
      ->add_option("--max-peer-connections", serve.max_peer_connections,
                   "Connections one client address may hold at once; more are answered 429 (0: no bound, "
                   "for a service behind a proxy that bounds them)")
      ->check(CLI::Range(0, 4096))
      ->capture_default_str();

  WorkerCommandOptions worker;
  auto* worker_cmd = app.add_subcommand(
      "worker",
      "Judge the evaluation service's jobs on one GPU (--gpu N) or the CPU stages alone (--cpu-only)");
  worker_cmd->add_option("--gpu", worker.gpu, "The GPU (nvidia-smi index) to judge on")
      ->check(CLI::Range(0, 255));
  worker_cmd->add_flag("--cpu-only", worker.cpu_only, "Take only the jobs of the compile and static stages");
  worker_cmd->add_option("--redis", worker.redis,
                         "Redis holding the jobs [$PTXBENCH_REDIS, redis://127.0.0.1:6379]");
  worker_cmd->add_option("--name", worker.name, "This worker's name (default: host-gpuN-pid)");
  worker_cmd
      ->add_option("--lease", worker.lease_s,
                   "Seconds without a heartbeat after which another worker takes this one's job")
      ->check(CLI::Range(1.0, 86400.0))
      ->capture_default_str();
  worker_cmd->add_option("--heartbeat", worker.heartbeat_s, "Seconds between heartbeats")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  worker_cmd
      ->add_option("--max-attempts", worker.max_attempts,
                   "Attempts at a job before it goes to the dead-letter stream")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();

  // Each command's --help ends with the exit codes it returns and what they mean for it (cli/exit_codes.h).
  for (const CommandExitCodes& entry : kCommandExitCodes) {
    CLI::App* command = &app;
    std::istringstream words{std::string(entry.command)};
    for (std::string word; words >> word;) command = command->get_subcommand(word);
    command->footer(exit_codes_footer(entry));
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }

  const int status = [&]() -> int {
    try {
      if (tasks_cmd->parsed()) return tasks_command(common, tasks);
      if (compile_cmd->parsed()) return compile_command(common, compile);
      if (eval_cmd->parsed()) return eval_command(common, eval);
      if (run_cmd->parsed()) {
        run.manifest = solutions_opt->count() > 0;
        for (const CLI::Option* option : run_cmd->get_options())
          if (option->count() > 0)
            for (const auto& name : option->get_lnames()) run.given.push_back("--" + name);
        return run_command(common, run);
      }
      if (results_cmd->parsed()) return results_command(common, results);
      if (report_cmd->parsed()) return report_command(common, report);
      if (cache_cmd->parsed()) return cache_command(common, cache);
      if (fixit_cmd->parsed()) return fixit_command(common, fixit);
      if (serve_cmd->parsed()) return serve_command(common, serve);
      if (worker_cmd->parsed()) return worker_command(common, worker);
    } catch (const ConfigError& e) {
      std::fprintf(stderr, "ptxbench: %s\n", e.what());
      return kExitConfig;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ptxbench: %s\n", e.what());
      return kExitHarness;
    }
    return kExitUsage;
  }();
  // What was printed must have reached standard output (a full disk, a file system gone): else the host
  // failed, whatever the command itself came to.
  std::cout.flush();
  if (std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout) {
    std::fprintf(stderr, "ptxbench: could not write to standard output: %s\n", std::strerror(errno));
    return kExitHarness;
  }
  return status;
}
