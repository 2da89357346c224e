// ptxbench-runner: the GPU harness child process. Reads one request on stdin, has the solution run in a
// process of its own, judges what it did and writes one result document on its original stdout (protocol.h
// has both formats).
//
// Two processes, so that the solution cannot reach the verdict: this one (the judge) holds the secret seed,
// the reference outputs and the one-time key that authenticates the result; it allocates every buffer, fills
// the inputs, checks the outputs and times the baseline. The solution's library is loaded only in the
// solution process (`ptxbench-runner --solution-worker FD`, solution_worker.cpp), forked before this process
// touches CUDA, which maps the judge's buffers through CUDA IPC and calls the entry point when asked. The
// judge is not dumpable, so the solution process (same user) cannot read its memory through /proc or ptrace;
// the result goes to a private close-on-exec copy of stdout, followed by an HMAC-SHA256 tag under a key read
// from stdin only after the solution process is gone; the process ends with _exit right after
// (docs/anti-cheat.md says what that does and does not stop).
#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>

#include <cublasLt.h>
#include <cuda_runtime.h>

#include "runner/cuda_check.h"
#include "runner/family.h"
#include "runner/protocol.h"
#include "runner/request.h"
#include "runner/result_mac.h"
#include "runner/session.h"
#include "runner/solution_process.h"
#include "runner/solution_worker.h"

namespace {

namespace fs = std::filesystem;
namespace p = ptxbench::protocol;
using ptxbench::runner::Json;

// Keeps a private, close-on-exec copy of stdout for the result and points fd 1 at stderr. Returns the copy,
// or -1.
int take_stdout() {
  const int result_fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (result_fd < 0) return -1;
  if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0) return -1;
  return result_fd;
}

// Reads the request: stdin up to a NUL byte (or its end). What follows the NUL (the one-time key) stays
// unread in the pipe, which is moved to a private close-on-exec descriptor (*key_fd); /dev/null goes on fd 0
// so the solution finds nothing there. Byte by byte, so that not one byte of the key enters this process
// early.
std::string read_request(int* key_fd) {
  std::string text;
  char c = 0;
  for (;;) {
    const ssize_t n = read(STDIN_FILENO, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || c == '\0') break;
    text += c;
  }
  *key_fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
  const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd >= 0) {
    (void)dup2(null_fd, STDIN_FILENO);
    (void)close(null_fd);
  } else {
    (void)close(STDIN_FILENO);
  }
  return text;
}

// The key, read once the solution can no longer run: the rest of the stdin pipe, up to 256 bytes. Empty when
// the parent sent none (a person running the runner by hand) or someone read it first.
std::string read_key(int key_fd) {
  std::string key;
  if (key_fd < 0) return key;
  char buffer[256];
  for (;;) {
    const ssize_t n = read(key_fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    key.append(buffer, static_cast<size_t>(n));
    if (key.size() >= sizeof(buffer)) break;
  }
  for (volatile char& b : buffer) b = 0;
  (void)close(key_fd);
  while (!key.empty() && (key.back() == '\n' || key.back() == '\r')) key.pop_back();
  return key;
}

bool write_all(int fd, const std::string& text) {
  size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    written += static_cast<size_t>(n);
  }
  return true;
}

Json describe_device(int device) {
  cudaDeviceProp properties{};
  PTXBENCH_CUDA(cudaGetDeviceProperties(&properties, device));
  int driver = 0, runtime = 0;
  PTXBENCH_CUDA(cudaDriverGetVersion(&driver));
  PTXBENCH_CUDA(cudaRuntimeGetVersion(&runtime));
  char bus_id[32] = {};
  PTXBENCH_CUDA(cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), device));
  return {{"name", properties.name},
          {p::kPciBusId, bus_id},
          {"compute_capability", std::to_string(properties.major) + "." + std::to_string(properties.minor)},
          {"sm_count", properties.multiProcessorCount},
          {"l2_bytes", properties.l2CacheSize},
          {"driver_version", driver},
          {"runtime_version", runtime},
          {"cublaslt_version", cublasLtGetVersion()}};
}

void set_error(Json& result, const char* status, const std::string& message) {
  result[p::kStatus] = status;
  result[p::kMessage] = message;
}

