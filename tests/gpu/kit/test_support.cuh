// What the kit's GPU tests share (kit_test.cu, patterns_test.cu): CUDA error checks, the record of which test
// used which kit function or pattern fragment and whether it passed, bf16 bit conversions and the 128B swizzle.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <map>
#include <string>

#define CUDA_CHECK(x)                                                                              \
  do {                                                                                             \
    cudaError_t err_ = (x);                                                                        \
    if (err_ != cudaSuccess) {                                                                     \
      std::printf("CUDA error %s at %s:%d: %s\n", cudaGetErrorName(err_), __FILE__, __LINE__, #x); \
      std::exit(2);                                                                                \
    }                                                                                              \
  } while (0)

struct Outcome {
  bool ok = true;
  std::string tests;
};
// Kit function or pattern fragment -> whether every test that used it passed, and those tests.
static std::map<std::string, Outcome> g_outcomes;

// Records that test `test` used `used` (kit functions or pattern fragments) and passed or failed.
static void record(const char* test, bool ok, std::initializer_list<const char*> used) {
  std::printf("  test %-48s %s\n", test, ok ? "ok" : "FAILED");
  std::fflush(stdout);
  for (const char* name : used) {
    Outcome& o = g_outcomes[name];
    o.ok = o.ok && ok;
    if (!o.tests.empty()) o.tests += ", ";
    o.tests += test;
  }
}

static void sync_or_die(const char* what) {
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    std::printf("CUDA error %s after %s: %s\n", cudaGetErrorName(e), what, cudaGetErrorString(e));
    std::exit(2);
  }
}

static uint16_t bf16_bits(float f) {
  __nv_bfloat16 b = __float2bfloat16(f);
  uint16_t u;
  std::memcpy(&u, &b, 2);
  return u;
}
static float bf16_value(uint16_t u) {
  uint32_t w = static_cast<uint32_t>(u) << 16;
  float f;
  std::memcpy(&f, &w, 4);
  return f;
}

// Where element (r, c) of a box with 128-byte rows lands in shared memory under 128B swizzle (tile 1024-aligned):
// the 16-byte chunk index is XORed with the row index modulo 8.
static int swizzled128(int r, int c_elems, int elem_bytes) {
  int per_chunk = 16 / elem_bytes, per_row = 128 / elem_bytes;
  return r * per_row + (((c_elems / per_chunk) ^ (r % 8)) * per_chunk) + c_elems % per_chunk;
}
