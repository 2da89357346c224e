// Parsing Nsight Compute's per-opcode CSV, on real H200 outputs (tests/data/ncu/README.md) and edge cases.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <numeric>

#include "eval/ncu_report.h"
#include "util/files.h"

namespace ptxbench {
namespace {

std::string fixture(const std::string& name) {
  return read_file(std::string(PTXBENCH_TEST_DATA) + "/ncu/" + name);
}

int64_t sum_of(const std::map<std::string, int64_t>& opcodes) {
  return std::accumulate(opcodes.begin(), opcodes.end(), int64_t{0},
                         [](int64_t total, const auto& entry) { return total + entry.second; });
}

TEST(NcuReport, ReadsProbeRunWithBothOpcodeColumns) {
  const auto report = parse_ncu_report(fixture("per_opcode_raw_h200.csv"));
  EXPECT_TRUE(report.errors.empty()) << report.errors.front();
  ASSERT_EQ(report.launches.size(), 2u);
  EXPECT_EQ(report.opcode_metric, "sass__inst_executed_per_opcode_with_modifier_all");
  EXPECT_TRUE(report.opcodes_have_modifiers);
  EXPECT_FALSE(report.no_kernels_profiled);

  const auto& wgmma = report.launches[0];
  EXPECT_EQ(wgmma.id, 0);
  EXPECT_EQ(wgmma.kernel_name, "wgmma_kernel(float *, int)");
  EXPECT_EQ(wgmma.stream_id, 7);
  EXPECT_EQ(wgmma.grid.x, 1);
  EXPECT_EQ(wgmma.block.x, 128);
  EXPECT_EQ(wgmma.block.y, 1);
  EXPECT_EQ(wgmma.instructions_executed, 404);
  EXPECT_EQ(wgmma.opcodes.at("HGMMA.64x8x16.F32.BF16"), 4);
  EXPECT_EQ(wgmma.opcodes.at("WARPGROUP.ARRIVE"), 4);
  EXPECT_EQ(wgmma.opcodes.count("HGMMA"), 0u) << "base names come from the other column";
  // The launch metrics, written "0 (0: 0)" with --print-metric-instances details: no cluster, no dynamic
  // shared memory (the capture asked for no duration).
  ASSERT_TRUE(wgmma.cluster && wgmma.dynamic_shared_bytes);
  EXPECT_EQ(wgmma.cluster->x, 0);
  EXPECT_EQ(*wgmma.dynamic_shared_bytes, 0);
  EXPECT_FALSE(wgmma.duration_ns);
  EXPECT_EQ(sum_of(wgmma.opcodes), wgmma.instructions_executed) << "every instance read, none twice";

  const auto& mbar = report.launches[1];
  EXPECT_EQ(mbar.kernel_name, "mbar_kernel(int *)");
  EXPECT_EQ(mbar.opcodes.at("SYNCS.PHASECHK.TRANS64.TRYWAIT"), 4);
  EXPECT_EQ(sum_of(mbar.opcodes), 92);

  ASSERT_FALSE(report.program_output.empty());
  EXPECT_EQ(report.program_output.front(), "flag=1 out[0]=16.000000 out[1]=16.000000 out[511]=16.000000");
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_NE(report.warnings[0].find("unmodified GPU clocks"), std::string::npos);
}

TEST(NcuReport, ReadsSeveralKernelsStreamsAndALibraryKernel) {
  const auto report = parse_ncu_report(fixture("multi_kernel_h200.csv"));
  EXPECT_TRUE(report.errors.empty());
  ASSERT_EQ(report.launches.size(), 3u)
      << "the warm-up launches outside cudaProfilerStart/Stop are not profiled";
  EXPECT_EQ(report.launches[0].kernel_name, "void mine::scale_kernel<4>(float *, int)");
  EXPECT_EQ(report.launches[1].kernel_name, "plain_c_kernel");
  EXPECT_EQ(report.launches[2].kernel_name, "nvjet_sm90_tst_128x64_64x8_1x2_h_bz_TNT");
  EXPECT_EQ(report.launches[0].stream_id, 13);
  EXPECT_EQ(report.launches[1].stream_id, 14);
  EXPECT_EQ(report.launches[2].stream_id, 13);
  // The program printed cudaStreamGetId of its two streams: the same ids as ncu's Stream column.
  EXPECT_NE(
      std::find(report.program_output.begin(), report.program_output.end(), "cudaStreamGetId: s1=13 s2=14"),
      report.program_output.end());

  const auto& gemm = report.launches[2];
  EXPECT_EQ(gemm.grid.x, 2);
  EXPECT_EQ(gemm.grid.y, 64);
  EXPECT_EQ(gemm.grid.z, 1);
  EXPECT_EQ(gemm.block.x, 384);
  EXPECT_EQ(gemm.instructions_executed, 847109) << "thousands separators";
  EXPECT_EQ(gemm.opcodes.at("HGMMA.64x64x16.F32.BF16"), 65536);
  EXPECT_EQ(gemm.opcodes.at("UTMALDG.3D.MULTICAST"), 2048);
  EXPECT_EQ(sum_of(gemm.opcodes), gemm.instructions_executed);
  EXPECT_EQ(sum_of(report.launches[0].opcodes), 32768);
}

TEST(NcuReport, DeadCodeRunLacksTheWgmma) {
  const auto report = parse_ncu_report(fixture("probe_arg0_h200.csv"));
  ASSERT_EQ(report.launches.size(), 2u);
  const auto& wgmma = report.launches[0];
  EXPECT_EQ(wgmma.instructions_executed, 340);
  for (const auto& [opcode, count] : wgmma.opcodes) {
    EXPECT_NE(opcode.rfind("HGMMA", 0), 0u) << opcode;
    EXPECT_NE(opcode.rfind("WARPGROUP", 0), 0u) << opcode;
  }
}

TEST(NcuReport, NothingProfiled) {
  const auto report = parse_ncu_report(fixture("nothing_profiled_h200.txt"));
  EXPECT_TRUE(report.no_kernels_profiled);
  EXPECT_TRUE(report.launches.empty());
  EXPECT_TRUE(report.errors.empty());
  EXPECT_EQ(report.warnings.back(), "No kernels were profiled.");
  EXPECT_TRUE(report.opcode_metric.empty());
}

TEST(NcuReport, ErrorsAreKept) {
  const auto report = parse_ncu_report(
      "==PROF== Connected to process 12 (./x)\n"
      "==ERROR== Profiling is not supported on this device\n"
      "==PROF== Disconnected from process 12\n"
      "==WARNING== No kernels were profiled.\n");
  ASSERT_EQ(report.errors.size(), 1u);
  EXPECT_EQ(report.errors[0], "Profiling is not supported on this device");
  EXPECT_TRUE(report.no_kernels_profiled);
}

TEST(NcuReport, BaseOpcodeColumnAloneIsUsed) {
  const auto report = parse_ncu_report(
      "\"ID\",\"Process ID\",\"Kernel Name\",\"Stream\",\"Block Size\",\"Grid "
      "Size\",\"sass__inst_executed_per_opcode\"\n"
      "\"\",\"\",\"\",\"\",\"\",\"\",\"\"\n"
      "\"0\",\"5\",\"k(int)\",\"7\",\"(128, 1, 1)\",\"(4, 2, 1)\",\"1,012 (IMAD: 1,000; HGMMA: 12)\"\n");
  EXPECT_TRUE(report.errors.empty());
  EXPECT_EQ(report.opcode_metric, "sass__inst_executed_per_opcode");
  EXPECT_FALSE(report.opcodes_have_modifiers);
  ASSERT_EQ(report.launches.size(), 1u);
  EXPECT_EQ(report.launches[0].opcodes.at("HGMMA"), 12);
  EXPECT_EQ(report.launches[0].opcodes.at("IMAD"), 1000);
  EXPECT_EQ(report.launches[0].grid.y, 2);
}

// The launch metrics the instruction stage asks for beside the counts (kLaunchMetrics), with the duration in
// whatever unit the units row names; instanced cells ("2 (0: 2)") read as their totals.
TEST(NcuReport, LaunchMetricsGiveClusterSharedMemoryAndDuration) {
  const auto report = parse_ncu_report(
      "\"ID\",\"Process ID\",\"Kernel Name\",\"Stream\",\"Block Size\",\"Grid "
      "Size\",\"gpu__time_duration.sum\","
      "\"launch__cluster_dim_x\",\"launch__cluster_dim_y\",\"launch__cluster_dim_z\","
      "\"launch__shared_mem_per_block_dynamic\",\"sass__inst_executed_per_opcode_with_modifier_all\"\n"
      "\"\",\"\",\"\",\"\",\"\",\"\",\"usecond\",\"\",\"\",\"\",\"byte\",\"inst\"\n"
      "\"0\",\"5\",\"k\",\"13\",\"(384, 1, 1)\",\"(132, 1, 1)\",\"1,355.26\",\"2 (0: 2)\",\"1 (0: 1)\",\"1\","
      "\"218,112 (0: 218,112)\","
      "\"4 (HGMMA.64x256x16.F32.BF16: 4)\"\n"
      "\"1\",\"5\",\"k\",\"13\",\"(384, 1, 1)\",\"(132, 1, 1)\",\"n/a\",\"0\",\"0\",\"0\",\"0\",\"0\"\n");
  EXPECT_TRUE(report.errors.empty());
  ASSERT_EQ(report.launches.size(), 2u);
  const NcuLaunch& first = report.launches[0];
  ASSERT_TRUE(first.cluster && first.dynamic_shared_bytes && first.duration_ns);
  EXPECT_EQ(first.cluster->x, 2);
  EXPECT_EQ(*first.dynamic_shared_bytes, 218112);
  EXPECT_DOUBLE_EQ(*first.duration_ns, 1355260.0);
  EXPECT_FALSE(report.launches[1].duration_ns);  // a cell that is not a number is no duration
  EXPECT_EQ(report.launches[1].cluster->x, 0);
  // Without those columns (an older request) the fields are absent, not zero.
  const auto older = parse_ncu_report(
      "\"ID\",\"Process ID\",\"Kernel "
      "Name\",\"sass__inst_executed_per_opcode\"\n\"\",\"\",\"\",\"\"\n\"0\",\"5\",\"k\",\"0\"\n");
  ASSERT_EQ(older.launches.size(), 1u);
  EXPECT_FALSE(older.launches[0].cluster || older.launches[0].duration_ns ||
               older.launches[0].dynamic_shared_bytes);
}

TEST(NcuReport, MissingOpcodeColumnAndBadCellsAreErrors) {
  const auto no_column =
      parse_ncu_report("\"ID\",\"Process ID\",\"Kernel Name\",\"Stream\"\n\"0\",\"5\",\"k\",\"7\"\n");
  ASSERT_EQ(no_column.launches.size(), 1u);
  ASSERT_EQ(no_column.errors.size(), 1u);
  EXPECT_NE(no_column.errors[0].find("per-opcode"), std::string::npos);

  const auto bad_cell = parse_ncu_report(
      "\"ID\",\"Process ID\",\"Kernel "
      "Name\",\"Stream\",\"sass__inst_executed_per_opcode_with_modifier_all\"\n"
      "\"0\",\"5\",\"k\",\"7\",\"12 (IMAD 12)\"\n");
  ASSERT_EQ(bad_cell.errors.size(), 1u);
  EXPECT_NE(bad_cell.errors[0].find("launch 0 (k)"), std::string::npos);
}

TEST(NcuReport, ProgramLineThatLooksLikeCsvIsNotTheTable) {
  const auto report = parse_ncu_report("\"ID\" is what I print\n==WARNING== No kernels were profiled.\n");
  EXPECT_TRUE(report.launches.empty());
  EXPECT_EQ(report.program_output.size(), 1u);
}

TEST(Csv, QuotedFieldsWithCommasQuotesAndNewlines) {
  const auto records = parse_csv("\"a,b\",\"say \"\"hi\"\"\",plain\r\n\"multi\nline\",,\"\"\n\n");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0], (std::vector<std::string>{"a,b", "say \"hi\"", "plain"}));
  EXPECT_EQ(records[1], (std::vector<std::string>{"multi\nline", "", ""}));
}

