// The GPU stages as units: each runs its runner processes (runner_call.h) and returns its result, reading and
// writing what the stages share in a StageContext. gpu_stages.cpp holds their registry, which decides their
// order and what runs after what.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "compile/compile.h"
#include "eval/gpu_stages.h"
#include "eval/ncu_report.h"
#include "eval/runner_call.h"
#include "eval/verdict.h"
#include "task/task.h"

namespace ptxbench {

struct StageContext {
  const CompileResult& compiled;
  const Task& task;
  const GpuTools& tools;
  const SandboxSetup& sandbox;
  Verdict& verdict;  // a stage sets its speedup (time) and coverage (instructions)
  // The launches the solution process recorded in the calls of the stages that passed (correct, time), which
  // bind_proof holds to the profiled call's.
  std::vector<std::pair<std::string, nlohmann::json>> launches;
  std::optional<NcuReport> profiled;  // the instruction stage's profile, when ncu's report was read
  // The time stage's runner result, when the correct stage's process timed the solution after its check
  // (correct_stage): the time stage reports it rather than start the solution again.
  std::optional<nlohmann::json> timed;
};

StageResult sanitize_stage(StageContext& context);

// One runner process of `request` with compute-sanitizer's `tool` starting the solution process (and any
// process it starts), its log in the call's folder: the sanitize stage's three tools, and the correct
// stage's search for where a failed call failed.
RunnerCall run_sanitizer(StageContext& context, const nlohmann::json& request, const std::string& tool);

// Correct: every shape's trials, and then, when the time stage is to follow, its timed calls, in one runner
// process (protocol.h, check_then_time): the solution's process, context, library and kernels start once for
// both stages. The timing is kept in the context for the time stage.
StageResult correct_stage(StageContext& context);
StageResult instructions_stage(StageContext& context);
// Undoes what the instruction stage left in the context (its profile, the verdict's coverage), when its
// result is set aside (it ran beside the sanitize stage, and a stage since stopped the rest).
void set_aside_instructions(StageContext& context);
// Time: reports the timing the correct stage's process made, or times the solution in a process of its own.
StageResult time_stage(StageContext& context);

// A stage that timed out at the runner's own limit, with what the debugger said of the solution process then
// (runtime_error.debugger_output, hang_report.h): its details' `hang`, and the message's line "where its
// threads wait".
void add_hang_report(StageResult& stage, const nlohmann::json& result);

// Keeps the launches the runner recorded for a stage's calls (launch_log.h), when it ran them.
void add_launches(StageContext& context, const std::string& stage,
                  const std::optional<nlohmann::json>& result);

// Holds the calls the correct and time stages made to the profiled call's launches and counts
// (launch_binding.h), once they have run: a proof that does not cover them fails the instruction stage
// (`instructions`); one that cannot be bound (a recorder was unavailable) is a harness error, never a pass.
// A coverage measured on code that was not the timed code describes nothing: it is dropped then.
void bind_proof(StageContext& context, StageResult& instructions);

}  // namespace ptxbench
