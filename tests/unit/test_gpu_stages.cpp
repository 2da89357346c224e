// How the GPU stages read the runner's result documents (src/runner/protocol.h), without a GPU.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "eval/evaluate.h"
#include "eval/gpu_stages.h"
#include "eval/python_bytecode.h"
#include "eval/runner_call.h"
#include "eval/settings.h"
#include "util/errors.h"
#include "util/files.h"
#include "util/text.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

using namespace ptxbench;
using nlohmann::json;

namespace {

const std::filesystem::path kData = PTXBENCH_TEST_DATA;

const Task& task() {
  static const Task t = load_task_file(std::filesystem::path(PTXBENCH_SOURCE_DIR) / "tasks" / "sm90a" /
                                       "gemm-bf16-n4096-k4096-sm90a.json");
  return t;
}

json failing_check_result() {
  return json::parse(R"({
    "protocol": 1, "mode": "check", "status": "failed", "message": "1 of 2 shapes failed",
    "shapes": [
      {"label": "main", "dims": {"M": 8192, "N": 4096, "K": 4096}, "passed": true, "trials": []},
      {"label": "odd-m", "dims": {"M": 1999, "N": 4096, "K": 4096}, "passed": false, "trials": [
        {"trial": 0, "passed": true, "inputs_unchanged": true, "output_stable": true, "outputs": []},
        {"trial": 1, "passed": false, "inputs_unchanged": false, "changed_inputs": {"A": 3, "B": 0},
         "output_stable": true, "outputs": [
          {"name": "C", "rows": 1999, "cols": 4096, "elements": 8187904, "passed": false, "mismatches": 4096,
           "non_finite": 4096, "max_abs_error": 0, "max_rel_error": 0, "max_error_ratio": 0,
           "first_mismatches": [{"row": 1998, "col": 0, "expected": 0.25, "actual": "nan"}]}]}]}]})");
}

// The runner's result of a sanitize call that saw its one call complete.
json passed_sanitize_result() {
  return json::parse(R"({"protocol": 1, "mode": "sanitize", "status": "passed", "message": "all passed",
    "shapes": [{"label": "small-m", "dims": {"M": 128, "N": 4096, "K": 4096}, "passed": true, "trials": [
      {"trial": 0, "passed": true, "inputs_unchanged": true, "output_stable": true, "outputs": []}]}]})");
}

// As the runner reports it: hidden work fails the timing, with the runner's message.
json timing_result(bool hidden_work) {
  return {
      {"protocol", 1},
      {"mode", "time"},
      {"status", hidden_work ? "failed" : "passed"},
      {"message", hidden_work ? "work outside `stream`: the call plus cudaDeviceSynchronize took 900.0 us "
                                "(median) but the events on `stream` saw 400.0 us"
                              : "timed"},
      {"timing",
       {{"speedup", 0.95},
        {"hidden_work_suspected", hidden_work},
        {"solution",
         {{"event_us", {{"median", 400.0}, {"p10", 390.0}, {"p90", 410.0}}},
          {"wall_us", {{"median", hidden_work ? 900.0 : 420.0}}},
          {"tflops", 687.0}}},
        {"baseline",
         {{"name", "cublaslt"},
          {"event_us", {{"median", 380.0}, {"p10", 378.0}, {"p90", 385.0}}},
          {"wall_us", {{"median", 400.0}}},
          {"tflops", 723.0}}}}}};
}

}  // namespace

TEST(GpuStages, AFailedCheckNamesTheShapeTrialAndFirstMismatch) {
  const StageResult stage = correct_stage_from(failing_check_result(), task());
  EXPECT_EQ(stage.status, StageStatus::failed);
  for (const char* expected :
       {"1 of 2 shapes wrong", "shape odd-m (M=1999 N=4096 K=4096)", "trial 1", "modified its inputs",
        "4096 of 8187904 elements wrong (4096 NaN/Inf)", "[1998,0] expected 0.25 got \"nan\""})
    EXPECT_NE(stage.message.find(expected), std::string::npos) << expected << "\n" << stage.message;
}

// The runner's message says where and quotes the CUDA error (session.cpp, fault()): the stage passes it on.
TEST(GpuStages, RuntimeErrorsCarryTheCudaError) {
  const json result = {
      {"status", "runtime_error"},
      {"message",
       "shape main (M=8192 N=4096 K=4096), trial 0: the solution's work on the stream failed: "
       "cudaErrorIllegalAddress: an illegal memory access was encountered"},
      {"runtime_error",
       {{"where", "trial 0: the solution's work on the stream failed"},
        {"cuda_error", "cudaErrorIllegalAddress"},
        {"cuda_error_string", "an illegal memory access was encountered"}}}};
  const StageResult stage = correct_stage_from(result, task());
  EXPECT_EQ(stage.status, StageStatus::runtime_error);
  EXPECT_EQ(stage.message, result["message"].get<std::string>());
}

TEST(GpuStages, HarnessErrorsSayNothingAboutTheSolution) {
  const StageResult stage =
      correct_stage_from({{"status", "harness_error"}, {"message", "cuBLASLt failed"}}, task());
  EXPECT_EQ(stage.status, StageStatus::harness_error);
  EXPECT_NE(stage.message.find("cuBLASLt failed"), std::string::npos);
  EXPECT_EQ(correct_stage_from(json::object(), task()).status, StageStatus::harness_error);
}

TEST(GpuStages, TimingReportsBothSidesAndTheSpeedup) {
  const StageResult stage = time_stage_from(timing_result(false), task());
  EXPECT_EQ(stage.status, StageStatus::passed);
  EXPECT_NE(stage.message.find("400.0 us (687 TFLOP/s"), std::string::npos) << stage.message;
  EXPECT_NE(stage.message.find("cublaslt 380.0 us"), std::string::npos) << stage.message;
  EXPECT_NE(stage.message.find("0.950x"), std::string::npos) << stage.message;
}

// A memory-bound task is judged against the bandwidth: the verdict gives the share of the measured read
// bandwidth and of the dense peak each side reached at its median.
TEST(GpuStages, TimingGivesTheSharesOfTheRoofline) {
  json result = timing_result(false);
  result["timing"]["roofline"] = {{"peak_tflops", 1070.5}, {"bandwidth_gbs", 4000.0}, {"flops_floor_us", 256.8},
                                  {"bytes_floor_us", 100.0}, {"floor_us", 256.8},       {"applied", true}};
  const StageResult stage = time_stage_from(result, task());
  EXPECT_EQ(stage.status, StageStatus::passed);
  EXPECT_DOUBLE_EQ(stage.details["roofline_share"]["solution"]["bandwidth"].get<double>(), 0.25);  // 100 / 400
  EXPECT_DOUBLE_EQ(stage.details["roofline_share"]["solution"]["peak"].get<double>(), 256.8 / 400);
  EXPECT_DOUBLE_EQ(stage.details["roofline_share"]["baseline"]["bandwidth"].get<double>(), 100.0 / 380);
  EXPECT_NE(stage.message.find("; 25% of the measured read bandwidth, 64% of the dense tensor peak"),
            std::string::npos)
      << stage.message;
  // Without the peak (a request without the tensor rate), the bandwidth alone.
  result["timing"]["roofline"]["flops_floor_us"] = nullptr;
  const StageResult no_peak = time_stage_from(result, task());
  EXPECT_TRUE(no_peak.details["roofline_share"]["solution"]["peak"].is_null());
  EXPECT_EQ(no_peak.message.find("dense tensor peak"), std::string::npos) << no_peak.message;
}

// The runner's steps (phases_s) travel into the stage's details, for the stage times of bench/.
TEST(GpuStages, TheRunnersStepsAreKeptWithTheStage) {
  json result = timing_result(false);
  result["phases_s"] = {{"runner_context", 0.31}, {"solution_process", 1.52}, {"calls", 2.0}};
  EXPECT_EQ(time_stage_from(result, task()).details["phases_s"]["solution_process"], 1.52);
  json check = failing_check_result();
  check["phases_s"] = result["phases_s"];
  EXPECT_EQ(correct_stage_from(check, task()).details["phases_s"]["calls"], 2.0);
}

// A GPU held below its maximum clock while the calls ran: the verdict says at what clock they were timed.
TEST(GpuStages, TimingSaysWhenTheGpuRanBelowItsMaximumClock) {
  json result = timing_result(false);
  result["timing"]["roofline"] = {{"sm_clock_mhz", 1980.0}};
  result["timing"]["sm_clock_during_mhz"] = {{"median", 1755.0}, {"min", 1740.0}, {"max", 1980.0}};
  result["timing"]["sm_clock_below_max"] = true;
  EXPECT_NE(
      time_stage_from(result, task()).message.find("the SM clock ran at 1755 MHz (median) of its 1980 MHz"),
      std::string::npos);
  result["timing"]["sm_clock_below_max"] = false;
  EXPECT_EQ(time_stage_from(result, task()).message.find("SM clock"), std::string::npos);
}

// The GPU slowing itself while the calls ran, by the driver's account (gpu_monitor.h): said with its reasons.
TEST(GpuStages, TimingSaysWhenTheGpuSlowedItself) {
  json result = timing_result(false);
  result["timing"]["gpu_during"] = {{"samples", 12}, {"slowdown_reasons", {"sw_power_cap", "hw_slowdown"}}};
  EXPECT_NE(time_stage_from(result, task())
                .message.find("; the GPU slowed itself during the timed calls (sw_power_cap, hw_slowdown)"),
            std::string::npos);
  result["timing"]["gpu_during"]["slowdown_reasons"] = json::array();
  EXPECT_EQ(time_stage_from(result, task()).message.find("slowed itself"), std::string::npos);
}

TEST(GpuStages, HiddenWorkFailsTheTimeStage) {
  const StageResult stage = time_stage_from(timing_result(true), task());
  EXPECT_EQ(stage.status, StageStatus::failed);
  EXPECT_NE(stage.message.find("work outside `stream`"), std::string::npos) << stage.message;
}

TEST(GpuStages, TimingWithoutABaselineHasNoSpeedup) {
  json result = timing_result(false);
  result["timing"]["baseline"] = nullptr;
  result["timing"]["speedup"] = nullptr;
  result["timing"]["speedup_wall"] = nullptr;
  const StageResult stage = time_stage_from(result, task());
  EXPECT_EQ(stage.status, StageStatus::passed);
  EXPECT_NE(stage.message.find("400.0 us (687 TFLOP/s"), std::string::npos) << stage.message;
  EXPECT_NE(stage.message.find("no baseline yet"), std::string::npos) << stage.message;
}

