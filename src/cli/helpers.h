// What the subcommands' files share: the project, the evaluation options, the model catalogue's path and the
// lock that lets one process drive a run.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/project.h"
#include "eval/evaluate.h"
#include "eval/evaluator.h"
#include "eval/settings.h"
#include "task/task.h"

namespace ptxbench {

struct Context {
  ProjectPaths paths;
  TaskRegistry registry;
};

Context open_project(const CommonOptions& common);
// The host settings (eval/settings.h) are resolved once by each command and passed to these.
void keep_compile_cache_within_limit(const ProjectPaths& paths, const HostSettings& host);
GpuInfo gpu_for(bool cpu_only, const HostSettings& host);
EvalOptions eval_options(const ProjectPaths& paths, const HostSettings& host, const Task& task, bool no_cache,
                         const GpuInfo& gpu, double stage_time_limit_s,
                         const std::vector<std::string>& stages = {});
// --models, else $PTXBENCH_MODELS, else <root>/models.json.
std::filesystem::path catalogue_path(const ProjectPaths& paths, const std::string& option);
// One process drives a run at a time (a flock in <data>/runs/); false when another process holds it.
bool lock_run(const ProjectPaths& paths, int64_t run_id);

// The evaluation service's bearer token: the first line of `token_file`, else $PTXBENCH_SERVICE_TOKEN. Throws
// std::invalid_argument when there is none, or it is shorter than 16 characters.
std::string service_token(const std::string& token_file);

// What `run` judges with: `local` as it is, or with --evaluator URL the service at URL (the compile and
// static stages judged here first when nvcc works here). Throws std::invalid_argument for a bad URL or token.
struct RemoteChoice {
  std::string url;
  std::string token_file;
  std::vector<std::string> stages;
  bool cpu_only = false;
  double stage_time_limit_s = 0;
  double queue_wait_s = 1800;
  // The service's instruction stage keeps the profile's summary (run --feedback profile).
  bool profile = false;
};
std::unique_ptr<Evaluator> run_evaluator(std::unique_ptr<LocalEvaluator> local, const RemoteChoice& remote,
                                         const ProjectPaths& paths, const HostSettings& host);

}  // namespace ptxbench
