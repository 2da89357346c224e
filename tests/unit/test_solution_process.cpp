// The runner's side of the solution process (runner/solution_process.h) against workers that break the
// protocol. This binary plays the worker too: SolutionProcess starts it again with `--solution-worker FD`,
// and $PTXBENCH_FAKE_WORKER, in the worker command's environment, says how it misbehaves. No GPU needed: the
// fakes never touch CUDA.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include <dlfcn.h>

#include "runner/device_state.h"
#include "runner/solution_binding.h"
#include "runner/solution_process.h"

using namespace ptxbench::runner;
namespace s = ptxbench::runner::solution;

namespace {

std::string self_path;

// ---- the fake workers
// --------------------------------------------------------------------------------------

// Reads one request of any kind and returns its nonce (every request has it at the same offset).
uint64_t next_nonce(int socket) {
  union {
    s::OpenRequest open;
    s::LoadRequest load;
    s::CallRequest call;
  } request{};
  if (recv(socket, &request, sizeof(request), 0) <= 0) _exit(0);
  static_assert(offsetof(s::OpenRequest, nonce) == offsetof(s::CallRequest, nonce));
  return request.open.nonce;
}

void send_reply(int socket, s::Reply reply) {
  (void)send(socket, &reply, sizeof(reply), MSG_NOSIGNAL);
}

// Answers the open request with what the worker was given: the request's `recorded`, and two variables, one
// the runner has and its command sets too, one only the runner has.
int tell_what_it_was_given(int socket) {
  s::OpenRequest open;
  if (recv(socket, &open, sizeof(open), 0) != static_cast<ssize_t>(sizeof(open))) return 2;
  const auto variable = [](const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr ? value : "unset";
  };
  s::Reply reply{.nonce = open.nonce, .failed = s::Phase::harness};
  std::snprintf(reply.message, sizeof(reply.message),
                "recorded %u, set %s, inherited %s, for the debugger %s", open.recorded,
                variable("PTXBENCH_TEST_SET"), variable("PTXBENCH_TEST_INHERITED"),
                variable(kForDebuggerVariable));
  send_reply(socket, reply);
  return 0;
}

int fake_worker(int socket, const std::string& behaviour) {
  if (behaviour == "tell") return tell_what_it_was_given(socket);
  const uint64_t open_nonce = next_nonce(socket);
  if (behaviour == "wrong-nonce") {
    send_reply(socket, {.nonce = open_nonce + 1});
  } else if (behaviour == "oversized") {
    char big[sizeof(s::Reply) + 100] = {};
    std::memcpy(big, &open_nonce, sizeof(open_nonce));
    (void)send(socket, big, sizeof(big), MSG_NOSIGNAL);
  } else if (behaviour == "bad-text") {
    s::Reply reply{.nonce = open_nonce, .failed = s::Phase::harness};
    std::strcpy(reply.message, "broken \xff\xfe\x01\x1b[31m text");
    send_reply(socket, reply);
  } else {
    send_reply(socket, {.nonce = open_nonce});
    if (behaviour == "exit") return 0;
    if (behaviour == "exit-leaving-a-child") {
      if (fork() == 0) {  // holds the worker's end of the socket for a while
        sleep(5);
        _exit(0);
      }
      return 0;
    }
    if (behaviour == "reply-ahead") {
      // A second reply queued before the next request exists, as the solution's code could send it.
      send_reply(socket, {.nonce = 0, .event_us = 1, .wall_us = 2});
    } else {
      const uint64_t nonce = next_nonce(socket);
      if (behaviour == "nan-times") send_reply(socket, {.nonce = nonce, .event_us = NAN, .wall_us = 2});
      if (behaviour == "honest") send_reply(socket, {.nonce = nonce, .event_us = 5, .wall_us = 10});
    }
  }
  next_nonce(socket);  // until the runner closes the socket
  return 0;
}

// ---- the tests
// ----------------------------------------------------------------------------------------------

// This binary as a worker that behaves as told.
WorkerCommand fake_worker_command(const std::string& behaviour) {
  WorkerCommand command = cuda_worker(self_path);
  command.environment = {{"PTXBENCH_FAKE_WORKER", behaviour}};
  return command;
}

std::string fault_of(const std::string& behaviour, bool calibrate_too) {
  try {
    SolutionProcess process(fake_worker_command(behaviour));
    process.open(0);
    if (calibrate_too) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the reply queued ahead has arrived
      process.calibrate(0);
    }
  } catch (const SolutionFault& fault) {
    return fault.what();
  } catch (const std::exception& e) {
    return std::string("not a SolutionFault: ") + e.what();
  }
  return "no fault";
}

}  // namespace