TEST(GpuStages, ATimeBelowTheRooflineIsAHarnessErrorWithTheRunnersFigures) {
  json result = timing_result(false);
  const std::string message =
      "impossible time: the fastest timed call took 25.7 us, below 0.8 x this task's roofline on this GPU, "
      "256.8 us (274.9 GFLOP at the dense peak of 1071 TFLOP/s: 256.8 us; 100.7 MB of inputs at the measured "
      "read bandwidth of 4000 GB/s: 25.2 us): the timing cannot be trusted";
  result["status"] = "harness_error";
  result["message"] = message;
  result["timing"]["roofline"] = {
      {"peak_tflops", 1070.5},  {"bandwidth_gbs", 4000.0}, {"flops_floor_us", 256.8},
      {"bytes_floor_us", 25.2}, {"floor_us", 256.8},       {"fastest_us", 25.7},
      {"margin", 0.8},          {"applied", true},         {"impossible", true}};
  const StageResult stage = time_stage_from(result, task());
  EXPECT_EQ(stage.status, StageStatus::harness_error);
  EXPECT_EQ(stage.message, message);
  EXPECT_EQ(stage.details["roofline"]["floor_us"], 256.8);
}

TEST(GpuList, EveryGpuLikeTheFirstIsADevice) {
  const GpuInfo two = read_gpu_list("0, NVIDIA H200, 9.0\n1, NVIDIA H200, 9.0\n2, NVIDIA L4, 8.9\n", "");
  ASSERT_TRUE(two.present) << two.absent_reason;
  EXPECT_EQ(two.name, "NVIDIA H200");
  EXPECT_EQ(two.compute_capability, 90);
  EXPECT_EQ(two.devices, (std::vector<std::string>{"0", "1"}));
  // CUDA_VISIBLE_DEVICES chooses them, as given.
  EXPECT_EQ(read_gpu_list("0, NVIDIA H200, 9.0\n", "2,GPU-5c1e").devices,
            (std::vector<std::string>{"2", "GPU-5c1e"}));
  EXPECT_FALSE(read_gpu_list("0, NVIDIA H200\n", "").present);
  EXPECT_FALSE(read_gpu_list("\n", "").present);
}

// The host's settings, read once from the environment a front end is given.
namespace {
Environment environment_of(std::map<std::string, std::string> variables) {
  return [variables](const char* name) -> std::optional<std::string> {
    const auto it = variables.find(name);
    if (it == variables.end()) return std::nullopt;
    return it->second;
  };
}
}  // namespace

TEST(HostSettings, RunnerIsFoundBesideTheBinaryOrFromTheEnvironment) {
  EXPECT_EQ(host_settings(environment_of({{"PTXBENCH_RUNNER", "/opt/runner"}})).runner, "/opt/runner");
  EXPECT_EQ(host_settings(environment_of({})).runner, runner_beside_executable());
}

TEST(HostSettings, EverySettingComesFromItsVariable) {
  const HostSettings defaults = host_settings(environment_of({}));
  EXPECT_EQ(defaults.nvcc, "/usr/local/cuda/bin/nvcc");
  EXPECT_EQ(defaults.python, "python3");
  EXPECT_TRUE(defaults.sandbox.enabled);
  EXPECT_EQ(defaults.sandbox.bwrap, "bwrap");
  EXPECT_EQ(defaults.sandbox_data_bytes, uint64_t{32} << 30);
  EXPECT_EQ(defaults.compile_min_free_bytes, uint64_t{256} << 20);
  const HostSettings s = host_settings(environment_of({{"PTXBENCH_NVCC", "/opt/nvcc"},
                                                       {"PTXBENCH_PYTHON", "/opt/torch/bin/python"},
                                                       {"PTXBENCH_SANDBOX", "off"},
                                                       {"PTXBENCH_BWRAP", "/opt/bwrap"},
                                                       {"PTXBENCH_SANDBOX_DATA_GB", "0"},
                                                       {"PTXBENCH_COMPILE_MIN_FREE_MB", "64"},
                                                       {"CUDA_VISIBLE_DEVICES", "1,3"},
                                                       {"HOME", "/home/someone"},
                                                       {"OPENAI_API_KEY", "sk-not-inherited"}}));
  EXPECT_EQ(s.nvcc, "/opt/nvcc");
  EXPECT_EQ(s.python, "/opt/torch/bin/python");
  EXPECT_FALSE(s.sandbox.enabled);
  EXPECT_EQ(s.sandbox.bwrap, "/opt/bwrap");
  EXPECT_EQ(s.sandbox_data_bytes, 0u);
  EXPECT_EQ(s.compile_min_free_bytes, uint64_t{64} << 20);
  EXPECT_EQ(s.visible_devices, "1,3");
  EXPECT_EQ(s.sandbox.home, "/home/someone");
  EXPECT_EQ(s.sandbox.inherited.at("CUDA_VISIBLE_DEVICES"), "1,3");
  EXPECT_FALSE(s.sandbox.inherited.contains("OPENAI_API_KEY"));
  for (const char* off : {"0", "no"})
    EXPECT_FALSE(host_settings(environment_of({{"PTXBENCH_SANDBOX", off}})).sandbox.enabled) << off;
  EXPECT_THROW(host_settings(environment_of({{"PTXBENCH_SANDBOX_DATA_GB", "lots"}})), ConfigError);
  EXPECT_THROW(host_settings(environment_of({{"PTXBENCH_COMPILE_MIN_FREE_MB", "-1"}})), ConfigError);
  // Disabled, the sandbox resolves without a probe and says why.
  const SandboxStatus none = resolve_sandbox(s.sandbox);
  EXPECT_FALSE(none.requested);
  EXPECT_NE(none.reason.find("PTXBENCH_SANDBOX=off"), std::string::npos);
}

// GPU stages handed no resolved sandbox do not run the solution unconfined.
TEST(GpuStages, AnUnresolvedSandboxRunsNothing) {
  GpuTools tools;
  tools.runner = "/bin/false";
  tools.scratch =
      std::filesystem::temp_directory_path() / ("ptxbench-unresolved-" + std::to_string(getpid()));
  CompileResult compiled;
  compiled.status = CompileResult::Status::ok;
  compiled.library = tools.scratch / "solution.so";
  Verdict verdict;
  run_gpu_stages(compiled, task(), tools, verdict);
  ASSERT_EQ(verdict.stages.size(), 4u);
  for (const auto& stage : verdict.stages) {
    EXPECT_EQ(stage.status, StageStatus::harness_error) << stage.name;
    EXPECT_NE(stage.message.find("not resolved"), std::string::npos) << stage.message;
  }
  std::filesystem::remove_all(tools.scratch);
}

// The faults a wrong output's first mismatches point at, with the values the H200 gave for the broken
// attention variants in tests/data/solutions (bench/attention.md).
namespace {

Task task_named(const std::string& id) {
  return load_task_file(std::filesystem::path(PTXBENCH_SOURCE_DIR) / "tasks" / "sm90a" / (id + ".json"));
}

std::string failure_message(const Task& task, const std::string& output,
                            const std::vector<std::pair<double, double>>& expected_actual) {
  json first = json::array();
  for (const auto& [expected, actual] : expected_actual)
    first.push_back({{"row", 0}, {"col", first.size()}, {"expected", expected}, {"actual", actual}});
  const json result = {{"status", "failed"},
                       {"shapes",
                        {{{"label", "main"},
                          {"passed", false},
                          {"trials",
                           {{{"trial", 0},
                             {"passed", false},
                             {"inputs_unchanged", true},
                             {"output_stable", true},
                             {"outputs",
                              {{{"name", output},
                                {"passed", false},
                                {"mismatches", 100},
                                {"elements", 1000},
                                {"non_finite", 0},
                                {"max_abs_error", 1.0},
                                {"max_rel_error", 1.0},
                                {"first_mismatches", first}}}}}}}}}}};
  return correct_stage_from(result, task).message;
}

}  // namespace

TEST(GpuStages, ALogInBaseTwoIsNamed) {
  const std::string message = failure_message(task_named("attention-fwd-d64-causal-sm90a"), "LSE",
                                              {{-0.31901922821998596, -0.4602474570274353},
                                               {1.894873857498169, 2.733725070953369},
                                               {0.9361090064048767, 1.3505197763442993},
                                               {1.3169044256210327, 1.8998914957046509},
                                               {1.3747177124023438, 1.983298420906067}});
  EXPECT_NE(message.find("Each of the first 5 mismatches of LSE is 1.443x the expected value (1/ln 2"),
            std::string::npos)
      << message;
}

TEST(GpuStages, AStrayScaleFactorIsNamed) {
  const std::string message = failure_message(task_named("attention-bwd-d64-causal-sm90a"), "dV",
                                              {{1.875991702079773, 0.234375},
                                               {-0.8161008358001709, -0.10205078125},
                                               {1.6190961599349976, 0.2021484375},
                                               {0.7066072225570679, 0.08837890625},
                                               {0.7220124006271362, 0.09033203125}});
  EXPECT_NE(message.find("of dV is 0.125x the expected value (1/sqrt(D)"), std::string::npos) << message;
}

TEST(GpuStages, ACountedMaskedKeyIsHintedForCausalLse) {
  const std::vector<std::pair<double, double>> values = {{0.4468733072280884, 8.724889755249023},
                                                         {-0.45632025599479675, 8.767199516296387},
                                                         {1.8834500312805176, 8.766030311584473},
                                                         {1.8000848293304443, 8.881878852844238}};
  EXPECT_NE(failure_message(task_named("attention-fwd-d64-causal-sm90a"), "LSE", values)
                .find("keys the causal mask hides were counted?"),
            std::string::npos);
  // Not for a task without a mask.
  EXPECT_EQ(failure_message(task_named("attention-fwd-d64-sm90a"), "LSE", values).find("causal mask"),
            std::string::npos);
}

TEST(GpuStages, ScatteredErrorsGetNoHint) {
  // half_k.cu on the H200: wrong, but in no fixed proportion.
  const std::string message = failure_message(task(), "C",
                                              {{-0.07918073236942291, 0.16015625},
                                               {-0.8673230409622192, -0.8046875},
                                               {-0.427685409784317, 0.16015625},
                                               {-1.428733229637146, -0.318359375}});
  EXPECT_EQ(message.find("Each of the first"), std::string::npos) << message;
  EXPECT_EQ(message.find("mask"), std::string::npos) << message;
}

