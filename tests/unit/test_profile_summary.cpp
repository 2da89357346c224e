// The profiler feedback's summary (eval/profile_summary.h): from Nsight Compute's raw page as recorded on the
// H200, and from one with the sections' columns, in the same format.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "agent/feedback.h"
#include "arch/profile.h"
#include "eval/ncu_report.h"
#include "eval/profile_summary.h"
#include "util/files.h"

using namespace ptxbench;

namespace {

const ProfileSpec& hopper() {
  return find_arch("sm_90a")->profile;
}

// Two launches of a raw page with the profile's section columns (values as ncu prints them: thousands
// separators, instanced cells), the second twice as long as the first.
const std::string kSections =
    "==PROF== Connected to process 1\n"
    "\"ID\",\"Process ID\",\"Kernel Name\",\"Stream\",\"Block Size\",\"Grid "
    "Size\",\"gpu__time_duration.sum\","
    "\"launch__registers_per_thread\",\"sm__warps_active.avg.pct_of_peak_sustained_active\","
    "\"gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed\",\"lts__throughput.avg.pct_of_peak_sustained_"
    "elapsed\","
    "\"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active\","
    "\"smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio\","
    "\"smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio\","
    "\"smsp__average_warps_issue_stalled_selected_per_issue_active.ratio\","
    "\"smsp__average_warps_issue_stalled_wait_per_issue_active.ratio\","
    "\"smsp__average_warps_issue_stalled_barrier_not_issued_per_issue_active.ratio\","
    "\"sass__inst_executed_per_opcode_with_modifier_all\"\n"
    "\"\",\"\",\"\",\"\",\"\",\"\",\"usecond\",\"register/"
    "thread\",\"%\",\"%\",\"%\",\"%\",\"\",\"\",\"\",\"\",\"\",\"inst\"\n"
    "\"0\",\"1\",\"gemm_kernel\",\"13\",\"(384, 1, 1)\",\"(132, 1, 1)\",\"100\",\"168 (0: "
    "168)\",\"12.5\",\"20\",\"30\","
    "\"60\",\"3\",\"1\",\"1\",\"0\",\"9\",\"8 (HGMMA.64x128x16.F32.BF16: 8)\"\n"
    "\"1\",\"1\",\"epilogue_kernel\",\"13\",\"(128, 1, 1)\",\"(1,024, 1, "
    "1)\",\"200\",\"40\",\"50\",\"80\",\"60\","
    "\"0\",\"1\",\"0\",\"1\",\"2\",\"0\",\"4 (IMAD: 4)\"\n"
    "\"2\",\"1\",\"foreign_kernel\",\"14\",\"(32, 1, 1)\",\"(1, 1, "
    "1)\",\"5\",\"255\",\"99\",\"99\",\"99\",\"99\",\"99\","
    "\"0\",\"0\",\"0\",\"0\",\"1 (FFMA: 1)\"\n";

}  // namespace

TEST(ProfileSummary, TheSectionsFiguresOverTheSolutionsLaunchesWeightedByDuration) {
  const NcuReport report = parse_ncu_report(kSections, &hopper());
  ASSERT_EQ(report.launches.size(), 3u);
  EXPECT_DOUBLE_EQ(report.launches[0].metrics.at("launch__registers_per_thread"), 168);
  const ProfileSummary s = summarize_profile(report, hopper(), {0, 1});  // not the foreign launch 2
  EXPECT_EQ(s.launches, 2);
  EXPECT_DOUBLE_EQ(s.duration_us, 300);
  EXPECT_DOUBLE_EQ(s.figures.at("achieved_occupancy_pct"), (12.5 * 100 + 50 * 200) / 300);
  EXPECT_DOUBLE_EQ(s.figures.at("dram_throughput_pct"), (20 * 100 + 80 * 200) / 300.0);
  EXPECT_DOUBLE_EQ(s.figures.at("l2_throughput_pct"), (30 * 100 + 60 * 200) / 300.0);
  EXPECT_DOUBLE_EQ(s.figures.at("tensor_pipe_pct"), 60 * 100 / 300.0);
  EXPECT_DOUBLE_EQ(s.figures.at("registers_per_thread"), 168) << "the largest, not a mean";
  EXPECT_TRUE(s.missing.empty());
  // Stalls: long_scoreboard 3*100 + 1*200 = 500, barrier 100, wait 400 ("selected" is no stall, a
  // "_not_issued" variant repeats its reason): shares of 1000.
  ASSERT_EQ(s.stalls.size(), 3u);
  EXPECT_EQ(s.stalls[0].first, "long_scoreboard");
  EXPECT_DOUBLE_EQ(s.stalls[0].second, 50);
  EXPECT_EQ(s.stalls[1].first, "wait");
  EXPECT_DOUBLE_EQ(s.stalls[1].second, 40);
  EXPECT_EQ(s.stalls[2].first, "barrier");

  // The stored form reads back whole, and the text is the same every time and bounded.
  const ProfileSummary back = profile_summary_from_json(to_json(s));
  EXPECT_EQ(to_json(back), to_json(s));
  const std::string text = profile_text(s, 0);
  EXPECT_EQ(text,
            "Profile of the main shape (Nsight Compute, 2 launches of yours, 300.0 us):\n"
            "- tensor pipe active 20.0% of peak\n"
            "- achieved occupancy 37.5% of the warps an SM holds\n"
            "- DRAM throughput 60.0% of peak\n"
            "- L2 throughput 50.0% of peak\n"
            "- 168 registers per thread\n"
            "- 0 bytes of register spills\n"
            "- warps stalled on (share of stalls): long_scoreboard 50%, wait 40%, barrier 10%\n");
  EXPECT_LE(profile_text(s, 0, 120).size(), 121u);
  EXPECT_EQ(profile_text(summarize_profile(report, hopper(), {})), "") << "no launch of the solution's";
}