// What the solution process loads for a family: its entry point, workspace function and argument kinds.
ptxbench::runner::EntrySpec entry_of(const ptxbench::Family& family) {
  return {.entry = family.entry_point,
          .workspace = family.workspace ? family.workspace->symbol : "",
          .codes = ptxbench::argument_codes(family)};
}

std::string own_path() {
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) throw std::runtime_error("cannot find the runner's own path (/proc/self/exe)");
  return std::string(path, static_cast<size_t>(n));
}

// The worker library the Python host of a Triton solution loads: beside the runner.
constexpr const char* kWorkerLibrary = "libptxbench-solution-worker.so";

// A process that hosts Python entry points (a Triton solution, a baseline module), run by the request's
// python, its kernel cache in `triton_cache`: the folder given, or when it is empty a folder made in /tmp (the
// sandbox's own tmpfs).
ptxbench::runner::WorkerCommand python_command(const ptxbench::runner::Request& request,
                                               std::string& triton_cache) {
  const fs::path library = fs::path(own_path()).parent_path() / kWorkerLibrary;
  if (!fs::exists(library)) throw std::runtime_error("the worker library is missing: " + library.string());
  if (triton_cache.empty()) {
    char folder[] = "/tmp/ptxbench-triton-XXXXXX";
    if (mkdtemp(folder) == nullptr)
      throw std::runtime_error(std::string("cannot make Triton's cache folder: ") + std::strerror(errno));
    triton_cache = folder;
  }
  return ptxbench::runner::python_worker(request.python, library.string(), triton_cache,
                                         request.python_bytecode);
}

// How the solution process starts for this request, under the request's tool if it names one.
ptxbench::runner::WorkerCommand worker_command(const ptxbench::runner::Request& request,
                                               std::string& triton_cache) {
  using namespace ptxbench::runner;
  WorkerCommand command = request.triton ? python_command(request, triton_cache) : cuda_worker(own_path());
  command.wrapper = request.solution_wrapper;
  return command;
}

// Copies the kernels Triton compiled (its cache's cubins) into `to`, once the solution process is gone; lists
// them in the result. What is there was written by Triton in the solution's processes (this one's, and those
// of the evaluation's earlier stages when the cache is shared): the instruction stage holds the launches to
// this code as it does a CUDA solution's to its cubin (docs/anti-cheat.md says what that rests on).
void keep_compiled_kernels(const std::string& cache, const std::string& to, Json& result) {
  Json kept = Json::array();
  std::error_code error;
  fs::create_directories(to, error);
  for (fs::recursive_directory_iterator it(cache, error), end; !error && it != end; it.increment(error)) {
    const fs::path& file = it->path();
    if (!it->is_regular_file() || file.extension() != ".cubin") continue;
    // The cache's folder names are content hashes: prefixed, the names stay apart.
    const std::string name = file.parent_path().filename().string() + "-" + file.filename().string();
    std::error_code copied;
    fs::copy_file(file, fs::path(to) / name, fs::copy_options::overwrite_existing, copied);
    if (!copied) kept.push_back(name);
  }
  result[p::kCompiledKernels] = kept;
}

// Opens the baseline's process (its open already requested when `requested`) and loads the request's baseline
// module in it: the harness's own code, so a failure is the harness's (a runtime_error, which run() reports
// as a harness_error), never the solution's.
ptxbench::runner::SolutionProcess* open_baseline(ptxbench::runner::SolutionProcess& baseline,
                                                 const ptxbench::runner::Request& request,
                                                 const ptxbench::runner::EntrySpec& entry,
                                                 bool requested = false) {
  try {
    if (!requested) baseline.request_open(request.device);
    baseline.await_open();
    (void)baseline.load(request.baseline_module, entry);
  } catch (const std::exception& error) {
    throw std::runtime_error(std::string("the baseline module ") + request.baseline_module +
                             " could not be loaded: " + error.what());
  }
  return &baseline;
}

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

