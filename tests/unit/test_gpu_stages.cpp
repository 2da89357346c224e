// How the GPU stages read the runner's result documents (src/runner/protocol.h), without a GPU.
#include <gtest/gtest.h>

#include "eval/gpu_stages.h"

#include <filesystem>

using namespace ptxbench;
using nlohmann::json;

namespace {

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

json timing_result(bool hidden_work) {
  return {{"protocol", 1},
          {"mode", "time"},
          {"status", "passed"},
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

TEST(GpuStages, RuntimeErrorsCarryTheCudaError) {
  const json result = {{"status", "runtime_error"},
                       {"message", "x"},
                       {"runtime_error",
                        {{"where", "trial 0: the solution's work on the stream failed"},
                         {"cuda_error", "cudaErrorIllegalAddress"},
                         {"cuda_error_string", "an illegal memory access was encountered"}}}};
  const StageResult stage = correct_stage_from(result, task());
  EXPECT_EQ(stage.status, StageStatus::runtime_error);
  EXPECT_EQ(
      stage.message,
      "trial 0: the solution's work on the stream failed: cudaErrorIllegalAddress (an illegal memory access "
      "was encountered)");
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

TEST(GpuStages, RunnerIsFoundBesideTheBinaryOrFromTheEnvironment) {
  setenv("PTXBENCH_RUNNER", "/opt/runner", 1);
  EXPECT_EQ(find_runner(), "/opt/runner");
  unsetenv("PTXBENCH_RUNNER");
}
