// The instruction stage's arithmetic, on real H200 profiles (tests/data/ncu/) and hand-made counts; and the
// static SASS inventory (tests/data/sass/), Hopper's and Blackwell's.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "arch/profile.h"
#include "eval/instruction_check.h"
#include "eval/ncu_report.h"
#include "eval/sass_inventory.h"
#include "project_tasks.h"
#include "util/files.h"
#include "util/names.h"

namespace ptxbench {
namespace {

std::string data(const std::string& path) {
  return read_file(std::string(PTXBENCH_TEST_DATA) + "/" + path);
}

Shape gemm_shape(int64_t m, int64_t n, int64_t k) {
  Shape shape;
  shape.label = "main";
  shape.dims = {{"M", m}, {"N", n}, {"K", k}};
  shape.order = {"M", "N", "K"};
  return shape;
}

// Like tasks/sm90a/*.json: wgmma does the math, TMA loads and mbarrier waits must run.
Task hopper_gemm_task(bool require_tma = true) {
  Task task;
  task.id = "gemm-test-sm90a";
  task.family = "gemm";
  task.arch = "sm_90a";
  task.coverage_threshold = 0.95;
  task.main_shape = gemm_shape(4096, 4096, 4096);
  task.required.push_back({"wgmma", {"wgmma.mma_async"}, {"HGMMA"}, true});
  if (require_tma) task.required.push_back({"tma", {"cp.async.bulk.tensor"}, {"UTMALDG"}, false});
  task.required.push_back({"mbarrier", {"mbarrier.try_wait"}, {"SYNCS.PHASECHK"}, false});
  return task;
}

NcuLaunch launch(int id, const std::string& kernel, int64_t stream, std::map<std::string, int64_t> opcodes) {
  NcuLaunch result;
  result.id = id;
  result.kernel_name = kernel;
  result.stream_id = stream;
  for (const auto& [opcode, count] : opcodes) result.instructions_executed += count;
  result.opcodes = std::move(opcodes);
  return result;
}

NcuReport report_of(std::vector<NcuLaunch> launches) {
  NcuReport report;
  report.opcode_metric = "sass__inst_executed_per_opcode_with_modifier_all";
  report.opcodes_have_modifiers = true;
  report.launches = std::move(launches);
  return report;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// ---------------------------------------------------------------------------------------------------------
// Pieces

TEST(OpcodePrefix, MatchesWholeParts) {
  EXPECT_TRUE(opcode_has_prefix("SYNCS.PHASECHK.TRANS64.TRYWAIT", "SYNCS.PHASECHK"));
  EXPECT_TRUE(opcode_has_prefix("HGMMA.64x8x16.F32.BF16", "HGMMA"));
  EXPECT_TRUE(opcode_has_prefix("HGMMA", "HGMMA"));
  EXPECT_FALSE(opcode_has_prefix("LDSM.16.M88.4", "LDS"));
  EXPECT_FALSE(opcode_has_prefix("SYNCS.EXCH.64", "SYNCS.PHASECHK"));
  EXPECT_FALSE(opcode_has_prefix("NANOSLEEP.SYNCS", "SYNCS"));
  EXPECT_FALSE(opcode_has_prefix("HGMMA", ""));
}

TEST(MmaShape, FromOpcodeNames) {
  const auto hgmma = parse_mma_shape("HGMMA.64x8x16.F32.BF16");
  ASSERT_TRUE(hgmma);
  EXPECT_EQ(hgmma->m, 64);
  EXPECT_EQ(hgmma->n, 8);
  EXPECT_EQ(hgmma->k, 16);
  EXPECT_EQ(hgmma->warps_per_instruction, 4);
  EXPECT_EQ(hgmma->flops_per_count(), 2 * 64 * 8 * 16 / 4);
  const auto qgmma = parse_mma_shape("QGMMA.64x256x32.F32.E4M3.E4M3");
  ASSERT_TRUE(qgmma);
  EXPECT_EQ(qgmma->n, 256);
  EXPECT_EQ(qgmma->k, 32);
  const auto hmma = parse_mma_shape("HMMA.16816.F32.BF16");
  ASSERT_TRUE(hmma);
  EXPECT_EQ(hmma->flops_per_count(), 2 * 16 * 8 * 16) << "mma.sync is per warp";
  EXPECT_FALSE(parse_mma_shape("UTCHMMA.2CTA"));  // Blackwell: the shape is in the instruction descriptor
  EXPECT_FALSE(parse_mma_shape("HGMMA"));         // no modifiers from ncu
  EXPECT_FALSE(parse_mma_shape("IMAD.WIDE.U32"));
}

TEST(KernelNames, NcuAndCompilerSpellingsMatch) {
  EXPECT_TRUE(
      ptxbench::same_kernel("void mine::scale_kernel<4>(float *, int)", "_ZN4mine12scale_kernelILi4EEEvPfi"));
  EXPECT_TRUE(ptxbench::same_kernel("wgmma_kernel(float *, int)", "_Z12wgmma_kernelPfi"));
  EXPECT_TRUE(ptxbench::same_kernel("wgmma_kernel(float *, int)", "wgmma_kernel(float*, int)"));
  EXPECT_TRUE(ptxbench::same_kernel("plain_c_kernel", "plain_c_kernel"));
  EXPECT_TRUE(ptxbench::same_kernel("(anonymous namespace)::k(int)", "(anonymous namespace)::k(int)"));
  EXPECT_FALSE(ptxbench::same_kernel("nvjet_sm90_tst_128x64_64x8_1x2_h_bz_TNT", "_Z12wgmma_kernelPfi"));
  EXPECT_FALSE(ptxbench::same_kernel("mbar_kernel(int *)", "_Z12wgmma_kernelPfi"));
  EXPECT_FALSE(
      ptxbench::same_kernel("other::scale_kernel<4>(float *, int)", "_ZN4mine12scale_kernelILi4EEEvPfi"));
  // Mangled names (the instruction stage asks ncu for them) match exactly or not at all: another instance of
  // a template is another kernel.
  EXPECT_TRUE(ptxbench::same_kernel("_ZN4simt11gemm_kernelIfEEvPK13__nv_bfloat16S3_PS1_iiii",
                                    "_ZN4simt11gemm_kernelIfEEvPK13__nv_bfloat16S3_PS1_iiii"));
  EXPECT_FALSE(ptxbench::same_kernel("_ZN4simt11gemm_kernelIdEEvPK13__nv_bfloat16S3_PS1_iiii",
                                     "_ZN4simt11gemm_kernelIfEEvPK13__nv_bfloat16S3_PS1_iiii"));
  EXPECT_FALSE(ptxbench::same_kernel("_Z11gemm_kernelIfEvPK13__nv_bfloat16S2_PS0_iiii",
                                     "_ZN4simt11gemm_kernelIfEEvPK13__nv_bfloat16S3_PS1_iiii"));
  EXPECT_EQ(demangle("_Z11mbar_kernelPi"), "mbar_kernel(int*)");
  EXPECT_EQ(demangle("plain_c_kernel"), "plain_c_kernel");
}

TEST(Coverage, Arithmetic) {
  // 4096^3 with 64x256x16 wgmma: (4096/64)*(4096/256)*(4096/16) instructions, each counted by 4 warps.
  const int64_t wgmmas = (4096 / 64) * (4096 / 256) * (4096 / 16);
  const auto full = estimate_coverage({{"HGMMA.64x256x16.F32.BF16", 4 * wgmmas}}, 2LL * 4096 * 4096 * 4096);
  ASSERT_TRUE(full.coverage);
  EXPECT_DOUBLE_EQ(*full.coverage, 1.0);
  EXPECT_EQ(full.mma_flops, 2LL * 4096 * 4096 * 4096);

  const auto unknown = estimate_coverage({{"UTCHMMA", 400}, {"HGMMA.64x8x16.F32.BF16", 4}}, 1000000);
  EXPECT_FALSE(unknown.coverage);
  EXPECT_EQ(unknown.unknown_shape_opcodes.at("UTCHMMA"), 400);
  EXPECT_EQ(unknown.mma_flops, 16384);
  EXPECT_TRUE(has(unknown.note, "UTCHMMA")) << unknown.note;

  const auto none = estimate_coverage({}, 100);
  ASSERT_TRUE(none.coverage);
  EXPECT_EQ(*none.coverage, 0.0);
}

// ---------------------------------------------------------------------------------------------------------
// Real profiles

TEST(InstructionCheck, CublasKernelIsForeignAndItsWgmmaDoesNotCount) {
  const auto report = parse_ncu_report(data("ncu/multi_kernel_h200.csv"));
  const auto sass = parse_cuobjdump_sass(data("sass/multi_kernel_sm90a.txt"));
  InstructionCheckInput input;
  input.submission_kernels = {"_ZN4mine12scale_kernelILi4EEEvPfi", "plain_c_kernel"};
  input.static_sass = &sass;
  const auto check = check_instructions(report, hopper_gemm_task(), gemm_shape(1024, 1024, 1024), input);
  EXPECT_EQ(check.status, StageStatus::failed);
  ASSERT_EQ(check.launches.size(), 3u);
  EXPECT_TRUE(check.launches[0].from_submission);
  EXPECT_TRUE(check.launches[1].from_submission);
  EXPECT_FALSE(check.launches[2].from_submission);
  ASSERT_EQ(check.foreign_kernels.size(), 1u);
  EXPECT_EQ(check.foreign_kernels[0], "nvjet_sm90_tst_128x64_64x8_1x2_h_bz_TNT (stream 13)");
  EXPECT_EQ(check.families[0].executed, 0);
  EXPECT_EQ(check.families[0].executed_elsewhere, 65536);
  EXPECT_TRUE(has(check.message, "not executed: wgmma (HGMMA), tma (UTMALDG), mbarrier (SYNCS.PHASECHK)"))
      << check.message;
  EXPECT_TRUE(has(check.message, "only in kernels not built from the submission")) << check.message;
  EXPECT_TRUE(has(check.message, "kernels not built from the submission ran: nvjet_sm90_tst"))
      << check.message;
  // No stream given: scale_kernel (stream 13) and plain_c_kernel (14) tie, the earlier launch's stream wins.
  EXPECT_FALSE(check.solution_stream_given);
  EXPECT_EQ(check.solution_stream, 13);
  ASSERT_EQ(check.off_stream_kernels.size(), 1u);
  EXPECT_EQ(check.off_stream_kernels[0], "plain_c_kernel (stream 14)");
}

TEST(InstructionCheck, GivenStreamDecidesWhichLaunchIsOffStream) {
  const auto report = parse_ncu_report(data("ncu/multi_kernel_h200.csv"));
  InstructionCheckInput input;
  input.submission_kernels = {"_ZN4mine12scale_kernelILi4EEEvPfi", "plain_c_kernel"};
  input.solution_stream = 14;
  const auto check = check_instructions(report, hopper_gemm_task(), gemm_shape(1024, 1024, 1024), input);
  ASSERT_EQ(check.off_stream_kernels.size(), 1u);
  EXPECT_EQ(check.off_stream_kernels[0], "void mine::scale_kernel<4>(float *, int) (stream 13)");
  EXPECT_TRUE(has(check.message, "stream other than the solution's (stream 14)")) << check.message;
}

// The cuBLAS launch, taken as if it were the submission's: its HGMMA count must give exactly 2*M*N*K.
TEST(InstructionCheck, RealWgmmaCountsGiveExactlyTheGemmFlops) {
  auto report = parse_ncu_report(data("ncu/multi_kernel_h200.csv"));
  report.launches = {report.launches[2]};
  InstructionCheckInput input;
  input.submission_kernels = {"nvjet_sm90_tst_128x64_64x8_1x2_h_bz_TNT"};
  input.solution_stream = 13;
  const auto task = hopper_gemm_task();
  const auto check = check_instructions(report, task, gemm_shape(1024, 1024, 1024), input);
  EXPECT_EQ(check.status, StageStatus::passed) << check.message;
  ASSERT_TRUE(check.coverage.coverage);
  EXPECT_DOUBLE_EQ(*check.coverage.coverage, 1.0);
  EXPECT_EQ(check.coverage.mma_flops, 2LL * 1024 * 1024 * 1024);
  EXPECT_EQ(check.families[0].executed, 65536);
  EXPECT_EQ(check.families[1].executed, 4096) << "UTMALDG.3D and UTMALDG.3D.MULTICAST, not UTMASTG";
  EXPECT_EQ(check.families[2].executed, 16560 + 6192) << "SYNCS.PHASECHK.TRANS64.TRYWAIT and .TRANS64";
  EXPECT_EQ(check.message,
            "executed (warp-level): wgmma 65,536, tma 4,096, mbarrier 22,752; wgmma did 100.0% of the FLOPs");

  // The same launch against a larger problem: it did 1/64 of the work.
  const auto small = check_instructions(report, task, gemm_shape(4096, 4096, 4096), input);
  EXPECT_EQ(small.status, StageStatus::failed);
  ASSERT_TRUE(small.coverage.coverage);
  EXPECT_DOUBLE_EQ(*small.coverage.coverage, 1.0 / 64);
  EXPECT_TRUE(has(small.message, "wgmma did 1.6% of the FLOPs")) << small.message;
  EXPECT_TRUE(has(small.message, "at least 95.0% required")) << small.message;
}

TEST(InstructionCheck, ProbeWithoutTmaNamesTheMissingFamily) {
  const auto report = parse_ncu_report(data("ncu/probe_arg1_modifier_all_h200.csv"));
  const auto sass = parse_cuobjdump_sass(data("sass/probe_cubin_sm90a.txt"));
  InstructionCheckInput input;
  input.submission_kernels = {"_Z12wgmma_kernelPfi", "_Z11mbar_kernelPi"};
  input.static_sass = &sass;
  // One m64n8k16 wgmma is the whole of a 64x8x16 GEMM.
  const auto check = check_instructions(report, hopper_gemm_task(), gemm_shape(64, 8, 16), input);
  EXPECT_EQ(check.status, StageStatus::failed);
  EXPECT_EQ(check.message, "not executed: tma (UTMALDG)");
  ASSERT_TRUE(check.coverage.coverage);
  EXPECT_DOUBLE_EQ(*check.coverage.coverage, 1.0);
  EXPECT_TRUE(check.foreign_kernels.empty());
  for (const auto& launch : check.launches) EXPECT_TRUE(launch.opcodes_not_in_compiled_code.empty());

  const auto without_tma = check_instructions(report, hopper_gemm_task(false), gemm_shape(64, 8, 16), input);
  EXPECT_EQ(without_tma.status, StageStatus::passed) << without_tma.message;
}

TEST(InstructionCheck, DeadCodeWgmmaIsStaticallyPresentButNotExecuted) {
  const auto sass = parse_cuobjdump_sass(data("sass/probe_cubin_sm90a.txt"));
  const auto* kernel = sass.find("_Z12wgmma_kernelPfi");
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(kernel->opcodes.at("HGMMA.64x8x16.F32.BF16"), 1);

  const auto report = parse_ncu_report(data("ncu/probe_arg0_h200.csv"));
  InstructionCheckInput input;
  input.submission_kernels = {"_Z12wgmma_kernelPfi", "_Z11mbar_kernelPi"};
  input.static_sass = &sass;
  const auto check = check_instructions(report, hopper_gemm_task(false), gemm_shape(64, 8, 16), input);
  EXPECT_EQ(check.status, StageStatus::failed);
  EXPECT_EQ(check.message, "not executed: wgmma (HGMMA)");
}

TEST(InstructionCheck, KernelNamedLikeTheSubmissionsButRunningOtherCodeIsForeign) {
  // The submission defines an extern "C" stub named like cuBLAS' kernel, then calls cuBLAS.
  const auto report = [] {
    auto parsed = parse_ncu_report(data("ncu/multi_kernel_h200.csv"));
    parsed.launches = {parsed.launches[2]};
    return parsed;
  }();
  SassInventory sass;
  sass.functions.push_back(
      SassFunction{"nvjet_sm90_tst_128x64_64x8_1x2_h_bz_TNT", "sm_90a", 2, {{"EXIT", 1}, {"BRA", 1}}});
  InstructionCheckInput input;
  input.submission_kernels = {"nvjet_sm90_tst_128x64_64x8_1x2_h_bz_TNT"};
  input.static_sass = &sass;
  const auto check = check_instructions(report, hopper_gemm_task(), gemm_shape(1024, 1024, 1024), input);
  EXPECT_EQ(check.status, StageStatus::failed);
  ASSERT_EQ(check.launches.size(), 1u);
  EXPECT_FALSE(check.launches[0].from_submission);
  EXPECT_FALSE(check.launches[0].opcodes_not_in_compiled_code.empty());
  EXPECT_TRUE(has(check.message, "executed instructions its compiled code lacks (")) << check.message;
  EXPECT_EQ(check.families[0].executed, 0);
}

TEST(InstructionCheck, NothingProfiledAndNcuErrors) {
  const auto nothing = parse_ncu_report(data("ncu/nothing_profiled_h200.txt"));
  const auto check = check_instructions(nothing, hopper_gemm_task(), gemm_shape(64, 64, 64), {});
  EXPECT_EQ(check.status, StageStatus::failed);
  EXPECT_TRUE(has(check.message, "no kernel launch was profiled")) << check.message;

  const auto broken = parse_ncu_report("==ERROR== Profiling is not supported on this device\n");
  const auto harness = check_instructions(broken, hopper_gemm_task(), gemm_shape(64, 64, 64), {});
  EXPECT_EQ(harness.status, StageStatus::harness_error);
  EXPECT_EQ(harness.message, "Nsight Compute reported: Profiling is not supported on this device");
}

// ---------------------------------------------------------------------------------------------------------
// Hand-made counts

TEST(InstructionCheck, TokenWgmmaPerBlockWithFmaMathIsFarBelowTheThreshold) {
  // 4096^3 GEMM on a 32x32 grid of 4-warp blocks: each block issues one m64n8k16 wgmma, the rest is FFMA.
  const int64_t blocks = 32 * 32;
  const auto report = report_of({launch(0, "gemm(const __nv_bfloat16 *)", 7,
                                        {{"HGMMA.64x8x16.F32.BF16", 4 * blocks},
                                         {"FFMA", 2LL * 4096 * 4096 * 4096 / 32 / 2},
                                         {"UTMALDG.2D", 64 * blocks},
                                         {"SYNCS.PHASECHK.TRANS64.TRYWAIT", 256 * blocks}})});
  InstructionCheckInput input;
  input.submission_kernels = {"gemm(const __nv_bfloat16*)"};
  const auto check = check_instructions(report, hopper_gemm_task(), gemm_shape(4096, 4096, 4096), input);
  EXPECT_EQ(check.status, StageStatus::failed);
  ASSERT_TRUE(check.coverage.coverage);
  EXPECT_DOUBLE_EQ(*check.coverage.coverage, 1024.0 * 16384 / (2.0 * 4096 * 4096 * 4096));
  EXPECT_TRUE(has(check.message,
                  "wgmma did 0.012% of the FLOPs (16.8 MFLOP of 137 GFLOP for M=4096 N=4096 K=4096); "
                  "at least 95.0% required"))
      << check.message;
}

TEST(InstructionCheck, FullCoverageJustAtAndBelowTheThreshold) {
  const int64_t full = 4 * (4096 / 64) * (4096 / 256) * (4096 / 16);
  auto run = [&](int64_t hgmma_count) {
    const auto report = report_of({launch(0, "k(int)", 7,
                                          {{"HGMMA.64x256x16.F32.BF16", hgmma_count},
                                           {"UTMALDG.2D", 10},
                                           {"SYNCS.PHASECHK.TRANS64.TRYWAIT", 10}})});
    InstructionCheckInput input;
    input.submission_kernels = {"_Z1ki"};
    return check_instructions(report, hopper_gemm_task(), gemm_shape(4096, 4096, 4096), input);
  };
  EXPECT_EQ(run(full).status, StageStatus::passed);
  EXPECT_EQ(run((full * 95 + 99) / 100).status, StageStatus::passed) << "95% is enough";
  EXPECT_EQ(run(full * 94 / 100).status, StageStatus::failed);
}

// A full set of wgmma whose results are thrown away, the output computed another way: coverage alone would be
// 100%. What else the kernel could have computed with is counted against 1 - threshold.
TEST(InstructionCheck, DiscardedWgmmaWithTheMathDoneElsewhereFails) {
  const int64_t full = 4 * (4096 / 64) * (4096 / 256) * (4096 / 16);  // 100% of 2*4096^3 in m64n256k16
  const int64_t gemm_flops = 2LL * 4096 * 4096 * 4096;
  auto run = [&](std::map<std::string, int64_t> other) {
    std::map<std::string, int64_t> opcodes = {
        {"HGMMA.64x256x16.F32.BF16", full}, {"UTMALDG.2D", 10}, {"SYNCS.PHASECHK.TRANS64.TRYWAIT", 10}};
    opcodes.insert(other.begin(), other.end());
    InstructionCheckInput input;
    input.submission_kernels = {"_Z1ki"};
    return check_instructions(report_of({launch(0, "k(int)", 7, opcodes)}), hopper_gemm_task(),
                              gemm_shape(4096, 4096, 4096), input);
  };
  const auto fma = run({{"FFMA", gemm_flops / 64}});
  EXPECT_EQ(fma.status, StageStatus::failed);
  EXPECT_TRUE(has(fma.message, "other arithmetic (FFMA 2,147,483,648) could have done 100.0% of the FLOPs"))
      << fma.message;
  EXPECT_EQ(fma.coverage.other_flops, gemm_flops);
  // mma.sync (m16n8k16: 4096 FLOPs a warp instruction) doing the math instead.
  EXPECT_EQ(run({{"HMMA.16816.F32.BF16", gemm_flops / 4096}}).status, StageStatus::failed);
  // An epilogue's or a softmax's few percent are fine, up to 1 - threshold (5% here); HFMA2.MMA, which ptxas
  // uses to move constants, is no arithmetic.
  EXPECT_EQ(run({{"FFMA", gemm_flops / 64 * 4 / 100}, {"HFMA2.MMA", 1LL << 40}}).status, StageStatus::passed);
  EXPECT_EQ(run({{"FFMA", gemm_flops / 64 * 6 / 100}}).status, StageStatus::failed);
}

// The compiled code a launch is held to: every instance its name can match, and the device functions the
// kernels call.
TEST(InstructionCheck, ALaunchIsHeldToEveryMatchingInstanceAndTheCalledFunctions) {
  const std::map<std::string, int64_t> loads = {{"UTMALDG.2D", 1}, {"SYNCS.PHASECHK.TRANS64.TRYWAIT", 1}};
  SassInventory sass;
  sass.functions = {{"_Z3fwdILb1EEvPK13__nv_bfloat16", "sm_90a", 2, loads},
                    {"_Z3fwdILb0EEvPK13__nv_bfloat16", "sm_90a", 3, loads},
                    {"_Z4mmasv", "sm_90a", 1, {{"HGMMA.64x256x16.F32.BF16", 1}}}};  // a __noinline__ callee
  sass.functions[1].opcodes["FSEL"] = 1;  // only the non-causal instance has it
  InstructionCheckInput input;
  input.submission_kernels = {"_Z3fwdILb1EEvPK13__nv_bfloat16", "_Z3fwdILb0EEvPK13__nv_bfloat16"};
  input.static_sass = &sass;
  const int64_t full = 4 * (4096 / 64) * (4096 / 256) * (4096 / 16);
  const auto report = report_of({launch(0, "void fwd<false>(const __nv_bfloat16 *)", 7,
                                        {{"HGMMA.64x256x16.F32.BF16", full},
                                         {"FSEL", 5},
                                         {"UTMALDG.2D", 10},
                                         {"SYNCS.PHASECHK.TRANS64.TRYWAIT", 10}})});
  const auto check = check_instructions(report, hopper_gemm_task(), gemm_shape(4096, 4096, 4096), input);
  EXPECT_EQ(check.status, StageStatus::passed) << check.message;
  ASSERT_EQ(check.launches.size(), 1u);
  EXPECT_TRUE(check.launches[0].from_submission);
  // An opcode none of that code has still marks the launch as not the submission's.
  const auto foreign = check_instructions(
      report_of({launch(0, "void fwd<false>(const __nv_bfloat16 *)", 7, {{"HGMMA.64x128x16.F32.BF16", 1}})}),
      hopper_gemm_task(), gemm_shape(4096, 4096, 4096), input);
  EXPECT_FALSE(foreign.launches[0].from_submission);
}

TEST(InstructionCheck, UnknownMmaShapeIsAHarnessErrorNotAPass) {
  Task task = hopper_gemm_task(false);
  task.required[0] = {"tcgen05.mma", {"tcgen05.mma"}, {"UTCHMMA"}, true};
  const auto report =
      report_of({launch(0, "k(int)", 7, {{"UTCHMMA.2CTA", 512}, {"SYNCS.PHASECHK.TRANS64", 10}})});
  InstructionCheckInput input;
  input.submission_kernels = {"k(int)"};
  const auto check = check_instructions(report, task, gemm_shape(256, 256, 256), input);
  EXPECT_EQ(check.status, StageStatus::harness_error);
  EXPECT_TRUE(has(check.message, "coverage unknown")) << check.message;
  EXPECT_TRUE(has(check.message, "UTCHMMA.2CTA")) << check.message;
}

TEST(InstructionCheck, OpcodesWithoutModifiersGiveUnknownCoverage) {
  auto report = report_of({launch(0, "k(int)", 7, {{"HGMMA", 4}, {"UTMALDG", 4}, {"SYNCS", 4}})});
  report.opcode_metric = "sass__inst_executed_per_opcode";
  report.opcodes_have_modifiers = false;
  InstructionCheckInput input;
  input.submission_kernels = {"k(int)"};
  const auto check = check_instructions(report, hopper_gemm_task(), gemm_shape(64, 8, 16), input);
  EXPECT_EQ(check.status, StageStatus::harness_error);
  EXPECT_TRUE(has(check.message, "with_modifier_all")) << check.message;
  // "SYNCS" may or may not be SYNCS.PHASECHK: counted, but marked inexact.
  EXPECT_EQ(check.families[2].executed, 4);
  EXPECT_FALSE(check.families[2].exact);
  EXPECT_TRUE(check.families[0].exact);

  // Base name zero is a real zero: no SYNCS at all means no mbarrier wait.
  auto no_syncs = report;
  no_syncs.launches[0].opcodes.erase("SYNCS");
  const auto missing = check_instructions(no_syncs, hopper_gemm_task(), gemm_shape(64, 8, 16), input);
  EXPECT_EQ(missing.status, StageStatus::failed);
  EXPECT_TRUE(has(missing.message, "not executed: mbarrier (SYNCS.PHASECHK)")) << missing.message;
}

TEST(InstructionCheck, Json) {
  const auto report = report_of({launch(0, "k(int)", 7, {{"HGMMA.64x8x16.F32.BF16", 4}})});
  InstructionCheckInput input;
  input.submission_kernels = {"k(int)"};
  const auto doc = to_json(check_instructions(report, hopper_gemm_task(), gemm_shape(64, 8, 16), input));
  EXPECT_EQ(doc["status"], "failed");
  EXPECT_EQ(doc["coverage"]["coverage"], 1.0);
  EXPECT_EQ(doc["families"][0]["opcodes"]["HGMMA.64x8x16.F32.BF16"], 4);
  EXPECT_EQ(doc["launches"][0]["from_submission"], true);
  EXPECT_EQ(doc["solution_stream"], 7);
}

// ---------------------------------------------------------------------------------------------------------
// The static decision, before any profile

SassInventory inventory_of(std::vector<SassFunction> functions) {
  SassInventory inventory;
  inventory.functions = std::move(functions);
  return inventory;
}

TEST(StaticDecision, AFamilyAbsentFromTheCompiledCodeIsListed) {
  // The probe's cubin has HGMMA.64x8x16.F32.BF16 and SYNCS.PHASECHK.TRANS64.TRYWAIT, but no TMA load.
  const auto sass = parse_cuobjdump_sass(data("sass/probe_cubin_sm90a.txt"));
  const auto decision = decide_from_compiled_code(hopper_gemm_task(), sass);
  ASSERT_TRUE(decision);
  EXPECT_EQ(decision->status, StageStatus::failed);
  EXPECT_EQ(decision->not_compiled, std::vector<std::string>{"tma (UTMALDG)"});
  EXPECT_EQ(decision->message, "not in the compiled code: tma (UTMALDG)");
  // Present with modifiers: no decision, the profile judges.
  EXPECT_FALSE(decide_from_compiled_code(hopper_gemm_task(false), sass));
}

TEST(StaticDecision, PrefixesMatchWholeModifiersAndEveryAbsentFamilyIsNamed) {
  // SYNCS.EXCH (an mbarrier init) is not SYNCS.PHASECHK (a wait), nor is NANOSLEEP.SYNCS.
  const auto without_waits =
      inventory_of({{"k", "sm_90a", 3, {{"SYNCS.EXCH.64", 1}, {"NANOSLEEP.SYNCS", 1}}}});
  const auto decision = decide_from_compiled_code(hopper_gemm_task(), without_waits);
  ASSERT_TRUE(decision);
  EXPECT_EQ(decision->message,
            "not in the compiled code: wgmma (HGMMA), tma (UTMALDG), mbarrier (SYNCS.PHASECHK)");
  const auto with_waits = inventory_of(
      {{"k",
        "sm_90a",
        3,
        {{"HGMMA.64x256x16.F32.BF16", 1}, {"UTMALDG.2D", 1}, {"SYNCS.PHASECHK.TRANS64.TRYWAIT", 1}}}});
  EXPECT_FALSE(decide_from_compiled_code(hopper_gemm_task(), with_waits));
}

// A family only in a function the compile stage does not name as a kernel (a __noinline__ callee, another
// kernel): the profiled check holds a launch to the callees and counts the other kernel's launches, so it
// is in the compiled code.
TEST(StaticDecision, EveryFunctionOfTheCubinCounts) {
  const std::map<std::string, int64_t> loads = {{"UTMALDG.2D", 1}, {"SYNCS.PHASECHK.TRANS64.TRYWAIT", 1}};
  const auto callee = inventory_of({{"_Z3fwdPK13__nv_bfloat16", "sm_90a", 2, loads},
                                    {"_Z4mmasv", "sm_90a", 1, {{"HGMMA.64x256x16.F32.BF16", 1}}}});
  EXPECT_FALSE(decide_from_compiled_code(hopper_gemm_task(), callee));
  InstructionCheckInput input;
  input.submission_kernels = {"_Z3fwdPK13__nv_bfloat16"};
  input.static_sass = &callee;
  const auto report = report_of(
      {launch(0, "_Z3fwdPK13__nv_bfloat16", 7,
              {{"HGMMA.64x256x16.F32.BF16", 4}, {"UTMALDG.2D", 1}, {"SYNCS.PHASECHK.TRANS64.TRYWAIT", 1}})});
  const auto check = check_instructions(report, hopper_gemm_task(), gemm_shape(64, 256, 16), input);
  EXPECT_EQ(check.families[0].executed, 4) << check.message;
}

// What the static decision calls absent, the profiled check never counts: a launch that ran it ran code
// the submission's cubin lacks (code loaded at run time, or another library's), so it is not the
// submission's.
TEST(StaticDecision, AgreesWithTheProfiledCheck) {
  const auto sass =
      inventory_of({{"_Z1kv", "sm_90a", 2, {{"UTMALDG.2D", 1}, {"SYNCS.PHASECHK.TRANS64.TRYWAIT", 1}}}});
  const auto decision = decide_from_compiled_code(hopper_gemm_task(), sass);
  ASSERT_TRUE(decision);
  EXPECT_EQ(decision->message, "not in the compiled code: wgmma (HGMMA)");
  InstructionCheckInput input;
  input.submission_kernels = {"_Z1kv"};
  input.static_sass = &sass;
  const auto report = report_of(
      {launch(0, "_Z1kv", 7,
              {{"HGMMA.64x8x16.F32.BF16", 4}, {"UTMALDG.2D", 1}, {"SYNCS.PHASECHK.TRANS64.TRYWAIT", 1}})});
  const auto check = check_instructions(report, hopper_gemm_task(), gemm_shape(64, 8, 16), input);
  EXPECT_EQ(check.status, decision->status);
  EXPECT_TRUE(has(check.message, "not executed: wgmma (HGMMA)")) << check.message;
}

TEST(StaticDecision, NoInventoryNoDecision) {
  EXPECT_FALSE(decide_from_compiled_code(hopper_gemm_task(), SassInventory{}));
  EXPECT_FALSE(decide_from_compiled_code(hopper_gemm_task(), parse_cuobjdump_sass("")));
}

TEST(StaticDecision, JsonSaysNoProfileRan) {
  const auto decision =
      decide_from_compiled_code(hopper_gemm_task(), parse_cuobjdump_sass(data("sass/probe_cubin_sm90a.txt")));
  ASSERT_TRUE(decision);
  const auto doc = to_json(*decision);
  EXPECT_EQ(doc["decided_by"], "static SASS inventory");
  EXPECT_EQ(doc["status"], "failed");
  EXPECT_EQ(doc["not_in_compiled_code"], nlohmann::json::array({"tma (UTMALDG)"}));
  EXPECT_TRUE(doc["coverage"]["coverage"].is_null()) << "unknown, not 0";
}

// ---------------------------------------------------------------------------------------------------------
// Static SASS inventory

TEST(SassInventory, ReadsCuobjdumpOfACubin) {
  const std::string text = data("sass/probe_cubin_sm90a.txt");
  const auto sass = parse_cuobjdump_sass(text);
  ASSERT_EQ(sass.functions.size(), 2u);
  EXPECT_EQ(sass.functions[0].name, "_Z11mbar_kernelPi");
  EXPECT_EQ(sass.functions[0].arch, "sm_90a");
  EXPECT_EQ(sass.functions[1].name, "_Z12wgmma_kernelPfi");
  const auto& mbar = sass.functions[0];
  EXPECT_EQ(mbar.opcodes.at("SYNCS.PHASECHK.TRANS64.TRYWAIT"), 2);
  EXPECT_EQ(mbar.opcodes.at("SYNCS.EXCH.64"), 1);
  EXPECT_EQ(mbar.opcodes.at("BRA"), 4) << "two predicated @!P0 BRA, one BRA, the padding BRA to itself";
  // Each instruction is printed on two lines, each with one /* 0x... */ encoding half.
  size_t encodings = 0;
  for (size_t at = text.find("/* 0x"); at != std::string::npos; at = text.find("/* 0x", at + 1)) ++encodings;
  EXPECT_EQ(static_cast<size_t>(sass.functions[0].instructions + sass.functions[1].instructions),
            encodings / 2);
  EXPECT_EQ(sass.opcodes.at("HGMMA.64x8x16.F32.BF16"), 1);
  EXPECT_EQ(sass.opcodes.at("WARPGROUP.ARRIVE"), 1);
}

TEST(SassInventory, ReadsCuobjdumpOfAnExecutable) {
  const auto sass = parse_cuobjdump_sass(data("sass/multi_kernel_sm90a.txt"));
  ASSERT_EQ(sass.functions.size(), 3u);
  EXPECT_NE(sass.find("_ZN4mine12scale_kernelILi4EEEvPfi"), nullptr);
  EXPECT_NE(sass.find("plain_c_kernel"), nullptr);
  EXPECT_EQ(sass.find("nvjet_sm90_tst_128x64_64x8_1x2_h_bz_TNT"), nullptr)
      << "cuBLAS lives in its own library";
  EXPECT_EQ(to_json(sass)["functions"].size(), 3u);
}

// ---------------------------------------------------------------------------------------------------------
// Blackwell: nvcc 13.0's code for the kit's tcgen05 wrappers (tests/data/sass/kit_tcgen05_sm100a.txt),
// compiled for sm_100a and never run, against arch/sm_100a.json and an sm_100a task

// The functions of the excerpt, in its order, and the opcode each wrapper's instruction compiled to.
const std::vector<std::pair<std::string, std::string>> kTcgen05Wrappers = {
    {"bw_tcgen05_commit_cg1", "UTCBAR"},       {"bw_tcgen05_cp_128x256b_cg1", "UTCCP"},
    {"bw_tcgen05_mma_bf16_ss_cg1", "UTCHMMA"}, {"bw_tmem_st_32x32b_x1", "STTM"},
    {"bw_tmem_ld_32x32b_x1", "LDTM"},          {"bw_tmem_relinquish_alloc_permit_cg1", "UVIRTCOUNT"},
    {"bw_tmem_alloc_cg1", "UTCATOMSWS"}};

bool has_opcode(const SassFunction& function, const std::string& prefix) {
  for (const auto& [opcode, count] : function.opcodes)
    if (opcode_has_prefix(opcode, prefix)) return true;
  return false;
}

// The inventory with every opcode of `prefix` taken out of every function.
SassInventory without(SassInventory inventory, const std::string& prefix) {
  for (auto& function : inventory.functions)
    std::erase_if(function.opcodes,
                  [&](const auto& entry) { return opcode_has_prefix(entry.first, prefix); });
  std::erase_if(inventory.opcodes, [&](const auto& entry) { return opcode_has_prefix(entry.first, prefix); });
  return inventory;
}

TEST(SassInventory, ReadsCuobjdumpOfAnSm100aCubin) {
  const ArchProfile& blackwell = *find_arch("sm_100a");
  const std::string text = data("sass/kit_tcgen05_sm100a.txt");
  const auto sass = parse_cuobjdump_sass(text);
  ASSERT_EQ(sass.functions.size(), kTcgen05Wrappers.size());
  int64_t instructions = 0;
  for (size_t i = 0; i < sass.functions.size(); ++i) {
    EXPECT_EQ(sass.functions[i].name, kTcgen05Wrappers[i].first);
    EXPECT_EQ(sass.functions[i].arch, "sm_100a");
    EXPECT_TRUE(blackwell.gencode.ends_with(",code=" + sass.functions[i].arch)) << blackwell.gencode;
    instructions += sass.functions[i].instructions;
  }
  size_t encodings = 0;
  for (size_t at = text.find("/* 0x"); at != std::string::npos; at = text.find("/* 0x", at + 1)) ++encodings;
  EXPECT_EQ(static_cast<size_t>(instructions), encodings / 2);
  // With their modifiers, as cuobjdump 13.0 prints them.
  EXPECT_EQ(sass.opcodes.at("UTCHMMA"), 1);
  EXPECT_EQ(sass.opcodes.at("UTCCP.T.S"), 1);
  EXPECT_EQ(sass.opcodes.at("UTCATOMSWS.FIND_AND_SET.ALIGN"), 2);
  EXPECT_EQ(sass.opcodes.at("UVIRTCOUNT.DEALLOC.SMPOOL"), 1);
}

// Each tcgen05 opcode the kit compiles to is one arch/sm_100a.json lists (so a task may require it), and the
// profile lists no opcode of its own that the records lack, but UTCQMMA.
TEST(SassInventory, TheSm100aProfileListsTheKitsTcgen05Opcodes) {
  const ArchProfile& blackwell = *find_arch("sm_100a");
  const ArchProfile& hopper = *find_arch("sm_90a");
  const auto sass = parse_cuobjdump_sass(data("sass/kit_tcgen05_sm100a.txt"));
  std::set<std::string> recorded;
  for (const auto& [wrapper, opcode] : kTcgen05Wrappers) {
    const SassFunction* function = sass.find(wrapper);
    ASSERT_NE(function, nullptr) << wrapper;
    EXPECT_TRUE(has_opcode(*function, opcode)) << wrapper << " has no " << opcode;
    EXPECT_TRUE(known_instruction(blackwell.sass_opcodes, opcode))
        << opcode << " (" << wrapper << ") is not in arch/sm_100a.json's sass_opcodes";
    EXPECT_FALSE(known_instruction(hopper.sass_opcodes, opcode)) << opcode << " is not Blackwell's own";
    recorded.insert(opcode);
  }
  std::set<std::string> own;  // the profile's opcodes that Hopper's (with the shared ones) lacks
  for (const std::string& opcode : blackwell.sass_opcodes)
    if (!known_instruction(hopper.sass_opcodes, opcode)) own.insert(opcode);
  // UTCQMMA, the profile's other MMA opcode (a kind other than kind::f16), is in no record: the kit wraps
  // kind::f16 alone.
  recorded.insert("UTCQMMA");
  EXPECT_EQ(own, recorded);
}

// The decision from compiled code (the GPU instruction stage's, before its profile; a static-only sm_100a
// task is held to its PTX instead) on a real sm_100a task: the profile's MMA opcode is found in nvcc's code
// for tcgen05.mma, and its absence is named.
TEST(StaticDecision, FindsTcgen05MmaInSm100aCode) {
  const Task& task = test_support::project_task("gemm-bf16-n4096-k4096-sm100a");
  ASSERT_EQ(task.arch, "sm_100a");
  const ArchProfile& blackwell = *find_arch(task.arch);
  const auto math = std::find_if(task.required.begin(), task.required.end(),
                                 [](const RequiredFamily& family) { return family.does_the_math; });
  ASSERT_NE(math, task.required.end());
  EXPECT_EQ(math->name, blackwell.math.name);
  EXPECT_EQ(math->sass, blackwell.math.sass);

  // The excerpt has the MMA, not the shared kit's TMA loads and mbarrier waits.
  const auto sass = parse_cuobjdump_sass(data("sass/kit_tcgen05_sm100a.txt"));
  const auto decision = decide_from_compiled_code(task, sass);
  ASSERT_TRUE(decision);
  EXPECT_EQ(decision->not_compiled, (std::vector<std::string>{"tma (UTMALDG)", "mbarrier (SYNCS.PHASECHK)"}));
  // With a function that has them, every family is there: no decision, the profile would judge.
  auto with_loads = sass;
  with_loads.functions.push_back(
      {"loads", "sm_100a", 2, {{"UTMALDG.2D", 1}, {"SYNCS.PHASECHK.TRANS64.TRYWAIT", 1}}});
  EXPECT_FALSE(decide_from_compiled_code(task, with_loads));

  // Without UTCHMMA, the MMA family is absent.
  const auto no_mma = decide_from_compiled_code(task, without(with_loads, "UTCHMMA"));
  ASSERT_TRUE(no_mma);
  EXPECT_EQ(no_mma->status, StageStatus::failed);
  EXPECT_EQ(no_mma->message, "not in the compiled code: tcgen05.mma (UTCHMMA)");
  // Hopper's code does not satisfy it: HGMMA is not UTCHMMA (the probe's cubin has no TMA load either).
  const auto hopper =
      decide_from_compiled_code(task, parse_cuobjdump_sass(data("sass/probe_cubin_sm90a.txt")));
  ASSERT_TRUE(hopper);
  EXPECT_EQ(hopper->not_compiled, (std::vector<std::string>{"tcgen05.mma (UTCHMMA)", "tma (UTMALDG)"}));
}

}  // namespace
}  // namespace ptxbench

TEST(InstructionCheck, KernelsInAnAnonymousNamespaceAreRecognised) {
  // As seen on the H200: ncu's name and ptxas's mangled name of one kernel in an anonymous namespace.
  EXPECT_TRUE(
      ptxbench::same_kernel("<unnamed>::gemm_kernel(CUtensorMap_st, CUtensorMap_st, CUtensorMap_st, "
                            "__nv_bfloat16 *, int, int, int)",
                            "_ZN44_GLOBAL__N__506dd8d1_11_solution_cu_6e7e784f11gemm_kernelE14CUtensorMap_"
                            "stS0_S0_P13__nv_bfloat16iii"));
  EXPECT_TRUE(ptxbench::same_kernel(
      "<unnamed>::gemm_simt_kernel(const __nv_bfloat16 *, const __nv_bfloat16 *, __nv_bfloat16 *, int, int, "
      "int)",
      "_ZN44_GLOBAL__N__6736dcfb_11_solution_cu_6e7e784f16gemm_simt_kernelEPK13__nv_bfloat16S2_PS0_iii"));
  EXPECT_FALSE(ptxbench::same_kernel("<unnamed>::other_kernel(int)",
                                     "_ZN44_GLOBAL__N__506dd8d1_11_solution_cu_6e7e784f11gemm_kernelEi"));
}
