#include <fmt/format.h>
#include <set>

#include "arch/profile.h"
#include "eval/gpu_stage.h"
#include "eval/instruction_check.h"
#include "eval/launch_binding.h"
#include "eval/profile_summary.h"
#include "eval/sass_inventory.h"
#include "runner/protocol.h"

namespace ptxbench {
namespace fs = std::filesystem;
using nlohmann::json;
namespace proto = protocol;

namespace {

// The stage decided by the compiled code alone (decide_from_compiled_code): no profile ran, so no coverage.
StageResult decided_from_compiled_code(const StaticDecision& decision, const SassInventory& static_sass,
                                       const CompileResult& compiled, double wall_s) {
  StageResult stage{.name = "instructions",
                    .status = decision.status,
                    .wall_s = wall_s,
                    .message = decision.message,
                    .details = to_json(decision)};
  stage.details["static_sass"] = to_json(static_sass);
  stage.details["ptx_counts"] = compiled.inventory.required_counts;
  return stage;
}

// `cuobjdump -sass` of compiled code: the submission's cubin, or the kernels Triton compiled in the profiled
// run. `problem` says why there is none. The listing is read whole: one cut short leaves kernels out, whose
// launches would then count as foreign, so a listing over tools.sass_listing_limit is the submission's
// failure (`oversized`), never a partial inventory.
struct Disassembly {
  SassInventory sass;
  std::string problem;
  bool oversized = false;
  double wall_s = 0;
  bool ok() const { return problem.empty(); }
};

Disassembly disassemble(const std::vector<fs::path>& cubins, const GpuTools& tools) {
  Disassembly disassembly;
  std::string text;
  for (const fs::path& cubin : cubins) {
    const ProcessResult sass = run_process({.argv = {tools.cuobjdump.string(), "-sass", cubin.string()},
                                            .time_limit = std::chrono::seconds(60),
                                            .output_limit = tools.sass_listing_limit - text.size()});
    disassembly.wall_s += sass.wall_s;
    if (!sass.ok()) {
      disassembly.problem =
          fmt::format("cuobjdump could not read the submission's compiled code ({})",
                      sass.spawn_failed ? "not found: " + tools.cuobjdump.string() : sass.describe());
      return disassembly;
    }
    if (sass.out_dropped > 0) {
      disassembly.problem = fmt::format(
          "the SASS listing of the submission's compiled code is over {:.1f} MiB, more than the judge reads, "
          "so its launches cannot be held to its code: make the compiled code smaller",
          static_cast<double>(tools.sass_listing_limit) / 1048576.0);
      disassembly.oversized = true;
      return disassembly;
    }
    text += sass.out;
  }
  disassembly.sass = parse_cuobjdump_sass(text);
  return disassembly;
}

// The cubins the runner kept of a Triton solution's profiled run (the result's "compiled_kernels").
Disassembly disassemble_triton_kernels(const RunnerCall& profile, const GpuTools& tools) {
  std::vector<fs::path> cubins;
  if (!profile.kernels_dir.empty())
    for (const json& name : profile.result->value(proto::kCompiledKernels, json::array()))
      if (name.is_string()) cubins.push_back(profile.kernels_dir / name.get<std::string>());
  if (cubins.empty())
    return {.problem =
                "Triton compiled no kernel in the solution's process, so there is no compiled code to "
                "hold the launches to"};
  return disassemble(cubins, tools);
}

}  // namespace

// Instructions: the static SASS, which decides alone when a required family is not in it; else one profiled
// call under Nsight Compute, judged with the static SASS beside it. A Triton solution's kernels are compiled
// in that call, so their SASS is read after it, and nothing is decided before.
StageResult instructions_stage(StageContext& context) {
  const CompileResult& compiled = context.compiled;
  const Task& task = context.task;
  const GpuTools& tools = context.tools;
  Disassembly compiled_code;
  if (compiled.compiles_kernels) {
    compiled_code = disassemble({compiled.cubin}, tools);
    if (compiled_code.oversized)
      return {.name = "instructions",
              .status = StageStatus::failed,
              .wall_s = compiled_code.wall_s,
              .message = compiled_code.problem};
    if (compiled_code.ok())
      if (const auto decision = decide_from_compiled_code(task, compiled_code.sass))
        return decided_from_compiled_code(*decision, compiled_code.sass, compiled, compiled_code.wall_s);
  }
  const std::string ncu_log = "ncu.csv";
  const ArchProfile& arch = *find_arch(task.arch);
  auto ncu = [&](const fs::path& dir) {
    std::vector<std::string> command{
        tools.ncu.string(), "--target-processes",
        "all",  // and the processes the solution process starts
        "--clock-control", "none", "--profile-from-start", "off", "--print-kernel-base",
        "mangled",  // the symbols cuobjdump lists, with no spelling to reconcile
        "--metrics",
        // The kernels' durations need a pass on the GPU's counters, and only --profile has the GPU alone
        // (gpu_stages.cpp): without it, another process's kernels beside this one would show in them.
        fmt::format("sass__inst_executed_per_opcode_with_modifier_all,{}{}{}", kLaunchMetrics,
                    tools.profile_sections ? "," : "", tools.profile_sections ? kDurationMetric : ""),
        "--print-metric-instances", "details", "--csv", "--page", "raw", "--log-file",
        (dir / ncu_log).string()};
    if (tools.profile_sections)
      for (const std::string& section : arch.profile.sections)
        command.insert(command.end(), {"--section", section});
    return command;
  };
  const RunnerTool profiler{.command = ncu, .log_name = ncu_log, .profiling = true};
  RunnerCall profile =
      call_runner(tools, context.sandbox, request_for(task, compiled, proto::kModeProfile, tools),
                  tools.profile_limit_s, &profiler);
  StageResult instructions;
  if (!profile.result) {
    instructions = process_failure("instructions", profile, tools.profile_limit_s);
    // Where it hung: the correct stage's calls ran the same code uninstrumented.
    if (instructions.status == StageStatus::timeout)
      instructions.message += fmt::format(
          " (one call of {} under Nsight Compute, whose per-opcode counters run an instrumented copy of the "
          "kernels)",
          task.main_shape.to_string());
  } else if (status_of(*profile.result) == StageStatus::runtime_error ||
             profile.result->contains(proto::kRuntimeError)) {
    // A failed call, or a rule it broke (state kept between calls).
    instructions = {.name = "instructions",
                    .status = status_of(*profile.result),
                    .message = runtime_error_text(*profile.result)};
  } else if (status_of(*profile.result) == StageStatus::failed) {
    // The proof must be made on code that computes the task: a wrong profiled output voids it.
    const json trial = profile.result->value(proto::kProfile, json::object()).value(proto::kTrial, json());
    instructions = {.name = "instructions",
                    .status = StageStatus::failed,
                    .message = "the profiled call's output was wrong, so its instructions prove nothing: " +
                               describe_failed_trial({{proto::kLabel, task.main_shape.label},
                                                      {proto::kTrialList, json::array({trial})}},
                                                     task),
                    .details = {{"profiled_trial", trial}}};
  } else {
    InstructionCheckInput input;
    for (const auto& k : compiled.kernels) input.submission_kernels.push_back(k.mangled);
    if (!compiled.compiles_kernels) {
      compiled_code = disassemble_triton_kernels(profile, tools);
      for (const SassFunction& function : compiled_code.sass.functions)
        input.submission_kernels.push_back(function.name);
    }
    const json& p = profile.result->value(proto::kProfile, json::object());
    if (p.contains(proto::kStreamId) && p[proto::kStreamId].is_number_integer())
      input.solution_stream = p[proto::kStreamId].get<int64_t>();
    if (compiled_code.ok()) input.static_sass = &compiled_code.sass;
    context.profiled = parse_ncu_report(profile.tool_log, tools.profile_sections ? &arch.profile : nullptr);
    const InstructionCheck checked = check_instructions(*context.profiled, task, task.main_shape, input);
    instructions = {.name = "instructions",
                    .status = checked.status,
                    .message = checked.message,
                    .details = to_json(checked)};
    instructions.details["ptx_counts"] = compiled.inventory.required_counts;
    if (tools.profile_sections) {
      std::set<int> theirs;
      for (const LaunchCheck& launch : checked.launches)
        if (launch.from_submission) theirs.insert(launch.id);
      instructions.details["profile"] = to_json(summarize_profile(*context.profiled, arch.profile, theirs));
    }
    // What the solution process's own recorder saw under the profiler (it may be unavailable there).
    instructions.details["profiled_call_recorder"] = profile.result->value(proto::kLaunches, json());
    if (!compiled.compiles_kernels)
      instructions.details["compiled_kernels"] = profile.result->value(proto::kCompiledKernels, json());
    if (compiled_code.ok()) {
      instructions.details["static_sass"] = to_json(compiled_code.sass);
    } else {
      // Without the compiled code a launch is the submission's by its name alone, which a copied name (a
      // library kernel's) passes: no pass on that ground.
      const std::string problem = compiled_code.problem + ", so launches were matched by kernel name only";
      instructions.details["static_sass_problem"] = problem;
      if (compiled_code.oversized) {  // Triton's kernels: the submission's, as a cubin's would be
        instructions.status = StageStatus::failed;
        instructions.message = compiled_code.problem;
      } else if (instructions.status == StageStatus::passed) {
        instructions.status = StageStatus::harness_error;
        instructions.message = problem + "; " + instructions.message;
      } else {
        instructions.message += " (also: " + problem + ")";
      }
    }
    context.verdict.coverage = checked.coverage.coverage;
  }
  instructions.wall_s = profile.process.wall_s;
  // The runner's steps under the profiler: the rest of wall_s is Nsight Compute's own.
  if (profile.result && profile.result->contains(proto::kPhasesS) &&
      (instructions.details.is_object() || instructions.details.is_null()))
    instructions.details[proto::kPhasesS] = (*profile.result)[proto::kPhasesS];
  std::error_code ec;
  if (!profile.kernels_dir.empty()) fs::remove_all(profile.kernels_dir, ec);
  return instructions;
}

void set_aside_instructions(StageContext& context) {
  context.profiled.reset();
  context.verdict.coverage.reset();
}

void add_launches(StageContext& context, const std::string& stage, const std::optional<json>& result) {
  if (result && result->contains(proto::kLaunches))
    context.launches.emplace_back(stage, (*result)[proto::kLaunches]);
}

void bind_proof(StageContext& context, StageResult& instructions) {
  if (!context.profiled || context.launches.empty()) return;
  const LaunchBinding binding = bind_launches(*find_arch(context.task.arch), *context.profiled, context.launches);
  if (!instructions.details.is_object()) instructions.details = json::object();
  instructions.details["binding"] = binding.details;
  instructions.details["binding"]["status"] = to_string(binding.status);
  if (binding.status == StageStatus::passed) return;
  context.verdict.coverage.reset();
  if (instructions.status == StageStatus::passed) {
    instructions.status = binding.status;
    instructions.message = binding.message;
  } else {
    instructions.message += " (also: " + binding.message + ")";
  }
}

}  // namespace ptxbench