TEST(Csv, TrailingCommaGivesAnEmptyLastField) {
  const auto records = parse_csv("\"Kernel Name\",\"wgmma_kernel(float *, int)\",\n");
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0], (std::vector<std::string>{"Kernel Name", "wgmma_kernel(float *, int)", ""}));
}

TEST(InstancedCounts, Forms) {
  int64_t total = 0;
  std::map<std::string, int64_t> instances;
  EXPECT_TRUE(parse_instanced_counts("0", total, instances));
  EXPECT_EQ(total, 0);
  EXPECT_TRUE(instances.empty());
  EXPECT_TRUE(
      parse_instanced_counts("2,048 (UTMALDG.3D: 1,024; UTMALDG.3D.MULTICAST: 1,024)", total, instances));
  EXPECT_EQ(total, 2048);
  EXPECT_EQ(instances.at("UTMALDG.3D.MULTICAST"), 1024);
  EXPECT_FALSE(parse_instanced_counts("12 (IMAD: x)", total, instances));
  EXPECT_FALSE(parse_instanced_counts("n/a", total, instances));
  EXPECT_FALSE(parse_instanced_counts("12 (IMAD: 12", total, instances));
}

TEST(Count, ThousandsSeparatorsOnly) {
  int64_t value = 0;
  EXPECT_TRUE(parse_count("11,796,480", value));
  EXPECT_EQ(value, 11796480);
  EXPECT_FALSE(parse_count("0.00", value));
  EXPECT_FALSE(parse_count(",12", value));
  EXPECT_FALSE(parse_count("", value));
}

TEST(NcuReport, Json) {
  const auto doc = to_json(parse_ncu_report(fixture("multi_kernel_h200.csv")));
  ASSERT_EQ(doc.at("launches").size(), 3u);
  EXPECT_EQ(doc["launches"][2]["grid"], nlohmann::json({2, 64, 1}));
  EXPECT_EQ(doc["launches"][1]["stream"], 14);
  EXPECT_EQ(doc["launches"][2]["opcodes"]["HGMMA.64x64x16.F32.BF16"], 65536);
  EXPECT_EQ(doc["opcode_metric"], "sass__inst_executed_per_opcode_with_modifier_all");
}

}  // namespace
}  // namespace ptxbench
