// The real ptxbench binary with the reference model, killed with SIGKILL part-way and resumed: the stored
// trajectories equal an uninterrupted run's (times, latencies and evaluation ids aside).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <SQLiteCpp/Database.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "agent/agent_run.h"
#include "agent/models.h"
#include "agent/summary.h"
#include "store/store.h"
#include "spawned.h"
#include "util/subprocess.h"


using namespace ptxbench;
namespace fs = std::filesystem;

namespace {

const fs::path kRoot = PTXBENCH_SOURCE_DIR;

std::vector<std::string> run_args(const fs::path& data) {
  return {PTXBENCH_BINARY,
          "--root",
          kRoot.string(),
          "--data",
          data.string(),
          "run",
          "--cpu-only",
          "--tasks",
          "gemm-bf16-*-sm90a",
          "--samples",
          "2",
          "--parallel",
          "1",
          "--json"};
}

int finished_turns(const fs::path& db) {
  if (!fs::exists(db)) return 0;
  try {
    SQLite::Database raw(db.string(), SQLite::OPEN_READONLY);
    raw.setBusyTimeout(1000);
    return raw.execAndGet("SELECT COUNT(*) FROM turns WHERE finished_at IS NOT NULL").getInt();
  } catch (const std::exception&) {
    return 0;  // not created yet
  }
}

}  // namespace

TEST(AgentResume, AKilledRunResumedStoresWhatAnUninterruptedOneDoes) {
  const fs::path base = fs::temp_directory_path() / ("ptxbench-resume-" + std::to_string(getpid()));
  fs::remove_all(base);
  const fs::path whole = base / "whole", killed = base / "killed";

  ProcessResult uninterrupted = run_process({.argv = run_args(whole), .time_limit = std::chrono::minutes(5)});
  ASSERT_EQ(uninterrupted.exit_code, 0) << uninterrupted.err;

  // Start the same run, and kill it once a few turns are stored.
  fs::create_directories(killed);
  const pid_t pid = spawn_in_background(run_args(killed));
  ASSERT_GT(pid, 0);
  const fs::path killed_db = killed / "ptxbench.db";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(3);
  while (finished_turns(killed_db) < 3 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the run ended before it could be killed: the test proves nothing";
  const int stored_at_kill = finished_turns(killed_db);
  ASSERT_LT(stored_at_kill, 16);  // 4 tasks x 2 samples x 2 turns in all

  ProcessResult resumed = run_process({.argv = {PTXBENCH_BINARY, "--root", kRoot.string(), "--data",
                                                killed.string(), "run", "--resume", "1", "--json"},
                                       .time_limit = std::chrono::minutes(5)});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;

  Store a(whole / "ptxbench.db"), b(killed_db);
  const auto expected = agent::export_trajectories(a, 1, false);
  const auto actual = agent::export_trajectories(b, 1, false);
  ASSERT_EQ(expected.size(), 8u);
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(actual[i]["turns"].size(), 2u) << actual[i].dump().substr(0, 300);
    EXPECT_EQ(actual[i], expected[i]) << "trajectory " << i;
  }
  EXPECT_FALSE(b.run(1)->finished_at.empty());
  // A turn that was finished before the kill was not evaluated again: one evaluation per finished turn.
  EXPECT_EQ(b.evaluations({.run_id = 1, .limit = 1000}).size(), 16u);
  fs::remove_all(base);
}

// A resumed run calls the model its run stored, not whatever the catalogue says now (or whether it is there).
TEST(AgentResume, TheStoredModelIsUsedWithoutTheCatalogue) {
  setenv("PTXBENCH_TEST_RESUME_KEY", "sk-test", 1);
  const nlohmann::json stored = {{"name", "gpt-test"},
                                 {"provider", "openai"},
                                 {"base_url", "http://127.0.0.1:9/v1"},
                                 {"model_id", "gpt-test-2026-11-30"},
                                 {"api_key_env", "PTXBENCH_TEST_RESUME_KEY"},
                                 {"max_tokens", 1000},
                                 {"temperature", nullptr},
                                 {"reasoning", nullptr},
                                 {"concurrency", 2},
                                 {"timeout_s", 30},
                                 {"max_attempts", 2},
                                 {"retry_base_s", 0.5}};
  const TaskRegistry registry;
  const agent::ModelChoice choice =
      agent::choose_model("gpt-test", "/nonexistent/models.json", fs::path(PTXBENCH_SOURCE_DIR) / "solutions",
                          registry, cuda_track(), stored);
  unsetenv("PTXBENCH_TEST_RESUME_KEY");
  ASSERT_TRUE(choice.provider);
  EXPECT_FALSE(choice.reference);
  EXPECT_EQ(choice.spec, stored) << "stored again as it was";
  // A new run still needs the catalogue.
  EXPECT_THROW(agent::choose_model("gpt-test", "/nonexistent/models.json",
                                   fs::path(PTXBENCH_SOURCE_DIR) / "solutions", registry, cuda_track()),
               std::invalid_argument);
}

// A run's track is stored with it; a run stored before tracks is CUDA's, and an unknown track is refused
// rather than guessed.
TEST(AgentResume, TheTrackIsStoredWithTheRun) {
  agent::AgentRunSettings settings{.model = "reference",
                                   .knowledge = "params",
                                   .track = "triton",
                                   .task_ids = {"gemm-bf16-n4096-k4096-sm90a"}};
  nlohmann::json args = agent::to_json(settings);
  EXPECT_EQ(args["track"], "triton");
  EXPECT_EQ(agent::agent_settings_from_json(args).track, "triton");
  args.erase("track");
  EXPECT_EQ(agent::agent_settings_from_json(args).track, "cuda");
  args["track"] = "cutile";
  EXPECT_THROW(agent::agent_settings_from_json(args), std::invalid_argument);
}
