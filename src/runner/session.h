// The runner's four modes (check, time, profile, sanitize) over any task family.
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

// What a mode needs and what it fills in. `result` is filled as the mode goes, so that the shapes and trials
// done before a fault are still reported.
struct Session {
  const Request& request;
  TaskFamily& family;
  SolutionProcess& solution;
  Json& result;
  Calibration calibration;
};

// Runs the request's mode; sets result["status"] and result["message"] unless it throws.
void run_mode(Session& session);

}  // namespace ptxbench::runner