// The sanitize stage end to end with stand-ins for the runner and compute-sanitizer (no GPU): the runner
// script answers with an authenticated result, as ptxbench-runner does, that says what $FAKE_RESULT says.
namespace {

namespace fs = std::filesystem;

fs::path write_script(const fs::path& dir, const std::string& name, const std::string& text) {
  const fs::path path = dir / name;
  std::ofstream(path) << text;
  fs::permissions(path, fs::perms::owner_all);
  return path;
}

// A Triton solution: the runner's requests are kept here, and in a profile it says it kept the kernels Triton
// compiled, `kernel_files`, in the request's kernels_dir.
struct FakeTriton {
  std::vector<std::string> kernel_files;
  std::vector<json> requests;  // what the runner was asked, in order
};

// What a run of the stages with the stand-ins is given beyond the runner's result. A tool without a log of
// its own writes a clean report.
struct FakeRun {
  std::vector<std::string> stages = {"sanitize"};
  std::map<std::string, std::string> tool_logs;  // the fake compute-sanitizer's log by --tool name
  std::string ncu_csv;                           // with it, a fake ncu writes it as its log
  std::vector<std::string> compiled_kernels;     // the compile stage's
  std::string sass;                              // with it, a fake cuobjdump prints it as the SASS
  FakeTriton* triton = nullptr;
  GpuGate* gate = nullptr;
  double limit_s = 30;
  int memcheck_hangs = 0;                 // memcheck's next runs that hang
  bool ncu_hangs = false;                 // the fake ncu's run hangs
  std::vector<json>* requests = nullptr;  // where the runner's requests are kept
  const Task* on_task = nullptr;          // the default task() otherwise
  size_t sass_listing_limit = GpuTools{}.sass_listing_limit;
  // With it, a fake nvidia-smi prints these lines after the time of day (nvidia-smi's timestamp) and waits.
  std::vector<std::string> nvidia_smi_lines;
  bool profile_sections = false;
  // Each sanitizer waits up to 5 s for the fake ncu to start, and leaves "saw-ncu-TOOL" when it did.
  bool sanitizers_wait_for_ncu = false;
  // Where the files the fake tools left are kept (by name, with their text): "ncu-args", "saw-ncu-*".
  std::map<std::string, std::string>* files_left = nullptr;
};

Verdict stages_with_fake_tools(const json& result, const FakeRun& run = {}) {
  const fs::path dir = fs::temp_directory_path() / ("ptxbench-fake-tools-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "scratch");
  std::ofstream(dir / "result.json") << result.dump();
  for (const auto& [tool, log] : run.tool_logs) std::ofstream(dir / (tool + ".log")) << log;
  // memcheck's next runs that hang, one file each (the tools run at once; memcheck's own runs one by one)
  for (int i = 0; i < run.memcheck_hangs; ++i) std::ofstream(dir / ("hang-memcheck-" + std::to_string(i)));
  if (run.ncu_hangs) std::ofstream(dir / "hang-ncu");
  if (run.sanitizers_wait_for_ncu) std::ofstream(dir / "wait-for-ncu");
  if (run.triton)
    std::ofstream(dir / "kernels.txt") << fmt::format("{}", fmt::join(run.triton->kernel_files, "\n"));
  // Reads the request up to NUL and the key after it; prints the result and its HMAC tag. Keeps the requests
  // and, where one asks for the kernels Triton compiled, writes them and lists them in the result.
  const fs::path runner = write_script(dir, "runner", R"(#!/usr/bin/env python3
import hashlib, hmac, json, os, subprocess, sys
here = os.path.dirname(os.path.abspath(__file__))
data = sys.stdin.buffer.read()
request, _, key = data.partition(b"\0")
with open(os.path.join(here, "requests.jsonl"), "a") as kept:
    kept.write(request.decode() + "\n")
document = open(os.path.join(here, "result.json")).read()
asked = json.loads(request)
# The solution process, under the tool that starts it (`true` stands for the worker).
if asked.get("solution_wrapper"):
    subprocess.run(asked["solution_wrapper"] + ["true"])
# The check and time parts of one process: the given result as each (the time part when the check passed),
# unless it has its parts already.
if asked["mode"] == "check_then_time" and "check" not in json.loads(document):
    part = json.loads(document)
    whole = dict(part, check=part)
    if part.get("status") == "passed":
        whole["time"] = part
    document = json.dumps(whole)
if asked.get("kernels_dir"):
    os.makedirs(asked["kernels_dir"], exist_ok=True)
    names = open(os.path.join(here, "kernels.txt")).read().split()
    for name in names:
        open(os.path.join(asked["kernels_dir"], name), "w").write("cubin")
    result = json.loads(document)
    result["compiled_kernels"] = names
    document = json.dumps(result)
document += "\n"
tag = hmac.new(key.strip(), document.encode(), hashlib.sha256).hexdigest()
sys.stdout.write(document + "ptxbench-mac " + tag + "\n")
)");
  // Writes the tool's log (or a clean report) to --log-file and runs the command after the options.
  const fs::path sanitizer = write_script(dir, "compute-sanitizer", R"(#!/bin/sh
here=$(dirname "$0")
while [ $# -gt 1 ]; do
  case "$1" in
    --log-file) log="$2"; shift 2 ;;
    --tool) tool="$2"; shift 2 ;;
    --*) shift 2 ;;
    *) break ;;
  esac
done
for hang in "$here"/hang-$tool-*; do
  if [ -f "$hang" ]; then rm "$hang"; sleep 60; fi
  break
done
if [ -f "$here/wait-for-ncu" ]; then
  for i in $(seq 50); do
    if [ -f "$here/ncu-started" ]; then touch "$here/saw-ncu-$tool"; break; fi
    sleep 0.1
  done
fi
if [ -f "$here/$tool.log" ]; then cp "$here/$tool.log" "$log"
else printf '========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n' > "$log"; fi
exec "$@"
)");
  std::ofstream(dir / "ncu.csv") << run.ncu_csv;
  const fs::path ncu = write_script(dir, "ncu", R"(#!/bin/sh
here=$(dirname "$0")
touch "$here/ncu-started"
echo "$@" > "$here/ncu-args"
while [ $# -gt 1 ]; do
  case "$1" in
    --log-file) log="$2"; shift 2 ;;
    --csv) shift ;;
    --*) shift 2 ;;
    *) break ;;
  esac
done
if [ -f "$here/hang-ncu" ]; then sleep 60; fi
cp "$here/ncu.csv" "$log"
exec "$@"
)");
  std::string smi_script = "#!/bin/sh\n";
  for (const std::string& line : run.nvidia_smi_lines)
    smi_script += "echo \"$(date '+%Y/%m/%d %H:%M:%S.%3N'), " + line + "\"\n";
  const fs::path nvidia_smi = write_script(dir, "nvidia-smi", smi_script + "exec sleep 60\n");
  std::ofstream(dir / "solution.sass") << run.sass;
  const fs::path cuobjdump =
      write_script(dir, "cuobjdump", "#!/bin/sh\ncat \"$(dirname \"$0\")/solution.sass\"\n");
  CompileResult compiled;
  compiled.status = CompileResult::Status::ok;
  compiled.library = dir / "solution.so";
  compiled.cubin = dir / "solution.cubin";
  if (run.triton) {
    compiled.library = dir / "solution.py";
    compiled.cubin.clear();
    compiled.compiles_kernels = false;
    compiled.runner_track = "triton";
  }
  for (const auto& kernel : run.compiled_kernels) compiled.kernels.push_back({.mangled = kernel});
  GpuTools tools;
  tools.runner = runner;
  tools.compute_sanitizer = sanitizer;
  tools.ncu = run.ncu_csv.empty() ? dir / "absent" : ncu;
  tools.cuobjdump = run.sass.empty() ? dir / "absent" : cuobjdump;
  tools.sass_listing_limit = run.sass_listing_limit;
  tools.nvidia_smi = run.nvidia_smi_lines.empty() ? fs::path() : nvidia_smi;
  tools.scratch = dir / "scratch";
  tools.set_all_limits(run.limit_s);
  tools.stages = run.stages;
  tools.gate = run.gate;
  tools.profile_sections = run.profile_sections;
  tools.sandbox = resolve_sandbox({.enabled = false});
  tools.project_root = dir;
  Verdict verdict;
  run_gpu_stages(compiled, run.on_task ? *run.on_task : task(), tools, verdict);
  std::vector<json>* requests = run.requests ? run.requests : run.triton ? &run.triton->requests : nullptr;
  if (requests) {
    std::ifstream kept(dir / "requests.jsonl");
    for (std::string line; std::getline(kept, line);) requests->push_back(json::parse(line));
  }
  if (run.files_left)
    for (const fs::directory_entry& entry : fs::directory_iterator(dir))
      if (entry.is_regular_file()) {
        std::ifstream file(entry.path());
        (*run.files_left)[entry.path().filename().string()] =
            std::string(std::istreambuf_iterator<char>(file), {});
      }
  fs::remove_all(dir);
  return verdict;
}

const StageResult& stage_named(const Verdict& verdict, const std::string& name) {
  for (const StageResult& stage : verdict.stages)
    if (stage.name == name) return stage;
  throw std::runtime_error("no stage " + name);
}

}  // namespace

TEST(GpuStages, ASolutionThatNeverRanIsARuntimeErrorInSanitize) {
  // The solution process ended while loading the library: no shape ran.
  const json result = {
      {"protocol", 1},
      {"mode", "sanitize"},
      {"status", "runtime_error"},
      {"message", "the solution process ended (it exited with status 0)"},
      {"runtime_error", {{"where", "the solution process ended (it exited with status 0)"}}}};
  const Verdict verdict = stages_with_fake_tools(result);
  const StageResult& sanitize = stage_named(verdict, "sanitize");
  EXPECT_EQ(sanitize.status, StageStatus::runtime_error) << sanitize.message;
  EXPECT_NE(
      sanitize.message.find("the solution never ran: the solution process ended (it exited with status 0)"),
      std::string::npos)
      << sanitize.message;
}

TEST(GpuStages, AWritePastTheEndFailsSanitizeWhenTheToolSawNothing) {
  const json result = json::parse(R"({
    "protocol": 1, "mode": "sanitize", "status": "failed", "message": "wrote past the end",
    "shapes": [{"label": "small-m", "dims": {"M": 128, "N": 4096, "K": 4096}, "passed": false, "trials": [
      {"trial": 0, "passed": false, "inputs_unchanged": true, "output_stable": true,
       "written_past_end": {"C": 2}, "outputs": []}]}]})");
  const Verdict verdict = stages_with_fake_tools(result);
  const StageResult& sanitize = stage_named(verdict, "sanitize");
  EXPECT_EQ(sanitize.status, StageStatus::failed) << sanitize.message;
  EXPECT_NE(
      sanitize.message.find("memcheck: no error reported by the tool, but the solution wrote outside C (2 "
                            "bytes)"),
      std::string::npos)
      << sanitize.message;
}

