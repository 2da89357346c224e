#include "eval/instruction_check.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "util/format.h"
#include "util/names.h"

namespace ptxbench {

using nlohmann::json;

namespace {

// ---------------------------------------------------------------------------------------------------------
// Kernel names. ncu prints "void mine::scale_kernel<4>(float *, int)", c++filt "void
// mine::scale_kernel<4>(float*, int)": the signature key drops all spaces; the base name drops return type,
// template arguments and parameters.

std::string without_spaces(std::string_view text) {
  std::string out;
  for (const char c : text)
    if (c != ' ') out += c;
  return out;
}

std::string base_name(std::string_view signature) {
  // Parameters: the parenthesised group that ends the name (the name itself may hold "(anonymous
  // namespace)").
  if (!signature.empty() && signature.back() == ')') {
    int depth = 0;
    for (size_t i = signature.size(); i-- > 0;) {
      if (signature[i] == ')') ++depth;
      if (signature[i] == '(' && --depth == 0) {
        signature = signature.substr(0, i);
        break;
      }
    }
  }
  // Return type (printed for templates): whatever precedes the last space outside brackets.
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < signature.size(); ++i) {
    const char c = signature[i];
    if (c == '<' || c == '(') ++depth;
    if (c == '>' || c == ')') --depth;
    if (c == ' ' && depth == 0) start = i + 1;
  }
  signature = signature.substr(start);
  std::string out;
  depth = 0;
  for (const char c : signature) {
    if (c == '<')
      ++depth;
    else if (c == '>')
      --depth;
    else if (depth == 0 && c != ' ')
      out += c;
  }
  return out;
}

std::string group_thousands(int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

std::string human_flops(double flops) {
  static constexpr std::pair<double, const char*> kUnits[] = {
      {1e15, "PFLOP"}, {1e12, "TFLOP"}, {1e9, "GFLOP"}, {1e6, "MFLOP"}, {1e3, "kFLOP"}};
  for (const auto& [scale, unit] : kUnits)
    if (flops >= scale) return fmt::format("{:.3g} {}", flops / scale, unit);
  return fmt::format("{:.0f} FLOP", flops);
}

// Base opcode of "HGMMA.64x8x16.F32.BF16" is "HGMMA": the form ncu gives without modifiers.
std::string_view base_opcode(std::string_view opcode) {
  return opcode.substr(0, opcode.find('.'));
}

// Whether `opcode` is one of the family's: it has one of the family's SASS prefixes (opcode_has_prefix).
// Without modifiers (ncu's base metric gives "SYNCS"), a prefix can only be matched on its base.
bool family_has_opcode(const RequiredFamily& family, std::string_view opcode, bool with_modifiers) {
  return std::any_of(family.sass.begin(), family.sass.end(), [&](const std::string& prefix) {
    return opcode_has_prefix(opcode, with_modifiers ? std::string_view(prefix) : base_opcode(prefix));
  });
}

// Whether any function of the compiled code, kernel or callee, has an opcode of the family (cuobjdump prints
// the modifiers).
bool in_any_function(const RequiredFamily& family, const SassInventory& compiled) {
  for (const auto& function : compiled.functions)
    for (const auto& [opcode, count] : function.opcodes)
      if (family_has_opcode(family, opcode, /*with_modifiers=*/true)) return true;
  return false;
}

// "wgmma (HGMMA)", "mbarrier (SYNCS.PHASECHK)": how a message names a family.
std::string family_label(const std::string& name, const std::vector<std::string>& sass_prefixes) {
  return fmt::format("{} ({})", name, fmt::join(sass_prefixes, "/"));
}

// Opcodes the launch executed that its compiled kernel does not contain. Without modifiers in the dynamic
// counts, the comparison is on base opcodes.
std::vector<std::string> opcodes_missing_from(const NcuLaunch& launch,
                                              const std::vector<const SassFunction*>& compiled,
                                              bool with_modifiers) {
  std::set<std::string, std::less<>> present;
  for (const SassFunction* function : compiled)
    for (const auto& [opcode, count] : function->opcodes)
      present.insert(with_modifiers ? opcode : std::string(base_opcode(opcode)));
  std::vector<std::string> missing;
  for (const auto& [opcode, count] : launch.opcodes)
    if (count > 0 && !present.contains(opcode)) missing.push_back(opcode);
  return missing;
}

}  // namespace

// -----------------------------------------------------------------------------------------------------------

bool same_kernel(const std::string& ncu_name_as_printed, const std::string& compiled_name) {
  // The instruction stage asks ncu for mangled names: then the symbols either are the same or differ.
  if (ncu_name_as_printed == compiled_name) return true;
  if (ncu_name_as_printed.starts_with("_Z") && compiled_name.starts_with("_Z")) return false;
  // A demangled name from ncu (older reports): compared by spelling.
  // ncu prints an anonymous namespace as "<unnamed>", the C++ demangler as "(anonymous namespace)".
  auto ncu_spelling = [](std::string name) {
    for (size_t at; (at = name.find("(anonymous namespace)")) != std::string::npos;)
      name.replace(at, 21, "<unnamed>");
    return name;
  };
  const std::string ncu_name = ncu_spelling(ncu_name_as_printed);
  const std::string compiled = ncu_spelling(demangle(compiled_name));
  if (without_spaces(ncu_name) == without_spaces(compiled)) return true;
  const std::string base = base_name(ncu_name);
  return !base.empty() && base == base_name(compiled);
}

// FLOPs per warp-level count of the scalar and packed floating-point arithmetic (32 lanes; an FMA is 2).
// HFMA2.MMA is left out: ptxas uses it to move constants into registers.
std::optional<int64_t> scalar_flops_per_count(std::string_view opcode) {
  static constexpr struct {
    std::string_view name;
    int64_t flops;
  } kScalar[] = {{"FFMA", 64}, {"FADD", 32},   {"FMUL", 32},  {"DFMA", 64}, {"DADD", 32},
                 {"DMUL", 32}, {"HFMA2", 128}, {"HADD2", 64}, {"HMUL2", 64}};
  if (opcode.starts_with("HFMA2.MMA")) return std::nullopt;
  const std::string_view name = base_opcode(opcode);
  for (const auto& scalar : kScalar)
    if (name == scalar.name) return scalar.flops;
  return std::nullopt;
}

CoverageEstimate estimate_coverage(const std::map<std::string, int64_t>& math_opcodes, int64_t task_flops) {
  CoverageEstimate estimate;
  estimate.task_flops = task_flops;
  for (const auto& [opcode, count] : math_opcodes) {
    if (count <= 0) continue;
    if (const auto shape = parse_mma_shape(opcode))
      estimate.mma_flops += count * shape->flops_per_count();
    else
      estimate.unknown_shape_opcodes[opcode] = count;
  }
  if (task_flops <= 0) {
    estimate.note = "the task's FLOP count is not positive";
    return estimate;
  }
  const double known = static_cast<double>(estimate.mma_flops) / static_cast<double>(task_flops);
  if (estimate.unknown_shape_opcodes.empty()) {
    estimate.coverage = known;
  } else {
    std::vector<std::string> names;
    for (const auto& [opcode, count] : estimate.unknown_shape_opcodes) names.push_back(opcode);
    estimate.note = fmt::format(
        "the MMA shape of {} is not in the opcode name, so its FLOPs are unknown{}", fmt::join(names, ", "),
        estimate.mma_flops > 0 ? fmt::format(" (the other MMA opcodes did {} of the FLOPs)", percent(known))
                               : "");
  }
  return estimate;
}

namespace {

// 1. Which launches are the submission's: a kernel name of the compile stage, and (with static SASS) only
// opcodes its compiled code contains.
std::vector<LaunchCheck> classify_launches(const NcuReport& report, const InstructionCheckInput& input) {
  std::vector<std::string> compiled_names = input.submission_kernels;
  if (input.static_sass)
    for (const auto& function : input.static_sass->functions) compiled_names.push_back(function.name);
  // The compiled code a launch of `kernel` may have run: every function its name matches (a template's
  // instances can share a name once ncu and the demangler disagree on spelling), and the device functions
  // the kernels call (cuobjdump lists a __noinline__ one apart; ptxas names only entry functions).
  std::vector<const SassFunction*> callees;
  if (input.static_sass)
    for (const auto& function : input.static_sass->functions)
      if (std::none_of(
              input.submission_kernels.begin(), input.submission_kernels.end(),
              [&](const std::string& kernel) { return demangle(kernel) == demangle(function.name); }))
        callees.push_back(&function);
  auto compiled_code = [&](const std::string& kernel) {
    std::vector<const SassFunction*> code;
    for (const auto& function : input.static_sass->functions)
      if (same_kernel(kernel, function.name)) code.push_back(&function);
    if (!code.empty()) code.insert(code.end(), callees.begin(), callees.end());
    return code;
  };
  std::vector<LaunchCheck> launches;
  for (const auto& launch : report.launches) {
    LaunchCheck entry;
    entry.id = launch.id;
    entry.kernel = launch.kernel_name;
    entry.stream = launch.stream_id;
    entry.instructions = launch.instructions_executed;
    entry.from_submission =
        std::any_of(compiled_names.begin(), compiled_names.end(),
                    [&](const std::string& name) { return same_kernel(launch.kernel_name, name); });
    if (input.static_sass) {
      if (const auto code = compiled_code(launch.kernel_name); !code.empty()) {
        entry.opcodes_not_in_compiled_code =
            opcodes_missing_from(launch, code, report.opcodes_have_modifiers);
        if (!entry.opcodes_not_in_compiled_code.empty()) entry.from_submission = false;
      } else {
        entry.from_submission = false;  // the submission's cubin has no such kernel
      }
    }
    launches.push_back(std::move(entry));
  }
  return launches;
}

// 2. The solution's stream: given, else the one with most submission launches (ties: the earliest launch's);
// then the launches that are foreign or off that stream, labelled for the message.
void place_streams(InstructionCheck& check, const InstructionCheckInput& input) {
  check.solution_stream_given = input.solution_stream.has_value();
  if (input.solution_stream) {
    check.solution_stream = input.solution_stream;
  } else {
    std::map<int64_t, int> launches_per_stream;
    for (const auto& launch : check.launches)
      if (launch.from_submission) ++launches_per_stream[launch.stream];
    int most = 0;
    for (const auto& launch : check.launches) {
      if (!launch.from_submission) continue;
      if (launches_per_stream[launch.stream] > most) {
        most = launches_per_stream[launch.stream];
        check.solution_stream = launch.stream;
      }
    }
  }
  for (auto& launch : check.launches) {
    launch.on_solution_stream = !check.solution_stream || launch.stream == *check.solution_stream;
    const std::string label = fmt::format("{} (stream {})", demangle(launch.kernel), launch.stream);
    if (!launch.from_submission)
      check.foreign_kernels.push_back(label);
    else if (!launch.on_solution_stream)
      check.off_stream_kernels.push_back(label);
  }
}

// 3. Each required family's executed count over the submission's launches (and elsewhere); the math
// families' opcodes go to `math_opcodes` for the coverage.
std::vector<FamilyExecution> count_families(const NcuReport& report, const Task& task,
                                            const std::vector<LaunchCheck>& launches,
                                            std::map<std::string, int64_t>& math_opcodes) {
  std::vector<FamilyExecution> families;
  for (const auto& required : task.required) {
    FamilyExecution family{required.name, required.sass, required.does_the_math, 0, true, 0, {}};
    if (!report.opcodes_have_modifiers)
      family.exact = std::none_of(required.sass.begin(), required.sass.end(), [](const std::string& prefix) {
        return prefix.find('.') != std::string::npos;
      });
    for (size_t i = 0; i < report.launches.size(); ++i) {
      for (const auto& [opcode, count] : report.launches[i].opcodes) {
        if (!family_has_opcode(required, opcode, report.opcodes_have_modifiers)) continue;
        if (!launches[i].from_submission) {
          family.executed_elsewhere += count;
          continue;
        }
        family.executed += count;
        family.opcodes[opcode] += count;
        if (required.does_the_math) math_opcodes[opcode] += count;
      }
    }
    families.push_back(std::move(family));
  }
  return families;
}

// 4. The coverage of the math families, and the arithmetic anything else in the submission's launches could
// have done.
CoverageEstimate measure_coverage(const NcuReport& report, const std::vector<LaunchCheck>& launches,
                                  const std::map<std::string, int64_t>& math_opcodes, int64_t task_flops) {
  CoverageEstimate coverage = estimate_coverage(math_opcodes, task_flops);
  for (size_t i = 0; i < report.launches.size(); ++i) {
    if (!launches[i].from_submission) continue;
    for (const auto& [opcode, count] : report.launches[i].opcodes) {
      if (math_opcodes.contains(opcode)) continue;
      const auto mma = parse_mma_shape(opcode);
      const auto flops =
          mma ? std::optional<int64_t>(mma->flops_per_count()) : scalar_flops_per_count(opcode);
      if (!flops) continue;
      coverage.other_flops += count * *flops;
      coverage.other_opcodes[std::string(base_opcode(opcode))] += count;
    }
  }
  if (!report.opcodes_have_modifiers && !report.launches.empty() && !coverage.coverage) {
    coverage.note =
        "ncu gave opcodes without modifiers (sass__inst_executed_per_opcode), so MMA shapes "
        "are unknown; profile with sass__inst_executed_per_opcode_with_modifier_all";
  }
  return coverage;
}

// 5. The decision. Failures say what the submission did wrong; problems say why ptxbench cannot judge.
struct Findings {
  std::vector<std::string> failures, problems;
};

// What the math families did: too small a share of the FLOPs, or results not used (other arithmetic did the
// math).
void judge_math(const InstructionCheck& check, const Task& task, const Shape& shape,
                const std::string& math_name, Findings& findings) {
  const auto& coverage = check.coverage;
  if (coverage.coverage && *coverage.coverage < task.coverage_threshold) {
    findings.failures.push_back(fmt::format("{} did {} of the FLOPs ({} of {} for {}); at least {} required",
                                            math_name, percent(*coverage.coverage),
                                            human_flops(static_cast<double>(coverage.mma_flops)),
                                            human_flops(static_cast<double>(coverage.task_flops)),
                                            shape.to_string(), percent(task.coverage_threshold)));
  } else if (!coverage.coverage) {
    findings.problems.push_back("coverage unknown: " + coverage.note);
  }
  const double other_share = coverage.task_flops > 0 ? static_cast<double>(coverage.other_flops) /
                                                           static_cast<double>(coverage.task_flops)
                                                     : 0;
  if (other_share > 1 - task.coverage_threshold) {
    std::vector<std::string> opcodes;
    for (const auto& [opcode, count] : coverage.other_opcodes)
      opcodes.push_back(fmt::format("{} {}", opcode, group_thousands(count)));
    findings.failures.push_back(fmt::format(
        "other arithmetic ({}) could have done {} of the FLOPs ({} of {}); at most {} may come from "
        "outside {}: its results must do the math, not merely run",
        fmt::join(opcodes, ", "), percent(other_share),
        human_flops(static_cast<double>(coverage.other_flops)),
        human_flops(static_cast<double>(coverage.task_flops)), percent(1 - task.coverage_threshold),
        math_name));
  }
}

// What the launches and families show, as failures and problems.
Findings judge(const InstructionCheck& check, const NcuReport& report, const Task& task, const Shape& shape,
               const std::string& math_name, bool has_math_family, const std::string& flops_problem) {
  Findings findings;
  if (!report.errors.empty())
    findings.problems.push_back("Nsight Compute reported: " + report.errors.front());
  if (!flops_problem.empty()) findings.problems.push_back(flops_problem);
  if (report.launches.empty()) {
    if (report.errors.empty())
      findings.failures.push_back(
          "no kernel launch was profiled in the solution's call: its GPU work was not seen");
    return findings;
  }
  if (report.opcode_metric.empty()) {
    findings.problems.push_back("ncu's output has no per-opcode counts");
    return findings;
  }
  std::vector<std::string> missing, inexact;
  bool ran_elsewhere = false, math_missing = false;
  for (const auto& family : check.families) {
    if (family.executed > 0) {
      if (!family.exact) inexact.push_back(family_label(family.name, family.sass_prefixes));
      continue;
    }
    math_missing = math_missing || family.does_the_math;
    missing.push_back(family_label(family.name, family.sass_prefixes));
    ran_elsewhere = ran_elsewhere || family.executed_elsewhere > 0;
  }
  if (!inexact.empty())
    findings.problems.push_back(
        fmt::format("ncu gave base opcodes only, which cannot confirm {}", fmt::join(inexact, ", ")));
  if (!missing.empty())
    findings.failures.push_back(
        fmt::format("not executed: {}{}", fmt::join(missing, ", "),
                    ran_elsewhere ? " (some ran, but only in kernels not built from the submission)" : ""));
  if (!check.foreign_kernels.empty())
    findings.failures.push_back(
        fmt::format("kernels not built from the submission ran: {}", fmt::join(check.foreign_kernels, ", ")));
  for (const auto& launch : check.launches)
    if (!launch.opcodes_not_in_compiled_code.empty())
      findings.failures.push_back(fmt::format(
          "{} executed instructions its compiled code lacks ({}): it is not the submission's kernel",
          demangle(launch.kernel), fmt::join(launch.opcodes_not_in_compiled_code, ", ")));
  if (!check.off_stream_kernels.empty())
    findings.failures.push_back(fmt::format(
        "work launched on a stream other than the solution's (stream {}): {}; all GPU work must be "
        "enqueued on the stream passed in",
        check.solution_stream.value_or(-1), fmt::join(check.off_stream_kernels, ", ")));
  // A missing math family already says it all; "did 0% of the FLOPs" would add nothing. Nor is an unknown
  // coverage a problem while a family is missing.
  if (has_math_family && flops_problem.empty() && !math_missing) {
    Findings math;
    judge_math(check, task, shape, math_name, math);
    findings.failures.insert(findings.failures.end(), math.failures.begin(), math.failures.end());
    if (missing.empty())
      findings.problems.insert(findings.problems.end(), math.problems.begin(), math.problems.end());
  }
  return findings;
}

}  // namespace

InstructionCheck check_instructions(const NcuReport& report, const Task& task, const Shape& shape,
                                    const InstructionCheckInput& input) {
  InstructionCheck check;
  check.ncu_problems = report.errors;
  check.launches = classify_launches(report, input);
  place_streams(check, input);
  std::map<std::string, int64_t> math_opcodes;
  check.families = count_families(report, task, check.launches, math_opcodes);

  std::vector<std::string> math_families;
  for (const auto& family : task.required)
    if (family.does_the_math) math_families.push_back(family.name);
  const bool has_math_family = !math_families.empty();
  const std::string math_name = fmt::format("{}", fmt::join(math_families, "+"));
  int64_t task_flops = 0;
  std::string flops_problem;
  try {
    task_flops = task.flops(shape);
  } catch (const std::exception& error) {
    flops_problem =
        fmt::format("cannot compute the task's FLOPs for {}: {}", shape.to_string(), error.what());
  }
  if (has_math_family) check.coverage = measure_coverage(report, check.launches, math_opcodes, task_flops);

  const Findings findings = judge(check, report, task, shape, math_name, has_math_family, flops_problem);
  if (!findings.failures.empty()) {
    check.status = StageStatus::failed;
    check.message = fmt::format("{}", fmt::join(findings.failures, "; "));
    if (!findings.problems.empty())
      check.message += fmt::format(" (also: {})", fmt::join(findings.problems, "; "));
  } else if (!findings.problems.empty()) {
    check.status = StageStatus::harness_error;
    check.message = fmt::format("{}", fmt::join(findings.problems, "; "));
  } else {
    check.status = StageStatus::passed;
    std::vector<std::string> counts;
    for (const auto& family : check.families)
      counts.push_back(fmt::format("{} {}", family.name, group_thousands(family.executed)));
    check.message = counts.empty() ? "no instruction family is required"
                                   : fmt::format("executed (warp-level): {}", fmt::join(counts, ", "));
    if (has_math_family && check.coverage.coverage)
      check.message += fmt::format("; {} did {} of the FLOPs", math_name, percent(*check.coverage.coverage));
  }
  return check;
}

std::optional<StaticDecision> decide_from_compiled_code(const Task& task, const SassInventory& compiled) {
  if (compiled.functions.empty()) return std::nullopt;
  StaticDecision decision;
  for (const auto& family : task.required)
    if (!in_any_function(family, compiled))
      decision.not_compiled.push_back(family_label(family.name, family.sass));
  if (decision.not_compiled.empty()) return std::nullopt;
  decision.message = fmt::format("not in the compiled code: {}", fmt::join(decision.not_compiled, ", "));
  return decision;
}

json to_json(const FamilyExecution& family) {
  return json{{"name", family.name},
              {"sass", family.sass_prefixes},
              {"does_the_math", family.does_the_math},
              {"executed", family.executed},
              {"exact", family.exact},
              {"executed_elsewhere", family.executed_elsewhere},
              {"opcodes", family.opcodes}};
}

json to_json(const LaunchCheck& launch) {
  return json{{"id", launch.id},
              {"kernel", launch.kernel},
              {"stream", launch.stream},
              {"from_submission", launch.from_submission},
              {"on_solution_stream", launch.on_solution_stream},
              {"instructions", launch.instructions},
              {"opcodes_not_in_compiled_code", launch.opcodes_not_in_compiled_code}};
}

json to_json(const CoverageEstimate& coverage) {
  return json{{"coverage", coverage.coverage ? json(*coverage.coverage) : json(nullptr)},
              {"mma_flops", coverage.mma_flops},
              {"task_flops", coverage.task_flops},
              {"unknown_shape_opcodes", coverage.unknown_shape_opcodes},
              {"other_flops", coverage.other_flops},
              {"other_opcodes", coverage.other_opcodes},
              {"note", coverage.note}};
}

json to_json(const InstructionCheck& check) {
  json families = json::array();
  for (const auto& family : check.families) families.push_back(to_json(family));
  json launches = json::array();
  for (const auto& launch : check.launches) launches.push_back(to_json(launch));
  return json{{"status", to_string(check.status)},
              {"message", check.message},
              {"families", std::move(families)},
              {"launches", std::move(launches)},
              {"solution_stream", check.solution_stream ? json(*check.solution_stream) : json(nullptr)},
              {"solution_stream_given", check.solution_stream_given},
              {"foreign_kernels", check.foreign_kernels},
              {"off_stream_kernels", check.off_stream_kernels},
              {"coverage", to_json(check.coverage)},
              {"ncu_problems", check.ncu_problems}};
}

json to_json(const StaticDecision& decision) {
  return json{{"decided_by", "static SASS inventory"},
              {"status", to_string(decision.status)},
              {"message", decision.message},
              {"not_in_compiled_code", decision.not_compiled},
              {"coverage", {{"coverage", nullptr}, {"note", "not measured: no profile ran"}}}};
}

}  // namespace ptxbench
