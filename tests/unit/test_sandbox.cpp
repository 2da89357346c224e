// The sandbox (src/eval/sandbox.h) and the authenticated result channel (src/runner/result_mac.h,
// read_result_channel), without a GPU. The sandbox must work here: when bwrap is missing or cannot create
// namespaces these tests FAIL (they do not skip), because a harness without its sandbox must not pass CI.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "eval/gpu_stages.h"
#include "eval/sandbox.h"
#include "eval/settings.h"
#include "runner/landlock.h"
#include "runner/result_mac.h"
#include "util/files.h"
#include "util/subprocess.h"

using namespace ptxbench;
namespace fs = std::filesystem;

namespace {

const SandboxStatus& status() {
  static const SandboxStatus s = probe_sandbox(host_settings().sandbox);
  return s;
}

// A fresh folder under the build tree (not /tmp: inside the sandbox /tmp is a private tmpfs, and the tests
// want folders that exist outside it).
fs::path fresh_dir(const std::string& name) {
  std::mt19937_64 rng{std::random_device{}()};
  const fs::path dir = fs::current_path() / ("sandbox-test-" + name + "-" + std::to_string(rng() % 1000000));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// A TCP listener on 127.0.0.1 outside the sandbox; 0 when none could be made.
struct Listener {
  int fd = -1;
  int port = 0;
  Listener() {
    fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
        listen(fd, 4) != 0 || getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0)
      return;
    port = ntohs(address.sin_port);
  }
  ~Listener() {
    if (fd >= 0) close(fd);
  }
};

}  // namespace

TEST(Sandbox, BubblewrapCreatesItsNamespacesHere) {
  ASSERT_TRUE(status().available)
      << "the sandbox cannot run on this machine, so ptxbench would refuse to run "
         "solutions: "
      << status().reason;
}

TEST(Sandbox, LoadTimeCodeCannotReachTheNetworkWriteOutsideOrReadKeys) {
  ASSERT_TRUE(status().available) << status().reason;
  const Listener listener;
  ASSERT_GT(listener.port, 0) << "could not listen on 127.0.0.1";
  // A connection from the host itself works (so a blocked one inside is the sandbox's doing).
  {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(listener.port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    close(fd);
  }
  const fs::path data = fresh_dir("data"), scratch = fresh_dir("scratch"), outside = fresh_dir("outside");
  write_file(data / "secret.txt", "the-store-secret");
  setenv("OPENAI_API_KEY", "sk-test-must-not-leak", 1);

  SandboxPolicy policy{.hidden = default_hidden_paths(status()),
                       .readable = {fs::path(PTXBENCH_SANDBOX_LOADER).parent_path(),
                                    fs::path(PTXBENCH_SANDBOX_PROBE).parent_path()},
                       .writable = {scratch}};
  policy.hidden.push_back(data);
  const ProcessResult run =
      run_process({.argv = sandboxed_command(
                       status(), policy,
                       {PTXBENCH_SANDBOX_LOADER, PTXBENCH_SANDBOX_PROBE, std::to_string(listener.port),
                        (data / "secret.txt").string(), outside.string()}),
                   .time_limit = std::chrono::seconds(60)});
  unsetenv("OPENAI_API_KEY");
  ASSERT_TRUE(run.ok()) << run.describe() << "\n" << run.err;
  const std::string& report = run.out;
  EXPECT_EQ(report.find("ESCAPED"), std::string::npos) << report;
  for (const char* attempt :
       {"connect 127.0.0.1", "dns example.com", "env OPENAI_API_KEY", "/proc/1/environ", "read ", "create "})
    EXPECT_NE(report.find(attempt), std::string::npos) << attempt << " not attempted:\n" << report;
  EXPECT_NE(report.find("scratch write: allowed"), std::string::npos) << report;
  EXPECT_FALSE(fs::exists(outside / "planted"));
  EXPECT_TRUE(fs::exists(scratch / "scratch-file"));
  for (const auto& dir : {data, scratch, outside}) fs::remove_all(dir);
}

TEST(Sandbox, ATimeOutKillsEveryProcessInside) {
  ASSERT_TRUE(status().available) << status().reason;
  const fs::path scratch = fresh_dir("timeout");
  const SandboxPolicy policy{.writable = {scratch}};
  // Two sleepers, one in the background, with a duration no other process here uses.
  const ProcessResult run = run_process(
      {.argv = sandboxed_command(status(), policy, {"/bin/sh", "-c", "sleep 417.25 & sleep 417.25; wait"}),
       .time_limit = std::chrono::milliseconds(1500)});
  EXPECT_TRUE(run.timed_out) << run.describe();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  int left = 0;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    std::ifstream in(entry.path() / "cmdline", std::ios::binary);
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    left += cmdline.find("417.25") != std::string::npos && cmdline.find("sh") == std::string::npos;
  }
  EXPECT_EQ(left, 0) << "sleepers outlived the time-out";
  fs::remove_all(scratch);
}