// A call that faulted on the GPU in the correct stage, at a shape the sanitize stage's one call did not
// cover: memcheck runs on that shape alone, and the stage says in which kernel, at which line, which thread
// and access. The debugging feedback a model gets (issue 34).
TEST(GpuStages, ACallThatFaultedIsLocatedOnItsShape) {
  const json faulted = json::parse(R"({
    "protocol": 1, "mode": "check", "status": "runtime_error",
    "message": "shape odd-m (M=1999 N=4096 K=4096), trial 1: the solution's work on the stream failed: cudaErrorMisalignedAddress: misaligned address",
    "runtime_error": {"shape": "odd-m", "trial": 1, "where": "trial 1: the solution's work on the stream failed",
                      "return_code": null, "cuda_error": "cudaErrorMisalignedAddress", "cuda_error_string": "misaligned address",
                      "device_fault": true},
    "shapes": []})");
  std::vector<json> requests;
  const Verdict verdict = stages_with_fake_tools(
      faulted, {.stages = {"correct"},
                .tool_logs = {{"memcheck", read_file(kData / "sanitizer" / "memcheck_misaligned.txt")}},
                .requests = &requests});
  const StageResult& correct = stage_named(verdict, "correct");
  EXPECT_EQ(correct.status, StageStatus::runtime_error);
  EXPECT_NE(correct.message.find("cudaErrorMisalignedAddress"), std::string::npos) << correct.message;
  EXPECT_NE(correct.message.find("where (memcheck on that shape): "), std::string::npos) << correct.message;
  EXPECT_NE(correct.message.find("sanitizer_cases.cu:33"), std::string::npos) << correct.message;
  EXPECT_EQ(correct.details["located"]["kernel"], "misaligned_kernel(const char *, float *)");
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[1]["mode"], "sanitize");
  ASSERT_EQ(requests[1]["shapes"].size(), 1u);
  EXPECT_EQ(requests[1]["shapes"][0]["label"], "odd-m");
  EXPECT_NE(requests[1]["solution_wrapper"].dump().find("memcheck"), std::string::npos);

  // A runtime error that is no fault on the GPU (a non-zero return): nothing to locate, no second run.
  json returned = faulted;
  returned["runtime_error"]["device_fault"] = false;
  std::vector<json> asked;
  (void)stages_with_fake_tools(returned, {.stages = {"correct"}, .requests = &asked});
  EXPECT_EQ(asked.size(), 1u);

  // Memcheck finds nothing there: the stage says what it said before, nothing made up.
  const Verdict unlocated = stages_with_fake_tools(faulted, {.stages = {"correct"}});
  EXPECT_EQ(stage_named(unlocated, "correct").message, faulted["message"].get<std::string>());
  EXPECT_FALSE(stage_named(unlocated, "correct").details.contains("located"));
}

// The failure fast.cu's kernel with its original host code showed on the H200: no tool saw a memory error,
// but the call failed. The sanitize stage fails with it, whatever the later stages see.
TEST(GpuStages, ACallThatFailsUnderTheSanitizerFailsTheStage) {
  const json failed_call = json::parse(R"({
    "protocol": 1, "mode": "sanitize", "status": "runtime_error",
    "message": "shape small-m (M=128 N=4096 K=4096), trial 0: the solution's work on the stream failed: cudaErrorLaunchFailure: unspecified launch failure",
    "runtime_error": {"shape": "small-m", "trial": 0, "where": "trial 0: the solution's work on the stream failed",
                      "return_code": null, "cuda_error": "cudaErrorLaunchFailure", "cuda_error_string": "unspecified launch failure"},
    "shapes": [{"label": "small-m", "dims": {"M": 128, "N": 4096, "K": 4096}, "passed": true, "trials": []}]})");
  const Verdict verdict = stages_with_fake_tools(failed_call);
  const StageResult& sanitize = stage_named(verdict, "sanitize");
  EXPECT_EQ(sanitize.status, StageStatus::runtime_error) << sanitize.message;
  EXPECT_NE(sanitize.message.find("memcheck: no error found by the tool, but the call failed: shape small-m"),
            std::string::npos)
      << sanitize.message;
  EXPECT_NE(sanitize.message.find("cudaErrorLaunchFailure"), std::string::npos) << sanitize.message;
  EXPECT_EQ(verdict.overall(), OverallStatus::failed);
  // Found by the first tool: the others are not run for it.
  EXPECT_FALSE(sanitize.details.contains("synccheck")) << sanitize.details.dump();
}

// compute-sanitizer's "Error: process didn't terminate successfully" says how the solution process ended, not
// that a hazard was found (racecheck on the SIMT backward of attention-bwd-gqa32x4-d128-causal, H100,
// 2026-12-07: "failed at sanitize: racecheck: 0 error(s)"). The runner's result decides: a call it saw
// complete passes, with the tool's note kept; a call it saw fail is that failure.
TEST(GpuStages, AnAbnormalEndUnderTheSanitizerIsNoHazard) {
  const std::string ended_badly =
      "========= COMPUTE-SANITIZER\n"
      "========= Error: process didn't terminate successfully\n"
      "========= Target application returned an error\n"
      "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n";
  const json passed = passed_sanitize_result();
  const Verdict completed = stages_with_fake_tools(passed, {.tool_logs = {{"racecheck", ended_badly}}});
  const StageResult& sanitize = stage_named(completed, "sanitize");
  EXPECT_EQ(sanitize.status, StageStatus::passed) << sanitize.message;
  EXPECT_EQ(sanitize.details["racecheck"]["target_ended_abnormally"], true) << sanitize.details.dump();
  EXPECT_EQ(sanitize.details["racecheck"]["errors_printed"], 0) << sanitize.details.dump();
  EXPECT_NE(sanitize.details["racecheck"]["ended"]["tool_log"].get<std::string>().find("didn't terminate"),
            std::string::npos)
      << sanitize.details.dump();
  EXPECT_TRUE(sanitize.details["racecheck"]["ended"].contains("runner_stderr")) << sanitize.details.dump();
  EXPECT_FALSE(sanitize.details["memcheck"].contains("ended")) << sanitize.details.dump();

  const json failed_call = json::parse(R"j({
    "protocol": 1, "mode": "sanitize", "status": "runtime_error",
    "message": "shape small-m (M=128 N=4096 K=4096), trial 0: the solution process ended in the call (it was killed by signal 11 (Segmentation fault))",
    "runtime_error": {"shape": "small-m", "trial": 0, "where": "trial 0: the solution process ended in the call",
                      "return_code": null, "cuda_error": null, "cuda_error_string": null},
    "shapes": [{"label": "small-m", "dims": {"M": 128, "N": 4096, "K": 4096}, "passed": false,
                "trials": []}]})j");
  std::map<std::string, std::string> every_tool;
  for (const char* tool : {"memcheck", "synccheck", "racecheck"}) every_tool[tool] = ended_badly;
  const Verdict crashed = stages_with_fake_tools(failed_call, {.tool_logs = every_tool});
  const StageResult& crashed_stage = stage_named(crashed, "sanitize");
  EXPECT_EQ(crashed_stage.status, StageStatus::runtime_error) << crashed_stage.message;
  EXPECT_NE(
      crashed_stage.message.find("memcheck: no error found by the tool, but the call failed: shape small-m"),
      std::string::npos)
      << crashed_stage.message;
  EXPECT_NE(crashed_stage.message.find("Segmentation fault"), std::string::npos) << crashed_stage.message;
  EXPECT_EQ(crashed.overall(), OverallStatus::failed);
}

// State kept between calls (solution_worker.cpp, device_state.h): the runner's status is failed, with the
// call's fault; the stage says what changed.
TEST(GpuStages, StateKeptBetweenCallsFailsTheStageThatSawIt) {
  const json kept = json::parse(R"({
    "protocol": 1, "mode": "check", "status": "failed",
    "message": "shape main (M=8192 N=4096 K=4096), trial 0: state kept between calls: the call changed the persisting L2 limit from 0 to 16777216",
    "runtime_error": {"shape": "main", "trial": 0, "where": "trial 0: state kept between calls", "return_code": null,
                      "cuda_error": null, "cuda_error_string": null},
    "shapes": [{"label": "main", "dims": {"M": 8192, "N": 4096, "K": 4096}, "passed": true, "trials": []}]})");
  const Verdict verdict = stages_with_fake_tools(kept, {.stages = {"sanitize", "correct"}});
  for (const char* name : {"sanitize", "correct"}) {
    const StageResult& stage = stage_named(verdict, name);
    EXPECT_EQ(stage.status, StageStatus::failed) << name << ": " << stage.message;
    EXPECT_NE(
        stage.message.find("state kept between calls: the call changed the persisting L2 limit from 0 to "
                           "16777216"),
        std::string::npos)
        << name << ": " << stage.message;
  }
  EXPECT_EQ(verdict.overall(), OverallStatus::failed);
}

// A tool that could not run is the harness's failure: the later stages are not run, and the verdict is a
// harness error, never the solution's failure.
TEST(GpuStages, AHarnessErrorSkipsTheLaterStagesAndDecidesTheVerdict) {
  const json passed = passed_sanitize_result();
  const Verdict verdict = stages_with_fake_tools(
      passed, {.stages = {"sanitize", "correct", "instructions", "time"}, .tool_logs = {{"racecheck", ""}}});
  const StageResult& sanitize = stage_named(verdict, "sanitize");
  EXPECT_EQ(sanitize.status, StageStatus::harness_error) << sanitize.message;
  EXPECT_NE(sanitize.message.find("racecheck could not run"), std::string::npos) << sanitize.message;
  for (const char* name : {"correct", "instructions", "time"}) {
    const StageResult& later = stage_named(verdict, name);
    EXPECT_EQ(later.status, StageStatus::skipped) << name;
    EXPECT_EQ(later.message, "not run: the sanitize stage could not be judged (a harness error)") << name;
  }
  EXPECT_EQ(verdict.overall(), OverallStatus::error);
}

// Every tool runs, each on its own, and each one's report is kept.
TEST(GpuStages, SanitizeRunsMemcheckSynccheckAndRacecheck) {
  const json passed = passed_sanitize_result();
  const Verdict verdict = stages_with_fake_tools(passed);
  const StageResult& sanitize = stage_named(verdict, "sanitize");
  EXPECT_EQ(sanitize.status, StageStatus::passed) << sanitize.message;
  for (const char* tool : {"memcheck", "synccheck", "racecheck"})
    EXPECT_TRUE(sanitize.details.contains(tool)) << tool << ": " << sanitize.details.dump();
}