TEST(SolutionProcessJudge, AnHonestWorkersTimesAreHeldToTheJudgesClock) {
  SolutionProcess process(fake_worker_command("honest"));
  process.open(0);
  const CallOutcome outcome = process.calibrate(0);
  EXPECT_EQ(outcome.reply.event_us, 5);
  EXPECT_EQ(outcome.reply.wall_us, 10);
  EXPECT_GT(outcome.judge_us, 0);
}

TEST(SolutionProcessJudge, AReplyQueuedBeforeItsRequestIsAFault) {
  EXPECT_NE(fault_of("reply-ahead", true).find("answered a request that was not yet sent"),
            std::string::npos);
}

TEST(SolutionProcessJudge, AReplyWithAnotherNonceIsAFault) {
  EXPECT_NE(fault_of("wrong-nonce", false).find("answered out of turn"), std::string::npos);
}

TEST(SolutionProcessJudge, AnOversizedReplyIsMalformed) {
  EXPECT_NE(fault_of("oversized", false).find("malformed reply (" + std::to_string(sizeof(s::Reply) + 100)),
            std::string::npos);
}

TEST(SolutionProcessJudge, TimesThatAreNotFiniteAreMalformed) {
  EXPECT_NE(fault_of("nan-times", true).find("not finite"), std::string::npos);
}

TEST(SolutionProcessJudge, AWorkersMessageKeepsOnlyPrintableAscii) {
  SolutionProcess process(fake_worker_command("bad-text"));
  try {
    process.open(0);
    FAIL() << "the worker said it failed";
  } catch (const std::runtime_error& e) {
    const std::string text = e.what();
    EXPECT_NE(text.find("broken"), std::string::npos) << text;
    for (const char c : text)
      EXPECT_TRUE(c >= ' ' && c <= '~') << "byte " << int(static_cast<unsigned char>(c));
  }
}

TEST(SolutionProcessJudge, AWorkerThatEndsIsReportedWithHowItEnded) {
  const std::string fault = fault_of("exit", true);
  EXPECT_NE(fault.find("the solution process ended (it exited with status 0)"), std::string::npos) << fault;
}

TEST(SolutionProcessJudge, AWorkerThatEndsWhileItsChildHoldsTheSocketIsSeenToEnd) {
  alarm(20);  // without the worker's pidfd the judge waits as long as the child holds the socket (5 s here)
  const std::string fault = fault_of("exit-leaving-a-child", true);
  alarm(0);
  EXPECT_NE(fault.find("the solution process ended (it exited with status 0)"), std::string::npos) << fault;
}

TEST(SolutionProcessJudge, ATritonSolutionsWorkerIsPythonRunningTheInlinedHostWithItsOwnKernelCache) {
  const WorkerCommand command =
      python_worker("python3", "/opt/ptxbench/libptxbench-solution-worker.so", "/tmp/ptxbench-triton-x", "");
  ASSERT_EQ(command.argv.size(), 6u);
  EXPECT_EQ(command.argv[0], "python3");
  EXPECT_EQ(command.argv[1], "-I");  // isolated: no PYTHON* variable, no user site
  EXPECT_EQ(command.argv[2], "-B");  // nothing written beside the solution
  EXPECT_EQ(command.argv[3], "-c");
  EXPECT_NE(command.argv[4].find("ptxbench_worker_serve"), std::string::npos);  // src/runner/triton_worker.py
  EXPECT_NE(command.argv[4].find("ptxbench_worker_confine"), std::string::npos);
  EXPECT_EQ(command.argv[5], "/opt/ptxbench/libptxbench-solution-worker.so");
  const auto has = [&](const std::string& name) {
    for (const auto& [n, value] : command.environment)
      if (n == name) return value == "/tmp/ptxbench-triton-x";
    return false;
  };
  EXPECT_TRUE(has("TRITON_CACHE_DIR"));
  EXPECT_TRUE(has("TRITON_HOME"));
}

