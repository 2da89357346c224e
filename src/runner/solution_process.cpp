#include "runner/solution_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>

#include "runner/landlock.h"
#include "util/exec_strings.h"
#include "util/incbin.h"

PTXBENCH_INCBIN(ptxbench_triton_worker, PTXBENCH_TRITON_WORKER)

namespace ptxbench::runner {

namespace s = solution;

WorkerCommand cuda_worker(const std::string& runner_path) {
  return {.argv = {runner_path, "--solution-worker"}, .environment = {}};
}

WorkerCommand python_worker(const std::string& python, const std::string& worker_library,
                            const std::string& triton_cache, const std::string& bytecode) {
  const std::string script(ptxbench_triton_worker, ptxbench_triton_worker_end);
  // -I: no user site and no PYTHON* variable applies; -B: no bytecode written, beside the solution or in
  // `bytecode`.
  WorkerCommand command{
      .argv = {python, "-I", "-B"},
      .environment = {
          {"TRITON_CACHE_DIR", triton_cache}, {"TRITON_HOME", triton_cache}, {"HOME", triton_cache}}};
  if (!bytecode.empty()) command.argv.insert(command.argv.end(), {"-X", "pycache_prefix=" + bytecode});
  command.argv.insert(command.argv.end(), {"-c", script, worker_library});
  return command;
}

SolutionProcess::SolutionProcess(const WorkerCommand& command) {
  int sockets[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sockets) != 0)
    throw std::runtime_error(std::string("socketpair: ") + std::strerror(errno));
  // The child keeps stdin (/dev/null by now), stdout and stderr (both the runner's stderr) and its end of the
  // socket, this copy of it that is not close-on-exec; every other descriptor of the runner (the result
  // channel, the key) is close-on-exec.
  const int fd = fcntl(sockets[1], F_DUPFD, 3);
  close(sockets[1]);
  if (fd < 0) {
    close(sockets[0]);
    throw std::runtime_error(std::string("fcntl(F_DUPFD): ") + std::strerror(errno));
  }
  // Everything the child needs is made before the fork: the runner may have CUDA's threads by then (a process
  // started for the debugger, session.cpp), and the child of a threaded process may only exec.
  std::vector<std::string> arguments = command.wrapper;
  arguments.insert(arguments.end(), command.argv.begin(), command.argv.end());
  arguments.push_back(std::to_string(fd));
  auto variables = command.environment;
  variables.emplace_back(kForDebuggerVariable, command.for_debugger ? "1" : "0");
  std::vector<std::string> environment = environment_with(variables);
  const std::vector<char*> argv = exec_pointers(arguments), envp = exec_pointers(environment);
  pid_ = fork();
  if (pid_ == 0) {
    execvpe(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  close(fd);
  if (pid_ < 0) {
    close(sockets[0]);
    throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  }
  socket_ = sockets[0];
  wrapped_ = !command.wrapper.empty();
  // The raw system call: glibc's wrapper is newer than some hosts' C library. -1 on a kernel without it
  // (before 5.3): then only the socket tells.
  pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid_, 0));
}

SolutionProcess::~SolutionProcess() {
  if (socket_ >= 0) close(socket_);
  // A worker ends at the end of its socket; its tool, once it has reported on it. A tool that has not ended
  // within the grace (or a worker that ignores its socket's end) is killed, as an unwrapped worker is at
  // once.
  if (pid_ > 0 && wrapped_ && pidfd_ >= 0) {
    pollfd ended{.fd = pidfd_, .events = POLLIN, .revents = 0};
    while (poll(&ended, 1, kWrapperGraceSeconds * 1000) < 0 && errno == EINTR) {
    }
  }
  if (pidfd_ >= 0) close(pidfd_);
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
}

std::string SolutionProcess::describe_end() {
  // The worker closed its socket or answered out of turn: make sure it is gone, and say how it ended.
  int status = 0;
  pid_t reaped = 0;
  for (int i = 0; i < 100 && (reaped = waitpid(pid_, &status, WNOHANG)) == 0; ++i) usleep(10000);
  if (reaped == 0) {
    kill(pid_, SIGKILL);
    (void)waitpid(pid_, &status, 0);
    pid_ = -1;
    return "stopped answering and was killed";
  }
  pid_ = -1;
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) +
           ")";
  return "ended";
}

