// The attention tasks' vendor baseline without a GPU: the script's request, how its output is read, the
// fallback when it fails, the speedup, the per-process cache, and baselines/attention_torch.py itself as far
// as a machine without torch can run it (it must parse, and say clearly that torch is missing).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "eval/attention_baseline.h"
#include "eval/gpu_stages.h"
#include "util/files.h"

using namespace ptxbench;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const fs::path kRoot = PTXBENCH_SOURCE_DIR;
const fs::path kScript = kRoot / "baselines" / "attention_torch.py";

const Task& task(const std::string& id) {
  static std::map<std::string, Task> tasks;
  if (!tasks.count(id)) tasks[id] = load_task_file(kRoot / "tasks" / "sm90a" / (id + ".json"));
  return tasks.at(id);
}
const Task& gqa_backward() {
  return task("attention-bwd-gqa32x4-d128-causal-sm90a");
}
const Task& forward() {
  return task("attention-fwd-d128-sm90a");
}

// What the script prints when it found a baseline (abridged).
json script_result() {
  return {{"name", "torch-sdpa-cudnn"},
          {"backend", "cudnn"},
          {"method", "torch.ops.aten._scaled_dot_product_cudnn_attention"},
          {"gqa", "none"},
          {"torch", "2.11.0+cu130"},
          {"cudnn", 91900},
          {"gpu", "NVIDIA H200"},
          {"event_us", {{"median", 500.0}, {"min", 490.0}, {"max", 530.0}, {"p10", 495.0}, {"p90", 510.0}}},
          {"wall_us", {{"median", 525.0}}},
          {"tflops", 1100.0},
          {"candidates", json::array({{{"backend", "cudnn"}, {"status", "ok"}},
                                      {{"backend", "efficient"}, {"status", "wrong"}}})}};
}

ProcessResult exited(int code, const std::string& out, const std::string& err = "") {
  return {.exit_code = code, .exited = true, .out = out, .err = err};
}

// The runner's timing of an attention task: no baseline, speedups null.
json runner_timing() {
  return {{"solution",
           {{"event_us", {{"median", 400.0}, {"p10", 390.0}, {"p90", 410.0}}},
            {"wall_us", {{"median", 420.0}}},
            {"tflops", 687.0}}},
          {"baseline", nullptr},
          {"speedup", nullptr},
          {"speedup_wall", nullptr},
          {"hidden_work_suspected", false},
          {"l2_flush_bytes", 125829120}};
}

StageResult time_stage(const json& timing, const Task& t) {
  return time_stage_from({{"status", "passed"}, {"timing", timing}}, t);
}