// The judge's bytecode folder (eval/python_bytecode.h) is read through an interpreter option, the one way -I
// leaves: PYTHONPYCACHEPREFIX would be ignored.
TEST(SolutionProcessJudge, ATritonSolutionsWorkerReadsTheJudgesBytecodeFolderWhenGivenOne) {
  const WorkerCommand command = python_worker("python3", "/opt/ptxbench/libptxbench-solution-worker.so",
                                              "/tmp/ptxbench-triton-x", "/data/cache/python/abc");
  ASSERT_EQ(command.argv.size(), 8u);
  EXPECT_EQ(command.argv[1], "-I");
  EXPECT_EQ(command.argv[2], "-B");  // the folder is read, never written
  EXPECT_EQ(command.argv[3], "-X");
  EXPECT_EQ(command.argv[4], "pycache_prefix=/data/cache/python/abc");
  EXPECT_EQ(command.argv[5], "-c");
  EXPECT_EQ(command.argv[7], "/opt/ptxbench/libptxbench-solution-worker.so");
}

// A tool that starts the worker (compute-sanitizer) writes its report once the worker has ended: the worker
// is ended by closing its socket, and the tool gets to finish, where a signal would have cut it short.
TEST(SolutionProcessJudge, AWrappedWorkersToolFinishesItsReport) {
  const std::string report =
      (std::filesystem::temp_directory_path() / ("ptxbench-wrapper-" + std::to_string(getpid()))).string();
  std::filesystem::remove(report);
  {
    WorkerCommand command = fake_worker_command("honest");
    command.wrapper = {"/bin/sh", "-c", "\"$@\"; echo \"worker ended: $?\" > " + report, "tool"};
    SolutionProcess process(command);
    process.open(0);
    EXPECT_EQ(process.calibrate(0).reply.wall_us, 10);
  }
  std::ifstream in(report);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "worker ended: 0");
  std::filesystem::remove(report);
}

// The worker gets the runner's environment with its command's variables over it, and its open request says
// whether it records its calls (a process for the debugger does not: solution_protocol.h). Whether it was
// started for the debugger is the command's, whatever the runner's environment says (landlock.h).
TEST(SolutionProcessJudge, AWorkerGetsItsCommandsVariablesAndIsToldWhetherItRecords) {
  ASSERT_EQ(setenv("PTXBENCH_TEST_SET", "the runner's", 1), 0);
  ASSERT_EQ(setenv("PTXBENCH_TEST_INHERITED", "the runner's", 1), 0);
  ASSERT_EQ(setenv(kForDebuggerVariable, "1", 1), 0);
  WorkerCommand command = fake_worker_command("tell");
  command.environment.emplace_back("PTXBENCH_TEST_SET", "the command's");
  const auto opened = [&](std::optional<bool> recorded) -> std::string {
    SolutionProcess process(command);
    try {
      recorded ? process.open(0, *recorded) : process.open(0);
    } catch (const std::runtime_error& error) {
      return error.what();
    }
    return "opened";
  };
  const std::string told = "the solution process could not start: ";
  const std::string given = "set the command's, inherited the runner's, for the debugger ";
  EXPECT_EQ(opened(std::nullopt), told + "recorded 1, " + given + "0");
  EXPECT_EQ(opened(true), told + "recorded 1, " + given + "0");
  command.for_debugger = true;
  EXPECT_EQ(opened(false), told + "recorded 0, " + given + "1");
  unsetenv(kForDebuggerVariable);
  unsetenv("PTXBENCH_TEST_SET");
  unsetenv("PTXBENCH_TEST_INHERITED");
}

// A call that runs out of time with a debugger set: what the debugger printed is kept, or why it printed
// nothing (session.cpp's debug_rerun passes either on: the stage message's "where its threads wait").
TEST(SolutionProcessJudge, ATimedOutCallKeepsWhatTheDebuggerSaidOrWhyItSaidNothing) {
  const auto debugged = [](const std::string& debugger) -> std::pair<std::string, std::string> {
    SolutionProcess process(fake_worker_command("silent"));  // opens, then never answers
    process.open(0);
    process.set_debugger(debugger);
    process.set_deadline(std::chrono::steady_clock::now() + std::chrono::milliseconds(300),
                         "the test's 0.3 s");
    try {
      (void)process.calibrate(0);
    } catch (const SolutionFault& fault) {
      if (fault.timed_out) return {fault.debugger_output, fault.debugger_failure};
      return {"", std::string("not a timeout: ") + fault.what()};
    }
    return {"", "answered"};
  };
  const auto [said, none] = debugged("echo");  // prints its arguments: "-q -batch -p PID -ex ..."
  EXPECT_NE(said.find("-batch -p "), std::string::npos) << said;
  EXPECT_EQ(none, "");
  EXPECT_EQ(debugged("/nonexistent/cuda-gdb"),
            std::make_pair(std::string(), std::string("cuda-gdb could not be run")));
  EXPECT_EQ(debugged("true"), std::make_pair(std::string(), std::string("true printed nothing")));
}

