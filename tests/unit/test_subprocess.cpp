#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "util/subprocess.h"

using namespace ptxbench;

TEST(Subprocess, CapturesOutputAndExitCode) {
  auto r = run_process({.argv = {"sh", "-c", "echo out; echo err >&2; exit 3"}});
  EXPECT_TRUE(r.exited);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.describe(), "exit code 3");
}

TEST(Subprocess, PassesStdinWorkingDirAndEnvironment) {
  auto r = run_process({.argv = {"sh", "-c", "cat; pwd; echo $PTXBENCH_TEST_VAR"},
                        .working_dir = "/",
                        .env_overrides = {{"PTXBENCH_TEST_VAR", "set"}},
                        .stdin_data = "input\n"});
  ASSERT_TRUE(r.ok()) << r.describe();
  EXPECT_EQ(r.out, "input\n/\nset\n");
}

TEST(Subprocess, TimeLimitKillsTheWholeProcessGroup) {
  // The child starts a grandchild that keeps stdout open; both must die at the limit.
  auto r = run_process(
      {.argv = {"sh", "-c", "sleep 30 & sleep 30"}, .time_limit = std::chrono::milliseconds(300)});
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(r.wall_s, 5.0);
  EXPECT_NE(r.describe().find("timed out"), std::string::npos);
}

TEST(Subprocess, ReportsSignals) {
  auto r = run_process({.argv = {"sh", "-c", "kill -SEGV $$"}});
  EXPECT_FALSE(r.exited);
  EXPECT_EQ(r.term_signal, 11);
  EXPECT_NE(r.describe().find("signal 11"), std::string::npos);
}

TEST(Subprocess, MissingProgramIsASpawnFailure) {
  auto r = run_process({.argv = {"ptxbench-no-such-program"}});
  EXPECT_TRUE(r.spawn_failed);
  EXPECT_FALSE(r.ok());
}

TEST(Subprocess, OutputBeyondTheLimitIsCountedNotKept) {
  auto r = run_process({.argv = {"sh", "-c", "head -c 100000 /dev/zero"}, .output_limit = 1000});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.out.size(), 1000u);
  EXPECT_EQ(r.out_dropped, 99000u);  // counted, so that a reader that must see it all can tell
  EXPECT_EQ(r.err_dropped, 0u);
}

// A process the caller stops (a sampler running beside a stage): ended within the poll's 50 ms, with what it
// printed until then, and said to be stopped, not timed out.
TEST(Subprocess, AStoppedProcessEndsWithItsOutputSoFar) {
  std::atomic<bool> stop{false};
  ProcessResult result;
  std::thread runner([&] {
    result = run_process({.argv = {"sh", "-c", "echo first; exec sleep 30"}, .stop = &stop});
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  stop = true;
  runner.join();
  EXPECT_TRUE(result.stopped);
  EXPECT_FALSE(result.timed_out);
  EXPECT_FALSE(result.ok());
  EXPECT_EQ(result.out, "first\n");
  EXPECT_LT(result.wall_s, 5.0);
  EXPECT_EQ(result.describe().rfind("stopped after", 0), 0u) << result.describe();
}
