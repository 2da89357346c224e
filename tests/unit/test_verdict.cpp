#include <gtest/gtest.h>

#include "eval/verdict.h"

using namespace ptxbench;

namespace {

Verdict with_stages(std::initializer_list<std::pair<const char*, StageStatus>> stages) {
  Verdict v;
  v.task_id = "gemm-bf16-n4096-k4096-sm90a";
  v.arch = "sm_90a";
  v.submission_hash = "abc";
  v.source_name = "solution.cu";
  v.created_at = "2026-11-30T00:00:00Z";
  v.ptxbench_version = "test";
  v.host = "no GPU";
  for (auto [name, status] : stages) v.stages.push_back({.name = name, .status = status, .message = "m"});
  return v;
}

}  // namespace

TEST(Verdict, OverallStatus) {
  using S = StageStatus;
  EXPECT_EQ(with_stages({{"compile", S::passed}, {"correct", S::passed}}).overall(), OverallStatus::passed);
  EXPECT_EQ(with_stages({{"compile", S::passed}, {"correct", S::skipped}}).overall(),
            OverallStatus::incomplete);
  EXPECT_EQ(with_stages({{"compile", S::failed}, {"correct", S::skipped}}).overall(), OverallStatus::failed);
  EXPECT_EQ(with_stages({{"compile", S::passed}, {"correct", S::timeout}}).overall(), OverallStatus::failed);
  EXPECT_EQ(with_stages({{"compile", S::passed}, {"correct", S::runtime_error}}).overall(),
            OverallStatus::failed);
  EXPECT_EQ(with_stages({{"compile", S::passed}, {"correct", S::harness_error}}).overall(),
            OverallStatus::error);
  // A failure outweighs a harness error: the submission is wrong whatever else happened.
  EXPECT_EQ(with_stages({{"compile", S::harness_error}, {"correct", S::failed}}).overall(),
            OverallStatus::failed);
  EXPECT_EQ(with_stages({}).overall(), OverallStatus::incomplete);
}

// The service answers an identical submission with a stored verdict only when nothing in it depended on the
// host's state: no harness error, no time-out (a compile that ran out of time under load, as the compile
// cache never keeps one).
TEST(Verdict, OnlyAVerdictTheHostDidNotShapeIsReusable) {
  using S = StageStatus;
  EXPECT_TRUE(with_stages({{"compile", S::passed}, {"correct", S::failed}}).reusable());
  EXPECT_TRUE(with_stages({{"compile", S::failed}, {"correct", S::skipped}}).reusable());
  EXPECT_TRUE(with_stages({{"compile", S::passed}, {"sanitize", S::skipped}}).reusable());
  EXPECT_FALSE(with_stages({{"compile", S::timeout}, {"correct", S::skipped}}).reusable());
  EXPECT_FALSE(with_stages({{"compile", S::passed}, {"sanitize", S::timeout}}).reusable());
  EXPECT_FALSE(with_stages({{"compile", S::passed}, {"sanitize", S::harness_error}}).reusable());
}

TEST(Verdict, SummaryNamesTheFailingStage) {
  Verdict v = with_stages({{"compile", StageStatus::passed}, {"correct", StageStatus::failed}});
  v.stage_mut("correct").message = "3 of 4 shapes mismatch\nmore detail";
  EXPECT_EQ(v.summary(), "failed at correct: 3 of 4 shapes mismatch");
  EXPECT_NE(v.feedback().find("[correct] failed: 3 of 4 shapes mismatch\nmore detail"), std::string::npos);
}

TEST(Verdict, SummaryOfAnIncompleteVerdictSaysWhy) {
  Verdict v = with_stages({{"compile", StageStatus::passed}, {"time", StageStatus::skipped}});
  v.stage_mut("time").message = "no GPU here";
  EXPECT_EQ(v.summary(), "incomplete: time skipped (no GPU here)");
}

TEST(Verdict, JsonRoundTrip) {
  Verdict v = with_stages({{"compile", StageStatus::passed}, {"time", StageStatus::passed}});
  v.speedup = 0.97;
  v.coverage = 0.999;
  v.stage_mut("time").details = {{"median_us", 1234.5}};
  v.stage_mut("time").wall_s = 2.5;
  const auto doc = to_json(v);
  EXPECT_EQ(doc["status"], "passed");
  EXPECT_EQ(doc["schema"], documents::verdict.version);
  EXPECT_EQ(doc["kind"], "verdict");
  const Verdict back = verdict_from_json(doc);
  EXPECT_EQ(to_json(back), doc);
  EXPECT_EQ(back.stage("time")->details["median_us"], 1234.5);
}

TEST(Verdict, RejectsOtherSchemas) {
  auto doc = to_json(with_stages({{"compile", StageStatus::passed}}));
  doc["schema"] = 99;
  EXPECT_THROW(verdict_from_json(doc), std::invalid_argument);
  EXPECT_THROW(stage_status_from_string("great"), std::invalid_argument);
}

// The track is part of the verdict; a verdict stored before tracks (no "track") is CUDA's.
TEST(Verdict, SaysItsTrack) {
  Verdict v = with_stages({{"compile", StageStatus::passed}});
  EXPECT_EQ(to_json(v)["track"], "cuda");
  v.track = "triton";
  auto doc = to_json(v);
  EXPECT_EQ(doc["track"], "triton");
  EXPECT_EQ(verdict_from_json(doc).track, "triton");
  doc.erase("track");
  EXPECT_EQ(verdict_from_json(doc).track, "cuda");
}

// The GPU a verdict was judged on (run --gpus, worker --gpu); a verdict stored before the field: none named.
TEST(Verdict, SaysItsDevice) {
  Verdict v = with_stages({{"compile", StageStatus::passed}});
  EXPECT_EQ(to_json(v)["device"], "");
  v.device = "1";
  auto doc = to_json(v);
  EXPECT_EQ(verdict_from_json(doc).device, "1");
  doc.erase("device");
  EXPECT_EQ(verdict_from_json(doc).device, "");
}

// The kernels' speed: the baseline's median over the summed kernel durations of the timed calls' launches, by
// the signature most timed calls had; nothing when a part is missing.
TEST(Verdict, KernelSpeedupSumsTheTimedCallsKernels) {
  Verdict v = with_stages({{"instructions", StageStatus::passed}, {"time", StageStatus::passed}});
  v.speedup = 0.662;
  EXPECT_FALSE(v.kernel_speedup()) << "no baseline time, no launch log";
  v.stage_mut("time").details = {{"baseline", {{"event_us", {{"median", 360.0}}}}}};
  EXPECT_FALSE(v.kernel_speedup()) << "no launch log";
  const auto launch = [](double us) { return nlohmann::json{{"name", "k"}, {"duration_us", us}}; };
  v.stage_mut("instructions").details["binding"]["stages"]["time"]["signatures"] = {
      {{"calls", 2}, {"launches", {launch(900.0)}}},
      {{"calls", 50}, {"launches", {launch(100.0), launch(250.0)}}}};
  ASSERT_TRUE(v.kernel_speedup());
  EXPECT_DOUBLE_EQ(*v.kernel_speedup(), 360.0 / 350.0);
  v.speedup.reset();
  EXPECT_FALSE(v.kernel_speedup()) << "not timed against a baseline";
  v.speedup = 0.662;
  v.stage_mut("instructions").details["binding"] = "not an object";
  EXPECT_FALSE(v.kernel_speedup());
}
