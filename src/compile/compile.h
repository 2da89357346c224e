// The CUDA track's compile stage: nvcc into a shared library, the ptxas resource report and the static PTX
// inventory. Runs on the CPU; results are cached by content. CompileResult is every track's compile stage
// (track/track.h), which also adds the forbidden-means scan.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "compile/forbidden.h"
#include "compile/ptx_inventory.h"
#include "compile/ptxas_report.h"
#include "eval/sandbox.h"
#include "task/task.h"

namespace ptxbench {

struct CompileOptions {
  std::filesystem::path nvcc = "/usr/local/cuda/bin/nvcc";
  std::filesystem::path cache_dir;                  // where artifacts live, one folder per cache key
  std::vector<std::filesystem::path> include_dirs;  // the ABI header and the architecture's kit
  std::filesystem::path display_root;  // paths below it appear relative to it in diagnostics (the project)
  double time_limit_s = 120;
  // The sandbox nvcc runs in (sandbox.h, system_only: the system, the toolkit, the include folders and the
  // compile's own folder, nothing else), resolved once by the front end. Left default-constructed it is
  // unavailable, and a compile is the host's failure rather than unconfined; PTXBENCH_SANDBOX=off (trusted
  // code only) runs nvcc without it.
  SandboxStatus sandbox;
  uint64_t memory_bytes = uint64_t{8} << 30;  // RLIMIT_AS of nvcc and every compiler it starts
  // A failed compile is the host's (toolchain_error, never cached) when the cache's file system has less free
  // than this after it (host_failure below), whatever nvcc printed ($PTXBENCH_COMPILE_MIN_FREE_MB).
  uint64_t min_free_bytes = uint64_t{256} << 20;
  bool use_cache = true;           // false: compile again even when a cached result exists (which is kept)
  std::string python = "python3";  // what parses and scans a Triton solution (track/triton_track.cpp)
};

// What the host says around a compile, read before and after it: never what nvcc printed, which the source
// can write (an #error, a #line naming another file).
struct HostReading {
  uint64_t free_bytes = 0;  // available to this user on the compile folder's file system (statvfs)
  uint64_t oom_kills = 0;   // the kernel's count of processes its out-of-memory killer ended (/proc/vmstat)
};
HostReading read_host(const std::filesystem::path& folder);
// Why the host failed a compile that nvcc did not pass, in words, or "" when it is the source's: the disk is
// (nearly) full, or the out-of-memory killer ended a process during it.
std::string host_failure(const HostReading& before, const HostReading& after, uint64_t min_free_bytes);

struct CompileResult {
  // toolchain_error: the host failed, not the source (no nvcc, a full disk, a folder that cannot be written,
  // a compiler tool killed); never cached.
  enum class Status { ok, compile_error, timeout, toolchain_error } status = Status::toolchain_error;
  double wall_s = 0;  // this compile stage's seconds: on a cache hit, the lookup's
  bool cached = false;
  double compiled_s = 0;  // on a cache hit, the seconds of the compile that made the entry
  std::string cache_key;
  // false: the track compiles its kernels on the GPU when they are first called (Triton), so this stage only
  // parsed the source: no nvcc, ptxas report, PTX inventory or artifacts.
  bool compiles_kernels = true;
  std::string nvcc_version;          // "13.0.88"
  std::string python_version;        // Triton: the python that parsed it, "3.11.2"
  std::vector<std::string> command;  // as run, with the solution named solution.cu (solution.py)
  std::string diagnostics;           // trimmed compiler errors (and warnings), for a model
  int error_count = 0;
  std::vector<std::string> ptxas_warnings;  // e.g. C7515 wgmma serialisation
  std::vector<KernelResources> kernels;
  PtxInventory inventory;
  std::vector<Violation> violations;  // forbidden means, from the source and the compiled library
  // How the runner runs the artifact (its request's "track", runner/protocol.h): "cuda" loads the library,
  // "triton" runs `library`, the Python source, in the Triton worker.
  std::string runner_track = "cuda";
  // Artifacts, present when status == ok.
  std::filesystem::path library;  // solution.so (the CUDA track), solution.py (Triton)
  std::filesystem::path ptx;      // solution.ptx
  std::filesystem::path cubin;    // solution.cubin (device code alone, for a SASS disassembler)

  bool ok() const { return status == Status::ok; }
};

// Compiles `source` with nvcc for the task's architecture (no forbidden-means scan: the track adds it).
// Never throws for a bad solution, nor for a failing host (that is a toolchain_error); throws only for a task
// of an unknown architecture.
CompileResult compile_with_nvcc(const std::string& source, const Task& task, const CompileOptions& options);

// Keeps `source` as the file `name` of a content-keyed entry of the compile cache (for a track that compiles
// nothing ahead, the file the runner runs) and returns its path. Throws std::runtime_error when it cannot be
// written: the host's failure.
std::filesystem::path keep_source(const std::string& source, const std::string& name,
                                  const CompileOptions& options);

std::string nvcc_version(const std::filesystem::path& nvcc);  // "13.0.88", empty when nvcc cannot run
std::string to_string(CompileResult::Status status);
nlohmann::json to_json(const CompileResult& result);

}  // namespace ptxbench
