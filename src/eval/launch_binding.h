// Binds the instruction stage's proof, made on one call under Nsight Compute, to the calls the correct and
// time stages checked and timed: a solution that can tell when it is profiled must not prove its
// instructions with one kernel and pass with another.
//
// - Launches: every checked call of the main shape (but the process's first, which may do one-time work such
//   as tuning) and every timed call must launch what the profiled call launched, in order: the same kernels
//   (by mangled name), grids, blocks, clusters and dynamic shared memory (the solution process records them
//   with CUPTI's activity API in every stage, src/runner/launch_log.h).
// - Durations, where ncu measured them (with --profile, whose instruction stage has the GPU alone): each
//   kernel's median duration over the timed calls within kDurationFactor of what ncu measured for it in the
//   profiled call, or within kDurationSlackUs of it. (The counts below see a kernel whose path switches on a
//   flag in any case.)
// - Counts: the calls chosen at random to be counted with hardware counters (one checked, two or more
//   timed) must have executed the wgmma instructions the profiled call did, within kCountTolerance: counters
//   need no replay or patching, so the solution cannot tell those calls from the others.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "arch/profile.h"
#include "eval/ncu_report.h"
#include "eval/verdict.h"
#include "runner/kernel_name_hash.h"

namespace ptxbench {

inline constexpr double kDurationFactor = 2.0;
inline constexpr double kDurationSlackUs = 20.0;
inline constexpr double kCountTolerance = 0.01;

struct LaunchBinding {
  StageStatus status = StageStatus::passed;  // passed, failed, or harness_error (a recorder was unavailable)
  std::string message;                       // the first problem, for a person or a model
  nlohmann::json details;
};

// `logs`: each stage's name and the runner's "launches" summary of its calls (launch_log.h), whose counts are
// of `arch`'s tensor-pipe counters (its profile's "counters").
LaunchBinding bind_launches(const ArchProfile& arch, const NcuReport& profiled,
                            const std::vector<std::pair<std::string, nlohmann::json>>& logs);

// The warp-level instructions of a counter's opcodes (the profile's: HGMMA, QGMMA, IGMMA, BGMMA for Hopper's
// wgmma) that a report's launches executed, as the counter counts them.
int64_t counted_instructions(const CounterSpec& counter, const NcuReport& report);

}  // namespace ptxbench
