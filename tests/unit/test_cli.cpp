// The ptxbench command as a user runs it: exit codes, output formats, error messages.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <thread>

#include <SQLiteCpp/Database.h>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "eval/python_bytecode.h"
#include "fake_nvcc.h"
#include "spawned.h"
#include "util/files.h"
#include "util/hash.h"
#include "util/subprocess.h"

using namespace ptxbench;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const fs::path kRoot = PTXBENCH_SOURCE_DIR;
const fs::path kData = PTXBENCH_TEST_DATA;
const char* kTask = "gemm-bf16-n4096-k4096-sm90a";

class Cli : public testing::Test {
 protected:
  void SetUp() override {
    data_ = fs::temp_directory_path() / ("ptxbench-cli-" + std::to_string(getpid()) + "-" +
                                         testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(data_);
  }
  void TearDown() override { fs::remove_all(data_); }

  ProcessResult ptxbench(std::vector<std::string> args, const fs::path& root = kRoot,
                         std::map<std::string, std::string> environment = {}) {
    std::vector<std::string> argv = {PTXBENCH_BINARY, "--root", root.string(), "--data", data_.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_process(
        {.argv = argv, .time_limit = std::chrono::minutes(5), .env_overrides = std::move(environment)});
  }
  static std::string example(const std::string& name) {
    return (kRoot / "solutions" / "examples" / name).string();
  }
  // For the tests that compile the shipped solutions: the tests' shared compile cache
  // ($PTXBENCH_COMPILE_CACHE), which the others that compile them use too (tests/CMakeLists.txt), so that
  // each is compiled once a build.
  static std::map<std::string, std::string> shared_compile_cache() {
    return {{"PTXBENCH_COMPILE_CACHE", PTXBENCH_TEST_COMPILE_CACHE}};
  }
  static std::string test_solution(const std::string& name) { return (kData / "solutions" / name).string(); }

  // The help's "Exit codes:" section, to its end ("" when there is none).
  static std::string exit_codes_section(const std::string& help) {
    const size_t start = help.find("Exit codes:");
    return start == std::string::npos ? "" : help.substr(start);
  }
  // The codes a section lists: its lines "  N  meaning".
  static std::set<int> codes_listed(const std::string& section) {
    std::set<int> codes;
    std::istringstream lines(section);
    for (std::string line; std::getline(lines, line);)
      if (line.size() > 5 && line.starts_with("  ") && std::isdigit(line[2]) && line.substr(3, 2) == "  ")
        codes.insert(line[2] - '0');
    return codes;
  }
  // The subcommands a help lists under "Subcommands:".
  static std::vector<std::string> subcommands_listed(const std::string& help) {
    std::vector<std::string> names;
    std::istringstream lines(help.substr(help.find("Subcommands:") + 1));
    std::string line;
    std::getline(lines, line);
    while (std::getline(lines, line) && line.starts_with("  "))
      names.push_back(line.substr(2, line.find(' ', 2) - 2));
    return names;
  }

  // Runs `ptxbench ARGS` in the background and interrupts it (SIGINT) once its standard error says
  // `under_way`; it must end by the signal, saying how to resume run 1.
  void interrupt_run_1(const std::vector<std::string>& args, const std::string& under_way) {
    const fs::path err = data_ / "stderr.txt";
    fs::create_directories(data_);
    std::vector<std::string> argv = {PTXBENCH_BINARY, "--root", kRoot.string(), "--data", data_.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    const pid_t pid = spawn_in_background(argv, err.string());
    ASSERT_GT(pid, 0);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    while (read_file(err).find(under_way) == std::string::npos && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    kill(pid, SIGINT);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT)
        << "the run ended before it could be interrupted: the test proves nothing\n"
        << read_file(err);
    EXPECT_NE(
        read_file(err).find("run 1 interrupted; what it judged is stored: continue it with ptxbench run "
                            "--resume 1"),
        std::string::npos)
        << read_file(err);
  }

  fs::path data_;
};

}  // namespace

TEST_F(Cli, HelpListsExitCodesAndEverySubcommandHasHelp) {
  auto r = ptxbench({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("Exit codes"), std::string::npos);
  for (const char* sub : {"tasks", "compile", "eval", "run", "results", "cache"}) {
    auto h = ptxbench({sub, "--help"});
    EXPECT_EQ(h.exit_code, 0) << sub;
    EXPECT_NE(h.out.find("--json"), std::string::npos) << sub;
  }
}

TEST_F(Cli, UsageErrorsExitWithTwo) {
  EXPECT_EQ(ptxbench({"frobnicate"}).exit_code, 2);
  EXPECT_EQ(ptxbench({}).exit_code, 2);
  EXPECT_EQ(ptxbench({"compile", example("gemm_simt.cu")}).exit_code, 2);  // --task missing
  auto unknown = ptxbench({"tasks", "no-such-task"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("no task 'no-such-task'"), std::string::npos);
  auto missing = ptxbench({"eval", "/nonexistent/solution.cu", "--task", kTask});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("/nonexistent/solution.cu"), std::string::npos);
  EXPECT_EQ(ptxbench({"run", "--arch", "sm_75"}).exit_code, 2);
  EXPECT_EQ(ptxbench({"run", "--solutions", "--arch", "sm_75"}).exit_code, 2);
}

// --root and --data after the subcommand, as before it.
TEST_F(Cli, GlobalOptionsComeBeforeOrAfterTheSubcommand) {
  const ProcessResult after = run_process(
      {.argv = {PTXBENCH_BINARY, "tasks", "--json", "--root", kRoot.string(), "--data", data_.string()}});
  ASSERT_EQ(after.exit_code, 0) << after.err;
  const ProcessResult before = run_process(
      {.argv = {PTXBENCH_BINARY, "--root", kRoot.string(), "--data", data_.string(), "tasks", "--json"}});
  EXPECT_EQ(after.out, before.out);
  EXPECT_EQ(run_process({.argv = {PTXBENCH_BINARY, "tasks", "--no-such-option"}}).exit_code, 2);
}

// Ctrl-C in an agent run ends it as the signal does, and says how to continue it.
TEST_F(Cli, AnInterruptedRunSaysHowToResumeIt) {
  // Once the run has said its number, it is under way.
  interrupt_run_1({"run", "--cpu-only", "--tasks", kTask, "--progress", "plain"}, "run 1:");
}

TEST_F(Cli, RunHelpShowsBothModes) {
  auto h = ptxbench({"run", "--help"});
  for (const char* option : {"--solutions", "--model", "--knowledge", "--turns", "--samples",
                             "--target-speedup", "--stop-when-verified", "--resume", "--parallel"})
    EXPECT_NE(h.out.find(option), std::string::npos) << option;
  EXPECT_NE(ptxbench({"results", "--help"}).out.find("--export"), std::string::npos);
}

// Each command's --help ends with the exit codes it can return and what they mean for it, not another's: the
// commands are those the helps list, so a new one without its own section fails here.
TEST_F(Cli, EverySubcommandsHelpListsItsOwnExitCodes) {
  const std::map<std::string, std::set<int>> expected = {
      {"", {0, 1, 2, 3, 4, 5}},          {"tasks", {0, 2, 4, 5}},          {"compile", {0, 1, 2, 4, 5}},
      {"eval", {0, 1, 2, 3, 4, 5}},      {"run", {0, 1, 2, 4, 5}},         {"results", {0, 2, 4, 5}},
      {"report", {0, 2, 4, 5}},          {"cache", {0, 2, 4, 5}},          {"fixit", {0, 2, 3, 4, 5}},
      {"fixit mine", {0, 2, 4, 5}},      {"fixit repair", {0, 2, 4, 5}},   {"fixit reason", {0, 2, 4, 5}},
      {"fixit export", {0, 2, 3, 4, 5}}, {"fixit build", {0, 2, 3, 4, 5}}, {"fixit show", {0, 2, 4, 5}},
      {"serve", {0, 2, 4, 5}},           {"worker", {0, 2, 4, 5}}};
  std::vector<std::string> commands = {""};
  const auto top = ptxbench({"--help"});
  for (const auto& name : subcommands_listed(top.out)) commands.push_back(name);
  for (const auto& name : subcommands_listed(ptxbench({"fixit", "--help"}).out))
    commands.push_back("fixit " + name);
  ASSERT_EQ(commands.size(), expected.size()) << top.out;
  std::set<std::string> sections;
  for (const auto& command : commands) {
    std::vector<std::string> args;
    std::istringstream words(command);
    for (std::string word; words >> word;) args.push_back(word);
    args.push_back("--help");
    const auto help = ptxbench(args);
    EXPECT_EQ(help.exit_code, 0) << command;
    const std::string section = exit_codes_section(help.out);
    EXPECT_NE(section, "") << "'" << command << " --help' has no \"Exit codes:\" section";
    ASSERT_TRUE(expected.contains(command)) << command;
    EXPECT_EQ(codes_listed(section), expected.at(command)) << command << ":\n" << section;
    sections.insert(section);
    // What every command shares is said in each.
    EXPECT_NE(section.find("bad arguments"), std::string::npos) << command;
    EXPECT_NE(section.find("no project folder"), std::string::npos) << command;
  }
  EXPECT_EQ(sections.size(), commands.size()) << "a command's exit codes are another's";
}

TEST_F(Cli, FixitHelpSpeaksOfFixitsExitCodesNotOfEvals) {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"fixit", "--help"},
                                               {"fixit", "export", "--help"},
                                               {"fixit", "build", "--help"}}) {
    const std::string section = exit_codes_section(ptxbench(args).out);
    EXPECT_EQ(section.find("every stage passed"), std::string::npos) << section;
    EXPECT_EQ(section.find("run --solutions"), std::string::npos) << section;
    EXPECT_EQ(section.find("run --resume"), std::string::npos) << section;
    EXPECT_EQ(codes_listed(section), (std::set<int>{0, 2, 3, 4, 5})) << section;
    EXPECT_NE(section.find("nothing was exported"), std::string::npos) << section;
  }
  EXPECT_NE(exit_codes_section(ptxbench({"fixit", "repair", "--help"}).out).find("fixit repair --resume N"),
            std::string::npos);
}