void SolutionProcess::lost(const std::string& what) {
  const std::string message = "the solution process " + what + " (it " + describe_end() + ")";
  throw SolutionFault(message, "", 0, message, std::nullopt, std::nullopt);
}

void SolutionProcess::set_deadline(std::chrono::steady_clock::time_point deadline, std::string limit) {
  deadline_ = deadline;
  limit_ = std::move(limit);
}

// How long the debugger may take, and how much of what it prints is kept.
constexpr int kDebuggerLimitMs = 20000;
constexpr size_t kDebuggerOutputBytes = 64 * 1024;

SolutionProcess::Debugged SolutionProcess::debug_hang() {
  if (debugger_.empty() || wrapped_ || pid_ <= 0) return {};
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return {.failure = std::string("pipe2: ") + std::strerror(errno)};
  std::vector<std::string> arguments = {
      debugger_,           "-q",  "-batch",           "-p", std::to_string(pid_), "-ex",
      "info cuda kernels", "-ex", "info cuda threads"};
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  const pid_t child = fork();
  if (child == 0) {  // only exec: this process's CUDA context is not the child's to use
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
    dup2(out[1], STDOUT_FILENO);
    dup2(out[1], STDERR_FILENO);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  close(out[1]);
  std::string text;
  int status = 0;
  if (child > 0) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kDebuggerLimitMs);
    char buffer[4096];
    for (;;) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      pollfd readable{.fd = out[0], .events = POLLIN, .revents = 0};
      if (left.count() <= 0 || poll(&readable, 1, static_cast<int>(left.count())) == 0) break;
      const ssize_t n = read(out[0], buffer, sizeof(buffer));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      if (text.size() < kDebuggerOutputBytes)
        text.append(buffer, std::min(static_cast<size_t>(n), kDebuggerOutputBytes - text.size()));
    }
    kill(child, SIGKILL);  // done or out of time: either way it goes
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
  }
  close(out[0]);
  if (child < 0) return {.failure = std::string("fork: ") + std::strerror(errno)};
  const std::string name = std::filesystem::path(debugger_).filename().string();
  if (text.empty() && WIFEXITED(status) && WEXITSTATUS(status) == 127)
    return {.failure = name + " could not be run"};
  if (text.empty()) return {.failure = name + " printed nothing"};
  return {.output = std::move(text)};
}

void SolutionProcess::timed_out() {
  // Where its threads wait, while the call still runs; then killed: a call that ran out of time may be a
  // kernel that never ends, and the process's end takes its context, and the kernel, with it.
  Debugged debugged = debug_hang();
  if (pid_ > 0) kill(pid_, SIGKILL);
  const std::string message = "the solution did not answer within " + limit_ + " and was killed";
  SolutionFault fault(message, "", 0, message, std::nullopt, std::nullopt);
  fault.timed_out = true;
  fault.debugger_output = std::move(debugged.output);
  fault.debugger_failure = std::move(debugged.failure);
  throw fault;
}