TEST(Sandbox, TheEnvironmentIsAllowListed) {
  setenv("ANTHROPIC_API_KEY", "sk-ant-test", 1);
  const auto env = sandbox_environment(host_settings().sandbox);
  unsetenv("ANTHROPIC_API_KEY");
  EXPECT_FALSE(env.contains("ANTHROPIC_API_KEY"));
  EXPECT_EQ(env.at("HOME"), "/tmp");
  EXPECT_TRUE(env.contains("PATH"));
}

// The GPU an evaluation was given reaches the process inside, over whatever the judge's own environment says.
TEST(Sandbox, APolicysEnvironmentIsSetInside) {
  ASSERT_TRUE(status().available) << status().reason;
  SandboxSettings settings = host_settings().sandbox;
  settings.inherited["CUDA_VISIBLE_DEVICES"] = "0,1";
  SandboxStatus judge = status();
  judge.environment = sandbox_environment(settings);
  ASSERT_EQ(judge.environment.at("CUDA_VISIBLE_DEVICES"), "0,1");
  SandboxPolicy policy{.writable = {fresh_dir("environment")}};
  policy.environment["CUDA_VISIBLE_DEVICES"] = "1";
  const ProcessResult run = run_process(
      {.argv = sandboxed_command(judge, policy, {"/bin/sh", "-c", "echo \"[$CUDA_VISIBLE_DEVICES]\""}),
       .time_limit = std::chrono::seconds(30)});
  ASSERT_TRUE(run.ok()) << run.describe() << "\n" << run.err;
  EXPECT_EQ(run.out, "[1]\n");
  fs::remove_all(policy.writable.front());
}

// A bwrap that cannot create namespaces (as in a chroot, or where user namespaces are off): the reason is one
// line, whole, since a compile's host failure is told by its last line.
TEST(Sandbox, ABubblewrapThatFailsIsNamedInOneLine) {
  const fs::path dir = fresh_dir("failing-bwrap");
  write_file(dir / "bwrap",
             "#!/bin/sh\necho 'bwrap: No permissions to create new namespace.' >&2\n"
             "echo 'See the README.' >&2\nexit 1\n");
  fs::permissions(dir / "bwrap", fs::perms::owner_all);
  const SandboxStatus failed =
      probe_sandbox({.bwrap = (dir / "bwrap").string(), .search_path = "/usr/bin:/bin"});
  EXPECT_FALSE(failed.available);
  EXPECT_EQ(
      failed.reason,
      "bwrap cannot create the sandbox here (exit code 1): bwrap: No permissions to create new namespace. "
      "See the README.");
  const std::string refused = refused_unconfined(failed, "nvcc is not run");
  EXPECT_EQ(refused.find('\n'), std::string::npos) << refused;
  fs::remove_all(dir);
}

