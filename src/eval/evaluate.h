// One evaluation, end to end: compile and static checks here, then the GPU stages where a GPU of the task's
// architecture is present. Each stage says why it was skipped when it was.
#pragma once

#include <string>

#include "compile/compile.h"
#include "eval/gpu_stages.h"
#include "eval/verdict.h"
#include "task/task.h"

namespace ptxbench {

struct GpuInfo {
  bool present = false;
  std::string name;            // "NVIDIA H200"
  int compute_capability = 0;  // 90
  std::string absent_reason;   // why no GPU is usable, when !present
  std::string describe() const;
};

// Asks nvidia-smi (the judge needs no CUDA library for this).
GpuInfo detect_gpu();

struct EvalOptions {
  CompileOptions compile;
  GpuInfo gpu;
  GpuTools tools;  // used when a GPU of the task's architecture is present
};

struct Submission {
  std::string source;
  std::string name;  // the file name, for people
};

Verdict evaluate(const Submission& submission, const Task& task, const EvalOptions& options);

// The compile and static stages from a compile result (exposed for `ptxbench compile` and tests).
StageResult compile_stage(const CompileResult& result);
StageResult static_stage(const CompileResult& result);

std::string utc_now_iso8601();

}  // namespace ptxbench
