// Running a child process with a time limit, captured output and a clean kill of everything it started.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ptxbench {

struct ProcessSpec {
  std::vector<std::string> argv;  // argv[0] is looked up on PATH
  std::string working_dir;        // empty: the caller's
  std::chrono::milliseconds time_limit{std::chrono::minutes(5)};
  std::map<std::string, std::string> env_overrides;  // added to (or replacing in) the caller's environment
  std::string stdin_data;
  size_t output_limit = 4 << 20;  // bytes kept of each of stdout and stderr; the rest is counted, not kept
  // Set by another thread: the process group is ended as at the time limit, within 50 ms, and the result is
  // `stopped` (not timed out), with the output read until then. nullptr: runs to its end or its limit.
  const std::atomic<bool>* stop = nullptr;
};

struct ProcessResult {
  int exit_code = -1;   // valid when exited
  int term_signal = 0;  // non-zero when killed by a signal
  bool exited = false;
  bool timed_out = false;  // killed by us at the time limit
  bool stopped = false;    // killed by us when the caller set ProcessSpec::stop
  bool spawn_failed = false;
  std::string out;
  std::string err;
  // The bytes past output_limit, counted and not kept: a reader that must see all of `out` checks that
  // out_dropped is 0.
  size_t out_dropped = 0;
  size_t err_dropped = 0;
  double wall_s = 0;

  bool ok() const { return exited && exit_code == 0 && !timed_out; }
  // "exit code 2", "killed by signal 11 (Segmentation fault)", "timed out after 30.0 s", "stopped after
  // 2.1 s", ...
  std::string describe() const;
};

// Runs the process in its own process group; at the time limit the whole group is killed with SIGKILL.
ProcessResult run_process(const ProcessSpec& spec);

}  // namespace ptxbench
