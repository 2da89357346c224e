// ptxbench run's progress: the live view's state and lines, and the real binary on a pseudo-terminal (the
// terminal's own capabilities used to redraw) against plain lines off a terminal.
#include <gtest/gtest.h>

#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "cli/progress.h"
#include "util/subprocess.h"

using namespace ptxbench;
namespace fs = std::filesystem;

namespace {

ProgressState three_trajectories() {
  ProgressState s{.title = "run 1: m, contracts knowledge, up to 4 turns", .max_turns = 4};
  s.trajectories[{"task-a", 1}] = {};
  s.trajectories[{"task-a", 2}] = {};
  s.trajectories[{"task-b", 1}] = {};
  return s;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST(RunProgress, FollowsTheEvents) {
  ProgressState s = three_trajectories();
  using agent::TurnPhase;
  s.apply({.task_id = "task-a", .sample = 1, .turn = 1, .phase = TurnPhase::asking});
  s.apply({.task_id = "task-a", .sample = 1, .turn = 1, .phase = TurnPhase::judging});
  s.apply({.task_id = "task-a", .sample = 2, .turn = 1, .phase = TurnPhase::judging});
  EXPECT_EQ(s.in_flight(), 2);
  s.apply({.task_id = "task-a", .sample = 1, .turn = 1, .error_class = "compile"});
  s.apply({.task_id = "task-a", .sample = 2, .turn = 1});
  s.apply({.task_id = "task-a", .sample = 2, .turn = 0, .status = agent::kSolved});
  EXPECT_EQ(s.in_flight(), 0);
  EXPECT_EQ(s.turns_here, 2);
  EXPECT_EQ(s.ended(), 1);
  EXPECT_EQ(s.turns_left_at_most(), 3 + 4);  // task-a #1 has 3 turns left, task-b #1 all 4

  const auto rows = render_progress(s, std::chrono::seconds(90), 200, 20);
  ASSERT_GE(rows.size(), 4u);
  EXPECT_EQ(rows[0], "run 1: m, contracts knowledge, up to 4 turns");
  EXPECT_TRUE(has(rows[1], "trajectories 1/3 ended")) << rows[1];
  EXPECT_TRUE(has(rows[1], "turns 2 done, at most 7 to go")) << rows[1];
  EXPECT_TRUE(has(rows[1], "elapsed 1m30s")) << rows[1];
  EXPECT_TRUE(has(rows[1], "left ~3m00s")) << rows[1] << ": one ended in 90 s, two to go";
  EXPECT_TRUE(has(rows[2], "task-a")) << "under way first";
  EXPECT_TRUE(has(rows[2], "#1 compile t1")) << rows[2];
  EXPECT_TRUE(has(rows[2], "#2 solved t1")) << rows[2];
  EXPECT_TRUE(has(rows[3], "#1 pending")) << rows[3];
}

TEST(RunProgress, FitsTheTerminal) {
  ProgressState s{.title = std::string(300, 't'), .max_turns = 2};
  for (int i = 0; i < 50; ++i) s.trajectories[{"task-" + std::to_string(100 + i), 1}] = {};
  const auto rows = render_progress(s, std::chrono::seconds(0), 80, 12);
  EXPECT_LE(rows.size(), 11u);
  for (const auto& row : rows) EXPECT_LE(row.size(), 79u) << row;
  EXPECT_TRUE(has(rows.back(), "more task(s)")) << rows.back();
  EXPECT_TRUE(has(rows[1], "left estimating")) << rows[1];
  EXPECT_EQ(human_duration(std::chrono::seconds(3725)), "1h02m");
}

// The real binary: on a terminal (a pseudo-terminal, TERM=xterm) the view is redrawn with xterm's own "clear to
// the end of the screen" and shows the final count; through a pipe there is no escape sequence at all.
TEST(RunProgress, LiveOnATerminalPlainOffIt) {
  const fs::path data = fs::temp_directory_path() / ("ptxbench-progress-" + std::to_string(getpid()));
  fs::remove_all(data);
  const std::vector<std::string> args = {PTXBENCH_BINARY, "--root", PTXBENCH_SOURCE_DIR, "--data",
                                         data.string(),   "run",    "--cpu-only",        "--tasks",
                                         "gemm-bf16-n4096-k4096-sm90a"};
  int master = -1;
  const pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    setenv("TERM", "xterm", 1);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  std::string screen;
  char buffer[4096];
  for (ssize_t n; (n = read(master, buffer, sizeof buffer)) > 0;) screen.append(buffer, static_cast<size_t>(n));
  close(master);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << screen;
  EXPECT_TRUE(has(screen, "\x1b[J")) << "xterm's ed (clear to the end of the screen)";
  EXPECT_TRUE(has(screen, "trajectories 1/1 ended")) << screen;
  EXPECT_TRUE(has(screen, "gemm-bf16-n4096-k4096-sm90a  #1 unverified t2")) << screen;

  fs::remove_all(data);
  const ProcessResult plain = run_process({.argv = args, .time_limit = std::chrono::minutes(2)});
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_FALSE(has(plain.err, "\x1b")) << plain.err;
  EXPECT_TRUE(has(plain.err, "[1/1] gemm-bf16-n4096-k4096-sm90a #1: unverified")) << plain.err;
  fs::remove_all(data);
}
