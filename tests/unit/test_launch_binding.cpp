// The binding of the instruction stage's proof to the checked and timed calls (src/eval/launch_binding.h),
// with the launches the H200 showed for the reference GEMM and the corpus's profiler-sensing entries.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "eval/launch_binding.h"

using namespace ptxbench;
using nlohmann::json;

namespace {

const ArchProfile& kHopper = *find_arch("sm_90a");

// bind_launches for a Hopper task.
LaunchBinding bind_launches(const NcuReport& profiled,
                            const std::vector<std::pair<std::string, json>>& logs) {
  return ptxbench::bind_launches(kHopper, profiled, logs);
}

const std::string kGemm =
    "_ZN44_GLOBAL__N__e03861e6_11_solution_cu_8c1b8a3a11gemm_kernelE14CUtensorMap_stS0_S0_P13__nv_"
    "bfloat16iii";
const std::string kSimt = "_ZN4gemm9simt_gemmEPK13__nv_bfloat16S2_PS0_iii";

// The profiled call as ncu reported it: one launch, 2,097,152 HGMMA (M=8192, N=K=4096).
NcuReport profiled(const std::string& name = kGemm, double duration_us = 355.0) {
  NcuLaunch launch{.kernel_name = name, .grid = {132, 1, 1}, .block = {384, 1, 1}};
  launch.cluster = Dim3{2, 1, 1};
  launch.dynamic_shared_bytes = 213 * 1024;
  launch.duration_ns = duration_us * 1e3;
  launch.opcodes = {{"HGMMA.64x256x16.F32.BF16", 2097152}, {"UTMALDG.2D", 131072}};
  return {.launches = {launch}};
}

json launch(const std::string& name, double duration_us, json grid = {132, 1, 1}, json cluster = {2, 1, 1}) {
  char hash[24];
  std::snprintf(hash, sizeof(hash), "%016llx", static_cast<unsigned long long>(kernel_name_hash(name)));
  return {{"name", name.substr(0, 95)}, {"name_hash", hash},  {"grid", grid},
          {"block", {384, 1, 1}},       {"cluster", cluster}, {"dynamic_shared_bytes", 213 * 1024},
          {"duration_us", duration_us}};
}

// A stage's log: its calls all launching `launches`, and the counted calls' wgmma counts.
json log_of(json launches, int calls, std::vector<int64_t> counted_wgmma) {
  json counted = json::array();
  for (size_t i = 0; i < counted_wgmma.size(); ++i)
    counted.push_back({{"where", "timed call " + std::to_string(7 * i)},
                       {"mma", counted_wgmma[i]},
                       {"tensor", counted_wgmma[i]}});
  return {{"recorder", "recorded"},
          {"problem", ""},
          {"calls", calls},
          {"signatures",
           json::array({{{"calls", calls}, {"launch_count", launches.size()}, {"launches", launches}}})},
          {"counted", counted}};
}

}  // namespace

TEST(LaunchBinding, TheReferenceGemmsCallsAreBoundToItsProof) {
  const LaunchBinding binding =
      bind_launches(profiled(), {{"correct", log_of({launch(kGemm, 355.2)}, 3, {2097152})},
                                 {"time", log_of({launch(kGemm, 355.0)}, 52, {2097152, 2097152})}});
  EXPECT_EQ(binding.status, StageStatus::passed) << binding.message;
  EXPECT_EQ(binding.details["profiled_mma"], 2097152);
}

TEST(LaunchBinding, AnotherKernelInTheCheckedCallsFailsTheProof) {
  // profiler_different_kernels.cu: wgmma_gemm under the profiler, simt_gemm otherwise.
  const LaunchBinding binding = bind_launches(
      profiled(), {{"correct", log_of({launch(kSimt, 17000.0, {32, 128, 1}, {0, 0, 0})}, 3, {0})}});
  EXPECT_EQ(binding.status, StageStatus::failed);
  EXPECT_NE(binding.message.find("profiled call launched"), std::string::npos) << binding.message;
  EXPECT_NE(binding.message.find("does not cover the code that was checked"), std::string::npos);
}

TEST(LaunchBinding, OneKernelWhosePathSwitchesFailsOnItsDurationOrItsCounts) {
  // runtime_flag_one_kernel.cu: the same launch everywhere, 24 ms of FMA when not profiled.
  const LaunchBinding by_duration =
      bind_launches(profiled(kGemm, 680.0), {{"time", log_of({launch(kGemm, 24489.0)}, 50, {})}});
  EXPECT_EQ(by_duration.status, StageStatus::failed);
  EXPECT_NE(by_duration.message.find("profiled call did not run the timed code"), std::string::npos)
      << by_duration.message;
  const LaunchBinding by_counts =
      bind_launches(profiled(), {{"correct", log_of({launch(kGemm, 355.0)}, 3, {0})}});
  EXPECT_EQ(by_counts.status, StageStatus::failed);
  EXPECT_NE(by_counts.message.find(
                "executed 0 wgmma instructions (hardware counters), but the profiled call 2097152"),
            std::string::npos)
      << by_counts.message;
}