// The attention tasks' vendor baseline is a module the runner runs in python beside the solution and times
// with it: the time stage's request names it (and the python), no other stage's does, and a GEMM task's time
// request does not (cuBLASLt is the runner's own).
TEST(GpuStages, AnAttentionTasksTimeRequestNamesTheVendorBaselineModule) {
  const json passed = json::parse(R"({"protocol": 1, "mode": "check", "status": "passed", "message": "ok",
    "shapes": []})");
  const auto requests_of = [&](const Task& on_task) {
    std::vector<json> requests;
    stages_with_fake_tools(passed,
                           {.stages = {"correct", "time"}, .requests = &requests, .on_task = &on_task});
    return requests;
  };
  const Task attention = task_named("attention-fwd-d64-sm90a");
  ASSERT_EQ(attention.baseline, "vendor-attention");
  // The correct stage's process times the solution too (check_then_time): one request, which names it.
  const std::vector<json> requests = requests_of(attention);
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0]["mode"], "check_then_time");
  EXPECT_EQ(fs::path(requests[0].value("baseline_module", "")).filename(), "attention_cudnn.py");
  EXPECT_TRUE(fs::path(requests[0].value("baseline_module", "")).is_absolute());
  EXPECT_EQ(requests[0].value("python", ""), "python3");
  for (const json& request : requests_of(task())) EXPECT_FALSE(request.contains("baseline_module"));
  // A check alone does not.
  std::vector<json> check_alone;
  stages_with_fake_tools(passed, {.stages = {"correct"}, .requests = &check_alone, .on_task = &attention});
  ASSERT_EQ(check_alone.size(), 1u);
  EXPECT_EQ(check_alone[0]["mode"], "check");
  EXPECT_FALSE(check_alone[0].contains("baseline_module")) << check_alone[0].dump();
  EXPECT_FALSE(check_alone[0].contains("python")) << check_alone[0].dump();
}

// nvidia-smi samples the GPUs while the correct stage's process runs; the time stage keeps those of the
// runner's GPU within its timed window, and says the power cap the driver reported then.
TEST(GpuStages, TheTimeStageKeepsTheDriversSamplesOfItsGpuDuringTheCalls) {
  json both =
      json::parse(R"({"protocol": 1, "mode": "check_then_time", "status": "passed", "message": "timed",
    "device": {"name": "NVIDIA H200", "pci_bus_id": "0000:19:00.0"},
    "check": {"status": "passed", "message": "all 9 trials over 3 shape(s) passed", "shapes": []},
    "time": {"status": "passed", "message": "timed",
             "timing": {"solution": {"event_us": {"median": 100, "p10": 99, "p90": 101}, "tflops": 500},
                        "timed_window_unix_s": [0, 4e9]}}})");
  const Verdict verdict = stages_with_fake_tools(
      both, {.stages = {"correct", "time"},
             .nvidia_smi_lines = {"00000000:19:00.0, 650.5, 1980, 0x0000000000000000, 50",
                                  "00000000:19:00.0, 700.0, 1710, 0x0000000000000004, 52",
                                  "00000000:3B:00.0, 70.0, 345, 0x0000000000000048, 30"}});
  const StageResult& time = stage_named(verdict, "time");
  EXPECT_EQ(time.status, StageStatus::passed) << time.message;
  const json during = time.details.value("gpu_during", json());
  ASSERT_TRUE(during.is_object()) << time.details.dump();
  EXPECT_EQ(during["samples"], 2);  // the other GPU's sample is not this one's
  EXPECT_DOUBLE_EQ(during["power_w"]["max"].get<double>(), 700.0);
  EXPECT_DOUBLE_EQ(during["sm_clock_mhz"]["min"].get<double>(), 1710.0);
  EXPECT_EQ(during["slowdown_reasons"], json::array({"sw_power_cap"}));
  EXPECT_NE(time.message.find("the GPU slowed itself during the timed calls (sw_power_cap)"),
            std::string::npos)
      << time.message;
  // Without nvidia-smi the stage is the same, without the samples.
  const StageResult& unsampled =
      stage_named(stages_with_fake_tools(both, {.stages = {"correct", "time"}}), "time");
  EXPECT_EQ(unsampled.status, StageStatus::passed);
  EXPECT_FALSE(unsampled.details.contains("gpu_during"));
}

// The correct and time stages share one runner process (protocol.h, check_then_time): each stage reports its
// own part, with its own seconds, and the process gets both stages' limits, which the runner keeps part by
// part.
TEST(GpuStages, TheCorrectStagesProcessTimesTheSolutionForTheTimeStage) {
  const json both = json::parse(R"({"protocol": 1, "mode": "check_then_time", "status": "passed",
    "message": "timed", "phases_s": {"check_calls": 0.5, "time_calls": 1.5},
    "check": {"status": "passed", "message": "all 9 trials over 3 shape(s) passed", "shapes": [],
              "wall_s": 1.25},
    "time": {"status": "passed", "message": "timed", "wall_s": 2.5,
             "timing": {"solution": {"event_us": {"median": 100, "p10": 99, "p90": 101}, "tflops": 500},
                        "baseline": {"name": "cublaslt", "event_us": {"median": 90, "p10": 89, "p90": 91},
                                     "tflops": 550},
                        "speedup": 0.9}}})");
  std::vector<json> requests;
  const Verdict verdict =
      stages_with_fake_tools(both, {.stages = {"correct", "time"}, .requests = &requests});
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0]["mode"], "check_then_time");
  EXPECT_EQ(requests[0]["check_limit_s"], 30);
  EXPECT_EQ(requests[0]["time_limit_s"], 30);
  EXPECT_EQ(requests[0]["debugger"], "cuda-gdb");
  const StageResult& correct = stage_named(verdict, "correct");
  const StageResult& time = stage_named(verdict, "time");
  EXPECT_EQ(correct.status, StageStatus::passed) << correct.message;
  EXPECT_DOUBLE_EQ(correct.wall_s, 1.25);
  EXPECT_EQ(time.status, StageStatus::passed) << time.message;
  EXPECT_DOUBLE_EQ(time.wall_s, 2.5);
  EXPECT_NE(time.message.find("0.900x"), std::string::npos) << time.message;
  ASSERT_TRUE(verdict.speedup.has_value());
  EXPECT_DOUBLE_EQ(*verdict.speedup, 0.9);
  EXPECT_EQ(time.details["phases_s"]["time_calls"], 1.5);
}

// A time part that failed only its claims check while the host was shared is run again alone, by the time
// stage in a process of its own (rerun_alone_because).
TEST(GpuStages, ATimePartThatFailedItsClaimsIsTimedAgainInAProcessOfItsOwn) {
  const json timing = json::parse(R"({"solution": {"event_us": {"median": 100, "p10": 99, "p90": 101},
    "tflops": 500}, "baseline": {"name": "cublaslt", "event_us": {"median": 90, "p10": 89, "p90": 91},
    "tflops": 550}, "speedup": 0.9, "times_verified": true, "hidden_work_suspected": false,
    "recheck": {"passed": true}})");
  json doubted = timing;
  doubted["times_verified"] = false;
  // The top level, a time result that passed, is what a time request of its own gets from the fake.
  const json both = {
      {"protocol", 1},
      {"mode", "check_then_time"},
      {"status", "passed"},
      {"message", "timed"},
      {"timing", timing},
      {"check", {{"status", "passed"}, {"message", "ok"}, {"shapes", json::array()}}},
      {"time", {{"status", "failed"}, {"message", "reported times do not fit"}, {"timing", doubted}}}};
  GpuGate gate;
  std::vector<json> requests;
  const Verdict verdict =
      stages_with_fake_tools(both, {.stages = {"correct", "time"}, .gate = &gate, .requests = &requests});
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0]["mode"], "check_then_time");
  EXPECT_EQ(requests[1]["mode"], "time");
  const StageResult& time = stage_named(verdict, "time");
  EXPECT_EQ(time.status, StageStatus::passed) << time.message;
  EXPECT_EQ(time.details.value("claims_failed_sharing_the_host", ""), "reported times do not fit")
      << time.details.dump();
}

// A part that ran out of its limit in the runner is that stage's time-out, with the call it ran out in; the
// stages after it do not run.
TEST(GpuStages, APartThatRanOutOfItsLimitIsItsStagesTimeout) {
  const json hung = json::parse(R"({"protocol": 1, "mode": "check_then_time", "status": "timeout",
    "message": "shape main, trial 0: the solution did not answer within the correct stage's 30 s and was killed",
    "check": {"status": "timeout", "message":
              "shape main, trial 0: the solution did not answer within the correct stage's 30 s and was killed",
              "runtime_error": {"shape": "main", "trial": 0, "where": "trial 0", "device_fault": false}}})");
  std::vector<json> requests;
  const Verdict verdict =
      stages_with_fake_tools(hung, {.stages = {"correct", "instructions", "time"}, .requests = &requests});
  EXPECT_EQ(requests.size(), 1u);
  const StageResult& correct = stage_named(verdict, "correct");
  EXPECT_EQ(correct.status, StageStatus::timeout);
  EXPECT_NE(correct.message.find("trial 0: the solution did not answer within the correct stage's 30 s"),
            std::string::npos)
      << correct.message;
  EXPECT_EQ(stage_named(verdict, "instructions").message, "not run: the correct stage timed out");
  EXPECT_EQ(stage_named(verdict, "time").message, "not run: the correct stage timed out");
  EXPECT_FALSE(correct.details.contains("hang")) << "no debugger output, no report";

  // What cuda-gdb, attached by the runner before the kill, said of the process: where its threads wait.
  json debugged = hung;
  const auto correct_of = [&] {
    return stage_named(stages_with_fake_tools(debugged, {.stages = {"correct", "time"}}), "correct");
  };
  debugged["check"]["runtime_error"]["debugger_output"] = read_file(kData / "cuda-gdb" / "attached_hang.txt");
  const StageResult located = correct_of();
  EXPECT_EQ(located.status, StageStatus::timeout);
  EXPECT_NE(
      located.message.find("\nwhere its threads wait (cuda-gdb, attached to the call run again): kernel "
                           "wait_for_flag<<<(4,1,1),(128,1,1)>>>: 128 threads at hang.cu:5"),
      std::string::npos)
      << located.message;
  EXPECT_EQ(located.details["hang"]["sites"][0]["location"], "hang.cu:5") << located.details.dump();
  // Attached, but the CUDA side could not be debugged on the host: the message says so and why.
  debugged["check"]["runtime_error"]["debugger_output"] = read_file(kData / "cuda-gdb" / "attach_failed.txt");
  const StageResult unknown = correct_of();
  EXPECT_NE(unknown.message.find("\nwhere its threads wait is not known: cuda-gdb could not debug the GPU side "
                                 "on this host (\"The CUDA driver hit an internal error while attaching"),
            std::string::npos)
      << unknown.message;
  debugged["check"]["runtime_error"]["debugger_output"] = read_file(kData / "cuda-gdb" / "no_device.txt");
  const StageResult no_device = correct_of();
  EXPECT_NE(no_device.message.find("cuda-gdb could not debug the GPU side on this host (\"fatal: "
                                   "CUDBG_ERROR_NO_DEVICE_AVAILABLE (39)"),
            std::string::npos)
      << no_device.message;
  // No output, and the runner's reason: said as it is.
  debugged["check"]["runtime_error"].erase("debugger_output");
  debugged["check"]["runtime_error"]["debugger_failure"] =
      "the call run again for the debugger answered within 3 s";
  const StageResult answered = correct_of();
  EXPECT_NE(
      answered.message.find(
          "\nwhere its threads wait is not known: the call run again for the debugger answered within 3 s"),
      std::string::npos)
      << answered.message;
  EXPECT_EQ(answered.details["hang"]["debugger_failure"],
            "the call run again for the debugger answered within 3 s");
  // The time part's limit likewise, after a check that passed.
  json late = hung;
  late["check"] = {{"status", "passed"}, {"message", "ok"}, {"shapes", json::array()}};
  late["time"] = {{"status", "timeout"},
                  {"message",
                   "shape main, timed call 7: the solution did not answer within the time stage's "
                   "30 s and was killed"}};
  const Verdict timed_out = stages_with_fake_tools(late, {.stages = {"correct", "time"}});
  EXPECT_EQ(stage_named(timed_out, "correct").status, StageStatus::passed);
  EXPECT_EQ(stage_named(timed_out, "time").status, StageStatus::timeout);
  EXPECT_NE(stage_named(timed_out, "time").message.find("timed call 7"), std::string::npos);
}

