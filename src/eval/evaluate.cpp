#include "eval/evaluate.h"

#include <fmt/format.h>
#include <algorithm>
#include <cctype>
#include <chrono>
#include <ctime>
#include <sstream>

#include "arch/profile.h"
#include "util/files.h"
#include "util/hash.h"
#include "util/subprocess.h"
#include "util/text.h"

namespace ptxbench {
namespace {

StageResult skipped(const std::string& name, const std::string& why) {
  return {.name = name, .status = StageStatus::skipped, .message = why};
}

bool is_entry_point(const Violation& v) {
  return v.rule == kEntryPointRule;
}

// What the static stage found: the ABI's missing entry points, then the forbidden means, each a line.
std::string static_findings(const std::vector<Violation>& violations) {
  std::string entries, forbidden;
  std::vector<std::string> missing;
  size_t forbidden_count = 0;
  for (const auto& v : violations) {
    const std::string line = fmt::format("\n- [{}] {}", v.rule, v.message);
    if (is_entry_point(v)) {
      entries += line;
      missing.push_back(v.evidence);
    } else {
      forbidden += line;
      ++forbidden_count;
    }
  }
  std::string text;
  if (!missing.empty())
    text = fmt::format("the library does not export the task's entry point {}:{}", fmt::join(missing, ", "),
                       entries);
  if (forbidden_count > 0)
    text += fmt::format("{}{} forbidden means found:{}", text.empty() ? "" : "\n", forbidden_count, forbidden);
  return text;
}

std::string family_list(const Task& task, const std::vector<std::string>& names) {
  std::vector<std::string> parts;
  for (const auto& name : names)
    for (const auto& f : task.required)
      if (f.name == name) parts.push_back(fmt::format("{} ({})", name, fmt::join(f.ptx, " / ")));
  return fmt::format("{}", fmt::join(parts, ", "));
}

// The instruction stage as far as the compiled code decides it. A family absent from the PTX is a failure here
// already: the GPU stage would count that family only in launches that ran nothing but the submission's
// compiled code (decide_from_compiled_code, instruction_check.h), which lacks it; code loaded at run time, which
// the forbidden-means scan refuses but cannot rule out, changes nothing. Presence decides
// nothing for a full task (the code may never run): the GPU stage counts executed instructions. For a
// static-only task presence is all that can be checked, and the verdict says so.
StageResult static_instruction_stage(const CompileResult& compiled, const Task& task, const Track& track,
                                     const std::string& gpu_reason) {
  if (!compiled.compiles_kernels)
    return skipped("instructions", fmt::format("{}; {} compiles the kernels on the GPU when they are first "
                                               "called, so no PTX is checked here",
                                               gpu_reason, track.title()));
  StageResult stage{.name = "instructions"};
  stage.details = {{"decided_by", "static PTX inventory"},
                   {"ptx_counts", compiled.inventory.required_counts}};
  if (!compiled.inventory.missing_families.empty()) {
    stage.status = StageStatus::failed;
    stage.message =
        fmt::format("required instruction families not in the compiled code, so never executed: {}",
                    family_list(task, compiled.inventory.missing_families));
    return stage;
  }
  stage.status = StageStatus::skipped;
  stage.message =
      task.mode == TaskMode::static_only
          ? fmt::format("every required family is in the PTX; execution not verified: {}", gpu_reason)
          : fmt::format("every required family is in the PTX; execution is checked on a GPU: {}", gpu_reason);
  return stage;
}

}  // namespace

std::string with_file_name(const std::string& text, const std::string& compiled_name,
                           const std::string& submitted_name) {
  if (submitted_name.empty() || submitted_name == compiled_name) return text;
  const auto name_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  };
  std::string out;
  size_t from = 0;
  for (size_t at = text.find(compiled_name); at != std::string::npos; at = text.find(compiled_name, at)) {
    const size_t end = at + compiled_name.size();
    // A location: "solution.cu(12)", "solution.cu:12:5", "solution.cu, line 3"; not a longer name.
    if ((at > 0 && name_char(text[at - 1])) || end >= text.size() ||
        (text[end] != '(' && text[end] != ':' && text[end] != ',')) {
      at += 1;
      continue;
    }
    out += text.substr(from, at - from) + submitted_name;
    from = at = end;
  }
  return out + text.substr(from);
}

