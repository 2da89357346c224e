// The Triton track: one Python file whose entry points (docs/triton-abi.md) launch Triton kernels on torch
// tensors. Triton compiles the kernels on the GPU when they are first called, so the compile stage here only
// parses the file, and the static scan reads its syntax tree: both are triton_scan.py, built into the binary
// and run by the python of the host settings (python3 -I -S: no environment, no site packages, so neither the
// solution nor the environment can change what the trusted script imports).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>

#include "eval/sandbox.h"
#include "track/track.h"
#include "util/hash.h"
#include "util/incbin.h"
#include "util/subprocess.h"
#include "util/text.h"

PTXBENCH_INCBIN(ptxbench_triton_scan, PTXBENCH_TRITON_SCAN)

namespace ptxbench {
namespace {

using nlohmann::json;

// The functions a solution file must define, each with the number of parameters it is called with: the
// family's workspace function (its arguments) and entry point (its arguments and the stream).
std::vector<std::string> python_functions(const Family& family) {
  std::vector<std::string> functions;
  if (family.workspace)
    functions.push_back(fmt::format("{}:{}", family.workspace->symbol, family.workspace->arguments.size()));
  functions.push_back(fmt::format("{}:{}", family.entry_point, family.arguments.size() + 1));
  return functions;
}

std::string_view scanner_source() {
  return {ptxbench_triton_scan, static_cast<size_t>(ptxbench_triton_scan_end - ptxbench_triton_scan)};
}

// The interpreter `python` names, as it says itself: its real executable and the installation it runs from
// (a pyenv shim, a venv's link or a conda python resolved). Asked once per name, outside the sandbox, with no
// submission in sight; throws std::runtime_error when it cannot answer (the host's failure).
struct PythonInstall {
  std::string executable;
  std::filesystem::path prefix;
};
const PythonInstall& python_install(const std::string& python) {
  static std::mutex mutex;
  static std::map<std::string, PythonInstall> known;
  std::lock_guard lock(mutex);
  if (const auto it = known.find(python); it != known.end()) return it->second;
  const ProcessResult asked = run_process(
      {.argv = {python, "-I", "-S", "-c", "import sys; print(sys.executable); print(sys.base_prefix)"},
       .time_limit = std::chrono::seconds(30)});
  const std::vector<std::string> lines = split_lines(asked.out);
  std::error_code ec;
  const std::filesystem::path executable =
      asked.ok() && lines.size() >= 2 ? std::filesystem::canonical(lines[0], ec) : std::filesystem::path();
  if (executable.empty() || ec)
    throw std::runtime_error(fmt::format("{} could not say where it is installed ({}): {}", python,
                                         asked.describe(), valid_utf8(utf8_tail(asked.err, 500))));
  return known[python] = {.executable = executable.string(), .prefix = lines[1]};
}

// The scanner reads the source and never runs it, but the parser it hands the source to is the host's: it
// runs in the compile's sandbox (compile.h), as nvcc does: the system and the python's own installation
// read-only, nothing writable, no network, the compile's memory and CPU limits.
std::vector<std::string> sandboxed_scanner(std::vector<std::string> argv, const CompileOptions& options) {
  const PythonInstall& python = python_install(options.python);
  SandboxPolicy policy{.system_only = true};
  argv.front() = python.executable;
  for (const std::filesystem::path& folder :
       {python.prefix, std::filesystem::path(python.executable).parent_path()})
    if (!folder.empty() && folder != "/" && !folder.string().starts_with("/usr/") && folder != "/usr")
      policy.readable.push_back(folder);  // the system's own is there already, and `/` never is
  policy.limits.address_bytes = options.memory_bytes;
  policy.limits.cpu_s = static_cast<uint64_t>(4 * options.time_limit_s) + 60;
  return sandboxed_command(options.sandbox, policy, argv);
}

// The scanner's answer in one mode: its JSON document (null when it timed out) and the process that gave it,
// or, remembered from an earlier run on the same input, the seconds that run took.
struct ScannerAnswer {
  json document;
  ProcessResult process;
  bool remembered = false;
  double remembered_s = 0;
};

// The scanner run in one mode on the source. Throws std::runtime_error when it cannot run or its answer cannot
// be read: the host's failure. Answers read in full are remembered for this process, by everything that decides
// them (the python, the mode, its arguments, the source; the scanner is built in): a manifest run judges one
// file on many tasks, and each sandboxed python start costs a fifth of a second. options.use_cache false asks
// the scanner again.
ScannerAnswer run_scanner(const std::string& mode, const std::vector<std::string>& arguments,
                          const std::string& source, const CompileOptions& options) {
  if (const std::string refused =
          refused_unconfined(options.sandbox, "the Triton scanner is not run on the submission");
      !refused.empty())
    throw std::runtime_error(refused);
  static std::mutex mutex;
  static std::map<std::string, std::pair<json, double>> answers;
  std::string key = fmt::format("{}\n{}\n{}\n", options.python, mode, fmt::join(arguments, "\n"));
  key = sha256_hex(key + source);
  {
    std::lock_guard lock(mutex);
    if (const auto it = answers.find(key); options.use_cache && it != answers.end())
      return {.document = it->second.first, .remembered = true, .remembered_s = it->second.second};
  }
  std::vector<std::string> argv = {options.python, "-I", "-S", "-c", std::string(scanner_source()), mode};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  ScannerAnswer answer;
  answer.process = run_process(
      {.argv = options.sandbox.requested ? sandboxed_scanner(std::move(argv), options) : std::move(argv),
       .time_limit = std::chrono::milliseconds(static_cast<long>(options.time_limit_s * 1000)),
       .stdin_data = source});
  const ProcessResult& process = answer.process;
  if (process.timed_out) return answer;
  if (!process.ok())
    throw std::runtime_error(fmt::format("{} could not run the Triton scanner ({}): {}", options.python,
                                         process.describe(), valid_utf8(utf8_tail(process.err, 2000))));
  try {
    answer.document = json::parse(process.out);
  } catch (const json::exception&) {
    throw std::runtime_error(
        fmt::format("the Triton scanner's answer is not JSON: {}", valid_utf8(utf8_head(process.out, 200))));
  }
  std::lock_guard lock(mutex);
  if (answers.size() >= 4096) answers.clear();  // a bound, far above any run's number of distinct files
  answers.insert_or_assign(key, std::pair(answer.document, process.wall_s));
  return answer;
}

// "solution.py:3:9: error: invalid syntax", with the line and a caret under the column when there is one.
std::string diagnostic(const json& error, const std::vector<std::string>& lines) {
  const int line = error.value("line", 0), column = error.value("column", 0);
  const std::string message = error.value("message", std::string());
  if (line <= 0) return fmt::format("solution.py: error: {}\n", message);
  std::string text = fmt::format("solution.py:{}:{}: error: {}\n", line, column, message);
  if (static_cast<size_t>(line) <= lines.size()) {
    text += "    " + lines[line - 1] + "\n";
    if (column > 0) text += std::string(4 + column - 1, ' ') + "^\n";
  }
  return text;
}

class TritonTrack final : public Track {
 public:
  std::string name() const override { return "triton"; }
  std::string title() const override { return "Triton"; }
  std::string source_name() const override { return "solution.py"; }

