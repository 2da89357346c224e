// Parsing compute-sanitizer output, on real H200 outputs (tests/data/sanitizer/README.md) and hand-made
// forms.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "eval/sanitizer_report.h"
#include "util/files.h"

namespace ptxbench {
namespace {

SanitizerReport parse_fixture(const std::string& name, size_t max_errors = 5) {
  return parse_sanitizer_report(read_file(std::string(PTXBENCH_TEST_DATA) + "/sanitizer/" + name),
                                max_errors);
}

TEST(SanitizerReport, CleanRuns) {
  for (const auto* name : {"memcheck_clean.txt", "synccheck_clean.txt"}) {
    const auto report = parse_fixture(name);
    ASSERT_TRUE(report.error_count.has_value()) << name;
    EXPECT_EQ(*report.error_count, 0) << name;
    EXPECT_FALSE(report.found_errors()) << name;
    EXPECT_FALSE(report.tool_failed) << name;
    EXPECT_FALSE(report.target_returned_error) << name;
    EXPECT_TRUE(report.errors.empty()) << name;
  }
}

// The lines with which compute-sanitizer says the program ended with an error (the headline as an H100 run of
// 2026-12-07 reported it) are how it ended, not hazards: the summary's count stands.
TEST(SanitizerReport, AProgramThatEndedBadlyIsNoHazard) {
  const auto report = parse_sanitizer_report(
      "========= COMPUTE-SANITIZER\n"
      "========= Error: process didn't terminate successfully\n"
      "========= Target application returned an error\n"
      "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n");
  EXPECT_TRUE(report.target_ended_abnormally);
  EXPECT_TRUE(report.target_returned_error);
  EXPECT_EQ(report.error_count, 0);
  EXPECT_EQ(report.errors_printed, 0);
  EXPECT_FALSE(report.found_errors());
  EXPECT_FALSE(report.tool_failed);
  EXPECT_FALSE(parse_fixture("memcheck_clean.txt").target_ended_abnormally);
}

TEST(SanitizerReport, MisalignedGlobalReadsBeyondThePrintLimit) {
  const auto report = parse_fixture("memcheck_misaligned.txt");
  EXPECT_EQ(report.error_count, 34);
  EXPECT_EQ(report.errors_not_printed, 24);
  EXPECT_EQ(report.errors_printed, 10);
  EXPECT_TRUE(report.target_returned_error);
  EXPECT_FALSE(report.tool_failed);
  ASSERT_EQ(report.errors.size(), 5u) << "only the first five are kept";
  const auto& first = report.errors[0];
  EXPECT_EQ(first.kind, SanitizerErrorKind::memory_access);
  EXPECT_EQ(first.headline, "Invalid __global__ read of size 4 bytes");
  EXPECT_EQ(first.kernel, "misaligned_kernel(const char *, float *)");
  EXPECT_EQ(first.location, "sanitizer_cases.cu:33");
  EXPECT_EQ(first.thread, "(0,0,0)");
  EXPECT_EQ(first.block, "(0,0,0)");
  EXPECT_EQ(first.address, "0x7f8828800201");
  EXPECT_EQ(
      first.detail,
      "Access to 0x7f8828800201 is misaligned and is inside the nearest allocation at 0x7f8828800200 of size "
      "4,096 bytes");
  EXPECT_EQ(report.errors[4].thread, "(4,0,0)");
  EXPECT_EQ(
      first.summary(),
      "Invalid __global__ read of size 4 bytes in misaligned_kernel(const char *, float *) at "
      "sanitizer_cases.cu:33, thread (0,0,0) block (0,0,0): Access to 0x7f8828800201 is misaligned and is "
      "inside the nearest allocation at 0x7f8828800200 of size 4,096 bytes");
  EXPECT_EQ(parse_fixture("memcheck_misaligned.txt", 2).errors.size(), 2u);
}

TEST(SanitizerReport, SharedOutOfBoundsThenHostApiErrors) {
  const auto report = parse_fixture("memcheck_oob_shared.txt");
  EXPECT_EQ(report.error_count, 3);
  EXPECT_EQ(report.errors_not_printed, 0);
  ASSERT_EQ(report.errors.size(), 3u);
  EXPECT_EQ(report.errors[0].kind, SanitizerErrorKind::memory_access);
  EXPECT_EQ(report.errors[0].headline, "Invalid __shared__ write of size 4 bytes");
  EXPECT_EQ(report.errors[0].kernel, "oob_shared_kernel(float *, int)");
  EXPECT_EQ(report.errors[0].thread, "(5,0,0)");
  EXPECT_EQ(report.errors[0].address, "0x400414");
  EXPECT_EQ(report.errors[0].detail, "Access to 0x400414 is out of bounds");
  EXPECT_EQ(report.errors[1].kind, SanitizerErrorKind::host_api);
  EXPECT_NE(report.errors[1].headline.find("cudaErrorLaunchFailure (error 719)"), std::string::npos);
  EXPECT_NE(report.errors[1].headline.find("cudaDeviceSynchronize"), std::string::npos);
  EXPECT_TRUE(report.errors[1].kernel.empty());
  EXPECT_NE(report.errors[2].headline.find("cudaMemcpy"), std::string::npos);
}

TEST(SanitizerReport, SynccheckDivergentBarrierInWarp) {
  const auto report = parse_fixture("synccheck_divergent_warp.txt");
  EXPECT_EQ(report.error_count, 64);
  EXPECT_EQ(report.errors_not_printed, 54);
  ASSERT_EQ(report.errors.size(), 5u);
  EXPECT_EQ(report.errors[0].kind, SanitizerErrorKind::barrier);
  EXPECT_EQ(report.errors[0].headline, "Barrier error detected. Divergent thread(s) in warp.");
  EXPECT_EQ(report.errors[0].kernel, "divergent_warp_kernel(float *)");
  EXPECT_EQ(report.errors[0].location, "sanitizer_cases.cu:39");
  EXPECT_EQ(report.errors[0].thread, "(96,0,0)");
  EXPECT_TRUE(report.errors[0].address.empty());
}

// Real outputs that report nothing although the code is wrong: what the sanitize stage cannot promise.
TEST(SanitizerReport, KnownBlindSpotsReadAsClean) {
  // 64 threads wrote past a 512-byte buffer into the next cudaMalloc'd buffer: inside an allocation, so
  // unseen.
  EXPECT_EQ(parse_fixture("memcheck_oob_global.txt").error_count, 0);
  // Warps 2 and 3 skip a __syncthreads that warps 0 and 1 wait at: exited or not, synccheck stays silent.
  EXPECT_EQ(parse_fixture("synccheck_divergent_block.txt").error_count, 0);
}

TEST(SanitizerReport, ToolFailures) {
  const auto no_cuda = parse_fixture("memcheck_no_cuda_program.txt");
  EXPECT_TRUE(no_cuda.tool_failed);
  EXPECT_EQ(no_cuda.tool_failure, "Target application terminated before first instrumented API call");
  EXPECT_FALSE(no_cuda.error_count.has_value());
  EXPECT_EQ(no_cuda.errors_printed, 0);

  const auto missing = parse_fixture("memcheck_missing_program.txt");
  EXPECT_TRUE(missing.tool_failed);
  EXPECT_EQ(missing.tool_failure, "Target application doesn't exist or is not a valid executable");

  const auto nothing = parse_sanitizer_report("bash: compute-sanitizer: command not found\n");
  EXPECT_TRUE(nothing.tool_failed);

  const auto unsupported = parse_sanitizer_report(
      "========= COMPUTE-SANITIZER\n========= Error: Device not supported. Please refer to the "
      "documentation\n");
  EXPECT_TRUE(unsupported.tool_failed);
  EXPECT_EQ(unsupported.tool_failure, "Device not supported. Please refer to the documentation");
}

TEST(SanitizerReport, KilledBeforeTheSummaryIsAToolFailure) {
  const auto report = parse_sanitizer_report(
      "========= COMPUTE-SANITIZER\n"
      "========= Invalid __global__ write of size 4 bytes\n"
      "=========     at k(float *)+0x70 in k.cu:9\n");
  EXPECT_TRUE(report.tool_failed);
  EXPECT_EQ(report.errors_printed, 1);
  ASSERT_EQ(report.errors.size(), 1u);
  EXPECT_EQ(report.errors[0].location, "k.cu:9");
}

// Hand-made in the layout of the real outputs above (memcheck did not catch our planted global write).
TEST(SanitizerReport, GlobalWriteOutOfBoundsHandMade) {
  const auto report = parse_sanitizer_report(
      "========= COMPUTE-SANITIZER\n"
      "========= Invalid __global__ write of size 4 bytes\n"
      "=========     at void gemm<128>(const __nv_bfloat16 *, float *, int)+0x1f0\n"
      "=========     by thread (64,0,0) in block (3,1,0)\n"
      "=========     Access to 0x7f0000000200 is out of bounds\n"
      "=========     and is 1 bytes after the nearest allocation at 0x7f0000000000 of size 512 bytes\n"
      "=========     Saved host backtrace up to driver entry point at kernel launch time\n"
      "=========         Host Frame: main [0x9092] in a.out\n"
      "========= \n"
      "========= ERROR SUMMARY: 1 error\n");
  EXPECT_EQ(report.error_count.value_or(0), 1u);
  ASSERT_EQ(report.errors.size(), 1u);
  const auto& error = report.errors[0];
  EXPECT_EQ(error.kernel, "void gemm<128>(const __nv_bfloat16 *, float *, int)");
  EXPECT_EQ(error.location, "+0x1f0") << "no line information without -lineinfo";
  EXPECT_EQ(error.block, "(3,1,0)");
  EXPECT_EQ(error.address, "0x7f0000000200");
  EXPECT_NE(error.summary().find("1 bytes after the nearest allocation"), std::string::npos);
  EXPECT_EQ(error.summary().find("+0x1f0"), std::string::npos);
}

TEST(SanitizerReport, OlderCudaMemcheckLayoutAndRacecheck) {
  const auto old = parse_sanitizer_report(
      "========= COMPUTE-SANITIZER\n"
      "========= Invalid __global__ read of size 8\n"
      "=========     at 0x000000c8 in /src/helper.cuh:75:void projection<double>(double*, int)\n"
      "=========     by thread (9,0,0) in block (0,0,0)\n"
      "=========     Address 0x000370e8 is out of bounds\n"
      "=========\n"
      "========= ERROR SUMMARY: 1 error\n");
  ASSERT_EQ(old.errors.size(), 1u);
  EXPECT_EQ(old.errors[0].kernel, "void projection<double>(double*, int)");
  EXPECT_EQ(old.errors[0].location, "/src/helper.cuh:75");
  EXPECT_EQ(old.errors[0].address, "0x000370e8");
}

// racecheck ends with its own summary and no ERROR SUMMARY line (real H200 outputs: sanitizer_cases.cu's race
// and clean modes). Read as the tool's finish, a clean run is clean, not a tool failure.
TEST(SanitizerReport, RacecheckSummaryEndsTheRun) {
  const auto clean = parse_fixture("racecheck_clean.txt");
  EXPECT_FALSE(clean.tool_failed) << clean.tool_failure;
  ASSERT_TRUE(clean.error_count.has_value());
  EXPECT_EQ(*clean.error_count, 0);
  EXPECT_FALSE(clean.found_errors());

  const auto race = parse_fixture("racecheck_race.txt");
  EXPECT_FALSE(race.tool_failed) << race.tool_failure;
  EXPECT_EQ(race.error_count, 1);
  ASSERT_EQ(race.errors.size(), 1u);
  EXPECT_EQ(race.errors[0].kind, SanitizerErrorKind::race);
  EXPECT_EQ(race.errors[0].kernel, "race_kernel(float *)");
  EXPECT_EQ(race.errors[0].location, "sanitizer_cases.cu:69");
  EXPECT_TRUE(race.found_errors());
}

// initcheck in one process: a read of memory nothing wrote (sanitizer_cases.cu's uninit mode).
TEST(SanitizerReport, InitcheckUninitialisedRead) {
  EXPECT_FALSE(parse_fixture("initcheck_clean.txt").found_errors());
  const auto uninit = parse_fixture("initcheck_uninit.txt");
  EXPECT_FALSE(uninit.tool_failed) << uninit.tool_failure;
  ASSERT_FALSE(uninit.errors.empty());
  EXPECT_EQ(uninit.errors[0].kind, SanitizerErrorKind::uninitialized);
  EXPECT_EQ(uninit.errors[0].location, "sanitizer_cases.cu:75");
}

TEST(SanitizerReport, Json) {
  const auto doc = to_json(parse_fixture("memcheck_oob_shared.txt"));
  EXPECT_EQ(doc["error_count"], 3);
  EXPECT_EQ(doc["errors"][0]["kind"], "memory_access");
  EXPECT_EQ(doc["errors"][1]["kind"], "host_api");
  EXPECT_EQ(doc["tool_failed"], false);
  EXPECT_TRUE(to_json(parse_fixture("memcheck_no_cuda_program.txt"))["error_count"].is_null());
}

}  // namespace
}  // namespace ptxbench

// A kernel's name is the solution's to choose: a line of any length is read (up to its first 4 kB) and never
// overflows the stack (fuzz/tool_reports.cpp found a 40 kB line that did).
TEST(SanitizerReport, AnyLengthOfLineIsParsed) {
  const std::string name(1 << 20, 'k');
  const std::string log =
      "========= COMPUTE-SANITIZER\n"
      "========= Invalid __global__ write of size 4 bytes\n"
      "=========     at " +
      name +
      "(float *)+0x60 in solution.cu:3\n"
      "=========     by thread (0,0,0) in block (0,0,0)\n"
      "=========\n"
      "========= ERROR SUMMARY: 1 error\n";
  const auto report = ptxbench::parse_sanitizer_report(log);
  EXPECT_FALSE(report.tool_failed) << report.tool_failure;
  ASSERT_EQ(report.errors.size(), 1u);
  EXPECT_EQ(report.error_count.value_or(0), 1u);
  EXPECT_EQ(report.errors[0].thread, "(0,0,0)");
  EXPECT_LE(report.errors[0].summary().size(), 8192u);
}
