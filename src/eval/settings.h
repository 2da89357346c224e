// The host's settings for judging, read from the environment once by a front end (a CLI command, the service,
// a worker) and handed down as options. Nothing in compile/ or eval/ reads the environment itself.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "eval/sandbox.h"

namespace ptxbench {

struct HostSettings {
  std::filesystem::path nvcc = "/usr/local/cuda/bin/nvcc";  // $PTXBENCH_NVCC
  // $PTXBENCH_RUNNER, else ptxbench-runner beside this executable; empty: none (the GPU stages cannot run).
  std::filesystem::path runner;
  // $PTXBENCH_PYTHON: a python with torch and Triton, for Triton solutions and the attention baseline
  // (baselines/attention_cudnn.py, which the runner runs); it also parses and scans Triton
  // solutions (track/triton_track.cpp), so that the syntax judged is that of the python that runs them.
  std::string python = "python3";
  std::string visible_devices;  // $CUDA_VISIBLE_DEVICES: the GPUs this process may use (detect_gpu)
  // $PTXBENCH_SANDBOX_DATA_GB: RLIMIT_DATA of every sandboxed runner (0: none).
  uint64_t sandbox_data_bytes = uint64_t{32} << 30;
  SandboxSettings sandbox;  // $PTXBENCH_SANDBOX (off, 0, no: disabled), $PTXBENCH_BWRAP, $PATH, $HOME, ...
  std::uintmax_t compile_cache_limit = std::uintmax_t{4} << 30;  // $PTXBENCH_CACHE_LIMIT_MB
  // $PTXBENCH_COMPILE_MIN_FREE_MB: a failed compile is the host's when the compile cache's file system has
  // less free than this after it (compile.h, host_failure).
  std::uintmax_t compile_min_free_bytes = std::uintmax_t{256} << 20;
};

// A variable's value; nothing when it is unset or empty.
using Environment = std::function<std::optional<std::string>(const char* name)>;
Environment process_environment();

// Throws ConfigError for a number that is not a whole number (PTXBENCH_CACHE_LIMIT_MB,
// PTXBENCH_COMPILE_MIN_FREE_MB, PTXBENCH_SANDBOX_DATA_GB), naming the variable.
HostSettings host_settings(const Environment& environment = process_environment());

}  // namespace ptxbench