std::string GpuInfo::describe() const {
  return present ? fmt::format("{} (sm_{})", name, compute_capability) : "no GPU";
}

GpuInfo read_gpu_list(const std::string& nvidia_smi_output, const std::string& visible) {
  GpuInfo gpu;
  struct Line {
    std::string index, name;
    int compute_capability = 0;
  };
  std::vector<Line> lines;
  std::istringstream in(nvidia_smi_output);
  for (std::string text; std::getline(in, text);) {
    if (text.empty()) continue;
    const auto first = text.find(','), last = text.rfind(',');
    int major = 0, minor = 0;
    if (first == last || std::sscanf(text.c_str() + last + 1, " %d.%d", &major, &minor) != 2) {
      gpu.absent_reason = "nvidia-smi did not report a compute capability: " + text;
      return gpu;
    }
    auto trim = [](std::string v) {
      v.erase(0, v.find_first_not_of(' '));
      return v.substr(0, v.find_last_not_of(' ') + 1);
    };
    lines.push_back(
        {trim(text.substr(0, first)), trim(text.substr(first + 1, last - first - 1)), major * 10 + minor});
  }
  if (lines.empty()) {
    gpu.absent_reason = "nvidia-smi listed no GPU";
    return gpu;
  }
  gpu.name = lines.front().name;
  gpu.compute_capability = lines.front().compute_capability;
  gpu.present = true;
  if (!visible.empty()) {
    // The user chose the devices; each entry (an index or a UUID) is passed on as it was given.
    std::istringstream entries(visible);
    for (std::string entry; std::getline(entries, entry, ',');)
      if (!entry.empty()) gpu.devices.push_back(entry);
  } else {
    for (const Line& line : lines)
      if (line.name == gpu.name && line.compute_capability == gpu.compute_capability)
        gpu.devices.push_back(line.index);
  }
  return gpu;
}

GpuInfo detect_gpu(const std::string& visible) {
  ProcessResult r =
      run_process({.argv = {"nvidia-smi", "--query-gpu=index,name,compute_cap", "--format=csv,noheader"},
                   .time_limit = std::chrono::seconds(20)});
  if (!r.ok() || r.out.empty()) {
    GpuInfo gpu;
    gpu.absent_reason = r.spawn_failed ? "no NVIDIA driver here (nvidia-smi not found)"
                                       : "nvidia-smi found no usable GPU (" + r.describe() + ")";
    return gpu;
  }
  return read_gpu_list(r.out, visible);
}

std::string read_solution_file(const std::filesystem::path& path) {
  return read_regular_file(path, kMaxSolutionBytes);
}

