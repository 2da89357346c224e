// A stand-in for libptxbench-solution-worker.so (src/runner/python_worker.h) for the CPU test of the Triton
// host script's C boundary (tests/python_worker/test_c_boundary.py): the real script loads it with ctypes and
// hands it the callbacks, which this drives as the worker would (load, prepare, call, workspace), writing
// what came back to the descriptor it is given as the socket. No CUDA.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "runner/python_worker.h"

namespace {

void say(int fd, const std::string& line) {
  const std::string text = line + "\n";
  (void)!write(fd, text.data(), text.size());
}

}  // namespace

extern "C" uint32_t ptxbench_worker_confine(void) {
  return 1;
}

extern "C" int ptxbench_worker_serve(int socket, const ptxbench_python_callbacks* c,
                                     const char* unavailable) {
  if (unavailable != nullptr) {
    say(socket, std::string("unavailable ") + unavailable);
    return 3;
  }
  char message[480] = {};
  const char* solution = std::getenv("FAKE_SOLUTION");
  const bool gemm = std::string(std::getenv("FAKE_ENTRY")) == "gemm";
  const int loaded = gemm ? c->load(solution, "ptxbench_gemm_bf16", "", "tttiii", message, sizeof(message))
                          : c->load(solution, "ptxbench_attention_backward_bf16",
                                    "ptxbench_attention_backward_workspace_bytes", "ttttttttttiiiiiifi", message,
                                    sizeof(message));
  say(socket, "load " + std::to_string(loaded) + " " + message);
  if (loaded != 0) return 1;
  if (!gemm) {  // the backward: its workspace size
    const int64_t ints[8] = {2, 16, 4, 1000, 1500, 128, 1};
    uint64_t size = 0;
    const int sized = c->workspace_bytes(ints, 7, &size, message, sizeof(message));
    say(socket, "workspace " + std::to_string(sized) + " " + std::to_string(size) + " " + message);
    return 0;
  }
  // GEMM: A [M, K], B [N, K], C [M, N]. Three calls: A where the runner first put it, in the same place again
  // (the time stage's calls), then moved (the correct stage's); FAKE_CALLS of them.
  const int64_t m = 1999, n = 4096, k = 512;
  const uint64_t a_places[3] = {0x10000, 0x10000, 0x40000};
  const int calls = std::getenv("FAKE_CALLS") ? std::atoi(std::getenv("FAKE_CALLS")) : 1;
  for (int i = 0; i < calls && i < 3; ++i) {
    const uint64_t pointers[12] = {a_places[i], 0x20000, 0x30000};
    const uint64_t bytes[12] = {m * k * 2, n * k * 2, m * n * 2};
    const uint8_t dtypes[12] = {1, 1, 1}, ranks[12] = {2, 2, 2};  // bf16 matrices
    const int64_t extents[12 * 5] = {m, k, 0, 0, 0, n, k, 0, 0, 0, m, n};
    const int64_t ints[8] = {m, n, k};
    const float floats[4] = {};
    message[0] = '\0';
    const int prepared = c->prepare(pointers, bytes, dtypes, ranks, extents, 3, ints, 3, floats, 0, 0xABC0, message,
                                    sizeof(message));
    say(socket, "prepare " + std::to_string(prepared) + " " + message);
    int64_t returned = -7;
    message[0] = '\0';
    const int called = c->call(&returned, message, sizeof(message));
    say(socket, "call " + std::to_string(called) + " " + std::to_string(returned) + " " + message);
  }
  return 0;
}
