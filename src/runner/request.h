// The runner's request (protocol.h documents the JSON), parsed and validated.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "runner/family.h"

namespace ptxbench::runner {

// check_then_time: the check, then, if it passed, the time mode, in one process (protocol.h).
enum class Mode { check, time, profile, sanitize, check_then_time };

struct Request {
  Mode mode = Mode::check;
  std::string mode_name;
  std::string library;
  std::string family;
  std::string entry_point;
  std::vector<ShapeSpec> shapes;                // [0] is the main shape
  Tolerance tolerance;                          // every output's, unless `tolerances` names it
  std::map<std::string, Tolerance> tolerances;  // per-output overrides ("LSE")
  std::map<std::string, bool> parameters;       // the family's parameters ("causal")
  int trials = 0;
  uint64_t seed = 0;
  int warmup = 0;
  int repetitions = 0;
  int device = 0;
  int dense_flops_per_sm_per_clock = 0;  // time: the physics floor's peak rate; 0: not given, no floor
  bool triton = false;                   // "track": "triton": `library` is a Python file, run by `python`
  std::string python;                    // triton, or a baseline module
  std::string kernels_dir;               // triton, optional: where Triton's compiled kernels are copied
  std::string triton_cache;     // triton, optional: Triton's cache folder, shared by several runners and kept
  std::string python_bytecode;  // with python, optional: the bytecode folder python reads (-X pycache_prefix)
  std::vector<std::string> solution_wrapper;  // a tool that starts the solution process (compute-sanitizer)
  std::string baseline_module;  // time: the family's baseline as Python entry points, run by `python`
  // check_then_time, optional: each part's own limit in seconds, the check's from the runner's start, the
  // time's from its own; 0: none.
  double check_limit_s = 0;
  double time_limit_s = 0;
  std::string debugger;  // check_then_time, optional: attached to a solution that ran out of a part's time

  bool times() const { return mode == Mode::time || mode == Mode::check_then_time; }

  const Tolerance& tolerance_for(const std::string& output) const {
    const auto it = tolerances.find(output);
    return it == tolerances.end() ? tolerance : it->second;
  }
};

// A request the runner cannot act on; says which field and why. The parent's fault, never the solution's.
struct RequestError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

Request parse_request(const std::string& text);

}  // namespace ptxbench::runner
