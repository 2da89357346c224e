// One evaluation, end to end: compile and static checks here, then the GPU stages where a GPU of the task's
// architecture is present. Each stage says why it was skipped when it was.
#pragma once

#include <filesystem>
#include <string>

#include "compile/compile.h"
#include "eval/gpu_stages.h"
#include "eval/verdict.h"
#include "task/task.h"
#include "track/track.h"

namespace ptxbench {

struct GpuInfo {
  bool present = false;
  std::string name;            // "NVIDIA H200"
  int compute_capability = 0;  // 90
  std::string absent_reason;   // why no GPU is usable, when !present
  // Every GPU like the first (same name and compute capability), each as the CUDA_VISIBLE_DEVICES value that
  // shows it alone: evaluations may run on them side by side (run --gpus).
  std::vector<std::string> devices;
  std::string describe() const;
};

// Asks nvidia-smi (the judge needs no CUDA library for this). `visible`: CUDA_VISIBLE_DEVICES as the host
// settings have it (eval/settings.h).
GpuInfo detect_gpu(const std::string& visible);
// detect_gpu's reading of `nvidia-smi --query-gpu=index,name,compute_cap --format=csv,noheader`. With
// CUDA_VISIBLE_DEVICES set (`visible`), those devices are the ones used, the first line names them.
GpuInfo read_gpu_list(const std::string& nvidia_smi_output, const std::string& visible);

struct EvalOptions {
  CompileOptions compile;
  GpuInfo gpu;
  GpuTools tools;  // used when a GPU of the task's architecture is present
};

struct Submission {
  std::string source;
  std::string name;                    // the file name, for people
  const Track* track = &cuda_track();  // the language it is written in
};

// The most a solution's source may hold (docs/cli.md): far above any kernel written by hand, and a bound on
// what a wrong path (a log, a device) costs.
inline constexpr size_t kMaxSolutionBytes = size_t{1} << 20;
// A solution file's source: a regular file of at most kMaxSolutionBytes (read_regular_file).
std::string read_solution_file(const std::filesystem::path& path);

// `text` (a compiler's messages) with each location in `compiled_name` ("solution.cu(12)", "solution.cu:12:")
// naming `submitted_name` instead: the file as its author knows it.
std::string with_file_name(const std::string& text, const std::string& compiled_name,
                           const std::string& submitted_name);

Verdict evaluate(const Submission& submission, const Task& task, const EvalOptions& options);

// The compile and static stages from a compile result (track/track.h's compile_solution; exposed for
// `ptxbench compile` and tests).
StageResult compile_stage(const CompileResult& result);
StageResult static_stage(const CompileResult& result);

std::string utc_now_iso8601();

}  // namespace ptxbench
