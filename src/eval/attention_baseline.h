// The attention tasks' vendor baseline ("baseline": "vendor-attention"): the fastest correct vendor attention
// on the GPU host, PyTorch SDPA's cuDNN, Flash or memory-efficient attention, checked against fp32 and timed
// by baselines/attention_torch.py the way the runner times solutions (cold L2, CUDA events around the call
// alone, warm-up calls, median). The script is trusted code in a process of its own, outside the solution
// sandbox: the runner stays libc + CUDA only. The time stage runs it after the runner timed the solution and
// puts its result into the runner's timing as "baseline", with "speedup". One measurement per task, main
// shape and GPU in one ptxbench process: an agent run with many turns, or `run --solutions` with many
// solutions of a task, does not re-time it each time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "task/task.h"
#include "util/subprocess.h"

namespace ptxbench {

// Where the script is and what runs it.
struct AttentionBaselineSetup {
  std::filesystem::path script;    // empty: no baseline here (the time stage says so)
  std::string python = "python3";  // a python with torch
  double limit_s = 600;            // importing torch, checking and timing three backends: about a minute
};

// The project's script, baselines/attention_torch.py under `root`, run by `python` (the host settings'
// PTXBENCH_PYTHON, else python3).
AttentionBaselineSetup attention_baseline_setup(const std::filesystem::path& root, const std::string& python);

// What the time stage gives the measurement: the runner's warm-up and repetitions (the defaults, not the
// fewer a slow solution got), its L2 flush size (absent: the script sizes it as the runner does) and the GPU.
struct AttentionBaselineRun {
  int warmup = 10;
  int repetitions = 50;
  std::optional<int64_t> l2_flush_bytes;
  std::string gpu;             // the runner's device name: part of the cache key
  std::string visible_device;  // CUDA_VISIBLE_DEVICES for the script, as the runner had it; empty: inherited
};

// The script's request (its stdin) for the task's main shape.
nlohmann::json attention_baseline_request(const Task& task, const AttentionBaselineRun& run);

struct AttentionBaseline {
  // The script's result: a Series as the runner's (event_us, wall_us, tflops, tflops_wall) with "name"
  // ("torch-sdpa-cudnn"), "backend", "method", "gqa", the torch and cuDNN versions, the GPU and "candidates".
  std::optional<nlohmann::json> series;
  std::string problem;  // why there is no baseline, when there is none: "torch not importable (...)"
  bool cached = false;  // measured earlier in this ptxbench process
  double wall_s = 0;    // what running the script took now (0 when cached)
};

// The script's process judged: its result, or what went wrong in words.
AttentionBaseline read_attention_baseline(const ProcessResult& process, const AttentionBaselineSetup& setup);

// The cache key: task id, main shape and GPU name.
std::string attention_baseline_key(const Task& task, const std::string& gpu);

// Runs the script, or returns what it gave earlier in this process for the same key: a result at once, a
// failure (an error, the time limit, no python) once it has failed twice.
AttentionBaseline measure_attention_baseline(const Task& task, const AttentionBaselineSetup& setup,
                                             const AttentionBaselineRun& run);
void forget_attention_baselines();  // for tests

// The ratio of two Series' medians on `clock` ("event_us", "wall_us"): baseline over solution, how many times
// faster the solution is. Absent when either median is missing or not positive.
std::optional<double> speedup_of(const nlohmann::json& baseline, const nlohmann::json& solution,
                                 const char* clock);

// The host's field of the timing that says why it has no baseline, when it has none.
inline constexpr const char* kBaselineNote = "baseline_note";

// Puts the baseline into the runner's timing document: "baseline" (the Series, with "cached"), "speedup" and
// "speedup_wall"; without one, "baseline_note" says why and the speedups stay null.
void add_attention_baseline(nlohmann::json& timing, const AttentionBaseline& baseline);

}  // namespace ptxbench