TEST_F(Cli, EvalHelpStillListsItsExitCodes) {
  const std::string section = exit_codes_section(ptxbench({"eval", "--help"}).out);
  EXPECT_EQ(codes_listed(section), (std::set<int>{0, 1, 2, 3, 4, 5})) << section;
  for (const char* meaning : {"  0  every stage passed", "  1  the submission was judged and failed",
                              "no task with that id", "  3  nothing failed, but stages were skipped",
                              "a broken task file", "it could not judge", "no nvcc"})
    EXPECT_NE(section.find(meaning), std::string::npos) << meaning << "\n" << section;
  EXPECT_EQ(section.find("nothing was exported"), std::string::npos) << section;
  EXPECT_EQ(section.find("--resume"), std::string::npos) << section;
}

// fixit export, like fixit build, exits 3 when it exported nothing and says why on standard error: an empty
// train.jsonl is no data set. Here from the reference model's run on this host, where nothing can be
// verified: a mined set of verified turns that is empty, and a repair whose fix is unverified.
TEST_F(Cli, AnExportOfNothingExitsThreeAndSaysWhy) {
  const auto run = ptxbench({"run", "--cpu-only", "--tasks", kTask, "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string run_id = std::to_string(json::parse(run.out)["run_id"].get<int64_t>());

  const auto verified = ptxbench({"fixit", "mine", "--correct", "--runs", run_id, "--json"});
  ASSERT_EQ(verified.exit_code, 0) << verified.err;
  ASSERT_EQ(json::parse(verified.out)["items"].size(), 0u);  // no turn is verified without a GPU
  const std::string empty_set = std::to_string(json::parse(verified.out)["run_id"].get<int64_t>());
  const auto direct =
      ptxbench({"fixit", "export", "--mined", empty_set, "--out", (data_ / "direct").string()});
  EXPECT_EQ(direct.exit_code, 3) << direct.out << direct.err;
  EXPECT_NE(direct.err.find("nothing exported: the mined set is empty"), std::string::npos) << direct.err;
  EXPECT_NE(direct.err.find("not a success"), std::string::npos) << direct.err;
  EXPECT_EQ(read_file(data_ / "direct" / "train.jsonl"), "");

  const auto failed = ptxbench({"fixit", "mine", "--runs", run_id, "--json"});
  ASSERT_EQ(failed.exit_code, 0) << failed.err;
  ASSERT_EQ(json::parse(failed.out)["items"].size(), 1u);  // the reference model's broken copy
  const auto repair = ptxbench({"fixit", "repair", "--mined",
                                std::to_string(json::parse(failed.out)["run_id"].get<int64_t>()), "--teacher",
                                "reference", "--cpu-only", "--json"});
  ASSERT_EQ(repair.exit_code, 0) << repair.err;
  const json repaired = json::parse(repair.out);
  ASSERT_EQ(repaired["repairs"][0]["status"], "unverified");
  const auto fix =
      ptxbench({"fixit", "export", "--repair-run", std::to_string(repaired["run_id"].get<int64_t>()), "--out",
                (data_ / "fix").string(), "--json"});
  EXPECT_EQ(fix.exit_code, 3) << fix.out << fix.err;
  EXPECT_EQ(json::parse(fix.out)["train"], 0);  // what was written is still said
  EXPECT_NE(fix.err.find("nothing exported: no fix was verified (1 unverified)"), std::string::npos)
      << fix.err;
}

TEST_F(Cli, AgentOptionsThatCannotWorkExitWithTwo) {
  auto level = ptxbench({"run", "--cpu-only", "--knowledge", "everything"});
  EXPECT_EQ(level.exit_code, 2);
  auto model =
      ptxbench({"run", "--cpu-only", "--model", "no-such-model", "--models", (kData / "none.json").string()});
  EXPECT_EQ(model.exit_code, 2);
  EXPECT_NE(model.err.find("no-such-model"), std::string::npos) << model.err;
  EXPECT_EQ(ptxbench({"run", "--cpu-only", "--turns", "0"}).exit_code, 2);
  EXPECT_EQ(ptxbench({"run", "--cpu-only", "--samples", "0"}).exit_code, 2);
  auto no_task = ptxbench({"run", "--cpu-only", "--tasks", "no-such-*"});
  EXPECT_EQ(no_task.exit_code, 2);
  EXPECT_NE(no_task.err.find("no task"), std::string::npos) << no_task.err;
  auto mixed = ptxbench({"run", "--solutions", "--turns", "3"});
  EXPECT_EQ(mixed.exit_code, 2);
  EXPECT_NE(mixed.err.find("--turns"), std::string::npos);
  auto no_run = ptxbench({"run", "--resume", "7"});
  EXPECT_EQ(no_run.exit_code, 2);
  EXPECT_NE(no_run.err.find("no agent run 7"), std::string::npos) << no_run.err;
  EXPECT_EQ(ptxbench({"run", "--resume", "1", "--turns", "3"}).exit_code, 2);
  auto stages = ptxbench({"run", "--cpu-only", "--stages", "correct"});  // the agent needs every stage
  EXPECT_EQ(stages.exit_code, 2);
  EXPECT_NE(stages.err.find("--stages applies to eval and run --solutions"), std::string::npos) << stages.err;
  EXPECT_EQ(ptxbench({"run", "--solutions", "--cpu-only", "--stages", "correct,speed"}).exit_code, 2);
  EXPECT_EQ(ptxbench({"run", "--solutions", "--cpu-only", "--gpu-share", "0"}).exit_code, 2);
  auto remote = ptxbench({"run", "--solutions", "--gpu-share", "4", "--evaluator", "http://127.0.0.1:9"});
  EXPECT_EQ(remote.exit_code, 2);
  EXPECT_NE(remote.err.find("--gpu-share shares out this machine's GPUs"), std::string::npos) << remote.err;
}

// One process drives a run: a resume while another holds the run fails at once instead of asking twice.
TEST_F(Cli, ARunDrivenElsewhereIsNotResumed) {
  auto run = ptxbench({"run", "--cpu-only", "--tasks", kTask, "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const int64_t id = json::parse(run.out)["run_id"].get<int64_t>();
  const fs::path lock = data_ / "runs" / (std::to_string(id) + ".lock");
  const int fd = open(lock.c_str(), O_RDWR);
  ASSERT_GE(fd, 0) << lock;
  ASSERT_EQ(flock(fd, LOCK_EX | LOCK_NB), 0) << "the first run has ended and let go";
  auto second = ptxbench({"run", "--resume", std::to_string(id)});
  EXPECT_EQ(second.exit_code, 2);
  EXPECT_NE(second.err.find("being driven by another ptxbench process"), std::string::npos) << second.err;
  close(fd);
  EXPECT_EQ(ptxbench({"run", "--resume", std::to_string(id)}).exit_code, 0);
}

TEST_F(Cli, TheDefaultRunIsTheReferenceAgentAndResultsShowIt) {
  auto run = ptxbench({"run", "--cpu-only", "--json"}, kRoot, shared_compile_cache());
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  auto doc = json::parse(run.out);
  EXPECT_EQ(doc["settings"]["model"], "reference");
  EXPECT_EQ(doc["settings"]["turns"],
            2);  // the reference model has two answers: a broken copy, then its solution
  EXPECT_TRUE(doc["settings"]["stop_when_verified"].get<bool>());
  ASSERT_EQ(doc["run_summary"]["tasks"].size(),
            82u);  // the Hopper tasks (51 GEMM, 23 attention, 4 decode, 4 prefill)
  for (const auto& t : doc["run_summary"]["tasks"]) {
    // Every Hopper task has a reference: broken, then the reference (nothing fails, nothing verifiable).
    EXPECT_EQ(t["trajectories"], 1);
    EXPECT_EQ(t["finished_turns"], 2) << t.dump();
    EXPECT_EQ(t["error_classes"].value("compile", 0), 1) << t.dump();
    EXPECT_EQ(t["error_classes"].value("instruction", 0), 0) << t.dump();
    EXPECT_TRUE(t["correct_rate"].is_null());  // not judged on the CPU: unknown, not 0
  }
  EXPECT_NE(run.err.find("turn 1: compile"), std::string::npos) << run.err;  // progress on stderr

  auto runs = json::parse(ptxbench({"results", "--runs", "--json"}).out)["runs"];
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0]["kind"], "agent");
  EXPECT_EQ(runs[0]["evaluations"], 164);  // 2 turns x 82 tasks
  // As a table: the settings in one line, the task list by its length.
  const auto table = ptxbench({"results", "--runs"});
  EXPECT_NE(table.out.find("model=reference"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("context=compact"), std::string::npos) << table.out;  // the default policy
  EXPECT_NE(table.out.find("task_ids: 82"), std::string::npos) << table.out;
  EXPECT_EQ(table.out.find("\"task_ids\""), std::string::npos) << table.out;

  // An explicit --turns is honoured for the reference model too. The trajectory still ends after the
  // reference (turn 2): nothing failed and the GPU stages were skipped, so more turns could not change the
  // verdict.
  auto longer =
      ptxbench({"run", "--cpu-only", "--json", "--tasks", "attention-fwd-d64-sm90a", "--turns", "3"});
  ASSERT_EQ(longer.exit_code, 0) << longer.err;
  const json longer_doc = json::parse(longer.out);
  EXPECT_EQ(longer_doc["settings"]["turns"], 3);
  EXPECT_EQ(longer_doc["run_summary"]["tasks"][0]["finished_turns"], 2);

  auto results = ptxbench({"results", "--run", "1", "--json"});
  ASSERT_EQ(results.exit_code, 0);
  auto shown = json::parse(results.out);
  EXPECT_EQ(shown["run_summary"]["total"]["trajectories"], 82);
  EXPECT_EQ(shown["evaluations"].size(), 50u);  // results --limit's default
  auto text = ptxbench({"results", "--run", "1"});
  EXPECT_NE(text.out.find("TURNS TO OK"), std::string::npos);

  const fs::path file = data_ / "trajectories.json";
  ASSERT_EQ(ptxbench({"results", "--run", "1", "--export", file.string()}).exit_code, 0);
  auto exported = json::parse(read_file(file));
  ASSERT_EQ(exported["trajectories"].size(), 82u);
  // The first GEMM trajectory (the attention ones are sorted first).
  json t;
  for (const auto& trajectory : exported["trajectories"])
    if (t.is_null() && trajectory["task"].get<std::string>().starts_with("gemm-")) t = trajectory;
  ASSERT_FALSE(t.is_null());
  EXPECT_EQ(t["knowledge"], "contracts");
  EXPECT_EQ(t["status"], "unverified");
  ASSERT_EQ(t["turns"].size(), 2u);
  const auto& first = t["turns"][0];
  EXPECT_NE(first["code"].get<std::string>().find("ptxbench_check_arguments"), std::string::npos);
  EXPECT_EQ(first["verdict"]["stages"][0]["status"], "failed");
  EXPECT_EQ(first["error_class"], "compile");
  const auto& second = t["turns"][1];
  EXPECT_EQ(second["request"]["messages"].size(), 3u);
  EXPECT_EQ(second["request"]["messages"][1]["content"].get<std::string>().find("```cuda\n"), 0u);
  EXPECT_NE(second["request"]["messages"][2]["content"].get<std::string>().find("ptxbench_check_arguments"),
            std::string::npos);
  EXPECT_EQ(second["verdict"]["status"], "incomplete");
  EXPECT_EQ(ptxbench({"results", "--export", file.string()}).exit_code, 2);  // which run?
  EXPECT_EQ(ptxbench({"run", "--resume", "1", "--json"}).exit_code, 0);      // nothing left to do
  for (const auto& r : json::parse(ptxbench({"results", "--runs", "--json"}).out)["runs"]) {
    if (r["id"] == 1) {
      EXPECT_EQ(r["evaluations"], 164);  // resuming added nothing
    }
  }
  // A report folder that cannot be made (under a file) is the user's to change: exit 2, naming it.
  const fs::path not_a_folder = data_ / "a-file";
  write_file(not_a_folder, "x");
  const auto report = ptxbench({"report", "--out", (not_a_folder / "report").string()});
  EXPECT_EQ(report.exit_code, 2) << report.err;
  EXPECT_NE(report.err.find("cannot write a report there"), std::string::npos) << report.err;
}

// A Blackwell task: the reference model answers with the reference Blackwell GEMM, which compiles and passes
// the static stage; the GPU stages are skipped for want of a Blackwell GPU, so nothing is verified.
// --context: stored with the run, said in its lines, fixed by --resume; an unknown policy is a usage error.
TEST_F(Cli, TheContextPolicyIsARunSetting) {
  auto run = ptxbench({"run", "--context", "full", "--tasks", "gemm-bf16-n4096-k4096-sm90a", "--cpu-only"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("knowledge contracts, full context"), std::string::npos) << run.err;
  EXPECT_NE(run.out.find("(contracts knowledge, full context, CUDA track)"), std::string::npos) << run.out;
  EXPECT_NE(ptxbench({"results", "--runs"}).out.find("context=full"), std::string::npos);
  const auto resumed = ptxbench({"run", "--resume", "1", "--context", "compact"});
  EXPECT_EQ(resumed.exit_code, 2);
  EXPECT_NE(resumed.err.find("--context cannot be given with it"), std::string::npos) << resumed.err;
  EXPECT_EQ(ptxbench({"run", "--context", "everything"}).exit_code, 2);
}

// --feedback: stored with the run and said in its lines, fixed by --resume (with --evaluator the service's
// workers profile: tests/unit/test_service.cpp); an unknown value is a usage error.
TEST_F(Cli, TheFeedbackIsARunSetting) {
  auto run =
      ptxbench({"run", "--feedback", "profile", "--tasks", "gemm-bf16-n4096-k4096-sm90a", "--cpu-only"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("compact context, profile feedback"), std::string::npos) << run.err;
  EXPECT_NE(ptxbench({"results", "--runs"}).out.find("feedback=profile"), std::string::npos);
  const auto resumed = ptxbench({"run", "--resume", "1", "--feedback", "verdict"});
  EXPECT_EQ(resumed.exit_code, 2);
  EXPECT_NE(resumed.err.find("--feedback cannot be given with it"), std::string::npos) << resumed.err;
  EXPECT_EQ(ptxbench({"run", "--feedback", "everything"}).exit_code, 2);
  // eval --profile: the same summary for a person; on a CPU host nothing is profiled, and nothing is said.
  const auto evaluated =
      ptxbench({"eval", (kRoot / "solutions" / "reference" / "gemm_bf16_sm90a.cu").string(), "--task",
                "gemm-bf16-n4096-k4096-sm90a", "--cpu-only", "--profile"});
  EXPECT_EQ(evaluated.exit_code, 3) << evaluated.err;
  EXPECT_EQ(evaluated.out.find("Profile of the main shape"), std::string::npos) << evaluated.out;
}

// --knowledge with several levels: each task's trajectories split among them, each stored with its own; a
// level named twice or unknown is a usage error.
TEST_F(Cli, ARunCanSplitItsTrajectoriesAmongKnowledgeLevels) {
  auto run = ptxbench({"run", "--knowledge", "params,patterns", "--tasks", "gemm-bf16-n4096-k4096-sm90a",
                       "--cpu-only", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("1 task(s) x 1 sample(s) per knowledge level"), std::string::npos) << run.err;
  const auto trajectories = json::parse(ptxbench({"results", "--run", "1", "--json"}).out);
  EXPECT_EQ(json::parse(run.out)["settings"]["knowledge"], "params,patterns");
  EXPECT_EQ(ptxbench({"run", "--knowledge", "params,params"}).exit_code, 2);
  const auto unknown = ptxbench({"run", "--knowledge", "params,everything"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("params, templates, contracts, patterns"), std::string::npos) << unknown.err;
}

TEST_F(Cli, ReferenceModelOnAStaticOnlyTaskIsNeverVerified) {
  auto run = ptxbench({"run", "--arch", "sm_100a", "--tasks", "gemm-bf16-n4096-k4096-*", "--turns", "2",
                       "--knowledge", "params", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto doc = json::parse(run.out);
  ASSERT_EQ(doc["run_summary"]["tasks"].size(), 1u);
  const json& task = doc["run_summary"]["tasks"][0];
  EXPECT_EQ(task["error_classes"]["compile"], 1) << task;  // the first turn's broken copy
  EXPECT_EQ(task["error_classes"].value("instruction", 0), 0) << task;
  EXPECT_EQ(task["finished_turns"], 2) << task;
  EXPECT_TRUE(task["correct_rate"].is_null()) << task;  // unknown, not 0
  EXPECT_NE(run.err.find("static-only task: no Blackwell GPU runs it"), std::string::npos) << run.err;
}

TEST_F(Cli, TasksListsAndShows) {
  auto list = ptxbench({"tasks", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  // 102 GEMM, 46 attention, 8 decode, 8 prefill (82 per architecture)
  EXPECT_EQ(json::parse(list.out)["tasks"].size(), 164u);
  auto hopper = ptxbench({"tasks", "--arch", "sm_90a"});
  EXPECT_NE(hopper.out.find(kTask), std::string::npos);
  EXPECT_EQ(hopper.out.find("sm100a"), std::string::npos);
  auto show = ptxbench({"tasks", kTask});
  ASSERT_EQ(show.exit_code, 0);
  for (const char* expected : {"ptxbench_gemm_bf16", "M=8192 N=4096 K=4096", "HGMMA", "UTMALDG", "odd-m",
                               "#include <hopper.cuh>", "0.01"})
    EXPECT_NE(show.out.find(expected), std::string::npos) << expected << "\n" << show.out;
  auto show_json = json::parse(ptxbench({"tasks", kTask, "--json"}).out);
  EXPECT_EQ(show_json["flops_main"], 2LL * 8192 * 4096 * 4096);
}

TEST_F(Cli, BrokenTaskFileIsAConfigErrorNamingFileAndField) {
  fs::path root = data_ / "project";
  write_file(root / "tasks" / "broken.json", R"({"id": "broken", "title": "x"})");
  auto r = ptxbench({"tasks"}, root);
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(r.err.find("broken.json"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("field 'family'"), std::string::npos) << r.err;
  EXPECT_EQ(ptxbench({"tasks"}, data_ / "not-a-project").exit_code, 4);

  write_file(root / "tasks" / "broken.json", R"({"id": "broken", "id": "other"})");
  auto duplicate = ptxbench({"tasks"}, root);
  EXPECT_EQ(duplicate.exit_code, 4);
  EXPECT_NE(duplicate.err.find("broken.json: field 'id': given twice"), std::string::npos) << duplicate.err;
}

TEST_F(Cli, CompileStageAlone) {
  auto ok = ptxbench({"compile", example("gemm_simt.cu"), "--task", kTask, "--json"});
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  auto doc = json::parse(ok.out);
  EXPECT_EQ(doc["status"], "ok");
  EXPECT_EQ(doc["static_status"], "passed");
  EXPECT_TRUE(fs::exists(doc["library"].get<std::string>()));
  // Judged again, the compile is the cache's, and the verdict says so.
  auto judged_again = ptxbench({"eval", example("gemm_simt.cu"), "--task", kTask, "--cpu-only"});
  EXPECT_EQ(judged_again.exit_code, 1) << judged_again.err;  // no wgmma in the PTX: instructions failed
  EXPECT_NE(judged_again.out.find("[compile     ] passed"), std::string::npos) << judged_again.out;
  EXPECT_NE(judged_again.out.find(" s (cached)\n"), std::string::npos) << judged_again.out;
  // A SIMT GEMM compiles and passes the static stage, with a warning for each family it lacks.
  auto text = ptxbench({"compile", example("gemm_simt.cu"), "--task", kTask});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("required family wgmma: 0 PTX instruction(s): warning: not in the compiled code, so "
                          "the instruction stage will fail"),
            std::string::npos)
      << text.out;
  auto bad = ptxbench({"compile", example("gemm_does_not_compile.cu"), "--task", kTask});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.out.find("load_accumulator"), std::string::npos);
  // The compiler's locations name the file given, not the name it was compiled under.
  EXPECT_NE(bad.out.find("gemm_does_not_compile.cu("), std::string::npos) << bad.out;
  EXPECT_EQ(bad.out.find("solution.cu("), std::string::npos) << bad.out;
  auto judged = ptxbench({"eval", example("gemm_does_not_compile.cu"), "--task", kTask, "--json"});
  EXPECT_EQ(judged.exit_code, 1) << judged.err;
  const json compile = json::parse(judged.out)["stages"][0];
  EXPECT_NE(compile["message"].get<std::string>().find("gemm_does_not_compile.cu("), std::string::npos)
      << compile["message"];
  EXPECT_EQ(compile["details"]["diagnostics"].get<std::string>().find("solution.cu("), std::string::npos)
      << compile["details"]["diagnostics"];
  EXPECT_EQ(ptxbench({"compile", test_solution("dlopen_by_token_pasting.cu"), "--task", kTask}).exit_code, 1);
}

TEST_F(Cli, CacheShowsItsSizeAndPrunesWithinItsLimit) {
  ASSERT_EQ(ptxbench({"compile", example("gemm_simt.cu"), "--task", kTask}).exit_code, 0);
  auto shown = ptxbench({"cache", "--json"});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  auto doc = json::parse(shown.out);
  EXPECT_EQ(doc["entries"], 1);
  EXPECT_GT(doc["bytes"].get<long long>(), 0);
  EXPECT_EQ(doc["limit_bytes"].get<long long>(), 4LL << 30);

  // A limit of zero removes everything but what was used within the last hour: the entry just compiled stays.
  auto pruned = run_process({.argv = {PTXBENCH_BINARY, "--root", kRoot.string(), "--data", data_.string(),
                                      "cache", "--prune", "--json"},
                             .env_overrides = {{"PTXBENCH_CACHE_LIMIT_MB", "0"}}});
  ASSERT_EQ(pruned.exit_code, 0) << pruned.err;
  doc = json::parse(pruned.out);
  EXPECT_EQ(doc["removed"]["entries"], 0);
  EXPECT_EQ(doc["over_limit_bytes"], doc["bytes"]);
  EXPECT_EQ(doc["entries"], 1);

  auto bad =
      run_process({.argv = {PTXBENCH_BINARY, "--root", kRoot.string(), "--data", data_.string(), "cache"},
                   .env_overrides = {{"PTXBENCH_CACHE_LIMIT_MB", "a lot"}}});
  EXPECT_EQ(bad.exit_code, 4);
  EXPECT_NE(bad.err.find("PTXBENCH_CACHE_LIMIT_MB"), std::string::npos) << bad.err;
}

// The judge's Python bytecode (eval/python_bytecode.h): `cache` lists its folders, the configured python's
// marked current; --prune removes the others and warm-ups left unfinished over an hour ago.
TEST_F(Cli, CacheListsThePythonBytecodeAndPrunesOtherVersions) {
  const fs::path python = data_ / "bin" / "python3";
  fs::create_directories(python.parent_path());
  write_file(python, R"sh(#!/bin/sh
if [ "$2" = "-X" ]; then
  prefix=${3#pycache_prefix=}
  mkdir -p "$prefix/torch" && echo bytecode > "$prefix/torch/__init__.cpython-312.pyc"
  exit 0
fi
echo "3.12.3 (main)"; echo "torch 2.11.0"
)sh");
  fs::permissions(python, fs::perms::owner_all);
  const fs::path root = data_ / "cache" / "python";
  const fs::path current = python_bytecode(python.string(), root);
  ASSERT_FALSE(current.empty());
  write_file(root / "0123456789abcdef01234567" / "complete", "3.11.2 (main)\ntorch 2.4.0\n");
  fs::create_directories(root / "unfinished-old");
  fs::last_write_time(root / "unfinished-old", fs::file_time_type::clock::now() - std::chrono::hours(2));
  fs::create_directories(root / "unfinished-now");
  const auto cache = [&](std::vector<std::string> arguments) {
    std::vector<std::string> argv = {PTXBENCH_BINARY, "--root",       kRoot.string(),
                                     "--data",        data_.string(), "cache"};
    argv.insert(argv.end(), arguments.begin(), arguments.end());
    return run_process({.argv = argv, .env_overrides = {{"PTXBENCH_PYTHON", python.string()}}});
  };
  const auto names = [](const json& list) {
    std::set<std::string> found;
    for (const json& folder : list) found.insert(folder["folder"].get<std::string>());
    return found;
  };
  const auto shown = cache({"--json"});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  const json listed = json::parse(shown.out)["python_bytecode"];
  EXPECT_EQ(listed["folder"], root.string());
  EXPECT_EQ(names(listed["folders"]),
            (std::set<std::string>{current.filename().string(), "0123456789abcdef01234567", "unfinished-old",
                                   "unfinished-now"}));
  for (const json& folder : listed["folders"]) {
    EXPECT_EQ(folder["current"], folder["folder"] == current.filename().string()) << folder.dump();
    if (folder["current"]) {
      EXPECT_EQ(folder["versions"], json({"3.12.3 (main)", "torch 2.11.0"}));
      EXPECT_GT(folder["bytes"].get<long long>(), 0);
    }
  }
  const auto text = cache({});
  EXPECT_NE(text.out.find("(warm-up not completed)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("3.12.3 (main), torch 2.11.0 (current: " + python.string() + ")"),
            std::string::npos)
      << text.out;

  const auto pruned = cache({"--prune", "--json"});
  ASSERT_EQ(pruned.exit_code, 0) << pruned.err;
  const json after = json::parse(pruned.out)["python_bytecode"];
  EXPECT_EQ(names(after["removed"]), (std::set<std::string>{"0123456789abcdef01234567", "unfinished-old"}));
  EXPECT_EQ(names(after["folders"]), (std::set<std::string>{current.filename().string(), "unfinished-now"}));
  EXPECT_TRUE(fs::exists(current / "torch" / "__init__.cpython-312.pyc"));
}

TEST_F(Cli, EvalOnTheCpuSaysWhatWasSkippedAndWhy) {
  auto simt = ptxbench({"eval", example("gemm_simt.cu"), "--task", kTask, "--cpu-only", "--json"});
  EXPECT_EQ(simt.exit_code, 1) << simt.err;
  auto verdict = json::parse(simt.out);
  EXPECT_EQ(verdict["status"], "failed");
  std::map<std::string, json> stages;
  for (const auto& s : verdict["stages"]) stages[s["name"]] = s;
  EXPECT_EQ(stages["compile"]["status"], "passed");
  EXPECT_EQ(stages["instructions"]["status"], "failed");
  EXPECT_NE(stages["instructions"]["message"].get<std::string>().find("wgmma"), std::string::npos);
  EXPECT_EQ(stages["correct"]["status"], "skipped");
  EXPECT_NE(stages["correct"]["message"].get<std::string>().find("--cpu-only"), std::string::npos);
  EXPECT_TRUE(verdict.contains("evaluation_id"));

  auto dead = ptxbench({"eval", test_solution("families_in_dead_code.cu"), "--task", kTask, "--cpu-only"});
  EXPECT_EQ(dead.exit_code, 3) << dead.out;  // nothing failed here; the GPU stages would decide
  EXPECT_NE(dead.out.find("incomplete"), std::string::npos);

  auto cheat = ptxbench({"eval", test_solution("dlopen_by_token_pasting.cu"), "--task", kTask, "--cpu-only"});
  EXPECT_EQ(cheat.exit_code, 1);
  EXPECT_NE(cheat.out.find("dynamic-loading"), std::string::npos);

  auto blackwell =
      ptxbench({"eval", example("gemm_simt.cu"), "--task", "gemm-bf16-n4096-k4096-sm100a", "--cpu-only"});
  EXPECT_EQ(blackwell.exit_code, 1);
  EXPECT_NE(blackwell.out.find("tcgen05.mma"), std::string::npos);
}

TEST_F(Cli, ASolutionThatIsNotAFileIsABadArgumentNamingIt) {
  fs::create_directories(data_ / "folder.cu");
  write_file(data_ / "huge.cu", std::string((1 << 20) + 1, ' '));
  for (const char* command : {"compile", "eval"})
    for (const fs::path& path : {data_ / "folder.cu", fs::path("/dev/zero"), data_ / "huge.cu"}) {
      const auto r = ptxbench({command, path.string(), "--task", kTask});
      EXPECT_EQ(r.exit_code, 2) << command << " " << path << ": " << r.out;
      EXPECT_NE(r.err.find(path.string() + ": "), std::string::npos) << r.err;
    }
}

TEST_F(Cli, AManifestNamingAFolderIsBrokenAndSaysWhere) {
  const fs::path solutions = data_ / "solutions";
  fs::create_directories(solutions / "folder.cu");
  write_file(solutions / "solutions.json",
             R"([{"path": "folder.cu", "tasks": "*", "purpose": "not a file"}])");
  const auto r = ptxbench({"run", "--solutions", solutions.string(), "--cpu-only"});
  EXPECT_EQ(r.exit_code, 4) << r.out;
  EXPECT_NE(r.err.find("entry 0: " + (solutions / "folder.cu").string() + ": a folder, not a file"),
            std::string::npos)
      << r.err;
}

TEST_F(Cli, AManifestGivingAKeyTwiceOrAnUnknownStageIsBroken) {
  const fs::path solutions = data_ / "solutions";
  fs::create_directories(solutions);
  write_file(solutions / "a.cu", "int x;\n");
  write_file(
      solutions / "solutions.json",
      R"([{"path": "a.cu", "tasks": "*", "purpose": "p", "expect": {"compile": "passed", "compile": "failed"}}])");
  auto r = ptxbench({"run", "--solutions", solutions.string(), "--cpu-only"});
  EXPECT_EQ(r.exit_code, 4) << r.out;
  EXPECT_NE(r.err.find("compile"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("given twice"), std::string::npos) << r.err;
  write_file(solutions / "solutions.json",
             R"([{"path": "a.cu", "tasks": "*", "purpose": "p", "expect_message": {"speed": "x"}}])");
  r = ptxbench({"run", "--solutions", solutions.string(), "--cpu-only"});
  EXPECT_EQ(r.exit_code, 4) << r.out;
  EXPECT_NE(r.err.find("expect_message: unknown stage 'speed'"), std::string::npos) << r.err;
}

// expect_message: the stage's message must contain the text; a different message is a mismatch even when the
// status is the expected one.
TEST_F(Cli, AManifestsExpectedMessageIsCompared) {
  const fs::path solutions = data_ / "solutions";
  fs::create_directories(solutions);
  write_file(solutions / "broken.cu", "this is not C++\n");
  write_file(
      solutions / "solutions.json",
      std::string(R"([{"path": "broken.cu", "tasks": ")") + kTask +
          R"(", "purpose": "p", "expect": {"compile": "failed"}, "expect_message": {"compile": "error"}},
                    {"path": "broken.cu", "tasks": ")" +
          kTask +
          R"(", "purpose": "p", "expect": {"compile": "failed"}, "expect_message": {"compile": "no such words"}}])");
  const auto r =
      ptxbench({"run", "--solutions", solutions.string(), "--tasks", kTask, "--cpu-only", "--json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const json rows = json::parse(r.out)["evaluations"];
  ASSERT_EQ(rows.size(), 2u) << r.out;
  EXPECT_TRUE(rows[0]["expectation_mismatches"].empty()) << rows[0];
  ASSERT_EQ(rows[1]["expectation_mismatches"].size(), 1u) << rows[1];
  EXPECT_NE(rows[1]["expectation_mismatches"][0].get<std::string>().find("no such words"), std::string::npos);
  // Two evaluations at once (--gpu-share): the same rows, in the manifest's order.
  const auto shared = ptxbench({"run", "--solutions", solutions.string(), "--tasks", kTask, "--cpu-only",
                                "--gpu-share", "2", "--json"});
  EXPECT_EQ(shared.exit_code, 1) << shared.err;
  const json shared_rows = json::parse(shared.out)["evaluations"];
  ASSERT_EQ(shared_rows.size(), 2u) << shared.out;
  EXPECT_TRUE(shared_rows[0]["expectation_mismatches"].empty()) << shared_rows[0];
  EXPECT_EQ(shared_rows[1]["expectation_mismatches"], rows[1]["expectation_mismatches"]);
}

// The source's bytes come back in nvcc's errors; the verdict holds them as U+FFFD, in print and in the store.
TEST_F(Cli, CompilerOutputThatIsNotUtf8IsJudgedStoredAndShown) {
  const fs::path source = data_ / "latin1.cu";
  write_file(source, "const char* s = \"\xFF\xFE\";\n");
  const auto r = ptxbench({"eval", source.string(), "--task", kTask, "--cpu-only", "--json"});
  ASSERT_EQ(r.exit_code, 1) << r.err;
  const json verdict = json::parse(r.out);
  const json& compile = verdict["stages"][0];
  EXPECT_EQ(compile["status"], "failed");
  EXPECT_NE(compile["message"].get<std::string>().find("\xEF\xBF\xBD"), std::string::npos) << compile;
  const auto stored =
      ptxbench({"results", "--id", std::to_string(verdict["evaluation_id"].get<int>()), "--json"});
  ASSERT_EQ(stored.exit_code, 0) << stored.err;
  EXPECT_EQ(json::parse(stored.out)["stages"][0]["message"], compile["message"]);
  const auto text = ptxbench({"eval", source.string(), "--task", kTask, "--cpu-only"});
  EXPECT_EQ(text.exit_code, 1) << text.err;
  EXPECT_EQ(text.out.find("\xFF"), std::string::npos) << "printed as valid UTF-8 too";
}

TEST_F(Cli, ADiskFullDuringTheCompileIsAHarnessErrorAndNotCached) {
  const fs::path nvcc = testing_compile::write_fake_nvcc(
      data_ / "nvcc",
      "echo 'cc1plus: fatal error: error writing to /tmp/ccX.s: No space left on device' >&2; exit 1");
  // The disk full as the host sees it: less free than wanted on the compile's file system.
  const auto full =
      ptxbench({"compile", example("gemm_does_not_compile.cu"), "--task", kTask}, kRoot,
               {{"PTXBENCH_NVCC", nvcc.string()}, {"PTXBENCH_COMPILE_MIN_FREE_MB", "1000000000000"}});
  EXPECT_EQ(full.exit_code, 5) << full.out;
  EXPECT_NE(full.out.find("harness_error"), std::string::npos) << full.out;
  EXPECT_NE(full.out.find("No space left on device"), std::string::npos) << full.out;
  const auto freed = ptxbench({"compile", example("gemm_does_not_compile.cu"), "--task", kTask});
  EXPECT_EQ(freed.exit_code, 1) << freed.out;
  EXPECT_EQ(freed.out.find("(cached)"), std::string::npos) << freed.out;
  EXPECT_NE(freed.out.find("load_accumulator"), std::string::npos) << freed.out;
}

// Numbers the options take are whole and finite: a port with letters after it, or "nan" seconds, is a usage
// error that names what was given (and no 309-digit range).
TEST_F(Cli, BadNumbersAreUsageErrors) {
  // An address that is not this host's (TEST-NET-3): the user's to change, as the docs say.
  const auto elsewhere = ptxbench({"serve", "--listen", "203.0.113.7:0"}, kRoot,
                                  {{"PTXBENCH_SERVICE_TOKEN", "0123456789abcdef"}});
  EXPECT_EQ(elsewhere.exit_code, 2) << elsewhere.err;
  EXPECT_NE(elsewhere.err.find("--listen 203.0.113.7:0: cannot listen on 203.0.113.7"), std::string::npos)
      << elsewhere.err;
  for (const std::string listen : {"127.0.0.1:abc", "127.0.0.1:18080x", "127.0.0.1:", "127.0.0.1:70000"}) {
    const auto r =
        ptxbench({"serve", "--listen", listen}, kRoot, {{"PTXBENCH_SERVICE_TOKEN", "0123456789abcdef"}});
    EXPECT_EQ(r.exit_code, 2) << listen << "\n" << r.err;
    EXPECT_NE(r.err.find("--listen takes HOST:PORT, PORT a number from 0 to 65535"), std::string::npos)
        << listen << "\n"
        << r.err;
  }
  for (const char* value : {"nan", "inf", "1e400", "-1", "0"}) {
    const auto r = ptxbench({"eval", example("gemm_simt.cu"), "--task", kTask, "--stage-time-limit", value});
    EXPECT_EQ(r.exit_code, 2) << value << "\n" << r.err;
    EXPECT_NE(r.err.find(std::string("must be a positive number, not '") + value + "'"), std::string::npos)
        << r.err;
    EXPECT_LT(r.err.size(), 400u) << r.err;
  }
}

// Output that cannot be written (a full disk) is the host's failure, not a silent success.
TEST_F(Cli, OutputThatCannotBeWrittenIsAHarnessError) {
  const std::string command = std::string("exec '") + PTXBENCH_BINARY + "' --root '" + kRoot.string() +
                              "' --data '" + data_.string() + "' tasks --json > /dev/full";
  const ProcessResult full =
      run_process({.argv = {"/bin/sh", "-c", command}, .time_limit = std::chrono::minutes(1)});
  EXPECT_EQ(full.exit_code, 5) << full.err;
  EXPECT_NE(full.err.find("could not write to standard output"), std::string::npos) << full.err;
}

TEST_F(Cli, ARunThatJudgesNothingDoesNotPass) {
  auto none = ptxbench({"run", "--solutions", "--cpu-only", "--tasks", "no-such-task-*"});
  EXPECT_EQ(none.exit_code, 2) << none.out;
  EXPECT_NE(none.err.find("no solution of"), std::string::npos) << none.err;
}

TEST_F(Cli, RunStoresVerdictsThatResultsShows) {
  EXPECT_EQ(ptxbench({"results"}).exit_code, 2);                        // nothing stored yet
  auto run = ptxbench({"run", "--solutions", "--cpu-only", "--json"}, kRoot,
                      shared_compile_cache());  // the project's solutions/
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  auto doc = json::parse(run.out);
  // The GEMM reference x 51 Hopper GEMM tasks and 2 examples x the 4 gemm-bf16 ones, one attention example x
  // each of the 23 Hopper attention tasks, the attention forward reference x 13 forward tasks and 4 prefill
  // tasks and the attention backward reference x 10 backward tasks, the decode reference and example x 4
  // decode tasks, the ragged and paged prefill examples x 2 prefill tasks each; in the Triton track, the GEMM
  // reference x 51 and the attention forward and backward references x 13 and 10.
  ASSERT_EQ(doc["evaluations"].size(), 195u);
  for (const auto& e : doc["evaluations"]) {
    // On the CPU the reference cannot be shown to pass; nothing in it fails either.
    const bool reference = e["solution"].get<std::string>().starts_with("reference/");
    EXPECT_EQ(e["status"], reference ? "incomplete" : "failed") << e.dump();
    EXPECT_TRUE(e["expectation_mismatches"].empty()) << e.dump();
  }
  auto text = ptxbench({"run", "--solutions", (kRoot / "solutions").string(), "--cpu-only", "--tasks",
                        "gemm-bf16-n4096-k4096-*", "--arch", "all"},
                       kRoot, shared_compile_cache());
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("AS EXPECTED"), std::string::npos);
  EXPECT_NE(text.out.find("gemm-bf16-n4096-k4096-sm100a"), std::string::npos);
  // Each verdict's line says at once whether it is as expected: a run stopped early has still said it.
  EXPECT_NE(text.err.find("examples/gemm_does_not_compile.cu        failed at compile"), std::string::npos)
      << text.err;
  EXPECT_NE(text.err.find("[as expected: yes]"), std::string::npos) << text.err;
  EXPECT_NE(text.err.find("[as expected: yes ("), std::string::npos) << text.err;  // GPU stages unchecked
  EXPECT_EQ(text.err.find("[as expected: NO"), std::string::npos) << text.err;

  auto results = json::parse(ptxbench({"results", "--limit", "300", "--json"}).out)["evaluations"];
  // The second run: the two Hopper GEMM references (CUDA and Triton) and the Blackwell one on one task each,
  // each example on two.
  EXPECT_EQ(results.size(), 195u + 7u);
  EXPECT_EQ(json::parse(ptxbench({"results", "--json"}).out)["evaluations"].size(),
            50u);  // --limit's default
  auto first_run = json::parse(ptxbench({"results", "--run", "1", "--limit", "200", "--json"}).out);
  EXPECT_EQ(first_run["run_id"], 1);
  first_run = first_run["evaluations"];
  EXPECT_EQ(first_run.size(), 195u);
  // --tasks takes groups as run does: in the first run, the served models' weights had the two GEMM references
  // on 51 tasks each and the two examples on the four gemm-bf16 ones.
  EXPECT_EQ(
      json::parse(ptxbench({"results", "--run", "1", "--limit", "200", "--tasks", "@gemm-models", "--json"})
                      .out)["evaluations"]
          .size(),
      2u * 51 + 2 * 4);
  auto runs = json::parse(ptxbench({"results", "--runs", "--json"}).out);
  EXPECT_EQ(runs["kind"], "runs");
  EXPECT_EQ(runs["runs"].size(), 2u);
  auto one = ptxbench({"results", "--id", "1", "--json"});
  ASSERT_EQ(one.exit_code, 0);
  EXPECT_EQ(json::parse(one.out)["kind"], "verdict");
  EXPECT_EQ(json::parse(one.out)["schema"], 1);
  EXPECT_EQ(ptxbench({"results", "--id", "999"}).exit_code, 2);
  EXPECT_EQ(ptxbench({"results", "--run", "999"}).exit_code, 2);

  // --only: the manifest's entries whose path matches (the two GEMM examples on the four Hopper GEMM tasks).
  auto only = ptxbench({"run", "--solutions", "--cpu-only", "--only", "examples/gemm_*", "--json"});
  ASSERT_EQ(only.exit_code, 0) << only.err;
  const auto only_doc = json::parse(only.out);
  ASSERT_EQ(only_doc["evaluations"].size(), 8u);
  for (const auto& e : only_doc["evaluations"])
    EXPECT_TRUE(e["solution"].get<std::string>().starts_with("examples/gemm_")) << e.dump();
  EXPECT_EQ(ptxbench({"run", "--solutions", "--cpu-only", "--only", "nothing/*"}).exit_code, 2);
  EXPECT_EQ(ptxbench({"run", "--only", "examples/*"}).exit_code, 2);  // the agent run has no manifest
}

// run --resume N of a manifest run: its verdicts stand, a harness error's pair and a changed file's are
// judged again, and the judge and what is judged must be those of the run.
TEST_F(Cli, AManifestRunResumesKeepingItsVerdicts) {
  const fs::path solutions = data_ / "solutions";
  fs::create_directories(solutions);
  write_file(solutions / "a.cu", "this is not C++\n");
  write_file(solutions / "b.cu", "nor is this\n");
  write_file(solutions / "solutions.json", std::string(R"([{"path": "a.cu", "tasks": ")") + kTask +
                                               R"(", "purpose": "p", "expect": {"compile": "failed"}},
                    {"path": "b.cu", "tasks": ")" +
                                               kTask +
                                               R"(", "purpose": "p", "expect": {"compile": "failed"}}])");
  // The first run's compiles fail on the host (a disk full): harness errors, judged again when resumed.
  const fs::path nvcc = testing_compile::write_fake_nvcc(
      data_ / "nvcc", "echo 'fatal error: error writing to /tmp/ccX.s: No space left on device' >&2; exit 1");
  const auto first =
      ptxbench({"run", "--solutions", solutions.string(), "--tasks", kTask, "--cpu-only", "--json"}, kRoot,
               {{"PTXBENCH_NVCC", nvcc.string()}, {"PTXBENCH_COMPILE_MIN_FREE_MB", "1000000000000"}});
  ASSERT_EQ(json::parse(first.out)["run_id"], 1) << first.err;
  for (const auto& e : json::parse(first.out)["evaluations"]) ASSERT_EQ(e["status"], "error") << e.dump();

  auto resumed = ptxbench({"run", "--resume", "1", "--json"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err << resumed.out;
  json doc = json::parse(resumed.out);
  EXPECT_EQ(doc["run_id"], 1);
  EXPECT_EQ(doc["judged_before_resuming"], 0);
  ASSERT_EQ(doc["evaluations"].size(), 2u);
  for (const auto& e : doc["evaluations"]) EXPECT_EQ(e["status"], "failed") << e.dump();

  // Resumed again: both verdicts stand, the same evaluations, nothing judged.
  resumed = ptxbench({"run", "--resume", "1"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err << resumed.out;
  EXPECT_NE(resumed.out.find("2 evaluations in run 1 on"), std::string::npos) << resumed.out;
  EXPECT_NE(resumed.out.find("(2 judged before it was resumed)"), std::string::npos) << resumed.out;
  EXPECT_NE(resumed.err.find("run 1 (resumed)"), std::string::npos) << resumed.err;
  EXPECT_EQ(resumed.err.find("[as expected:"), std::string::npos) << "a pair judged again\n" << resumed.err;
  // A file changed since is judged again.
  write_file(solutions / "b.cu", "nor is this, now\n");
  doc = json::parse(ptxbench({"run", "--resume", "1", "--json"}).out);
  EXPECT_EQ(doc["judged_before_resuming"], 1);
  const json run = json::parse(ptxbench({"results", "--run", "1", "--json"}).out)["evaluations"];
  EXPECT_EQ(run.size(), 2u + 2 + 1);  // the host's failures, the first verdicts, b.cu's again

  // What the run judges is its own, and so is its judge.
  auto refused = ptxbench({"run", "--resume", "1", "--tasks", "*"});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("--tasks cannot be given with it"), std::string::npos) << refused.err;
  refused = ptxbench({"run", "--resume", "1", "--turns", "3"});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("run 1 evaluates a manifest; --turns belongs to the agent run"),
            std::string::npos)
      << refused.err;
  {
    SQLite::Database store((data_ / "ptxbench.db").string(), SQLite::OPEN_READWRITE);
    store.exec("UPDATE runs SET args = json_set(args, '$.judged', 'NVIDIA H200 (sm_90)') WHERE id = 1");
  }
  refused = ptxbench({"run", "--resume", "1"});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("its verdicts would not compare with the run's"), std::string::npos)
      << refused.err;
  EXPECT_EQ(ptxbench({"run", "--resume", "7"}).exit_code, 2);  // no such run
}

// A manifest run stopped by a signal says how to resume it, and its resumption judges only what it had not.
TEST_F(Cli, AnInterruptedManifestRunResumesWhereItStopped) {
  const fs::path solutions = data_ / "solutions";
  fs::create_directories(solutions);
  json entries = json::array();
  for (int i = 0; i < 8; ++i) {
    const std::string name = "broken" + std::to_string(i) + ".cu";
    write_file(solutions / name, "this is not C++ " + std::to_string(i) + "\n");
    entries.push_back(
        {{"path", name}, {"tasks", kTask}, {"purpose", "p"}, {"expect", {{"compile", "failed"}}}});
  }
  write_file(solutions / "solutions.json", entries.dump());
  interrupt_run_1({"run", "--solutions", solutions.string(), "--tasks", kTask, "--cpu-only"},
                  "[as expected:");
  if (HasFatalFailure()) return;
  const auto resumed = ptxbench({"run", "--resume", "1", "--json"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  const json doc = json::parse(resumed.out);
  ASSERT_EQ(doc["evaluations"].size(), 8u);
  const int before = doc["judged_before_resuming"].get<int>();
  EXPECT_GE(before, 1);
  EXPECT_LT(before, 8);
  // Each pair once in the run: what the first process stored, then the rest.
  EXPECT_EQ(json::parse(ptxbench({"results", "--run", "1", "--json"}).out)["evaluations"].size(), 8u);
}

// "prelude": files whose text goes before the entry's own; the concatenation is what is evaluated and stored.
TEST_F(Cli, AManifestsPreludeIsPutBeforeTheEntry) {
  const fs::path solutions = data_ / "solutions";
  fs::create_directories(solutions / "shared");
  write_file(solutions / "shared" / "types.cuh", "#include <ptxbench/abi.h>\nstruct Shared {\n  int n;\n};");
  write_file(solutions / "shared" / "helper.cuh", "inline int twice(Shared s) { return 2 * s.n; }\n");
  write_file(
      solutions / "uses.cu",
      "extern \"C\" int ptxbench_gemm_bf16(const __nv_bfloat16*, const __nv_bfloat16*, __nv_bfloat16*, "
      "int M, int, int, cudaStream_t) {\n  return twice(Shared{M}) < 0;\n}\n");
  write_file(solutions / "solutions.json",
             std::string(
                 R"([{"path": "uses.cu", "prelude": ["shared/types.cuh", "shared/helper.cuh"], "tasks": ")") +
                 kTask + R"(", "purpose": "p", "expect": {"compile": "passed", "static": "passed"}}])");
  const auto r = ptxbench({"run", "--solutions", solutions.string(), "--cpu-only", "--json"});
  const json rows = json::parse(r.out)["evaluations"];
  ASSERT_EQ(rows.size(), 1u) << r.out << r.err;
  EXPECT_TRUE(rows[0]["expectation_mismatches"].empty()) << rows[0];
  const auto stored =
      ptxbench({"results", "--id", std::to_string(rows[0]["evaluation_id"].get<int>()), "--json"});
  ASSERT_EQ(stored.exit_code, 0) << stored.err;
  const json verdict = json::parse(stored.out);
  EXPECT_EQ(verdict["stages"][0]["status"], "passed") << stored.out;
  // The stored submission is the concatenation (a line break added after a prelude that lacks one).
  EXPECT_EQ(verdict["submission"],
            sha256_hex(read_file(solutions / "shared" / "types.cuh") + "\n" +
                       read_file(solutions / "shared" / "helper.cuh") + read_file(solutions / "uses.cu")));

  // Without its prelude the entry does not compile: the prelude is what made it pass.
  write_file(solutions / "solutions.json", std::string(R"([{"path": "uses.cu", "tasks": ")") + kTask +
                                               R"(", "purpose": "p", "expect": {"compile": "passed"}}])");
  EXPECT_EQ(ptxbench({"run", "--solutions", solutions.string(), "--cpu-only"}).exit_code, 1);
}

TEST_F(Cli, AManifestsMissingOrOversizedPreludeIsBrokenAndNamesTheEntry) {
  const fs::path solutions = data_ / "solutions";
  fs::create_directories(solutions);
  write_file(solutions / "a.cu", "int x;\n");
  write_file(solutions / "solutions.json",
             R"([{"path": "a.cu", "tasks": "*", "purpose": "p"},
                 {"path": "a.cu", "prelude": "missing.cuh", "tasks": "*", "purpose": "p"}])");
  auto r = ptxbench({"run", "--solutions", solutions.string(), "--cpu-only"});
  EXPECT_EQ(r.exit_code, 4) << r.out;
  EXPECT_NE(r.err.find("entry 1: prelude " + (solutions / "missing.cuh").string() + ": cannot read"),
            std::string::npos)
      << r.err;
  // Each file is within the limit, the two together are not.
  write_file(solutions / "half.cuh", std::string(1 << 19, ' '));
  write_file(solutions / "half.cu", std::string(1 << 19, ' '));
  write_file(solutions / "solutions.json",
             R"([{"path": "half.cu", "prelude": "half.cuh", "tasks": "*", "purpose": "p"}])");
  r = ptxbench({"run", "--solutions", solutions.string(), "--cpu-only"});
  EXPECT_EQ(r.exit_code, 4) << r.out;
  EXPECT_NE(r.err.find("entry 0: the prelude and half.cu hold"), std::string::npos) << r.err;
}

// The Triton track from the command line: a .py file is judged in it (or --track triton), its CPU stages
// run, the GPU stages say they do not exist yet; a track the task does not accept, or a file of the other
// track, is a bad argument.
TEST_F(Cli, EvalInTheTritonTrack) {
  const std::string fixture = (kData / "triton" / "gemm_scan_fixture.py").string();
  auto eval = ptxbench({"eval", fixture, "--task", kTask, "--cpu-only", "--json"});
  EXPECT_EQ(eval.exit_code, 3) << eval.err << eval.out;  // nothing failed; the GPU stages did not run
  const json verdict = json::parse(eval.out);
  EXPECT_EQ(verdict["track"], "triton");
  EXPECT_EQ(verdict["stages"][0]["status"], "passed");
  EXPECT_EQ(verdict["stages"][1]["status"], "passed");
  EXPECT_EQ(verdict["stages"][3]["status"], "skipped");
  EXPECT_NE(verdict["stages"][3]["message"].get<std::string>().find("--cpu-only"), std::string::npos)
      << verdict["stages"][3];
  EXPECT_EQ(ptxbench({"eval", fixture, "--track", "triton", "--task", kTask, "--cpu-only"}).exit_code, 3);

  write_file(data_ / "matmul.py",
             "import torch as t\n\ndef ptxbench_gemm_bf16(A, B, C, M, N, K, stream):\n"
             "    C.copy_(t.matmul(A, B.T))\n    return 0\n");
  auto cheat =
      ptxbench({"eval", (data_ / "matmul.py").string(), "--task", kTask, "--cpu-only", "--no-store"});
  EXPECT_EQ(cheat.exit_code, 1);
  EXPECT_NE(cheat.out.find("[torch] line 4: t.matmul (torch.matmul)"), std::string::npos) << cheat.out;

  auto compile = ptxbench({"compile", fixture, "--task", kTask, "--json"});
  ASSERT_EQ(compile.exit_code, 0) << compile.err;
  EXPECT_TRUE(json::parse(compile.out).contains("python_version"));

  auto blackwell = ptxbench({"eval", fixture, "--task", "gemm-bf16-n4096-k4096-sm100a", "--cpu-only"});
  EXPECT_EQ(blackwell.exit_code, 2);
  EXPECT_NE(blackwell.err.find("does not accept the triton track (it accepts: cuda)"), std::string::npos)
      << blackwell.err;
  auto mismatched = ptxbench({"eval", example("gemm_simt.cu"), "--track", "triton", "--task", kTask});
  EXPECT_EQ(mismatched.exit_code, 2);
  EXPECT_NE(mismatched.err.find("is a CUDA file (.cu), not a Triton one: give --track cuda"),
            std::string::npos)
      << mismatched.err;
  EXPECT_EQ(ptxbench({"eval", fixture, "--track", "cuda", "--task", kTask}).exit_code, 2);
  EXPECT_EQ(ptxbench({"eval", fixture, "--track", "cutile", "--task", kTask}).exit_code, 2);
}

// run --track triton: the reference model answers in the track (the shipped Triton reference, broken on
// purpose first), the prompts ask for Python, the run remembers its track; tasks that do not accept it are
// left out.
TEST_F(Cli, TheAgentRunsInTheTritonTrack) {
  auto run = ptxbench({"run", "--cpu-only", "--track", "triton", "--tasks", "gemm-bf16-n4096-k4096-*",
                       "--arch", "all", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const json doc = json::parse(run.out);
  EXPECT_EQ(doc["settings"]["track"], "triton");
  EXPECT_EQ(doc["settings"]["task_ids"], json({kTask})) << "the Blackwell task accepts CUDA alone";
  EXPECT_NE(run.err.find("left out, as they do not accept the triton track: gemm-bf16-n4096-k4096-sm100a"),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("triton track"), std::string::npos) << run.err;

  const fs::path file = data_ / "trajectories.json";
  ASSERT_EQ(ptxbench({"results", "--run", "1", "--export", file.string()}).exit_code, 0);
  const json turns = json::parse(read_file(file))["trajectories"][0]["turns"];
  ASSERT_EQ(turns.size(), 2u) << turns;
  EXPECT_NE(turns[0]["request"]["system"].get<std::string>().find("```python"), std::string::npos);
  EXPECT_NE(turns[0]["reply"].get<std::string>().find("```python"), std::string::npos) << turns[0]["reply"];
  EXPECT_EQ(turns[0]["error_class"], "compile");  // the broken copy: the inserted line is not Python
  EXPECT_EQ(turns[1]["code"], read_file(kRoot / "solutions" / "reference" / "gemm_bf16_sm90a.py"));
  EXPECT_EQ(turns[1]["verdict"]["status"], "incomplete");  // parsed and scanned; no GPU stage here

  auto none = ptxbench({"run", "--cpu-only", "--track", "triton", "--arch", "sm_100a"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("no task of sm_100a matching '*' accepts the triton track (82 match but do not)"),
            std::string::npos)
      << none.err;
  auto resumed = ptxbench({"run", "--resume", "1", "--track", "cuda"});
  EXPECT_EQ(resumed.exit_code, 2);
  EXPECT_NE(resumed.err.find("--track cannot be given with it"), std::string::npos) << resumed.err;
}

// A manifest entry says its track; it applies to the tasks that accept it, and --track chooses entries.
TEST_F(Cli, AManifestEntryHasATrack) {
  const fs::path solutions = data_ / "solutions";
  fs::create_directories(solutions);
  fs::copy_file(kData / "triton" / "gemm_scan_fixture.py", solutions / "gemm.py");
  write_file(solutions / "matmul.py",
             "import torch\n\ndef ptxbench_gemm_bf16(A, B, C, M, N, K, stream):\n"
             "    C.copy_(torch.matmul(A, B.T))\n    return 0\n");
  write_file(solutions / "solutions.json", R"([
    {"path": "gemm.py", "track": "triton", "tasks": "gemm-bf16-n4096-k4096-*", "purpose": "scans clean",
     "expect": {"compile": "passed", "static": "passed"}},
    {"path": "matmul.py", "tasks": "gemm-bf16-n4096-k4096-*", "purpose": "torch.matmul, Triton's by its name",
     "expect": {"static": "failed"}, "expect_message": {"static": "torch.matmul"}}])");
  auto run = ptxbench({"run", "--solutions", solutions.string(), "--cpu-only", "--arch", "all", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const json evaluations = json::parse(run.out)["evaluations"];
  ASSERT_EQ(evaluations.size(), 2u) << "the sm_100a task accepts CUDA alone";
  for (const auto& e : evaluations) {
    EXPECT_EQ(e["task"], kTask);
    EXPECT_TRUE(e["expectation_mismatches"].empty()) << e;
  }
  auto cuda_only = ptxbench({"run", "--solutions", solutions.string(), "--cpu-only", "--track", "cuda"});
  EXPECT_EQ(cuda_only.exit_code, 2);
  EXPECT_NE(cuda_only.err.find("in the cuda track applies"), std::string::npos) << cuda_only.err;

  write_file(solutions / "solutions.json",
             R"([{"path": "gemm.py", "track": "cutile", "tasks": "*", "purpose": "no such track"}])");
  auto broken = ptxbench({"run", "--solutions", solutions.string(), "--cpu-only"});
  EXPECT_EQ(broken.exit_code, 4);
  EXPECT_NE(broken.err.find("entry 0: \"track\" must be one of cuda, triton"), std::string::npos)
      << broken.err;
  write_file(solutions / "solutions.json",
             R"([{"path": "gemm.py", "track": "cuda", "tasks": "*", "purpose": "a Python file as CUDA"}])");
  auto contradicted = ptxbench({"run", "--solutions", solutions.string(), "--cpu-only"});
  EXPECT_EQ(contradicted.exit_code, 4);
  EXPECT_NE(contradicted.err.find("\"track\" is cuda but gemm.py is a Triton file"), std::string::npos)
      << contradicted.err;
}
