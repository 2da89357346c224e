// ptxbench-runner: the GPU harness child process. Reads one request on stdin, loads the solution library,
// runs one mode over it and writes one result document on its original stdout (protocol.h has both formats).
//
// The solution runs inside this process, so the runner keeps what it can out of its reach: the request is
// read before the library is loaded, the result goes to a private copy of stdout (the solution's prints land
// on stderr) followed by an HMAC-SHA256 tag under a one-time key that the runner reads only after the
// solution's last call (until then the key sits unread in the stdin pipe, not in this process's memory), and
// the process ends with _exit right after the result is written, so the solution's static destructors and
// atexit handlers never run. The parent rejects anything on the channel but one document with a valid tag
// (docs/anti-cheat.md says what that does and does not stop).
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <iterator>
#include <string>

#include <cublasLt.h>
#include <cuda_runtime.h>

#include "runner/cuda_check.h"
#include "runner/family.h"
#include "runner/protocol.h"
#include "runner/request.h"
#include "runner/result_mac.h"
#include "runner/session.h"

namespace {

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
  return {{"name", properties.name},
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

// Loads the library and finds the entry point; a failure here is the submission's (a bad library, a missing
// or mangled symbol, a static initialiser that fails).
void* load_entry_point(const ptxbench::runner::Request& request) {
  void* library = dlopen(request.library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    throw ptxbench::runner::SolutionFault(std::string("could not load the solution library: ") + dlerror(),
                                          "", 0, "loading the library", std::nullopt, std::nullopt);
  }
  void* entry = dlsym(library, request.entry_point.c_str());
  if (entry == nullptr) {
    throw ptxbench::runner::SolutionFault(
        "the solution library does not define " + request.entry_point + " with C linkage (extern \"C\")", "",
        0, "loading the library", std::nullopt, std::nullopt);
  }
  return entry;  // never dlclose'd: the solution's code may still be referenced by the CUDA runtime
}

// Runs the whole request into `result`; every failure becomes a status and a message.
void run(const std::string& text, Json& result) {
  using namespace ptxbench::runner;
  std::unique_ptr<TaskFamily> family;
  Request request;
  try {
    request = parse_request(text);
    result[p::kMode] = request.mode_name;
    family = make_family(request);
    if (!family) {
      throw RequestError("request: no task family \"" + request.family + "\" with entry point \"" +
                         request.entry_point + "\"");
    }
    // The context and device facts come first, so that a library that breaks CUDA at load time is seen as
    // such.
    PTXBENCH_CUDA(cudaSetDevice(request.device));
    PTXBENCH_CUDA(cudaFree(nullptr));
    result[p::kDeviceInfo] = describe_device(request.device);
  } catch (const std::exception& error) {
    return set_error(result, p::kHarnessError, error.what());
  }

  Session session{request, *family, result};
  try {
    family->bind(load_entry_point(request));
    run_mode(session);
  } catch (const SolutionFault& fault) {
    set_error(result, p::kRuntimeErrorStatus, fault.what());
    result[p::kRuntimeError] = fault.details();
  } catch (const CudaError& error) {
    // A kernel fault reported by one of the runner's own calls, once the solution has run, is the solution's.
    if (session.solution_called && is_sticky_kernel_error(error.code)) {
      set_error(result, p::kRuntimeErrorStatus,
                std::string("CUDA error after the solution ran: ") + error.what());
      result[p::kRuntimeError] = {{p::kShape, nullptr},
                                  {p::kTrial, nullptr},
                                  {p::kWhere, error.what()},
                                  {p::kReturnCode, nullptr},
                                  {p::kCudaError, cudaGetErrorName(error.code)},
                                  {p::kCudaErrorString, cudaGetErrorString(error.code)}};
    } else {
      set_error(result, p::kHarnessError, error.what());
    }
  } catch (const std::exception& error) {
    set_error(result, p::kHarnessError, error.what());
  }
}

}  // namespace

int main() {
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

  // The solution's last call is over and the device idle: only now does the key enter this process.
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