// The raw page with the sections as ncu printed it on the H200
// (tests/data/ncu/multi_kernel_sections_h200.csv): every figure read under the names the Hopper profile
// gives, for cuBLAS's GEMM kernel (launch 2) alone.
TEST(ProfileSummary, TheRecordedSectionsGiveEveryFigure) {
  const NcuReport report = parse_ncu_report(
      read_file(std::filesystem::path(PTXBENCH_TEST_DATA) / "ncu" / "multi_kernel_sections_h200.csv"),
      &hopper());
  ASSERT_EQ(report.launches.size(), 3u);
  EXPECT_TRUE(report.errors.empty());
  // Only what the summary reads is kept: the figures' metrics and the stall reasons, of some 300 columns.
  for (const auto& [metric, value] : report.launches[2].metrics)
    EXPECT_TRUE(hopper().reads(metric)) << metric;
  EXPECT_FALSE(report.launches[2].metrics.contains("device__attribute_max_registers_per_thread"));
  EXPECT_TRUE(parse_ncu_report(read_file(std::filesystem::path(PTXBENCH_TEST_DATA) / "ncu" /
                                         "multi_kernel_sections_h200.csv"))
                  .launches[2]
                  .metrics.empty())
      << "without a profile, nothing";
  const ProfileSummary s = summarize_profile(report, hopper(), {2});
  EXPECT_EQ(s.launches, 1);
  EXPECT_NEAR(s.duration_us, 6.944, 1e-9);
  EXPECT_TRUE(s.missing.empty()) << fmt::format("{}", fmt::join(s.missing, ", "));
  EXPECT_DOUBLE_EQ(s.figures.at("tensor_pipe_pct"), 45.17);
  EXPECT_DOUBLE_EQ(s.figures.at("achieved_occupancy_pct"), 13.97);
  EXPECT_DOUBLE_EQ(s.figures.at("dram_throughput_pct"), 12.67);
  EXPECT_DOUBLE_EQ(s.figures.at("l2_throughput_pct"), 30.77);
  EXPECT_DOUBLE_EQ(s.figures.at("registers_per_thread"), 168);
  ASSERT_EQ(s.stalls.size(), ProfileSummary::kTopStalls);
  EXPECT_EQ(s.stalls[0].first, "long_scoreboard");
  EXPECT_NEAR(s.stalls[0].second, 49.1, 0.1);
  EXPECT_EQ(s.stalls[1].first, "wait");
  EXPECT_EQ(s.stalls[2].first, "no_instruction");
  EXPECT_EQ(s.stalls[3].first, "imc_miss");
  // The two small kernels of the same process, together: weighted by their durations.
  const ProfileSummary both = summarize_profile(report, hopper(), {0, 1});
  EXPECT_NEAR(both.figures.at("achieved_occupancy_pct"), (21.20 * 2368 + 11.98 * 2112) / (2368 + 2112), 1e-9);
}

// The raw page as ncu printed it on the H200 without the sections (tests/data/ncu/multi_kernel_h200.csv):
// the registers are there, the rest is named as not reported, never made up.
TEST(ProfileSummary, WhatTheRecordedReportLacksIsNamedNotInvented) {
  const NcuReport report = parse_ncu_report(
      read_file(std::filesystem::path(PTXBENCH_TEST_DATA) / "ncu" / "multi_kernel_h200.csv"), &hopper());
  const ProfileSummary s = summarize_profile(report, hopper(), {2});
  EXPECT_EQ(s.launches, 1);
  EXPECT_DOUBLE_EQ(s.figures.at("registers_per_thread"), 168);
  EXPECT_EQ(s.missing, (std::vector<std::string>{"achieved_occupancy_pct", "dram_throughput_pct",
                                                 "l2_throughput_pct", "tensor_pipe_pct"}));
  EXPECT_TRUE(s.stalls.empty());
  const std::string text = profile_text(s);
  EXPECT_NE(text.find("- 168 registers per thread\n"), std::string::npos) << text;
  EXPECT_NE(text.find("not reported here: achieved_occupancy_pct, dram_throughput_pct"), std::string::npos);
  EXPECT_EQ(text.find("spills"), std::string::npos) << "unknown spills are not said to be 0";
}

// The feedback a model sees: the profile after the verdict when the instruction stage made one, with the
// compile's spills; nothing when it did not (run --feedback verdict).
TEST(ProfileSummary, TheTurnsFeedbackCarriesItWhenTheStageMadeOne) {
  Verdict v;
  v.stages.push_back({.name = "compile",
                      .status = StageStatus::passed,
                      .details = {{"kernels",
                                   {{{"spill_store_bytes", 16}, {"spill_load_bytes", 8}},
                                    {{"spill_store_bytes", 0}, {"spill_load_bytes", 0}}}}}});
  v.stages.push_back({.name = "instructions", .status = StageStatus::passed});
  EXPECT_EQ(agent::profile_feedback(v), "");
  EXPECT_EQ(agent::compact_feedback(v).find("Profile of the main shape"), std::string::npos);
  v.stages.back().details = {
      {"profile", to_json(summarize_profile(parse_ncu_report(kSections, &hopper()), hopper(), {0}))}};
  const std::string feedback = agent::compact_feedback(v);
  EXPECT_NE(feedback.find("Profile of the main shape (Nsight Compute, 1 launch of yours, 100.0 us)"),
            std::string::npos)
      << feedback;
  EXPECT_NE(feedback.find("- 24 bytes of register spills"), std::string::npos) << feedback;
}