// The baseline module runs in the runner's sandbox: the module and the python that runs it are readable there
// (a project in a home folder is otherwise hidden), for an attention task and not for a CUDA GEMM.
TEST(GpuStages, TheSandboxOfAnAttentionTaskReadsTheBaselineModuleAndItsPython) {
  GpuTools tools;
  tools.scratch = fs::temp_directory_path() / "ptxbench-data" / "scratch" / "1";
  tools.runner = "/opt/ptxbench/ptxbench-runner";
  tools.project_root = "/home/user/ptxbench";
  const fs::path module = "/home/user/ptxbench/baselines/attention_cudnn.py";
  tools.python = "/usr/bin/python3";
  tools.sandbox = resolve_sandbox({.enabled = false});
  CompileResult compiled;
  compiled.library = "/data/cache/compile/abc/solution.so";
  const auto readable = [&](const Task& on_task) {
    return sandbox_setup(compiled, on_task, tools).policy.readable;
  };
  const auto has = [](const std::vector<fs::path>& paths, const fs::path& path) {
    return std::find(paths.begin(), paths.end(), path) != paths.end();
  };
  const std::vector<fs::path> attention = readable(task_named("attention-bwd-d64-sm90a"));
  EXPECT_TRUE(has(attention, module));
  EXPECT_TRUE(has(attention, "/usr"));  // the python's installation
  const std::vector<fs::path> gemm = readable(task());
  EXPECT_FALSE(has(gemm, module));
  EXPECT_FALSE(has(gemm, "/usr"));
}

// The bytecode of the judge's Python processes (python_bytecode.h): written once by a process of the judge's
// own, into a folder keyed by the interpreter and its packages' versions, and read-only to the sandboxed
// processes, which read it for an attention task (its baseline runs in python) and not for a CUDA GEMM.
TEST(GpuStages, TheJudgesPythonBytecodeIsWrittenOnceAndOnlyReadInTheSandbox) {
  const fs::path dir = fs::temp_directory_path() / ("ptxbench-bytecode-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  // A python that prints its versions (-I -c ...), or writes one module's bytecode into its -X
  // pycache_prefix.
  const fs::path python = write_script(dir, "python3", R"sh(#!/bin/sh
echo "$1 $2" >> "$(dirname "$0")/calls"
if [ "$2" = "-X" ]; then
  prefix=${3#pycache_prefix=}
  mkdir -p "$prefix/site-packages/torch" && echo bytecode > "$prefix/site-packages/torch/__init__.cpython-312.pyc"
  exit 0
fi
echo "3.12.3 (main)"; echo "torch 2.11.0"
)sh");
  const fs::path root = dir / "cache" / "python";
  const fs::path folder = python_bytecode(python.string(), root);
  ASSERT_FALSE(folder.empty());
  EXPECT_EQ(folder.parent_path(), root);
  EXPECT_TRUE(fs::exists(folder / "site-packages" / "torch" / "__init__.cpython-312.pyc"));
  EXPECT_EQ(read_file(folder / "complete"), "3.12.3 (main)\ntorch 2.11.0\n");
  EXPECT_EQ(python_bytecode(python.string(), root), folder);  // remembered: no second warm-up
  EXPECT_EQ(split_lines(read_file(dir / "calls")).size(), 2u) << read_file(dir / "calls");
  EXPECT_TRUE(python_bytecode("/bin/false", root).empty()) << "a python that cannot run: no folder";
  EXPECT_TRUE(python_bytecode(python.string(), "").empty());

  GpuTools tools;
  tools.scratch = dir / "scratch" / "1";
  tools.runner = "/opt/ptxbench/ptxbench-runner";
  tools.project_root = "/home/user/ptxbench";
  tools.python = python.string();
  tools.python_bytecode = root;
  tools.sandbox = resolve_sandbox({.enabled = false});
  CompileResult compiled;
  compiled.library = "/data/cache/compile/abc/solution.so";
  const SandboxSetup attention = sandbox_setup(compiled, task_named("attention-fwd-d64-sm90a"), tools);
  EXPECT_EQ(attention.python_bytecode, folder);
  const auto& readable = attention.policy.readable;
  EXPECT_NE(std::find(readable.begin(), readable.end(), folder), readable.end());
  EXPECT_TRUE(attention.policy.writable.empty()) << "never writable there";
  EXPECT_TRUE(sandbox_setup(compiled, task(), tools).python_bytecode.empty());
  fs::remove_all(dir);
}

// compute-sanitizer starts the solution process, not the runner: the runner's own kernels are not the tool's
// to check (and instrumented, they cost it more than the solution's did). Each request names its tool, with
// the log in that runner's own folder, which the fake runner ran (the reports above are those logs).
TEST(GpuStages, EachSanitizerStartsTheSolutionProcessAlone) {
  const json passed = passed_sanitize_result();
  std::vector<json> requests;
  const Verdict verdict = stages_with_fake_tools(passed, {.requests = &requests});
  EXPECT_EQ(stage_named(verdict, "sanitize").status, StageStatus::passed);
  ASSERT_EQ(requests.size(), 3u);
  std::set<std::string> tools;
  for (const json& request : requests) {
    ASSERT_TRUE(request.contains("solution_wrapper")) << request.dump();
    const std::vector<std::string> wrapper = request["solution_wrapper"];
    EXPECT_EQ(fs::path(wrapper.at(0)).filename(), "compute-sanitizer");
    const auto at = [&](const std::string& option) {
      const auto it = std::find(wrapper.begin(), wrapper.end(), option);
      return it == wrapper.end() || it + 1 == wrapper.end() ? std::string() : *(it + 1);
    };
    tools.insert(at("--tool"));
    EXPECT_EQ(fs::path(at("--log-file")).filename(), at("--tool") + ".log");
    EXPECT_EQ(fs::path(at("--log-file")).parent_path().filename().string().rfind("call-", 0), 0u);
  }
  EXPECT_EQ(tools, (std::set<std::string>{"memcheck", "synccheck", "racecheck"}));
}

// Evaluations sharing a GPU (gpu_gate.h): a stage that timed out while another evaluation's stage shared the
// GPU is run again with the GPU alone, and that run decides; one that timed out with the GPU to itself timed
// out.
TEST(GpuStages, AStageThatTimedOutSharingTheGpuIsRunAgainAlone) {
  const json passed = passed_sanitize_result();
  GpuGate gate;
  std::atomic<bool> other_inside{false};
  std::thread other([&] {  // another evaluation's sanitize stage, for 4 s
    const GpuGate::Pass pass = gate.enter(GpuGate::Use::shared);
    other_inside = true;
    std::this_thread::sleep_for(std::chrono::seconds(4));
  });
  while (!other_inside) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const Verdict shared = stages_with_fake_tools(passed, {.gate = &gate, .limit_s = 5, .memcheck_hangs = 2});
  other.join();
  const StageResult& again = stage_named(shared, "sanitize");
  EXPECT_EQ(again.status, StageStatus::passed) << again.message;
  ASSERT_TRUE(again.details.contains("timed_out_sharing_the_gpu")) << again.details.dump();
  EXPECT_NE(again.details["timed_out_sharing_the_gpu"].get<std::string>().find("memcheck"), std::string::npos)
      << again.details.dump();

  // memcheck hangs beside the other tools and again alone: a time-out on a GPU of its own.
  const Verdict alone = stages_with_fake_tools(passed, {.gate = &gate, .limit_s = 5, .memcheck_hangs = 2});
  const StageResult& timed_out = stage_named(alone, "sanitize");
  EXPECT_EQ(timed_out.status, StageStatus::timeout) << timed_out.message;
  EXPECT_FALSE(timed_out.details.contains("timed_out_sharing_the_gpu")) << timed_out.details.dump();
}

// What sharing the GPU and the host may have caused is run again alone: a time-out beside another stage, and
// a time stage that failed only the check of its reported times while other evaluations worked on the host.
TEST(GpuStages, OnlyWhatSharingMayHaveCausedIsRunAgainAlone) {
  StageResult timeout{.name = "sanitize", .status = StageStatus::timeout};
  EXPECT_EQ(rerun_alone_because(timeout, true), "timed_out_sharing_the_gpu");
  EXPECT_EQ(rerun_alone_because(timeout, false), "") << "a time-out with the GPU alone stands";

  StageResult claims{.name = "time", .status = StageStatus::failed};
  claims.details = {
      {"times_verified", false}, {"hidden_work_suspected", false}, {"recheck", {{"passed", true}}}};
  EXPECT_EQ(rerun_alone_because(claims, false), "claims_failed_sharing_the_host");
  StageResult hidden = claims;
  hidden.details["hidden_work_suspected"] = true;  // work outside the stream: the solution's, whoever shares
  StageResult wrong = claims;
  wrong.details["recheck"]["passed"] = false;  // a wrong output of a timed call
  StageResult verified = claims;
  verified.details["times_verified"] = true;
  StageResult correct = claims;
  correct.name = "correct";
  for (const StageResult& stands : {hidden, wrong, verified, correct})
    EXPECT_EQ(rerun_alone_because(stands, true), "") << stands.name << " " << stands.details.dump();
}

// A tool that timed out beside the other tools is run again alone, and that run decides: here it passes.
// (The limits in these tests are 5 s: the fake runner, a Python script, took over 2 s to answer when the host
// was busy, and an honest run then timed out.)
TEST(GpuStages, AToolThatTimedOutBesideTheOthersIsRunAgainAlone) {
  const json passed = passed_sanitize_result();
  const Verdict verdict = stages_with_fake_tools(passed, {.limit_s = 5, .memcheck_hangs = 1});
  const StageResult& sanitize = stage_named(verdict, "sanitize");
  EXPECT_EQ(sanitize.status, StageStatus::passed) << sanitize.message;
  EXPECT_NE(sanitize.details["memcheck"].value("timed_out_beside_the_other_tools", std::string())
                .find("did not finish within 5 s"),
            std::string::npos)
      << sanitize.details.dump();
  EXPECT_FALSE(sanitize.details["racecheck"].contains("timed_out_beside_the_other_tools"));
}

// memcheck found an error; synccheck then could not run: the stage stays failed, and says both.
TEST(GpuStages, AToolThatCouldNotRunDoesNotHideAnEarlierToolsError) {
  const json passed = passed_sanitize_result();
  const std::string memcheck_error = read_file(kData / "sanitizer" / "memcheck_oob_shared.txt");
  const Verdict verdict =
      stages_with_fake_tools(passed, {.tool_logs = {{"memcheck", memcheck_error}, {"synccheck", ""}}});
  const StageResult& sanitize = stage_named(verdict, "sanitize");
  EXPECT_EQ(sanitize.status, StageStatus::failed) << sanitize.message;
  EXPECT_NE(sanitize.message.find("memcheck: 3 error(s)"), std::string::npos) << sanitize.message;
  EXPECT_NE(sanitize.message.find("synccheck could not run"), std::string::npos) << sanitize.message;
}

// Every family executed, full coverage, but cuobjdump could not read the compiled code: the launch is the
// submission's by its name alone, which is no ground for a pass.
TEST(GpuStages, WithoutTheCompiledCodeTheInstructionStageDoesNotPass) {
  const json profiled = json::parse(R"({"protocol": 1, "mode": "profile", "status": "passed",
    "message": "profiled", "profile": {"stream_id": 13}})");
  const std::string csv =
      "\"ID\",\"Process ID\",\"Kernel "
      "Name\",\"Stream\",\"sass__inst_executed_per_opcode_with_modifier_all\"\n"
      "\"0\",\"1\",\"gemm(const __nv_bfloat16 *)\",\"13\",\"2097172 (HGMMA.64x256x16.F32.BF16: 2097152; "
      "UTMALDG.2D: 10; SYNCS.PHASECHK.TRANS64.TRYWAIT: 10)\"\n";
  const Verdict verdict = stages_with_fake_tools(
      profiled,
      {.stages = {"instructions"}, .ncu_csv = csv, .compiled_kernels = {"_Z4gemmPK13__nv_bfloat16"}});
  const StageResult& instructions = stage_named(verdict, "instructions");
  EXPECT_EQ(instructions.status, StageStatus::harness_error) << instructions.message;
  EXPECT_NE(instructions.message.find("matched by kernel name only"), std::string::npos)
      << instructions.message;
  EXPECT_NE(instructions.message.find("wgmma did 100.0% of the FLOPs"), std::string::npos)
      << "what was seen is still said: " << instructions.message;
}

namespace {

// The profile of one gemm launch that executed every family of the task, with full coverage.
const json kProfiled = json::parse(R"({"protocol": 1, "mode": "profile", "status": "passed",
  "message": "profiled", "profile": {"stream_id": 13}})");
const std::string kFullCsv =
    "\"ID\",\"Process ID\",\"Kernel Name\",\"Stream\",\"sass__inst_executed_per_opcode_with_modifier_all\"\n"
    "\"0\",\"1\",\"gemm(const __nv_bfloat16 *)\",\"13\",\"2097172 (HGMMA.64x256x16.F32.BF16: 2097152; "
    "UTMALDG.2D: 10; SYNCS.PHASECHK.TRANS64.TRYWAIT: 10)\"\n";

// cuobjdump's listing of one kernel with the given opcodes.
std::string sass_of(const std::vector<std::string>& opcodes) {
  std::string text = "\tcode for sm_90a\n\t\tFunction : _Z4gemmPK13__nv_bfloat16\n";
  for (size_t i = 0; i < opcodes.size(); ++i)
    text += fmt::format("        /*{:04x}*/                   {} ;  /* 0x0000000000000000 */\n", 16 * i,
                        opcodes[i]);
  return text;
}

// The compiled code of kFullCsv's kernel, every required family in it.
std::string full_sass() {
  return sass_of({"HGMMA.64x256x16.F32.BF16", "UTMALDG.2D", "SYNCS.PHASECHK.TRANS64.TRYWAIT", "EXIT"});
}

}  // namespace

