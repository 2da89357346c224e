// Where a hung call's threads wait, from cuda-gdb's listing: a real output from an H100
// (tests/data/cuda-gdb/README.md) and hand-made forms.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "eval/hang_report.h"
#include "util/files.h"

namespace ptxbench {
namespace {

const std::filesystem::path kFixtures = std::filesystem::path(PTXBENCH_TEST_DATA) / "cuda-gdb";

HangReport parse_fixture(const char* name) {
  return parse_cuda_gdb_threads(read_file(kFixtures / name));
}

TEST(HangReport, TheWaitingThreadsAreGroupedByTheirSourceLine) {
  const HangReport report = parse_fixture("attached_hang.txt");
  EXPECT_TRUE(report.stopped);
  ASSERT_EQ(report.kernels.size(), 1u);
  EXPECT_EQ(report.kernels[0].id, 0);
  EXPECT_EQ(report.kernels[0].grid, "(4,1,1)");
  EXPECT_EQ(report.kernels[0].block, "(128,1,1)");
  EXPECT_EQ(report.kernels[0].invocation, "wait_for_flag()");
  // The first warp of each of the 4 blocks, at the loop on the flag; the others had ended.
  ASSERT_EQ(report.sites.size(), 1u);
  EXPECT_EQ(report.sites[0].location, "hang.cu:5");
  EXPECT_EQ(report.sites[0].file, "hang.cu");
  EXPECT_EQ(report.sites[0].line, 5);
  EXPECT_EQ(report.sites[0].threads, 128);
  EXPECT_EQ(report.sites[0].runs, 4);
  EXPECT_EQ(report.threads, 128);
  EXPECT_EQ(report.summary(), "kernel wait_for_flag<<<(4,1,1),(128,1,1)>>>: 128 threads at hang.cu:5");
  const nlohmann::json json = to_json(report);
  EXPECT_EQ(json["sites"][0]["location"], "hang.cu:5");
  EXPECT_EQ(json["summary"], report.summary());
}

// Several places, most threads first; a run without line information is named by its PC; a listing cut short
// by other output ends there.
TEST(HangReport, SeveralPlacesMostThreadsFirst) {
  const std::string listing = R"(  Kernel Parent Dev Grid Status   SMs Mask GridDim  BlockDim Invocation
*      0      -   0    1 Active 0x0003 (132,1,1) (384,1,1) gemm_kernel(const __nv_bfloat16 *, int)
  BlockIdx ThreadIdx To BlockIdx ThreadIdx Count                 PC                    Filename  Line
Kernel 0
*  (0,0,0)   (0,0,0)     (0,0,0)  (127,0,0)  128 0x00007f0000000100 /data/cache/compile/ab/solution.cu   142
   (0,0,0) (128,0,0)     (0,0,0)  (383,0,0)  256 0x00007f0000000200 /data/cache/compile/ab/solution.cu   210
   (1,0,0)   (0,0,0)     (1,0,0)   (63,0,0)   64 0x00007f0000000100 /data/cache/compile/ab/solution.cu   142
   (1,0,0) (128,0,0)     (1,0,0)  (159,0,0)   32 0x00007f0000000300
#0  gemm_kernel<<<(132,1,1),(384,1,1)>>> () at solution.cu:142
   (9,0,0)   (0,0,0)     (9,0,0)  (31,0,0)    32 0x00007f0000000100 /data/cache/compile/ab/solution.cu   142
)";
  const HangReport report = parse_cuda_gdb_threads(listing);
  EXPECT_FALSE(report.stopped);
  ASSERT_EQ(report.sites.size(), 3u);
  EXPECT_EQ(report.sites[0].location, "solution.cu:210");
  EXPECT_EQ(report.sites[0].threads, 256);
  EXPECT_EQ(report.sites[1].location, "solution.cu:142");
  EXPECT_EQ(report.sites[1].threads, 192);
  EXPECT_EQ(report.sites[1].runs, 2);
  EXPECT_EQ(report.sites[2].location, "0x00007f0000000300");
  EXPECT_EQ(report.threads, 480);  // not the row after the backtrace's line
  EXPECT_EQ(report.summary(2),
            "kernel gemm_kernel<<<(132,1,1),(384,1,1)>>>: 256 threads at solution.cu:210, 192 threads at "
            "solution.cu:142 (and 1 more places)");
  EXPECT_EQ(parse_cuda_gdb_threads("").summary(), "");
  EXPECT_EQ(
      parse_cuda_gdb_threads("warning: could not attach to process 12: Operation not permitted").threads, 0);
}

// cuda-gdb attached, but the CUDA side failed (a process that records with CUPTI, or a host without the
// driver's debugger back-end): no kernel, and the report keeps the line that says so. A listing that worked
// has no such line.
TEST(HangReport, AFailedCudaAttachIsSaid) {
  const HangReport report = parse_fixture("attach_failed.txt");
  EXPECT_TRUE(report.kernels.empty());
  EXPECT_TRUE(report.sites.empty());
  EXPECT_EQ(report.summary(), "");
  EXPECT_EQ(report.attach_failure,
            "The CUDA driver hit an internal error while attaching to the application: CUresult=10");
  EXPECT_EQ(to_json(report)["attach_failure"], report.attach_failure);
  EXPECT_EQ(parse_fixture("attached_hang.txt").attach_failure, "");
  EXPECT_EQ(parse_cuda_gdb_threads("Could not find CUDA Debugger back-end (libcudadebugger.so.1). Debugging is "
                                   "not possible\nNo CUDA kernels.\n")
                .attach_failure,
            "Could not find CUDA Debugger back-end (libcudadebugger.so.1). Debugging is not possible");
}

}  // namespace
}  // namespace ptxbench
