#include <gtest/gtest.h>

#include "compile/ptxas_report.h"

using namespace ptxbench;

TEST(PtxasReport, ParsesEveryKernelAndIgnoresDeviceFunctions) {
  const std::string output = R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z4gemmPKfPf' for 'sm_90a'
ptxas info    : Function properties for _Z4gemmPKfPf
    8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 168 registers, used 1 barriers, 16384 bytes smem, 384 bytes cmem[0]
ptxas info    : Function properties for _Z6helperv
    64 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function 'plain_kernel' for 'sm_90a'
ptxas info    : Function properties for plain_kernel
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 0 barriers, 360 bytes cmem[0]
ptxas /tmp/x.ptx, line 80; warning : Potential Performance Loss: wgmma.mma_async instructions are serialized due to insufficient register resources for the wgmma pipeline in the function '_Z4gemmPKfPf'
)";
  const auto report = parse_ptxas_report(output);
  ASSERT_EQ(report.kernels.size(), 2u);
  const auto& gemm = report.kernels[0];
  EXPECT_EQ(gemm.mangled, "_Z4gemmPKfPf");
  EXPECT_EQ(gemm.name, "gemm(float const*, float*)");
  EXPECT_EQ(gemm.registers, 168);
  EXPECT_EQ(gemm.barriers, 1);
  EXPECT_EQ(gemm.shared_bytes, 16384);
  EXPECT_EQ(gemm.constant_bytes, 384);
  EXPECT_EQ(gemm.stack_bytes, 8);
  EXPECT_EQ(gemm.spill_store_bytes, 4);
  EXPECT_EQ(gemm.spill_load_bytes, 12);
  const auto& plain = report.kernels[1];
  EXPECT_EQ(plain.name, "plain_kernel");
  EXPECT_EQ(plain.registers, 10);
  EXPECT_EQ(plain.stack_bytes, 0);  // the device function's 64 bytes belong to no kernel
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_NE(report.warnings[0].find("serialized"), std::string::npos);
}

TEST(PtxasReport, EmptyOutputHasNoKernels) {
  EXPECT_TRUE(parse_ptxas_report("").kernels.empty());
}
