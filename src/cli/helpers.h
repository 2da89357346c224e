// What the subcommands' files share: the project, the evaluation options, the model catalogue's path and the
// lock that lets one process drive a run.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/project.h"
#include "eval/evaluate.h"
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

}  // namespace ptxbench
