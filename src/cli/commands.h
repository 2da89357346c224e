// The ptxbench subcommands. Each parses nothing itself: it gets its options filled in by main.cpp (CLI11),
// calls the modules and prints. Exit codes are documented in docs/cli.md and in each command's --help
// (cli/exit_codes.h).
#pragma once

#include <string>
#include <vector>

namespace ptxbench {

enum ExitCode : int {
  kExitOk = 0,        // done; for eval: every stage passed
  kExitRejected = 1,  // the submission was judged and failed; for run: a verdict differs from its expectation
  kExitUsage = 2,     // bad arguments, unknown task, a solution that is not a readable file of <= 1 MiB
  kExitIncomplete = 3,  // nothing failed, but stages were skipped (no GPU here, or a static-only task); for
                        // fixit export and build: nothing was exported
  kExitConfig = 4,      // a broken task file or solutions manifest, or no project folder
  kExitHarness = 5,     // ptxbench itself could not judge (no nvcc, store not writable, internal error)
};

struct CommonOptions {
  std::string root;  // project folder
  std::string data;  // store and cache folder
  bool json = false;
};

struct TasksOptions {
  std::string id;
  std::string arch;  // filter
};

struct CompileCommandOptions {
  std::string solution;
  std::string task;
  std::string track;  // "": the solution file's (a .py file is Triton's), else cuda
  bool no_cache = false;
};

struct EvalCommandOptions {
  std::string solution;
  std::string task;
  std::string track;  // as for compile
  bool no_cache = false;
  bool no_store = false;
  bool cpu_only = false;
  double stage_time_limit_s = 0;    // 0: the defaults
  std::vector<std::string> stages;  // the GPU stages to run; empty: all
  bool profile = false;             // the instruction stage's profile summary (eval/profile_summary.h)
};

struct RunCommandOptions {
  std::string tasks = "*";
  std::string arch;  // "", "all" or an architecture; "" = the local GPU's, else sm_90a
  // Agent mode: the language the model writes (default cuda); the tasks that accept it are run. Manifest
  // mode: only the entries of this track ("": every entry).
  std::string track;
  bool cpu_only = false;
  double stage_time_limit_s = 0;
  std::vector<std::string> stages;  // manifest mode: the GPU stages to run; empty: all

  // Manifest mode (--solutions [DIR]): every solution in DIR/solutions.json on every matching task.
  bool manifest = false;
  std::string solutions;   // folder with solutions.json; "" = the project's solutions/
  std::string only = "*";  // only the manifest's entries whose path matches this glob

  // Agent mode (the default): trajectories of a model on the tasks (docs/agent.md).
  std::string model = "reference";
  std::string models;  // the model catalogue; "" = $PTXBENCH_MODELS, else <root>/models.json
  std::string knowledge = "contracts";
  std::string context = "compact";  // what later turns show of the earlier ones (agent/prompt.h)
  std::string feedback = "verdict";  // verdict | profile (agent/agent_run.h)
  int turns =
      0;  // 0: 8, or 2 for the reference model (a broken copy, then its solution: nothing more to say)
  int samples = 1;
  double target_speedup = 0;  // 0: none
  bool stop_when_verified = false;
  long long resume = 0;  // continue this run
  int parallel = 4;
  int gpus = 1;                   // GPUs evaluating side by side; 0: every GPU like the first
  int gpu_share = 1;              // evaluations at a time on one GPU (gpu_gate.h)
  std::string progress = "auto";  // auto: a live view on a terminal, plain lines otherwise; live; plain
  // The evaluation service that judges (docs/service.md); empty: this machine. Its token comes from
  // `evaluator_token_file`, else $PTXBENCH_SERVICE_TOKEN.
  std::string evaluator;
  std::string evaluator_token_file;
  double evaluator_queue_wait_s = 1800;  // how long a job may wait with no worker taking it
  std::vector<std::string>
      given;  // the options given on the command line ("--model", ...), to check combinations
};

struct ResultsCommandOptions {
  long long id = 0;   // show one verdict
  long long run = 0;  // evaluations of one run
  std::string tasks = "*";
  int limit = 50;
  bool runs = false;        // list runs instead
  std::string export_file;  // with --run: write the run's trajectories as JSON here ("-": stdout)
};

struct ReportCommandOptions {
  std::vector<long long> runs;  // empty: every agent run
  std::vector<std::string> models;
  std::vector<std::string> knowledge;
  std::string tasks = "*";
  std::string out = "ptxbench-report";  // the folder the files go to
};

struct CacheCommandOptions {
  bool prune = false;  // bring the compile cache within its limit now
};

// The evaluation service (docs/service.md). Redis: --redis, else $PTXBENCH_REDIS, else
// redis://127.0.0.1:6379.
struct ServeCommandOptions {
  std::string listen = "127.0.0.1:8080";  // HOST:PORT; port 0: any free one
  std::string redis;
  std::string token_file;  // else $PTXBENCH_SERVICE_TOKEN
  double max_body_mb = 4;
  std::string port_file;          // where to write the port listened on (for port 0)
  double request_read_s = 30;     // the most one request's reading may take
  int max_peer_connections = 16;  // connections one client address holds at once (0: no bound)
};

struct WorkerCommandOptions {
  int gpu = -1;  // the GPU (an nvidia-smi index) this worker judges on
  bool cpu_only = false;
  std::string redis;
  std::string name;  // the consumer's name; default host-gpuN-pid
  double lease_s = 60;
  double heartbeat_s = 5;
  int max_attempts = 3;
};

int tasks_command(const CommonOptions& common, const TasksOptions& options);
int compile_command(const CommonOptions& common, const CompileCommandOptions& options);
int eval_command(const CommonOptions& common, const EvalCommandOptions& options);
int run_command(const CommonOptions& common, const RunCommandOptions& options);
int results_command(const CommonOptions& common, const ResultsCommandOptions& options);
int report_command(const CommonOptions& common, const ReportCommandOptions& options);
int cache_command(const CommonOptions& common, const CacheCommandOptions& options);
int serve_command(const CommonOptions& common, const ServeCommandOptions& options);
int worker_command(const CommonOptions& common, const WorkerCommandOptions& options);

}  // namespace ptxbench