fs::path temp_dir(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("ptxbench-baseline-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// A stand-in for the script, run by sh instead of python: it keeps its request, counts its runs and prints
// `output` with exit status `code`.
AttentionBaselineSetup fake_script(const fs::path& dir, const std::string& output, int code = 0) {
  write_file(dir / "fake.sh", "cat > " + (dir / "request.json").string() + "\necho run >> " +
                                  (dir / "runs").string() + "\necho 'torch says hello' >&2\ncat <<'EOF'\n" +
                                  output + "\nEOF\nexit " + std::to_string(code) + "\n");
  return {.script = dir / "fake.sh", .python = "sh", .limit_s = 30};
}

int runs(const fs::path& dir) {
  if (!fs::exists(dir / "runs")) return 0;
  const std::string text = read_file(dir / "runs");
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// python3, which CI has (Debian's): a test that needs it fails rather than skip when it is missing.
ProcessResult python(const std::vector<std::string>& args, const std::string& input = "") {
  std::vector<std::string> argv = {"python3"};
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessResult r = run_process({.argv = argv, .time_limit = std::chrono::seconds(60), .stdin_data = input});
  EXPECT_FALSE(r.spawn_failed) << "python3 is needed for this test (Debian: apt-get install python3)";
  return r;
}

}  // namespace

TEST(AttentionBaseline, RequestIsTheMainShapeTimedAsTheRunnerTimes) {
  const json request = attention_baseline_request(
      gqa_backward(), {.warmup = 10, .repetitions = 50, .l2_flush_bytes = 125829120});
  EXPECT_EQ(request["direction"], "backward");
  EXPECT_EQ(request["dims"],
            json({{"B", 2}, {"Hq", 32}, {"Hkv", 4}, {"Sq", 4096}, {"Sk", 4096}, {"D", 128}}));
  EXPECT_EQ(request["causal"], true);
  EXPECT_DOUBLE_EQ(request["scale"].get<double>(), 1 / std::sqrt(128.0));
  EXPECT_EQ(request["warmup"], 10);
  EXPECT_EQ(request["repetitions"], 50);
  EXPECT_EQ(request["l2_flush_bytes"], 125829120);
  EXPECT_EQ(request["device"], 0);

  const json plain = attention_baseline_request(forward(), {});
  EXPECT_EQ(plain["direction"], "forward");
  EXPECT_EQ(plain["causal"], false);
  EXPECT_FALSE(plain.contains("l2_flush_bytes")) << "absent: the script sizes it as the runner does";
}

TEST(AttentionBaseline, ReadsTheScriptsResult) {
  const AttentionBaseline b = read_attention_baseline(exited(0, script_result().dump() + "\n"), {});
  ASSERT_TRUE(b.series) << b.problem;
  EXPECT_EQ((*b.series)["name"], "torch-sdpa-cudnn");
  EXPECT_EQ((*b.series)["candidates"].size(), 2u);
  EXPECT_TRUE(b.problem.empty());
  // Something printed on stdout before the document: its last line is the result.
  EXPECT_TRUE(read_attention_baseline(exited(0, "a warning\n" + script_result().dump() + "\n"), {}).series);
}

TEST(AttentionBaseline, AFailedScriptSaysWhy) {
  const AttentionBaselineSetup setup{
      .script = "/x/baselines/attention_torch.py", .python = "python3.99", .limit_s = 600};
  const std::string no_module = "torch not importable (ModuleNotFoundError: No module named 'torch')";
  const AttentionBaseline no_torch =
      read_attention_baseline(exited(1, json({{"error", no_module}}).dump() + "\n"), setup);
  EXPECT_FALSE(no_torch.series);
  EXPECT_EQ(no_torch.problem, no_module);

  const AttentionBaseline garbage = read_attention_baseline(exited(0, "not json", "Traceback ..."), setup);
  EXPECT_FALSE(garbage.series);
  EXPECT_NE(garbage.problem.find("attention_torch.py ended with exit code 0 without a usable result"),
            std::string::npos)
      << garbage.problem;
  EXPECT_NE(garbage.problem.find("Traceback"), std::string::npos) << garbage.problem;

  json no_median = script_result();
  no_median["event_us"].erase("median");
  EXPECT_FALSE(read_attention_baseline(exited(0, no_median.dump()), setup).series);
  EXPECT_FALSE(read_attention_baseline(exited(3, script_result().dump()), setup).series)
      << "a non-zero exit is no result";

  ProcessResult timed_out = exited(0, "");
  timed_out.exited = false, timed_out.timed_out = true;
  EXPECT_EQ(read_attention_baseline(timed_out, setup).problem,
            "attention_torch.py did not finish within 600 s");
  const ProcessResult no_python{.spawn_failed = true};
  EXPECT_NE(read_attention_baseline(no_python, setup).problem.find("could not start python3.99"),
            std::string::npos);
}

TEST(AttentionBaseline, SpeedupIsBaselineOverSolutionOnEachClock) {
  json timing = runner_timing();
  add_attention_baseline(timing, {.series = script_result()});
  EXPECT_DOUBLE_EQ(timing["speedup"].get<double>(), 500.0 / 400.0);
  EXPECT_DOUBLE_EQ(timing["speedup_wall"].get<double>(), 525.0 / 420.0);
  EXPECT_EQ(timing["baseline"]["name"], "torch-sdpa-cudnn");
  EXPECT_EQ(timing["baseline"]["cached"], false);
  EXPECT_FALSE(timing.contains(kBaselineNote));

  const json solution = runner_timing()["solution"];
  EXPECT_FALSE(speedup_of(json::object(), solution, "event_us"));
  EXPECT_FALSE(speedup_of(script_result(), {{"event_us", {{"median", 0.0}}}}, "event_us"));
  EXPECT_DOUBLE_EQ(*speedup_of(script_result(), solution, "event_us"), 1.25);

  json no_wall = script_result();
  no_wall.erase("wall_us");
  json timing_without_wall = runner_timing();
  add_attention_baseline(timing_without_wall, {.series = no_wall});
  EXPECT_TRUE(timing_without_wall["speedup"].is_number());
  EXPECT_TRUE(timing_without_wall["speedup_wall"].is_null());
}

TEST(AttentionBaseline, TheTimeStageNamesBothTimesAndTheSpeedup) {
  json timing = runner_timing();
  add_attention_baseline(timing, {.series = script_result()});
  const StageResult stage = time_stage(timing, forward());
  EXPECT_EQ(stage.status, StageStatus::passed);
  EXPECT_NE(stage.message.find("400.0 us (687 TFLOP/s"), std::string::npos) << stage.message;
  EXPECT_NE(stage.message.find("against torch-sdpa-cudnn 500.0 us (1100 TFLOP/s): 1.250x"), std::string::npos)
      << stage.message;
  EXPECT_DOUBLE_EQ(stage.details["speedup"].get<double>(), 1.25);

  json cached = runner_timing();
  add_attention_baseline(cached, {.series = script_result(), .cached = true});
  EXPECT_NE(time_stage(cached, forward()).message.find("1.250x (baseline measured earlier in this run)"),
            std::string::npos);
  EXPECT_EQ(cached["baseline"]["cached"], true);
}

TEST(AttentionBaseline, WithoutABaselineTheStagePassesWithoutSpeedupAndSaysWhy) {
  json timing = runner_timing();
  add_attention_baseline(timing,
                         {.problem = "torch not importable (ModuleNotFoundError: No module named 'torch')"});
  EXPECT_TRUE(timing["baseline"].is_null());
  EXPECT_TRUE(timing["speedup"].is_null());
  EXPECT_TRUE(timing["speedup_wall"].is_null());
  const StageResult stage = time_stage(timing, forward());
  EXPECT_EQ(stage.status, StageStatus::passed);
  EXPECT_NE(stage.message.find("400.0 us (687 TFLOP/s"), std::string::npos) << stage.message;
  EXPECT_NE(
      stage.message.find("; no attention baseline: torch not importable (ModuleNotFoundError: No module "
                         "named 'torch'), so no speedup"),
      std::string::npos)
      << stage.message;
}

TEST(AttentionBaseline, CacheKeyIsTaskShapeAndGpu) {
  const std::string key = attention_baseline_key(gqa_backward(), "NVIDIA H200");
  EXPECT_EQ(key,
            "attention-bwd-gqa32x4-d128-causal-sm90a | B=2 Hq=32 Hkv=4 Sq=4096 Sk=4096 D=128 | NVIDIA H200");
  EXPECT_EQ(key, attention_baseline_key(gqa_backward(), "NVIDIA H200"));
  EXPECT_NE(key, attention_baseline_key(gqa_backward(), "NVIDIA H100 80GB HBM3"));
  EXPECT_NE(key, attention_baseline_key(task("attention-fwd-gqa32x4-d128-causal-sm90a"), "NVIDIA H200"));
  Task other_shape = gqa_backward();
  other_shape.main_shape.dims["B"] = 4;
  EXPECT_NE(key, attention_baseline_key(other_shape, "NVIDIA H200"));
}

TEST(AttentionBaseline, MeasuredOncePerKeyInOneProcess) {
  forget_attention_baselines();
  const fs::path dir = temp_dir("cache");
  const AttentionBaselineSetup setup = fake_script(dir, script_result().dump());
  const AttentionBaselineRun run{.warmup = 10, .repetitions = 50, .gpu = "NVIDIA H200"};

  const AttentionBaseline first = measure_attention_baseline(forward(), setup, run);
  ASSERT_TRUE(first.series) << first.problem;
  EXPECT_FALSE(first.cached);
  EXPECT_EQ(json::parse(read_file(dir / "request.json")), attention_baseline_request(forward(), run))
      << "the script reads the request on stdin";
  const AttentionBaseline second = measure_attention_baseline(forward(), setup, run);
  ASSERT_TRUE(second.series);
  EXPECT_TRUE(second.cached);
  EXPECT_EQ(second.wall_s, 0);
  EXPECT_EQ(runs(dir), 1);

  measure_attention_baseline(forward(), setup, {.gpu = "NVIDIA H100 80GB HBM3"});  // another GPU: measured
  measure_attention_baseline(gqa_backward(), setup, run);                          // another task: measured
  EXPECT_EQ(runs(dir), 3);
  forget_attention_baselines();
  fs::remove_all(dir);
}

TEST(AttentionBaseline, AFailureIsTriedOnceMoreThenKept) {
  forget_attention_baselines();
  const fs::path dir = temp_dir("failure");
  const AttentionBaselineSetup failing = fake_script(dir, R"({"error": "torch sees no CUDA GPU"})", 1);
  EXPECT_EQ(measure_attention_baseline(forward(), failing, {}).problem, "torch sees no CUDA GPU");
  EXPECT_FALSE(measure_attention_baseline(forward(), failing, {}).cached) << "it may have been passing";
  const AttentionBaseline third = measure_attention_baseline(forward(), failing, {});
  EXPECT_TRUE(third.cached);
  EXPECT_EQ(runs(dir), 2);
  json timing = runner_timing();
  add_attention_baseline(timing, third);
  EXPECT_EQ(timing[kBaselineNote],
            "no attention baseline: torch sees no CUDA GPU (measured earlier in this run)");

  // Killed at the time limit: the same, so that a hanging script costs two time limits, not one per turn.
  write_file(dir / "slow.sh", "sleep 20\n");
  const AttentionBaselineSetup slow{.script = dir / "slow.sh", .python = "sh", .limit_s = 0.3};
  EXPECT_NE(measure_attention_baseline(forward(), slow, {.gpu = "slow"}).problem.find("did not finish"),
            std::string::npos);
  EXPECT_FALSE(measure_attention_baseline(forward(), slow, {.gpu = "slow"}).cached);
  EXPECT_TRUE(measure_attention_baseline(forward(), slow, {.gpu = "slow"}).cached);

  // No script at all: the stage says so.
  const AttentionBaseline missing = measure_attention_baseline(forward(), {.script = dir / "absent.py"}, {});
  EXPECT_NE(missing.problem.find("absent.py is not there"), std::string::npos) << missing.problem;
  forget_attention_baselines();
  fs::remove_all(dir);
}

TEST(AttentionBaseline, SetupFindsTheScriptAndThePython) {
  EXPECT_EQ(attention_baseline_setup(kRoot, "").script, kScript);
  EXPECT_EQ(attention_baseline_setup(kRoot, "").python, "python3");
  EXPECT_EQ(attention_baseline_setup(kRoot, "/opt/torch/bin/python").python, "/opt/torch/bin/python");
  EXPECT_TRUE(fs::is_regular_file(kScript));
}

// The script itself, on a machine without torch (CI): it compiles, and it answers with a clear JSON error.
TEST(AttentionBaselineScript, Compiles) {
  const fs::path dir = temp_dir("compile");
  const ProcessResult r = python({"-c",
                                  "import py_compile, sys; py_compile.compile(sys.argv[1], "
                                  "cfile=sys.argv[2], doraise=True)",
                                  kScript.string(), (dir / "attention_torch.pyc").string()});
  EXPECT_TRUE(r.ok()) << r.describe() << "\n" << r.err;
  fs::remove_all(dir);
}

TEST(AttentionBaselineScript, WithoutTorchItSaysSoInJsonAndFails) {
  const json request = attention_baseline_request(gqa_backward(), {});
  // -I -S: no site-packages and no PYTHONPATH, so torch cannot be imported even on a GPU host that has it.
  const ProcessResult r = python({"-I", "-S", kScript.string()}, request.dump());
  EXPECT_TRUE(r.exited);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const json doc = json::parse(r.out);
  EXPECT_NE(doc.value("error", "").find("torch not importable"), std::string::npos) << r.out;
  // Read as the time stage reads it.
  const AttentionBaseline b = read_attention_baseline(r, {.script = kScript});
  EXPECT_FALSE(b.series);
  EXPECT_NE(b.problem.find("torch not importable"), std::string::npos) << b.problem;
}

TEST(AttentionBaselineScript, ABadRequestIsExitTwo) {
  const ProcessResult r = python({"-I", "-S", kScript.string()}, R"({"direction": "sideways"})");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("bad request"), std::string::npos) << r.out;
  json causal_gqa = attention_baseline_request(gqa_backward(), {});
  causal_gqa["dims"]["Hkv"] = 3;
  EXPECT_NE(python({"-I", "-S", kScript.string()}, causal_gqa.dump()).out.find("multiple of Hkv"),
            std::string::npos);
}