std::string utc_now_iso8601() {
  std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

StageResult compile_stage(const CompileResult& r) {
  StageResult stage{.name = "compile", .wall_s = r.wall_s, .details = to_json(r)};
  // The inventory and the violations are the static stage's; keep the verdict free of twins.
  stage.details.erase("ptx_inventory");
  stage.details.erase("violations");
  switch (r.status) {
    case CompileResult::Status::ok:
      stage.status = StageStatus::passed;
      if (!r.ptxas_warnings.empty())
        stage.message = fmt::format("ptxas warnings:\n{}", fmt::join(r.ptxas_warnings, "\n"));
      break;
    case CompileResult::Status::compile_error:
      stage.status = StageStatus::failed;
      stage.message =
          fmt::format("{} compile error{}, the first: {}\n{}", r.error_count, r.error_count == 1 ? "" : "s",
                      r.diagnostics.substr(0, r.diagnostics.find('\n')), r.diagnostics);
      break;
    case CompileResult::Status::timeout:
      stage.status = StageStatus::timeout;
      stage.message = r.diagnostics;
      break;
    case CompileResult::Status::toolchain_error:
      stage.status = StageStatus::harness_error;
      stage.message = r.diagnostics;
      break;
  }
  return stage;
}

StageResult static_stage(const CompileResult& r) {
  StageResult stage{.name = "static"};
  if (!r.ok()) return skipped("static", "the solution did not compile");
  nlohmann::json violations = nlohmann::json::array();
  for (const auto& v : r.violations) violations.push_back(to_json(v));
  stage.details = {{"violations", violations}};
  if (r.compiles_kernels) stage.details["ptx_inventory"] = to_json(r.inventory);
  if (r.violations.empty()) {
    stage.status = StageStatus::passed;
    return stage;
  }
  stage.status = StageStatus::failed;
  stage.message = static_findings(r.violations);
  return stage;
}

namespace {

Verdict judge(const Submission& submission, const Task& task, const EvalOptions& options) {
  const Track& track = *submission.track;
  Verdict verdict;
  verdict.task_id = task.id;
  verdict.arch = task.arch;
  verdict.track = track.name();
  verdict.submission_hash = sha256_hex(submission.source);
  verdict.source_name = submission.name;
  verdict.created_at = utc_now_iso8601();
  verdict.ptxbench_version = PTXBENCH_VERSION;
  verdict.host = options.gpu.describe();

  const CompileResult compiled = compile_solution(track, submission.source, task, options.compile);
  // The compiler saw the file as the track's source name; its messages name the file as submitted.
  StageResult compile = compile_stage(compiled);
  const std::string submitted = std::filesystem::path(submission.name).filename().string();
  compile.message = with_file_name(compile.message, track.source_name(), submitted);
  if (compile.details.contains("diagnostics") && compile.details["diagnostics"].is_string())
    compile.details["diagnostics"] =
        with_file_name(compile.details["diagnostics"].get<std::string>(), track.source_name(), submitted);
  verdict.stages.push_back(std::move(compile));
  verdict.stages.push_back(static_stage(compiled));

  // Why the GPU stages cannot run here, if they cannot.
  const ArchProfile* arch = find_arch(task.arch);
  std::string no_gpu;
  if (!compiled.ok())
    no_gpu = "the solution did not compile";
  else if (!compiled.violations.empty())
    no_gpu = std::all_of(compiled.violations.begin(), compiled.violations.end(), is_entry_point)
                 ? "the library does not export the task's entry point: the solution is not run"
                 : "forbidden means found: the solution is not run";
  else if (task.mode == TaskMode::static_only)
    no_gpu = fmt::format("{} is a static-only task: no {} GPU runs it", task.id, arch->marketing);
  else if (!options.gpu.present)
    no_gpu = options.gpu.absent_reason;
  else if (options.gpu.compute_capability != arch->compute_capability)
    no_gpu = fmt::format("this GPU ({}) is not a {} GPU (sm_{})", options.gpu.describe(), arch->marketing,
                         arch->compute_capability);
  else if (options.tools.runner.empty())
    no_gpu = "ptxbench-runner was not built (no CUDA toolkit at build time)";

  const SolutionWorker worker = track.worker();
  if (no_gpu.empty() && worker.implemented) {
    verdict.device = options.tools.visible_device;
    run_gpu_stages(compiled, task, options.tools, verdict);
    return verdict;
  }
  if (no_gpu.empty()) {
    // A GPU would judge it, but nothing here can run the track's solutions: ptxbench cannot judge, which
    // says nothing about the submission.
    for (const char* name : {"sanitize", "correct", "instructions", "time"})
      verdict.stages.push_back(
          {.name = name, .status = StageStatus::harness_error, .message = worker.missing});
    return verdict;
  }
  // Skipped for the reason at hand; a track whose GPU stages do not exist says so too, so that "incomplete"
  // does not read as something a GPU host would finish.
  if (!worker.implemented && compiled.ok() && compiled.violations.empty()) no_gpu += "; " + worker.missing;
  for (const char* name : {"sanitize", "correct"}) verdict.stages.push_back(skipped(name, no_gpu));
  if (compiled.ok())
    verdict.stages.push_back(static_instruction_stage(compiled, task, track, no_gpu));
  else
    verdict.stages.push_back(skipped("instructions", no_gpu));
  verdict.stages.push_back(skipped("time", no_gpu));
  return verdict;
}

}  // namespace

Verdict evaluate(const Submission& submission, const Task& task, const EvalOptions& options) {
  // The stages carry tool output (nvcc's, the sanitizer's, the profiler's, the runner's stderr) and the file
  // name given, all bytes. The verdict is made valid UTF-8 once, here, where every verdict comes from, so
  // that what is printed, what a model is shown and what the store gives back are the same text.
  return verdict_from_json(with_valid_utf8(to_json(judge(submission, task, options))));
}

}  // namespace ptxbench