Clock::time_point seconds_after(Clock::time_point start, double seconds) {
  return start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// Where a runner process's seconds go, step by step, into the result's "phases_s" (protocol.h): what the
// stage times of bench/ are broken down by.
class Phases {
 public:
  // The seconds since the previous step ended (or since the runner started), as step `name`'s.
  void ended(const char* name) {
    const auto now = Clock::now();
    phases_[name] = std::chrono::duration<double>(now - last_).count();
    last_ = now;
  }
  void write(Json& result) const { result[p::kPhasesS] = phases_; }

 private:
  Json phases_ = Json::object();
  Clock::time_point last_ = Clock::now();
};

// Runs `body`; what it throws becomes `into`'s status and message: a fault of the solution's its
// runtime_error (failed when it broke a rule, timeout when it ran out of time), anything else the harness's.
// Returns whether it ran through.
template <typename Body>
bool judged(Json& into, Body&& body) {
  using namespace ptxbench::runner;
  try {
    body();
    return true;
  } catch (const SolutionFault& fault) {
    set_error(into,
              fault.timed_out ? p::kTimeoutStatus
              : fault.rule    ? p::kFailed
                              : p::kRuntimeErrorStatus,
              fault.what());
    into[p::kRuntimeError] = fault.details();
  } catch (const CudaError& error) {
    // This process's own CUDA calls: the solution runs in another context and cannot make them fail.
    set_error(into, p::kHarnessError, error.what());
  } catch (const std::exception& error) {
    set_error(into, p::kHarnessError, error.what());
  }
  return false;
}

// The request's limit for a part as the message says it ("the correct stage's 120 s").
std::string limit_text(const char* stage, double seconds) {
  char text[96];
  std::snprintf(text, sizeof(text), "the %s stage's %.0f s", stage, seconds);
  return text;
}

// check_then_time (protocol.h): the check, then the time mode if every trial passed, each part's result in
// a member of its own; the top level's status and message are the last part's.
void run_check_then_time(ptxbench::runner::Session& session, ptxbench::runner::SolutionProcess* baseline,
                         const ptxbench::runner::EntrySpec& entry, Clock::time_point start, Phases& phases) {
  using namespace ptxbench::runner;
  const Request& request = session.request;
  const auto part = [&](const char* name, Mode mode, Clock::time_point since, const auto& before) {
    Json& into = session.result[name] = {{p::kStatus, p::kHarnessError}, {p::kMessage, ""}};
    Session own{request,
                session.family,
                session.solution,
                into,
                session.calibration,
                session.read_bandwidth_bytes_per_s,
                session.baseline,
                session.rerun};
    judged(into, [&] {
      before(own);
      run_mode(own, mode);
    });
    into[p::kWallS] = seconds_since(since);
    session.result[p::kStatus] = into[p::kStatus];
    session.result[p::kMessage] = into[p::kMessage];
    return into[p::kStatus] == p::kPassed;
  };
  // The baseline process starts its context while the check runs (its Python imports began when it was
  // forked): the time part then finds it ready.
  if (baseline != nullptr) baseline->request_open(request.device);
  const bool checked = part(p::kCheckPart, Mode::check, start, [](Session&) {});
  phases.ended("check_calls");
  if (!checked) return;
  const Clock::time_point timing = Clock::now();
  if (request.time_limit_s > 0)
    session.solution.set_deadline(seconds_after(timing, request.time_limit_s),
                                  limit_text("time", request.time_limit_s));
  part(p::kTimePart, Mode::time, timing, [&](Session& own) {
    if (baseline != nullptr) {
      own.baseline = open_baseline(*baseline, request, entry, true);
      phases.ended("baseline_process");
    }
  });
  phases.ended("time_calls");
}

// Runs the whole request into `result`; every failure becomes a status and a message.
void run(const std::string& text, Json& result) {
  using namespace ptxbench::runner;
  const Clock::time_point start = Clock::now();
  Phases phases;
  std::unique_ptr<TaskFamily> family;
  std::unique_ptr<SolutionProcess> solution, baseline;
  Request request;
  EntrySpec entry;
  std::optional<DebugRerun> rerun;
  // The Triton caches in use. The solution's is the request's shared one, if it names one, which stays; the
  // others are made here and removed at the end.
  std::string triton_cache, baseline_cache;
  try {
    request = parse_request(text);
    result[p::kMode] = request.mode_name;
    family = make_family(request);
    if (!family) {
      throw RequestError("request: no task family \"" + request.family + "\" with entry point \"" +
                         request.entry_point + "\"");
    }
    entry = entry_of(family->spec());
    triton_cache = request.triton_cache;
    // Forked before this process creates its CUDA context (a forked child cannot use its parent's).
    solution = std::make_unique<SolutionProcess>(worker_command(request, triton_cache));
    if (!request.debugger.empty()) {
      rerun = DebugRerun{.command = worker_command(request, triton_cache), .entry = entry};
      rerun->command.wrapper.clear();
      rerun->command.for_debugger = true;
    }
    if (request.times() && !request.baseline_module.empty())
      baseline = std::make_unique<SolutionProcess>(python_command(request, baseline_cache));
    // The context and device facts come first, so that a library that breaks CUDA at load time is seen as
    // such.
    PTXBENCH_CUDA(cudaSetDevice(request.device));
    // Synchronisations spin: the baseline's wall time is measured as the solution's is (solution_worker.cpp).
    PTXBENCH_CUDA(cudaSetDeviceFlags(cudaDeviceScheduleSpin));
    PTXBENCH_CUDA(cudaFree(nullptr));
    result[p::kDeviceInfo] = describe_device(request.device);
    phases.ended("runner_context");
  } catch (const std::exception& error) {
    // Before the solution ran: the harness's, whatever threw it.
    phases.write(result);
    return set_error(result, p::kHarnessError, error.what());
  }

  Session session{request, *family, *solution, result, {}};
  if (rerun) session.rerun = &*rerun;
  const bool both = request.mode == Mode::check_then_time;
  if (both && request.check_limit_s > 0)
    solution->set_deadline(seconds_after(start, request.check_limit_s),
                           limit_text("correct", request.check_limit_s));
  judged(result, [&] {
    solution->open(request.device);  // the worker's start (a Triton worker's python and imports) and context
    phases.ended("solution_process");
    if (baseline && !both) {
      session.baseline = open_baseline(*baseline, request, entry);
      phases.ended("baseline_process");
    }
    if (request.times()) {
      session.calibration = calibrate(*solution, request.device);
      session.read_bandwidth_bytes_per_s = measure_read_bandwidth();
      phases.ended("calibration");
    }
    const Confinement confined = solution->load(request.library, entry);
    result[p::kSolutionProcess] = {{p::kWritesConfined, confined.writes_confined},
                                   {p::kThreadsWhenConfined, confined.threads}};
    family->bind(*solution);
    phases.ended("load");
    if (both) return run_check_then_time(session, baseline.get(), entry, start, phases);
    run_mode(session, request.mode);
    phases.ended("calls");
  });
  solution.reset();  // the worker is gone before its cache is read
  baseline.reset();
  phases.ended("end");
  phases.write(result);
  if (!triton_cache.empty() && !request.kernels_dir.empty())
    keep_compiled_kernels(triton_cache, request.kernels_dir, result);
  std::error_code error;
  if (!triton_cache.empty() && request.triton_cache.empty()) fs::remove_all(triton_cache, error);
  if (!baseline_cache.empty()) fs::remove_all(baseline_cache, error);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--solution-worker") == 0) {
    // Close-on-exec: a program the solution executes does not inherit the socket. _exit: the solution's
    // destructors and atexit handlers get no turn after its last call.
    const int socket = std::atoi(argv[2]);
    (void)fcntl(socket, F_SETFD, FD_CLOEXEC);
    const int status = ptxbench::runner::solution_worker_main(socket);
    std::fflush(nullptr);
    _exit(status);
  }
  // Not dumpable: the solution process runs as the same user, and must not read this one's memory.
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
    std::fprintf(stderr, "ptxbench-runner: cannot protect its memory: %s\n", std::strerror(errno));
    return 2;
  }
  const int result_fd = take_stdout();
  if (result_fd < 0) {
    std::fprintf(stderr, "ptxbench-runner: cannot set up the result channel: %s\n", std::strerror(errno));
    return 2;
  }
  int key_fd = -1;
  const std::string request = read_request(&key_fd);

  Json result = {
      {p::kProtocol, p::kVersion}, {p::kMode, nullptr}, {p::kStatus, p::kHarnessError}, {p::kMessage, ""}};
  run(request, result);

  // The solution process is gone (run() ended it): only now does the key enter this process.
  std::string document = result.dump(2) + "\n";
  std::string key = read_key(key_fd);
  if (!key.empty()) {
    document += std::string(ptxbench::mac::kTagPrefix) + ptxbench::mac::hmac_sha256_hex(key, document) + "\n";
    for (volatile char& b : key) b = 0;
  }
  const bool written = write_all(result_fd, document);
  std::fflush(nullptr);
  _exit(written ? 0 : 3);
}
