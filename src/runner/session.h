// The runner's modes (check, time, profile, sanitize) over any task family.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

#include <cuda_runtime.h>

#include "runner/family.h"
#include "runner/request.h"
#include "runner/solution_process.h"
#include "runner/timing_rules.h"

namespace ptxbench::runner {

// Runs the calibration requests (time mode only: they take a few milliseconds).
Calibration calibrate(SolutionProcess& solution, int device);

// The device's read bandwidth in bytes/s, for the time stage's physics floor: read_all over 1 GiB, the best
// of 5 timed passes after a warm-up (time mode, before the solution's library loads: a few milliseconds).
double measure_read_bandwidth();

// How a call that ran out of time is run again for the debugger (check_then_time with a "debugger",
// session.cpp): the solution process's command, unwrapped, and its entry point.
struct DebugRerun {
  WorkerCommand command;
  EntrySpec entry;
};

// What a mode needs and what it fills in. `result` is filled as the mode goes, so that the shapes and trials
// done before a fault are still reported.
struct Session {
  const Request& request;
  TaskFamily& family;
  SolutionProcess& solution;
  Json& result;
  Calibration calibration;
  double read_bandwidth_bytes_per_s = 0;  // time mode: measure_read_bandwidth's
  // time mode: the process of the request's baseline module, its module loaded, or none (the family's own
  // baseline, if it has one, runs in this process).
  SolutionProcess* baseline = nullptr;
  const DebugRerun* rerun = nullptr;  // with a debugger: a call that runs out of time is run again under it
};

// Runs `mode` (check, time, profile or sanitize) of the request; sets result["status"] and result["message"]
// unless it throws.
void run_mode(Session& session, Mode mode);

}  // namespace ptxbench::runner