  // Parsing, and the entry points' presence and parameter counts: what a compiler would stop at. The
  // kernels themselves are compiled by Triton on the GPU.
  CompileResult compile(const std::string& source, const Task& task,
                        const CompileOptions& options) const override {
    CompileResult result;
    result.compiles_kernels = false;
    const std::vector<std::string> entries = python_functions(task.family_spec());
    result.command = {options.python, "-I", "-S", "-c", "<src/track/triton_scan.py>", "parse"};
    result.command.insert(result.command.end(), entries.begin(), entries.end());
    ScannerAnswer parsed;
    try {
      parsed = run_scanner("parse", entries, source, options);
    } catch (const std::exception& e) {
      result.diagnostics = fmt::format("the compile failed on this host, not on the source: {}", e.what());
      return result;
    }
    const json& answer = parsed.document;
    result.wall_s = parsed.process.wall_s;
    result.cached = parsed.remembered;
    result.compiled_s = parsed.remembered_s;
    if (parsed.process.timed_out) {
      result.status = CompileResult::Status::timeout;
      result.diagnostics = fmt::format("parsing did not finish within {:.0f} s", options.time_limit_s);
      return result;
    }
    result.python_version = answer.value("python", std::string());
    const std::vector<std::string> lines = split_lines(source);
    for (const json& error : answer.value("errors", json::array())) {
      result.diagnostics += diagnostic(error, lines);
      ++result.error_count;
    }
    result.status = result.error_count ? CompileResult::Status::compile_error : CompileResult::Status::ok;
    result.runner_track = "triton";
    if (result.ok()) {
      // The file the Triton worker runs.
      try {
        result.library = keep_source(source, source_name(), options);
      } catch (const std::exception& e) {
        result.status = CompileResult::Status::toolchain_error;
        result.diagnostics = fmt::format("the compile failed on this host, not on the source: {}", e.what());
      }
    }
    return result;
  }