TEST(LaunchBinding, DurationsWithinTheFactorOrTheSlackPass) {
  EXPECT_EQ(bind_launches(profiled(kGemm, 355), {{"time", log_of({launch(kGemm, 700)}, 50, {})}}).status,
            StageStatus::passed);  // under 2x
  EXPECT_EQ(bind_launches(profiled(kGemm, 4), {{"time", log_of({launch(kGemm, 22)}, 50, {})}}).status,
            StageStatus::passed);  // 5.5x, but within 20 us
  EXPECT_EQ(bind_launches(profiled(kGemm, 355), {{"time", log_of({launch(kGemm, 720)}, 50, {})}}).status,
            StageStatus::failed);
  // The checked calls' durations are not held to it: their L2 is not flushed.
  EXPECT_EQ(
      bind_launches(profiled(kGemm, 355), {{"correct", log_of({launch(kGemm, 9000)}, 3, {2097152})}}).status,
      StageStatus::passed);
}

TEST(LaunchBinding, CountsWithinOnePercentPass) {
  EXPECT_EQ(bind_launches(profiled(), {{"time", log_of({launch(kGemm, 355)}, 50, {2097152 + 20000})}}).status,
            StageStatus::passed);
  EXPECT_EQ(bind_launches(profiled(), {{"time", log_of({launch(kGemm, 355)}, 50, {2097152 / 2})}}).status,
            StageStatus::failed);
}

TEST(LaunchBinding, ALaunchWithoutClusterMatchesEitherSpellingOfNone) {
  NcuReport report = profiled();
  report.launches[0].cluster = Dim3{0, 0, 0};
  EXPECT_EQ(
      bind_launches(report, {{"time", log_of({launch(kGemm, 355, {132, 1, 1}, {1, 1, 1})}, 50, {})}}).status,
      StageStatus::passed);
  EXPECT_EQ(
      bind_launches(report, {{"time", log_of({launch(kGemm, 355, {132, 1, 1}, {2, 1, 1})}, 50, {})}}).status,
      StageStatus::failed);
  EXPECT_EQ(bind_launches(profiled(), {{"time", log_of({launch(kGemm, 355, {66, 1, 1})}, 50, {})}}).status,
            StageStatus::failed);  // another grid
}

TEST(LaunchBinding, NoRecordOrNoCountIsAHarnessErrorNeverAPass) {
  json unavailable = log_of({}, 0, {});
  unavailable["recorder"] = "unavailable";
  unavailable["problem"] =
      "launch recorder: cuptiActivityEnable(CONCURRENT_KERNEL): CUPTI_ERROR_NOT_INITIALIZED";
  LaunchBinding binding = bind_launches(profiled(), {{"time", unavailable}});
  EXPECT_EQ(binding.status, StageStatus::harness_error);
  EXPECT_NE(binding.message.find("could not be recorded"), std::string::npos) << binding.message;

  json uncounted = log_of({launch(kGemm, 355)}, 3, {});
  uncounted["counted"] =
      json::array({{{"where", "trial 1"}, {"problem", "tensor counter: cuptiProfilerInitialize failed"}}});
  binding = bind_launches(profiled(), {{"correct", uncounted}});
  EXPECT_EQ(binding.status, StageStatus::harness_error);
  EXPECT_NE(binding.message.find("could not be counted"), std::string::npos) << binding.message;

  // A failure outranks a harness error, whichever came first.
  binding =
      bind_launches(profiled(), {{"correct", uncounted}, {"time", log_of({launch(kSimt, 355)}, 50, {})}});
  EXPECT_EQ(binding.status, StageStatus::failed);
}

TEST(LaunchBinding, TheHopperMmaCounterCountsEveryWarpgroupMmaOpcode) {
  NcuReport report = profiled();
  report.launches[0].opcodes = {{"HGMMA.64x128x16.F32.BF16", 8},
                                {"QGMMA.64x128x32.F32.E4M3.E4M3", 4},
                                {"HMMA.16816.F32.BF16", 100},
                                {"FFMA", 1000}};
  EXPECT_EQ(counted_instructions(kHopper.counters->mma, report), 12);
}

// Where the profile knows no counter (Blackwell), the calls cannot be bound by counts: a harness error that
// names why, never a pass.
TEST(LaunchBinding, AnArchitectureWithoutCountersCannotBindCounts) {
  const ArchProfile& blackwell = *find_arch("sm_100a");
  ASSERT_FALSE(blackwell.counters);
  const LaunchBinding binding = ptxbench::bind_launches(
      blackwell, profiled(), {{"time", log_of({launch(kGemm, 355.0)}, 52, {2097152})}});
  EXPECT_EQ(binding.status, StageStatus::harness_error);
  EXPECT_NE(binding.message.find("B200"), std::string::npos) << binding.message;
}

TEST(LaunchBinding, ACallOfMoreLaunchesThanReportedIsComparedOnWhatWasReported) {
  // The solution process reports the first 32 launches of a call and their number.
  NcuReport report = profiled();
  report.launches.resize(40, report.launches[0]);
  json launches = json::array();
  for (int k = 0; k < 32; ++k) launches.push_back(launch(kGemm, 355));
  json log = log_of(launches, 50, {});
  log["signatures"][0]["launch_count"] = 40;
  EXPECT_EQ(bind_launches(report, {{"time", log}}).status, StageStatus::passed);
  log["signatures"][0]["launch_count"] = 41;
  EXPECT_EQ(bind_launches(report, {{"time", log}}).status, StageStatus::failed);
}