void SolutionProcess::send_message(const void* message, size_t size) {
  if (pid_ <= 0) lost("is gone");
  // Nothing may be waiting before a request goes out: a reply queued in advance would end the judge's clock
  // before the work it claims to time had even been asked for.
  char byte;
  const ssize_t pending = recv(socket_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (pending > 0) lost("answered a request that was not yet sent");
  if (pending == 0) lost("ended");
  ssize_t n;
  while ((n = send(socket_, message, size, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
  }
  if (n != static_cast<ssize_t>(size)) lost("stopped reading its requests");
}

s::Reply SolutionProcess::receive_reply(uint64_t nonce) {
  // Waits for the reply or the worker's end: a process the solution started may hold the worker's end of the
  // socket open after the worker died, and the socket alone would then not say so. The wait polls rather than
  // sleeps: a core that sleeps through a long call wakes from a deep idle state, which added 200 us to every
  // request of 0.8 ms and more on the H200 and made the judge's clock depend on the call's length.
  // Without a pidfd (a kernel before 5.3) only the socket is watched, and without a deadline the receive
  // below waits for it.
  pollfd waits[2] = {{.fd = socket_, .events = POLLIN, .revents = 0},
                     {.fd = pidfd_, .events = POLLIN, .revents = 0}};
  const nfds_t watched = pidfd_ >= 0 ? 2 : 1;
  while (pidfd_ >= 0 || deadline_) {
    const int ready = poll(waits, watched, 0);
    if (ready > 0 || (ready < 0 && errno != EINTR)) break;
    if (deadline_ && std::chrono::steady_clock::now() > *deadline_) timed_out();
  }
  if (pidfd_ >= 0 && waits[0].revents == 0 && (waits[1].revents & POLLIN) != 0) lost("ended");
  s::Reply reply;
  ssize_t n;
  // MSG_TRUNC: the length of the message itself, so that an oversized one is not taken for a reply.
  while ((n = recv(socket_, &reply, sizeof(reply), MSG_TRUNC)) < 0 && errno == EINTR) {
  }
  if (n < 0) lost(std::string("could not be read from (") + std::strerror(errno) + ")");
  if (n == 0) lost("ended");
  if (n != static_cast<ssize_t>(sizeof(reply)))
    lost("sent a malformed reply (" + std::to_string(n) + " bytes)");
  if (reply.nonce != nonce) lost("answered out of turn");
  if (!std::isfinite(reply.event_us) || !std::isfinite(reply.wall_us) || reply.event_us < 0 ||
      reply.wall_us < 0)
    lost("sent a malformed reply (its times are negative or not finite)");
  // The message is the solution's text and goes into the result document: printable ASCII only.
  reply.message[sizeof(reply.message) - 1] = '\0';
  for (char* c = reply.message; *c; ++c)
    if (*c < ' ' || *c > '~') *c = '?';
  return reply;
}

template <typename Request>
s::Reply SolutionProcess::exchange(Request& request) {
  request.nonce = nonces_();
  send_message(&request, sizeof(request));
  return receive_reply(request.nonce);
}

void SolutionProcess::open(int device, bool recorded) {
  request_open(device, recorded);
  await_open();
}

void SolutionProcess::request_open(int device, bool recorded) {
  s::OpenRequest request{.op = s::Op::open, .device = device, .recorded = recorded ? 1u : 0u};
  request.nonce = nonces_();
  try {
    send_message(&request, sizeof(request));
    pending_open_ = request.nonce;
  } catch (...) {
    open_not_sent_ = std::current_exception();
  }
}

void SolutionProcess::await_open() {
  if (open_not_sent_) std::rethrow_exception(std::exchange(open_not_sent_, nullptr));
  if (!pending_open_) throw std::logic_error("await_open() without request_open()");
  const s::Reply reply = receive_reply(*std::exchange(pending_open_, std::nullopt));
  if (reply.failed == s::Phase::none) return;
  // The worker's own setup failed (its CUDA context, or a Triton host without torch): the host's failure.
  std::string message = std::string("the solution process could not start: ") + reply.message;
  if (reply.cuda_error != 0)
    message += std::string(": ") + cudaGetErrorName(static_cast<cudaError_t>(reply.cuda_error));
  throw std::runtime_error(message);
}

CallOutcome SolutionProcess::timed_exchange(s::CallRequest& request) {
  CallOutcome outcome;
  const auto start = std::chrono::steady_clock::now();
  outcome.reply = exchange(request);
  outcome.judge_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  return outcome;
}

CallOutcome SolutionProcess::calibrate(double call_us) {
  s::CallRequest request;
  request.op = s::Op::calibrate;
  request.flags = s::kTimed;
  request.calibration_us = call_us;
  const CallOutcome outcome = timed_exchange(request);
  if (outcome.reply.failed != s::Phase::none)
    throw std::runtime_error(std::string("the solution process's calibration failed: ") +
                             outcome.reply.message);
  return outcome;
}

Confinement SolutionProcess::load(const std::string& library, const EntrySpec& entry) {
  s::LoadRequest request;
  const auto put = [](char* field, size_t capacity, const std::string& text, const char* what) {
    if (text.size() >= capacity) throw std::runtime_error(std::string(what) + " too long: " + text);
    std::memcpy(field, text.data(), text.size());
  };
  put(request.library, sizeof(request.library), library, "library path");
  put(request.entry, sizeof(request.entry), entry.entry, "entry point");
  put(request.workspace_entry, sizeof(request.workspace_entry), entry.workspace, "workspace function");
  put(request.codes, sizeof(request.codes), entry.codes, "argument kinds");
  const s::Reply reply = exchange(request);
  if (reply.failed != s::Phase::none) {
    std::optional<cudaError_t> error;
    if (reply.cuda_error != 0) error = static_cast<cudaError_t>(reply.cuda_error);
    std::string message = std::string("loading the library: ") + reply.message;
    if (error) message += std::string(": ") + cudaGetErrorName(*error) + ": " + cudaGetErrorString(*error);
    throw SolutionFault(message, "", 0, "loading the library", std::nullopt, error,
                        reply.failed == s::Phase::state);
  }
  return {.writes_confined = reply.writes_confined != 0, .threads = reply.threads_when_confined};
}

uint64_t SolutionProcess::workspace_bytes(const std::vector<int64_t>& ints) {
  s::CallRequest request;
  request.op = s::Op::workspace_bytes;
  request.int_count = static_cast<uint32_t>(ints.size());
  for (size_t i = 0; i < ints.size() && i < s::kMaxInts; ++i) request.ints[i] = ints[i];
  const s::Reply reply = exchange(request);
  if (reply.failed != s::Phase::none)
    throw SolutionFault(std::string("workspace size: ") + reply.message, "", 0, "workspace size",
                        std::nullopt, std::nullopt);
  return reply.value;
}

CallOutcome SolutionProcess::call(const SolutionCall& call, uint32_t flags) {
  s::CallRequest request;
  request.op = s::Op::call;
  request.flags = flags;
  if (call.tensors.size() > s::kMaxPointers || call.ints.size() > s::kMaxInts ||
      call.floats.size() > s::kMaxFloats || call.snapshots.size() > s::kMaxSnapshots)
    throw std::logic_error("SolutionCall: too many arguments");
  request.pointer_count = static_cast<uint32_t>(call.tensors.size());
  for (size_t k = 0; k < call.tensors.size(); ++k) {
    const CallTensor& tensor = call.tensors[k];
    if (tensor.extents.size() > s::kMaxRank)
      throw std::logic_error("SolutionCall: a tensor of too many dims");
    request.dtypes[k] = tensor.dtype;
    request.ranks[k] = static_cast<uint8_t>(tensor.extents.size());
    std::copy(tensor.extents.begin(), tensor.extents.end(), request.extents[k]);
    const DeviceBuffer* buffer = tensor.buffer;
    if (buffer == nullptr || buffer->get() == nullptr) continue;  // zero handle: a null pointer
    request.handles[k] = buffer->ipc_handle();
    request.bytes[k] = buffer->bytes();
    request.offsets[k] = buffer->offset();
  }
  request.int_count = static_cast<uint32_t>(call.ints.size());
  std::copy(call.ints.begin(), call.ints.end(), request.ints);
  request.float_count = static_cast<uint32_t>(call.floats.size());
  std::copy(call.floats.begin(), call.floats.end(), request.floats);
  request.snapshot_count = static_cast<uint32_t>(call.snapshots.size());
  for (size_t k = 0; k < call.snapshots.size(); ++k) {
    request.snapshot_of[k] = call.snapshots[k].first;
    request.snapshots[k] = call.snapshots[k].second->ipc_handle();
  }
  return timed_exchange(request);
}

void SolutionProcess::switch_in() {
  s::CallRequest request;
  request.op = s::Op::switch_in;
  if (const s::Reply reply = exchange(request); reply.failed != s::Phase::none)
    throw SolutionFault(std::string("switching to the solution process's context: ") + reply.message, "", 0,
                        "switching to the solution process's context", std::nullopt,
                        static_cast<cudaError_t>(reply.cuda_error));
}

s::Reply SolutionProcess::recorded(uint32_t call_index) {
  s::CallRequest request;
  request.op = s::Op::launches;
  request.int_count = 1;
  request.ints[0] = call_index;
  return exchange(request);
}

}  // namespace ptxbench::runner
