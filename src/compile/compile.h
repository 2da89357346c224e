// The compile stage: nvcc into a shared library, the ptxas resource report, the static PTX inventory and the
// forbidden-means scan. Runs on the CPU; results are cached by content.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "compile/forbidden.h"
#include "compile/ptx_inventory.h"
#include "compile/ptxas_report.h"
#include "task/task.h"

namespace ptxbench {

struct CompileOptions {
  std::filesystem::path nvcc = "/usr/local/cuda/bin/nvcc";
  std::filesystem::path cache_dir;                  // where artifacts live, one folder per cache key
  std::vector<std::filesystem::path> include_dirs;  // the ABI header and the architecture's kit
  std::filesystem::path display_root;  // paths below it appear relative to it in diagnostics (the project)
  double time_limit_s = 120;
  bool use_cache = true;  // false: compile again even when a cached result exists (which is kept)
};

struct CompileResult {
  // toolchain_error: the host failed, not the source (no nvcc, a full disk, a folder that cannot be written,
  // a compiler tool killed); never cached.
  enum class Status { ok, compile_error, timeout, toolchain_error } status = Status::toolchain_error;
  double wall_s = 0;
  bool cached = false;
  std::string cache_key;
  std::string nvcc_version;          // "13.0.88"
  std::vector<std::string> command;  // as run, with the solution named solution.cu
  std::string diagnostics;           // trimmed compiler errors (and warnings), for a model
  int error_count = 0;
  std::vector<std::string> ptxas_warnings;  // e.g. C7515 wgmma serialisation
  std::vector<KernelResources> kernels;
  PtxInventory inventory;
  std::vector<Violation> violations;  // forbidden means, from the source and the compiled library
  // Artifacts, present when status == ok.
  std::filesystem::path library;  // solution.so
  std::filesystem::path ptx;      // solution.ptx
  std::filesystem::path cubin;    // solution.cubin (device code alone, for a SASS disassembler)

  bool ok() const { return status == Status::ok; }
};

// Compiles `source` for the task's architecture. Never throws for a bad solution, nor for a failing host
// (that is a toolchain_error); throws only for a task of an unknown architecture.
CompileResult compile_solution(const std::string& source, const Task& task, const CompileOptions& options);

std::string nvcc_version(const std::filesystem::path& nvcc);  // "13.0.88", empty when nvcc cannot run
std::string to_string(CompileResult::Status status);
nlohmann::json to_json(const CompileResult& result);

}  // namespace ptxbench
