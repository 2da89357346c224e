#include "util/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <array>
#include <cerrno>
#include <cstring>

#include "util/exec_strings.h"

namespace ptxbench {
namespace {

struct Pipe {
  int read_end = -1, write_end = -1;
  Pipe() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) == 0) read_end = fds[0], write_end = fds[1];
  }
  ~Pipe() { close_both(); }
  void close_read() {
    if (read_end >= 0) close(read_end), read_end = -1;
  }
  void close_write() {
    if (write_end >= 0) close(write_end), write_end = -1;
  }
  void close_both() { close_read(), close_write(); }
};

}  // namespace

std::string ProcessResult::describe() const {
  if (spawn_failed) return "could not be started: " + err;
  if (timed_out) return fmt::format("timed out after {:.1f} s", wall_s);
  if (stopped) return fmt::format("stopped after {:.1f} s", wall_s);
  if (term_signal) return fmt::format("killed by signal {} ({})", term_signal, strsignal(term_signal));
  return fmt::format("exit code {}", exit_code);
}

ProcessResult run_process(const ProcessSpec& spec) {
  ProcessResult result;
  const auto start = std::chrono::steady_clock::now();
  Pipe in, out, err;
  if (in.read_end < 0 || out.read_end < 0 || err.read_end < 0) {
    result.spawn_failed = true;
    result.err = std::string("pipe: ") + strerror(errno);
    return result;
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.read_end, STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out.write_end, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err.write_end, STDERR_FILENO);
  if (!spec.working_dir.empty()) posix_spawn_file_actions_addchdir_np(&actions, spec.working_dir.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // A process group of its own, so that a time-out kills what the child started too (nvcc's cicc and ptxas).
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t no_signals, default_signals;
  sigemptyset(&no_signals);
  sigemptyset(&default_signals);
  sigaddset(&default_signals, SIGPIPE);
  posix_spawnattr_setsigmask(&attr, &no_signals);
  posix_spawnattr_setsigdefault(&attr, &default_signals);

  auto argv_strings = spec.argv;
  auto env_strings = environment_with(spec.env_overrides);
  auto argv = exec_pointers(argv_strings);
  auto envp = exec_pointers(env_strings);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  in.close_read(), out.close_write(), err.close_write();
  if (rc != 0) {
    result.spawn_failed = true;
    result.err = fmt::format("{}: {}", spec.argv.empty() ? "" : spec.argv[0], strerror(rc));
    return result;
  }

  // Feed stdin (small inputs only: written before reading, so a child that does not read it cannot block us
  // for long; the pipe is non-blocking and the rest is dropped if the child stops reading).
  if (!spec.stdin_data.empty()) {
    fcntl(in.write_end, F_SETFL, O_NONBLOCK);
    [[maybe_unused]] auto n = write(in.write_end, spec.stdin_data.data(), spec.stdin_data.size());
  }
  in.close_write();

  const auto deadline = start + spec.time_limit;
  std::array<pollfd, 2> fds{{{out.read_end, POLLIN, 0}, {err.read_end, POLLIN, 0}}};
  std::array<std::string*, 2> sinks{&result.out, &result.err};
  std::array<size_t*, 2> dropped{&result.out_dropped, &result.err_dropped};
  int open_streams = 2;
  char buffer[65536];
  while (open_streams > 0) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      break;
    }
    if (spec.stop != nullptr && spec.stop->load()) {
      result.stopped = true;
      break;
    }
    int n =
        poll(fds.data(), fds.size(), static_cast<int>(std::min<long>(left.count(), spec.stop ? 50 : 1000)));
    if (n < 0 && errno != EINTR) break;
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = read(fds[i].fd, buffer, sizeof buffer);
      if (got <= 0) {
        fds[i].fd = -1;
        --open_streams;
        continue;
      }
      auto& sink = *sinks[i];
      const size_t kept = std::min<size_t>(got, spec.output_limit - sink.size());
      sink.append(buffer, kept);
      *dropped[i] += got - kept;
    }
  }
  // Both streams closed: the child is exiting, but a grandchild holding no pipe could outlive the deadline;
  // wait for the child itself with the remaining time.
  int status = 0;
  while (!result.timed_out && !result.stopped) {
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (std::chrono::steady_clock::now() >= deadline)
      result.timed_out = true;
    else if (spec.stop != nullptr && spec.stop->load())
      result.stopped = true;
    else
      usleep(2000);
  }
  if (result.timed_out || result.stopped) {
    kill(-pid, SIGKILL);
    waitpid(pid, &status, 0);
  } else {
    kill(-pid, SIGKILL);  // reap anything the child left behind in its group
  }
  if (WIFEXITED(status) && !result.timed_out && !result.stopped) {
    result.exited = true;
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status) && !result.timed_out && !result.stopped) {
    result.term_signal = WTERMSIG(status);
  }
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace ptxbench
