// Correct, but prints from the host (at load time and in every call, through printf, iostream and write(2) on
// fd 1) and from the device, and tries to read the request from stdin. Expected: passed, the result document
// intact on stdout, the prints on stderr; it returns 9 if stdin gave it anything.
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "simt_gemm.cuh"

namespace {

struct AtLoad {
  AtLoad() { std::printf("noisy: loaded {\"status\": \"passed\"}\n"); }
} at_load;

__global__ void say_hello() {
  printf("noisy: device printf\n");
}

}  // namespace

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M,
                                  int N, int K, cudaStream_t stream) {
  char buffer[64];
  const ssize_t got = read(STDIN_FILENO, buffer, sizeof(buffer));
  std::printf("noisy: printf\n");
  std::cout << "noisy: cout" << std::endl;
  (void)!write(STDOUT_FILENO, "noisy: write(1)\n", 16);
  say_hello<<<1, 1, 0, stream>>>();
  if (simt::launch(A, B, C, M, N, K, stream, M) != cudaSuccess) return 1;
  return got > 0 ? 9 : 0;
}