  // The entry points were checked by compile(), as a compiler would.
  std::vector<Violation> scan(const std::string& source, const CompileResult& compiled, const Task&,
                              const CompileOptions& options) const override {
    if (!compiled.ok()) return {};  // no syntax tree to read
    const ScannerAnswer answer = run_scanner("scan", {}, source, options);
    if (answer.process.timed_out)
      throw std::runtime_error(
          fmt::format("the Triton scanner did not finish within {:.0f} s", options.time_limit_s));
    std::vector<Violation> found;
    for (const json& v : answer.document.at("violations"))
      found.push_back({v.at("rule"), v.at("evidence"), v.at("line"), v.at("message")});
    return found;
  }

  SolutionWorker worker() const override {
    return {
        .implemented = true,
        .loads =
            "python3 runs the worker's trusted host script, which imports solution.py and calls its entry "
            "point with torch tensors over the judge's CUDA IPC buffers, on the worker's stream",
        .missing = ""};
  }

  std::string system_prompt() const override {
    return R"(You write GPU kernels for ptxbench, a benchmark of GPU kernels that must use an architecture's own PTX instructions. This is its Triton track: the kernels are written in Triton.

Your answer is one complete Python file that:
- defines the task's entry point as a plain Python function of that name at module level, with the parameters shown (torch tensors in the ABI's layouts, then the sizes and `stream`), and returns 0;
- computes the task's result correctly for every shape listed (any M), within the tolerance, writing it into the output tensors it is given;
- does the work in its own @triton.jit kernels, which must execute the task's required PTX instruction families. This is checked by counting the instructions that actually run (Nsight Compute), so the MMA family (what tl.dot lowers to) must do (nearly) all of the FLOPs;
- launches its kernels on `stream`, the current stream when it is called, and does not synchronise, allocate memory, create streams or events, or keep state between calls;
- imports only triton, triton.language, math and torch, and uses torch only for dtypes and the tensors' shapes, strides and pointers: no torch computation or allocation (no matmul, scaled_dot_product_attention or torch.empty), no files, processes, threads, network, ctypes, importlib, exec, eval or getattr;
- is as fast as you can make it: it is timed against the vendor library.

The file is parsed and checked for forbidden means on its syntax tree; Triton compiles its kernels when the entry point is first called (outside the timing); it is run under compute-sanitizer, checked against a trusted reference on fresh random inputs, profiled and timed.

Answer with the whole file in one fenced code block that starts with ```python. Only the last code block of your reply is used; keep any explanation short and outside it. Later turns show you the verdict on your previous file: answer each with the whole corrected file, again in one ```python block.)";
  }

  std::string toolchain(const ArchProfile&) const override {
    return "Triton compiles the kernels for it when the entry point is first called (outside the timing)";
  }

  std::string entry_point(const Family& family) const override {
    return fmt::format("Entry point (docs/triton-abi.md; define it at module level):\n{}",
                       python_signatures(family));
  }

  std::string file_start() const override {
    return "Start the file with import torch, import triton and import triton.language as tl.";
  }

  KitLayout kit(const ArchProfile& arch) const override {
    return {.folder = arch.kit + "/triton",
            .title = arch.marketing + " Triton kit",
            .templates = "templates",
            .template_extension = ".py",
            .templates_intro =
                "The kit's Triton templates follow: idioms to copy into your file and adapt (they "
                "cannot be imported).",
            .no_templates = "No template is shown at this level: write the kernels yourself.",
            .no_template_files = "(the kit has no templates yet)",
            .no_kit = "no parameters, templates or contracts can be shown. Work from the task statement."};
  }

  std::string fence() const override { return "python"; }
  bool takes_fence(const std::string& language) const override {
    static const std::set<std::string> languages = {"", "python", "py", "python3", "triton"};
    return languages.contains(language);
  }
  std::string file_noun() const override { return "Python file"; }
  std::string language_noun() const override { return "Python"; }
};

}  // namespace

const Track& triton_track() {
  static const TritonTrack track;
  return track;
}

}  // namespace ptxbench
