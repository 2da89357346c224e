// Calls an attention solution (a shared library with the ptxbench_attention_* ABI) at one shape, for a
// profiler: `calls` calls on one stream after one warm-up, inputs N(0,1) (the backward's O and LSE are not a
// real forward's, which changes no instruction count or memory traffic). Checks nothing: the judge does that.
//
//   profile_driver <solution.so> fwd|bwd D causal [calls] [B Hq Hkv Sq Sk]   (default 2 calls, 4 16 16 4096
//   4096) bench/attention/profile.sh drives it under Nsight Compute.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <ptxbench/abi.h>

#define CUDA_CHECK(x)                                                                                       \
  do {                                                                                                      \
    cudaError_t err_ = (x);                                                                                 \
    if (err_ != cudaSuccess) {                                                                              \
      std::fprintf(stderr, "CUDA error %s at %s:%d: %s\n", cudaGetErrorName(err_), __FILE__, __LINE__, #x); \
      std::exit(2);                                                                                         \
    }                                                                                                       \
  } while (0)

namespace {

void* device_normal(size_t n, bool bf16, std::mt19937_64& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  void* out = nullptr;
  if (bf16) {
    std::vector<__nv_bfloat16> host(n);
    for (auto& x : host) x = __float2bfloat16(normal(rng));
    CUDA_CHECK(cudaMalloc(&out, n * 2));
    CUDA_CHECK(cudaMemcpy(out, host.data(), n * 2, cudaMemcpyHostToDevice));
  } else {
    std::vector<float> host(n);
    for (auto& x : host) x = normal(rng);
    CUDA_CHECK(cudaMalloc(&out, n * 4));
    CUDA_CHECK(cudaMemcpy(out, host.data(), n * 4, cudaMemcpyHostToDevice));
  }
  return out;
}

template <typename Fn>
Fn symbol(void* library, const char* name) {
  void* found = dlsym(library, name);
  if (found == nullptr) {
    std::fprintf(stderr, "%s: %s\n", name, dlerror());
    std::exit(2);
  }
  return reinterpret_cast<Fn>(found);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5 && argc != 6 && argc != 11) {
    std::fprintf(stderr, "usage: %s <solution.so> fwd|bwd D causal [calls] [B Hq Hkv Sq Sk]\n", argv[0]);
    return 2;
  }
  const bool backward = std::strcmp(argv[2], "bwd") == 0;
  const int d = std::atoi(argv[3]), causal = std::atoi(argv[4]), calls = argc > 5 ? std::atoi(argv[5]) : 2;
  int b = 4, hq = 16, hkv = 16, sq = 4096, sk = 4096;
  if (argc == 11)
    b = std::atoi(argv[6]), hq = std::atoi(argv[7]), hkv = std::atoi(argv[8]), sq = std::atoi(argv[9]),
    sk = std::atoi(argv[10]);
  void* library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    std::fprintf(stderr, "%s\n", dlerror());
    return 2;
  }
  const size_t nq = size_t(b) * sq * hq * d, nk = size_t(b) * sk * hkv * d, nl = size_t(b) * hq * sq;
  std::mt19937_64 rng(1);
  auto* q = static_cast<__nv_bfloat16*>(device_normal(nq, true, rng));
  auto* k = static_cast<__nv_bfloat16*>(device_normal(nk, true, rng));
  auto* v = static_cast<__nv_bfloat16*>(device_normal(nk, true, rng));
  auto* o = static_cast<__nv_bfloat16*>(device_normal(nq, true, rng));
  auto* lse = static_cast<float*>(device_normal(nl, false, rng));
  auto* d_o = static_cast<__nv_bfloat16*>(device_normal(nq, true, rng));
  auto* dq = static_cast<__nv_bfloat16*>(device_normal(nq, true, rng));
  auto* dk = static_cast<__nv_bfloat16*>(device_normal(nk, true, rng));
  auto* dv = static_cast<__nv_bfloat16*>(device_normal(nk, true, rng));
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  void* workspace = nullptr;
  if (backward) {
    const auto bytes_fn = symbol<decltype(&ptxbench_attention_backward_workspace_bytes)>(
        library, "ptxbench_attention_backward_workspace_bytes");
    const size_t bytes = bytes_fn(b, hq, hkv, sq, sk, d, causal);
    if (bytes > 0) CUDA_CHECK(cudaMalloc(&workspace, bytes));
  }
  const auto forward_fn = backward ? nullptr
                                   : symbol<decltype(&ptxbench_attention_forward_bf16)>(
                                         library, "ptxbench_attention_forward_bf16");
  const auto backward_fn = backward ? symbol<decltype(&ptxbench_attention_backward_bf16)>(
                                          library, "ptxbench_attention_backward_bf16")
                                    : nullptr;
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  for (int call = 0; call <= calls; ++call) {
    CUDA_CHECK(cudaEventRecord(start, stream));
    const int rc = backward ? backward_fn(q, k, v, o, lse, d_o, dq, dk, dv, workspace, b, hq, hkv, sq, sk, d,
                                          scale, causal, stream)
                            : forward_fn(q, k, v, dq, lse, b, hq, hkv, sq, sk, d, scale, causal, stream);
    CUDA_CHECK(cudaEventRecord(stop, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    std::printf("%s call %d: rc %d, %.3f ms\n", call == 0 ? "warm-up" : "timed", call, rc, ms);
    if (rc != 0) return 1;
  }
  return 0;
}