TEST(SolutionProcessJudge, AWorkerThatCannotStartIsSeenToEnd) {
  WorkerCommand command = cuda_worker("/nonexistent/ptxbench-runner");
  SolutionProcess process(command);
  try {
    process.open(0);
    FAIL() << "a worker that was never started answered";
  } catch (const SolutionFault& fault) {
    EXPECT_NE(std::string(fault.what()).find("exited with status 127"), std::string::npos) << fault.what();
  }
}

// The open in two steps (the baseline process's, started while the check runs): the reply is awaited later,
// and a request asked for before it is answered is read as it would be after an open(); a worker gone before
// the request could be sent is reported at the await, as an open() would report it.
TEST(SolutionProcessJudge, AnOpenRequestedEarlyIsAwaitedLater) {
  {
    SolutionProcess process(fake_worker_command("honest"));
    process.request_open(0);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the reply waits in the socket meanwhile
    process.await_open();
    const CallOutcome outcome = process.calibrate(0);
    EXPECT_EQ(outcome.reply.event_us, 5);
    EXPECT_THROW(process.await_open(), std::logic_error) << "nothing is pending any more";
  }
  SolutionProcess gone(cuda_worker("/nonexistent/ptxbench-runner"));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // it has exited by now
  EXPECT_NO_THROW(gone.request_open(0));
  try {
    gone.await_open();
    FAIL() << "a worker that was never started answered";
  } catch (const SolutionFault& fault) {
    EXPECT_NE(std::string(fault.what()).find("exited with status 127"), std::string::npos) << fault.what();
  }
}

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--solution-worker") == 0) {
    const char* behaviour = std::getenv("PTXBENCH_FAKE_WORKER");
    return fake_worker(std::atoi(argv[2]), behaviour ? behaviour : "");
  }
  self_path = "/proc/self/exe";
  char path[4096];
  if (const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1); n > 0) self_path.assign(path, n);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

// What the solution process says when the loader refuses a library (solution_binding.h, load_failure): the
// loader's own words with the missing symbol, without the harness's path, and what to do.
TEST(SolutionLoading, TheLoadersWordsNameTheMissingSymbolWithoutThePath) {
  const std::string library = PTXBENCH_UNDEFINED_SYMBOL_LIBRARY;
  ASSERT_EQ(dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL), nullptr);
  const std::string text = load_failure(dlerror(), library);
  EXPECT_NE(
      text.find("the dynamic loader could not load it: undefined symbol: cuTensorMapEncodeTiledNowhere"),
      std::string::npos)
      << text;
  EXPECT_EQ(text.find(library), std::string::npos) << text;
  EXPECT_NE(text.find("the CUDA driver (the functions the static stage allows)"), std::string::npos) << text;
  EXPECT_EQ(load_failure("libfoo.so: cannot open shared object file", library),
            "the dynamic loader could not load it: libfoo.so: cannot open shared object file");
}

// State kept between calls (device_state.h): each field that differs, in words; a rise the driver makes
// itself (the stack size) is none of the solution's.
TEST(DeviceState, ChangesNameEveryFieldThatDiffers) {
  using State = std::array<StateField, 3>;
  const State before{{{"the persisting L2 limit", 0}, {"the stack size limit", 1024, true}, {"the x", 5}}};
  EXPECT_EQ(changes(before, before), "");
  State after = before;
  after[1].value = 4096;  // raised, as the driver does for a kernel that needs more
  EXPECT_EQ(changes(before, after), "");
  after[0].value = 16777216;
  after[2].value = 6;
  EXPECT_EQ(changes(before, after), "the persisting L2 limit from 0 to 16777216, the x from 5 to 6");
  after = before;
  after[1].value = 512;  // lowered: not the driver's doing
  EXPECT_EQ(changes(before, after), "the stack size limit from 1024 to 512");
}