TEST(Sandbox, OffWhenAskedAndSaysSo) {
  SandboxStatus off;
  off.requested = false;
  EXPECT_FALSE(off.to_json()["enabled"].get<bool>());
}

TEST(ResultChannel, HmacSha256KnownAnswers) {
  // RFC 4231, test cases 1 and 2.
  EXPECT_EQ(mac::hmac_sha256_hex(std::string(20, '\x0b'), "Hi There"),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(mac::hmac_sha256_hex("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(ResultChannel, AcceptsOnlyOneDocumentWithAValidTag) {
  const std::string key = std::string(64, 'a');
  const std::string document = "{\"status\": \"passed\"}\n";
  const std::string good = document + "ptxbench-mac " + mac::hmac_sha256_hex(key, document) + "\n";
  const ChannelRead ok = read_result_channel(good, key);
  ASSERT_TRUE(ok.document) << ok.tampered;
  EXPECT_EQ((*ok.document)["status"], "passed");

  EXPECT_FALSE(read_result_channel("", key).document);
  EXPECT_TRUE(read_result_channel("", key).tampered.empty());  // nothing written: not tampering
  for (const std::string& bad :
       {document,                                                  // no tag (key stolen or unused)
        "{\"status\": \"passed\"}\n" + good,                       // a forged document before the real one
        good + "{\"status\": \"passed\"}\n",                       // and after it
        document + "ptxbench-mac " + std::string(64, '0') + "\n",  // a made-up tag
        "{\"status\": \"failed\"}\n" + good.substr(document.size())}) {  // the real tag on another document
    const ChannelRead read = read_result_channel(bad, key);
    EXPECT_FALSE(read.document) << bad;
    EXPECT_FALSE(read.tampered.empty()) << bad;
  }
}

#ifdef PTXBENCH_RUNNER_BINARY
// The real runner, in the sandbox, over the real protocol: its answer (a harness or runtime error without a
// GPU or a library) comes back authenticated under the key sent after the request.
TEST(ResultChannel, TheRunnerTagsItsResultInsideTheSandbox) {
  ASSERT_TRUE(status().available) << status().reason;
  const fs::path scratch = fresh_dir("runner");
  const SandboxPolicy policy{.readable = {fs::path(PTXBENCH_RUNNER_BINARY).parent_path()},
                             .writable = {scratch}};
  const std::string key = std::string(32, 'k') + std::string(32, '7');
  std::string input =
      R"({"mode": "check", "library": "/nonexistent/solution.so", "family": "gemm", "entry_point": "ptxbench_gemm_bf16", "shapes": [{"label": "main", "M": 64, "N": 64, "K": 64}], "seed": 1})";
  input += '\0';
  input += key + "\n";
  const ProcessResult run =
      run_process({.argv = sandboxed_command(status(), policy, {PTXBENCH_RUNNER_BINARY}),
                   .time_limit = std::chrono::seconds(60),
                   .stdin_data = input});
  ASSERT_TRUE(run.ok()) << run.describe() << "\n" << run.err;
  const ChannelRead read = read_result_channel(run.out, key);
  ASSERT_TRUE(read.document) << read.tampered << "\n" << run.out;
  EXPECT_NE((*read.document)["status"], "passed");
  EXPECT_TRUE((*read.document)["phases_s"].is_object()) << "its steps' seconds, whatever the end";
  EXPECT_FALSE(read_result_channel(run.out, std::string(64, 'x')).document);  // another key: rejected
  fs::remove_all(scratch);
}

// The judge's folders for its Python processes belong to requests that run one: a CUDA solution's request
// naming a Triton cache, or python's bytecode, is the parent's error, said before any process starts.
TEST(ResultChannel, TheRunnerRefusesPythonFoldersInARequestThatRunsNoPython) {
  const std::string key(64, 'k');
  const std::string head =
      R"({"mode": "check", "library": "/nonexistent/solution.so", "family": "gemm", "entry_point": "ptxbench_gemm_bf16", "shapes": [{"label": "main", "M": 64, "N": 64, "K": 64}], "seed": 1, )";
  for (const auto& [field, said] :
       {std::pair{R"("triton_cache": "/tmp/x"})", "\"triton_cache\" belongs to the triton track"},
        std::pair{R"("python_bytecode": "/tmp/x"})", "the request runs none"}}) {
    const ProcessResult run = run_process({.argv = {PTXBENCH_RUNNER_BINARY},
                                           .time_limit = std::chrono::seconds(60),
                                           .stdin_data = head + field + '\0' + key + "\n"});
    ASSERT_TRUE(run.ok()) << run.describe() << "\n" << run.err;
    const ChannelRead read = read_result_channel(run.out, key);
    ASSERT_TRUE(read.document) << read.tampered << "\n" << run.out;
    EXPECT_EQ((*read.document)["status"], "harness_error");
    EXPECT_NE((*read.document)["message"].get<std::string>().find(said), std::string::npos) << run.out;
  }
}
#endif

// Runs `body` in a forked child, which keeps a confinement to itself, and returns its exit status (-1 when it
// did not exit).
template <typename Body>
int exit_status_of_child(Body body) {
  const pid_t child = fork();
  if (child == 0) _exit(body());
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

// The solution process confines its writes before CUDA starts (runner/landlock.h): afterwards it cannot
// create or truncate a file outside the folders it keeps (the runner's scratch folder with the tools' logs
// among them), while reading stays possible.
TEST(SolutionProcess, ConfinedWritesReachOnlyTheFoldersKept) {
  const fs::path kept = fresh_dir("kept"), scratch = fresh_dir("scratch-logs");
  std::ofstream(scratch / "ncu.csv") << "the tool's log\n";
  enum : int {
    confined = 0,
    unavailable = 77,
    wrote_outside = 1,
    truncated = 2,
    cannot_write_kept = 3,
    cannot_read = 4,
    wrote_through_proc = 5
  };
  const int status = exit_status_of_child([&] {
    // The solution process keeps its own /proc/PID writable: the paths that lead out of it (its root, its
    // descriptors) are checked where they resolve.
    const int log = open((scratch / "ncu.csv").c_str(), O_RDONLY);
    if (!ptxbench::runner::confine_writes_to({kept.c_str(), "/proc/self"})) return unavailable;
    if (std::ofstream(scratch / "planted")) return wrote_outside;
    if (truncate((scratch / "ncu.csv").c_str(), 0) == 0) return truncated;
    if (std::ofstream(fs::path("/proc/self/root") / fs::absolute(scratch).relative_path() / "planted"))
      return wrote_through_proc;
    if (open(("/proc/self/fd/" + std::to_string(log)).c_str(), O_WRONLY | O_TRUNC) >= 0)
      return wrote_through_proc;
    if (!(std::ofstream(kept / "allowed") << "x") || !(std::ofstream("/proc/self/comm") << "confined"))
      return cannot_write_kept;
    if (!std::ifstream(scratch / "ncu.csv")) return cannot_read;
    return confined;
  });
  if (status == unavailable) GTEST_SKIP() << "this kernel offers no Landlock";
  EXPECT_EQ(status, confined)
      << "1: wrote outside, 2: truncated the log, 3: could not write the kept folders, 4: could not read, 5: "
         "wrote through /proc/self";
  EXPECT_FALSE(fs::exists(scratch / "planted"));
  EXPECT_EQ(read_file(scratch / "ncu.csv"), "the tool's log\n");
  EXPECT_TRUE(fs::exists(kept / "allowed"));
  fs::remove_all(kept);
  fs::remove_all(scratch);
}

// A process the runner starts for the debugger keeps all of /proc writable (landlock.h): CUDA's debugger
// back-end forks inside it, and the child writes to its own /proc/PID, which "/proc/self" of the confined
// parent does not cover. Any other solution process's child cannot.
TEST(SolutionProcess, OnlyAProcessForTheDebuggerLetsItsChildWriteItsOwnProc) {
  const auto child_writes_its_proc = [](bool for_debugger) {
    return exit_status_of_child([&] {
      if (!ptxbench::runner::confine_solution_process(nullptr, for_debugger).writes_confined) return 77;
      if (!(std::ofstream("/proc/self/comm") << "parent")) return 2;
      const pid_t child = fork();
      if (child == 0) _exit((std::ofstream("/proc/self/comm") << "child") ? 0 : 1);
      int status = 0;
      if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status)) return 3;
      return WEXITSTATUS(status);
    });
  };
  const int debugger = child_writes_its_proc(true);
  if (debugger == 77) GTEST_SKIP() << "this kernel offers no Landlock";
  EXPECT_EQ(debugger, 0) << "1: the child could not write its /proc/PID, 2: nor the parent, 3: fork failed";
  EXPECT_EQ(child_writes_its_proc(false), 1)
      << "an ordinary solution process's child writes only its parent's";
  // The variable the runner sets decides it, "1" and nothing else.
  setenv(ptxbench::runner::kForDebuggerVariable, "1", 1);
  EXPECT_TRUE(ptxbench::runner::started_for_debugger());
  for (const char* other : {"0", "", "11", "yes"}) {
    setenv(ptxbench::runner::kForDebuggerVariable, other, 1);
    EXPECT_FALSE(ptxbench::runner::started_for_debugger()) << other;
  }
  unsetenv(ptxbench::runner::kForDebuggerVariable);
  EXPECT_FALSE(ptxbench::runner::started_for_debugger());
}

// A Triton solution's process keeps one more folder writable when its runner names one (the kernel cache that
// the evaluation's stages share, which the judge keeps outside /tmp): that folder, and nothing beside it.
TEST(SolutionProcess, AKernelCacheOutsideTmpIsTheOneMoreFolderKept) {
  // Both folders outside /tmp, which the confinement keeps writable: beside the build, or in /var/tmp when
  // the build itself lies under /tmp (a fresh clone there).
  const auto outside_tmp = [](const std::string& name) {
    const fs::path here = fresh_dir(name);
    if (!fs::weakly_canonical(here).string().starts_with("/tmp/")) return here;
    fs::remove_all(here);
    const fs::path there = fs::path("/var/tmp") / here.filename();
    fs::create_directories(there);
    return there;
  };
  const fs::path cache = outside_tmp("triton-cache"), scratch = outside_tmp("scratch-beside");
  ASSERT_FALSE(fs::weakly_canonical(scratch).string().starts_with("/tmp/")) << scratch;
  const int status = exit_status_of_child([&] {
    if (!ptxbench::runner::confine_solution_process(cache.c_str()).writes_confined) return 77;
    if (!(std::ofstream(cache / "kernel.cubin") << "x")) return 1;
    if (std::ofstream(scratch / "planted")) return 2;
    return 0;
  });
  if (status == 77) GTEST_SKIP() << "this kernel offers no Landlock";
  EXPECT_EQ(status, 0) << "1: could not write the cache, 2: wrote beside it";
  EXPECT_TRUE(fs::exists(cache / "kernel.cubin"));
  EXPECT_FALSE(fs::exists(scratch / "planted"));
  fs::remove_all(cache);
  fs::remove_all(scratch);
}

// Why the solution process confines itself before CUDA starts: Landlock binds the thread that asks and the
// threads it starts later, not the threads already running. A thread started before the confinement can still
// write anywhere; one started after cannot. The worker therefore asks while it is its only thread
// (`threads_when_confined` 1 in the runner's result).
TEST(SolutionProcess, ConfinementBindsLaterThreadsButNotEarlierOnes) {
  const fs::path kept = fresh_dir("kept-threads"), scratch = fresh_dir("scratch-threads");
  enum : int {
    as_documented = 0,
    unavailable = 77,
    not_alone = 1,
    later_thread_wrote = 2,
    earlier_was_bound = 3
  };
  const int status = exit_status_of_child([&] {
    if (ptxbench::runner::threads_of_this_process() != 1) return not_alone;
    int go[2];
    if (pipe(go) != 0) return not_alone;
    bool earlier_wrote = false;
    std::thread earlier([&] {
      char byte;
      (void)read(go[0], &byte, 1);  // writes only once the process is confined
      earlier_wrote = static_cast<bool>(std::ofstream(scratch / "earlier"));
    });
    // _exit while `earlier` waits: returning would destroy a joinable thread.
    if (ptxbench::runner::threads_of_this_process() != 2) _exit(not_alone);
    if (!ptxbench::runner::confine_writes_to({kept.c_str()})) _exit(unavailable);
    bool later_wrote = true;
    std::thread later([&] { later_wrote = static_cast<bool>(std::ofstream(scratch / "later")); });
    later.join();
    (void)write(go[1], "x", 1);
    earlier.join();
    if (later_wrote) return later_thread_wrote;
    return earlier_wrote ? as_documented : earlier_was_bound;
  });
  if (status == unavailable) GTEST_SKIP() << "this kernel offers no Landlock";
  EXPECT_EQ(status, as_documented)
      << "1: the child was not alone at the start, 2: a thread started after the confinement wrote outside, "
         "3: a thread started before it was bound too";
  EXPECT_FALSE(fs::exists(scratch / "later"));
  fs::remove_all(kept);
  fs::remove_all(scratch);
}

#ifdef PTXBENCH_RUNNER_BINARY
namespace {

// Starts `ptxbench-runner --solution-worker FD` on one end of a socket pair; returns its pid and our end.
std::pair<pid_t, int> start_solution_worker() {
  int sockets[2];
  EXPECT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sockets), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = fcntl(sockets[1], F_DUPFD, 3);
    const std::string fd_text = std::to_string(fd);
    execl(PTXBENCH_RUNNER_BINARY, PTXBENCH_RUNNER_BINARY, "--solution-worker", fd_text.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(sockets[1]);
  return {pid, sockets[0]};
}

int exit_status(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

// The solution process takes nothing but its protocol's messages (src/runner/solution_protocol.h): a first
// message that is not an open request of the right size ends it with status 2 rather than being read as one.
TEST(SolutionProcess, AMalformedFirstRequestEndsIt) {
  const auto [pid, socket] = start_solution_worker();
  const char garbage[3] = {'x', 'y', 'z'};
  ASSERT_EQ(send(socket, garbage, sizeof(garbage), MSG_NOSIGNAL), 3);
  EXPECT_EQ(exit_status(pid), 2);
  close(socket);
}

// Without a GPU the open request fails: the worker answers, then ends with status 1; with one it waits for
// the next request and ends with status 0 when the runner closes the socket. Either way it answers, under the
// request's nonce, and ends.
TEST(SolutionProcess, AnOpenRequestIsAnsweredAndTheProcessEnds) {
  const auto [pid, socket] = start_solution_worker();
  struct {
    uint32_t op = 1;  // Op::open
    int32_t device = 0;
    uint64_t nonce = 0x5eed5eed12345678;
    uint32_t recorded = 1;
    uint32_t reserved = 0;
  } open;
  ASSERT_EQ(send(socket, &open, sizeof(open), MSG_NOSIGNAL), 24);
  uint64_t reply[512] = {};
  EXPECT_GT(recv(socket, reply, sizeof(reply), 0), 0);
  EXPECT_EQ(reply[0], open.nonce) << "the reply starts with the request's nonce";
  close(socket);
  const int status = exit_status(pid);
  EXPECT_TRUE(status == 0 || status == 1) << status;
}
#endif