// A required family is not in the compiled code: the stage fails on that alone, and ncu is not run (it is
// absent here, which would be a harness error had it been).
TEST(GpuStages, AFamilyNotInTheCompiledCodeFailsTheInstructionStageWithoutAProfile) {
  const Verdict verdict = stages_with_fake_tools(
      kProfiled, {.stages = {"instructions"},
                  .compiled_kernels = {"_Z4gemmPK13__nv_bfloat16"},
                  .sass = sass_of({"HGMMA.64x256x16.F32.BF16", "SYNCS.EXCH.64", "EXIT"})});
  const StageResult& instructions = stage_named(verdict, "instructions");
  EXPECT_EQ(instructions.status, StageStatus::failed) << instructions.message;
  EXPECT_EQ(instructions.message, "not in the compiled code: tma (UTMALDG), mbarrier (SYNCS.PHASECHK)");
  EXPECT_EQ(instructions.details["decided_by"], "static SASS inventory");
  EXPECT_TRUE(instructions.details["coverage"]["coverage"].is_null());
  EXPECT_EQ(instructions.details["static_sass"]["opcodes"]["HGMMA.64x256x16.F32.BF16"], 1);
  EXPECT_FALSE(instructions.details.contains("launches")) << "no profile ran";
  EXPECT_FALSE(verdict.coverage);
}

// A profiled call that never ends is the stage's time-out, and the message says where it hung: under Nsight
// Compute, on one call of the main shape (beside a correct stage that passed, the kernel is seen to hang only
// under the profiler's instrumented copy).
TEST(GpuStages, AProfiledCallThatNeverEndsSaysItHungUnderTheProfiler) {
  const Verdict verdict =
      stages_with_fake_tools(kProfiled, {.stages = {"instructions"}, .ncu_csv = kFullCsv, .limit_s = 2,
                                         .ncu_hangs = true});
  const StageResult& instructions = stage_named(verdict, "instructions");
  EXPECT_EQ(instructions.status, StageStatus::timeout) << instructions.message;
  EXPECT_EQ(instructions.message,
            "the solution did not finish within 2 s and was killed (one call of " + task().main_shape.to_string() +
                " under Nsight Compute, whose per-opcode counters run an instrumented copy of the kernels)");
}

// A SASS listing longer than the judge reads fails the stage, and no profile runs: read in part, it would
// leave kernels out of the compiled code, their launches foreign (as the reference forward's did at 4 MB).
TEST(GpuStages, ASassListingLongerThanTheJudgeReadsFailsTheInstructionStage) {
  const std::string sass = full_sass();
  const Verdict verdict = stages_with_fake_tools(kProfiled, {.stages = {"instructions"},
                                                             .ncu_csv = kFullCsv,
                                                             .compiled_kernels = {"_Z4gemmPK13__nv_bfloat16"},
                                                             .sass = sass,
                                                             .sass_listing_limit = sass.size() - 1});
  const StageResult& instructions = stage_named(verdict, "instructions");
  EXPECT_EQ(instructions.status, StageStatus::failed) << instructions.message;
  EXPECT_NE(instructions.message.find("more than the judge reads"), std::string::npos)
      << instructions.message;
  EXPECT_FALSE(instructions.details.contains("launches")) << "no profile ran";
  // The same listing within the limit: the profile decides.
  const Verdict whole = stages_with_fake_tools(kProfiled, {.stages = {"instructions"},
                                                           .ncu_csv = kFullCsv,
                                                           .compiled_kernels = {"_Z4gemmPK13__nv_bfloat16"},
                                                           .sass = sass,
                                                           .sass_listing_limit = sass.size()});
  EXPECT_EQ(stage_named(whole, "instructions").status, StageStatus::passed)
      << stage_named(whole, "instructions").message;
}

// The runner's steps under the profiler travel into the stage's details (the rest of its seconds are Nsight
// Compute's own), for the stage times of bench/.
TEST(GpuStages, TheProfiledRunnersStepsAreInTheInstructionStage) {
  json profiled = kProfiled;
  profiled["phases_s"] = {{"runner_context", 0.2}, {"solution_process", 0.3}, {"calls", 0.9}};
  const Verdict verdict = stages_with_fake_tools(profiled, {.stages = {"instructions"},
                                                            .ncu_csv = kFullCsv,
                                                            .compiled_kernels = {"_Z4gemmPK13__nv_bfloat16"},
                                                            .sass = full_sass()});
  const StageResult& instructions = stage_named(verdict, "instructions");
  EXPECT_EQ(instructions.status, StageStatus::passed) << instructions.message;
  EXPECT_EQ(instructions.details["phases_s"]["calls"], 0.9);
}

// Every family is in the compiled code: the profile decides, as before.
TEST(GpuStages, EveryFamilyInTheCompiledCodeLeavesTheDecisionToTheProfile) {
  const Verdict verdict = stages_with_fake_tools(kProfiled, {.stages = {"instructions"},
                                                             .ncu_csv = kFullCsv,
                                                             .compiled_kernels = {"_Z4gemmPK13__nv_bfloat16"},
                                                             .sass = full_sass()});
  const StageResult& instructions = stage_named(verdict, "instructions");
  EXPECT_EQ(instructions.status, StageStatus::passed) << instructions.message;
  EXPECT_FALSE(instructions.details.contains("decided_by"));
  ASSERT_EQ(instructions.details["launches"].size(), 1u);
  EXPECT_EQ(instructions.details["launches"][0]["from_submission"], true);
  ASSERT_TRUE(verdict.coverage);
  EXPECT_DOUBLE_EQ(*verdict.coverage, 1.0);
}

// The instruction stage's profile starts with the sanitize stage's tools, each beside the others (its use
// of the GPU is the profiler's, gpu_gate.h), and ncu measures no durations, which another process's kernels
// would show in.
TEST(GpuStages, TheInstructionStageStartsWithTheSanitizeStage) {
  std::map<std::string, std::string> files;
  const Verdict verdict = stages_with_fake_tools(kProfiled, {.stages = {"sanitize", "instructions"},
                                                             .ncu_csv = kFullCsv,
                                                             .compiled_kernels = {"_Z4gemmPK13__nv_bfloat16"},
                                                             .sass = full_sass(),
                                                             .limit_s = 10,
                                                             .sanitizers_wait_for_ncu = true,
                                                             .files_left = &files});
  EXPECT_EQ(stage_named(verdict, "sanitize").status, StageStatus::passed)
      << stage_named(verdict, "sanitize").message;
  EXPECT_EQ(stage_named(verdict, "instructions").status, StageStatus::passed)
      << stage_named(verdict, "instructions").message;
  for (const char* tool : {"memcheck", "synccheck", "racecheck"})
    EXPECT_TRUE(files.count(std::string("saw-ncu-") + tool)) << tool << " ran before or after ncu";
  EXPECT_NE(files["ncu-args"].find("sass__inst_executed_per_opcode_with_modifier_all,launch__cluster_dim_x"),
            std::string::npos)
      << files["ncu-args"];
  EXPECT_EQ(files["ncu-args"].find("gpu__time_duration"), std::string::npos) << files["ncu-args"];
  EXPECT_EQ(stage_named(verdict, "instructions").details.value("started_with", ""), "sanitize");
  ASSERT_TRUE(verdict.coverage);
  EXPECT_DOUBLE_EQ(*verdict.coverage, 1.0);
}

// With --profile the instruction stage reads the GPU's counters (its sections, the kernels' durations): it
// has the GPU alone, in its own place after the sanitize stage.
TEST(GpuStages, WithProfileSectionsTheInstructionStageRunsAloneAndMeasuresDurations) {
  std::map<std::string, std::string> files;
  const Verdict verdict = stages_with_fake_tools(kProfiled, {.stages = {"sanitize", "instructions"},
                                                             .ncu_csv = kFullCsv,
                                                             .compiled_kernels = {"_Z4gemmPK13__nv_bfloat16"},
                                                             .sass = full_sass(),
                                                             .limit_s = 15,
                                                             .profile_sections = true,
                                                             .sanitizers_wait_for_ncu = true,
                                                             .files_left = &files});
  EXPECT_EQ(stage_named(verdict, "instructions").status, StageStatus::passed)
      << stage_named(verdict, "instructions").message;
  for (const char* tool : {"memcheck", "synccheck", "racecheck"})
    EXPECT_FALSE(files.count(std::string("saw-ncu-") + tool)) << tool << " ran beside ncu";
  EXPECT_NE(files["ncu-args"].find(",gpu__time_duration.sum"), std::string::npos) << files["ncu-args"];
  EXPECT_FALSE(stage_named(verdict, "instructions").details.contains("started_with"));
}

// A stage that stops the rest after the instruction stage started (here the sanitize stage beside it, which
// timed out) sets its result aside, the coverage it measured with it: the verdict is the one stages run one
// by one would give.
TEST(GpuStages, AStageThatStopsTheRestSetsAsideTheInstructionStageThatStartedBesideIt) {
  const Verdict verdict = stages_with_fake_tools(kProfiled, {.stages = {"sanitize", "instructions"},
                                                             .ncu_csv = kFullCsv,
                                                             .compiled_kernels = {"_Z4gemmPK13__nv_bfloat16"},
                                                             .sass = full_sass(),
                                                             .limit_s = 5,
                                                             .memcheck_hangs = 2});
  EXPECT_EQ(stage_named(verdict, "sanitize").status, StageStatus::timeout);
  const StageResult& instructions = stage_named(verdict, "instructions");
  EXPECT_EQ(instructions.status, StageStatus::skipped);
  EXPECT_EQ(instructions.message, "not run: the sanitize stage timed out");
  EXPECT_FALSE(verdict.coverage) << "the set-aside profile's coverage";
  EXPECT_FALSE(instructions.details.contains("launches"));
}

// On a shared GPU the two stages pass the gate each under its own use, and neither counts as the other's
// sharing: a sanitize stage that timed out beside its own instruction stage (memcheck hanging beside the
// other tools and alone) is not run a third time.
TEST(GpuStages, StagesStartedTogetherAreNoSharingToRunAgainFor) {
  GpuGate gate;
  const Verdict verdict = stages_with_fake_tools(kProfiled, {.stages = {"sanitize", "instructions"},
                                                             .ncu_csv = kFullCsv,
                                                             .compiled_kernels = {"_Z4gemmPK13__nv_bfloat16"},
                                                             .sass = full_sass(),
                                                             .gate = &gate,
                                                             .limit_s = 5,
                                                             .memcheck_hangs = 2});
  const StageResult& sanitize = stage_named(verdict, "sanitize");
  EXPECT_EQ(sanitize.status, StageStatus::timeout) << sanitize.message;
  EXPECT_FALSE(sanitize.details.contains("timed_out_sharing_the_gpu")) << sanitize.details.dump();
  EXPECT_EQ(stage_named(verdict, "instructions").message, "not run: the sanitize stage timed out");
}

TEST(GpuStages, StagesNotRequestedAreSkippedAsSuch) {
  const json passed =
      json::parse(R"({"protocol": 1, "mode": "check", "status": "passed", "message": "all passed",
    "shapes": [{"label": "main", "dims": {"M": 8192, "N": 4096, "K": 4096}, "passed": true, "trials": [
      {"trial": 0, "passed": true, "inputs_unchanged": true, "output_stable": true, "outputs": []}]}]})");
  const Verdict verdict = stages_with_fake_tools(passed, {.stages = {"correct"}});
  EXPECT_EQ(stage_named(verdict, "correct").status, StageStatus::passed);
  for (const char* name : {"sanitize", "instructions", "time"}) {
    EXPECT_EQ(stage_named(verdict, name).status, StageStatus::skipped) << name;
    EXPECT_EQ(stage_named(verdict, name).message, "not requested (--stages)") << name;
  }
  // Time alone: it needs the correct stage's pass, which did not run.
  const Verdict time_alone = stages_with_fake_tools(passed, {.stages = {"time"}});
  EXPECT_NE(stage_named(time_alone, "time").message.find("needs the correct stage"), std::string::npos);
}

// A Triton solution: every request names the track and the python that runs it; the profile asks for the
// kernels Triton compiled, and the stage holds the launches to their SASS, by their plain names.
TEST(GpuStages, ATritonSolutionsLaunchesAreHeldToTheKernelsTritonCompiledInTheProfiledRun) {
  const std::string csv =
      "\"ID\",\"Process ID\",\"Kernel "
      "Name\",\"Stream\",\"sass__inst_executed_per_opcode_with_modifier_all\"\n"
      "\"0\",\"1\",\"matmul_kernel\",\"13\",\"2097172 (HGMMA.64x256x16.F32.BF16: 2097152; "
      "UTMALDG.2D: 10; SYNCS.PHASECHK.TRANS64.TRYWAIT: 10)\"\n";
  std::string sass = full_sass();
  sass.replace(sass.find("_Z4gemmPK13__nv_bfloat16"), std::string("_Z4gemmPK13__nv_bfloat16").size(),
               "matmul_kernel");
  FakeTriton triton{.kernel_files = {"abc-matmul_kernel.cubin"}};
  const Verdict verdict = stages_with_fake_tools(
      kProfiled, {.stages = {"correct", "instructions"}, .ncu_csv = csv, .sass = sass, .triton = &triton});
  const StageResult& instructions = stage_named(verdict, "instructions");
  EXPECT_EQ(instructions.status, StageStatus::passed) << instructions.message;
  EXPECT_EQ(instructions.details["launches"][0]["from_submission"], true);
  EXPECT_EQ(instructions.details["compiled_kernels"], json::array({"abc-matmul_kernel.cubin"}));
  EXPECT_EQ(instructions.details["static_sass"]["opcodes"]["UTMALDG.2D"], 1);
  ASSERT_EQ(triton.requests.size(), 2u);
  for (const json& request : triton.requests) {
    EXPECT_EQ(request["track"], "triton");
    EXPECT_EQ(request["python"], "python3");
    EXPECT_TRUE(request["library"].get<std::string>().ends_with("solution.py"));
  }
  EXPECT_FALSE(triton.requests[0].contains("kernels_dir")) << "only the profile keeps the kernels";
  EXPECT_TRUE(triton.requests[1]["kernels_dir"].get<std::string>().ends_with("/kernels"));
  // One kernel cache for the evaluation's runner processes: the later stages find what the first compiled.
  const std::string cache = triton.requests[0].value("triton_cache", "");
  ASSERT_FALSE(cache.empty());
  EXPECT_EQ(triton.requests[1]["triton_cache"], cache);
  EXPECT_FALSE(fs::exists(cache)) << "the cache goes with the evaluation";
}

// A CUDA solution's requests name no Triton cache.
TEST(GpuStages, ACudaSolutionsRequestsNameNoTritonCache) {
  std::vector<json> requests;
  (void)stages_with_fake_tools(kProfiled, {.stages = {"correct"}, .requests = &requests});
  ASSERT_FALSE(requests.empty());
  for (const json& request : requests) EXPECT_FALSE(request.contains("triton_cache")) << request.dump();
}

// A Triton run that compiled no kernel leaves nothing to hold the launches to: no pass on names alone.
TEST(GpuStages, ATritonRunWithNoCompiledKernelCannotPassTheInstructionStage) {
  FakeTriton triton;
  const Verdict verdict =
      stages_with_fake_tools(kProfiled, {.stages = {"instructions"}, .ncu_csv = kFullCsv, .triton = &triton});
  const StageResult& instructions = stage_named(verdict, "instructions");
  EXPECT_NE(instructions.status, StageStatus::passed) << instructions.message;
  EXPECT_NE(instructions.message.find("Triton compiled no kernel"), std::string::npos)
      << instructions.message;
}

// The compiler's locations in the compiled name become the submitted one; other names are left alone.
TEST(Evaluate, CompilerMessagesNameTheSubmittedFile) {
  const std::string text =
      "solution.cu(12): error: identifier \"x\" is undefined\nIn file included from solution.cu:2:\n"
      "my_solution.cu(3): note\nsolution.cuh(4): note\nsolution.cu, line 5\nsee solution.cu.";
  EXPECT_EQ(with_file_name(text, "solution.cu", "gemm.cu"),
            "gemm.cu(12): error: identifier \"x\" is undefined\nIn file included from gemm.cu:2:\n"
            "my_solution.cu(3): note\nsolution.cuh(4): note\ngemm.cu, line 5\nsee solution.cu.");
  EXPECT_EQ(with_file_name(text, "solution.cu", "solution.cu"), text);
  EXPECT_EQ(with_file_name(text, "solution.cu", ""), text);
}
