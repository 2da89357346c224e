// GPU probe of the tensor-pipe counter (src/runner/tensor_counter.h), run by hand on an sm_90a GPU host:
//
// clang-format off
//   nvcc -gencode arch=compute_90a,code=sm_90a -std=c++20 -O2 -I src -I include tests/gpu/runner/tensor_counter_probe.cu src/runner/tensor_counter.cpp -o build/tensor_counter_probe -lcupti -lcuda -Xlinker -rpath,/usr/local/cuda/lib64
//   build/tensor_counter_probe
// clang-format on
//
// It checks that the counter sees exactly the wgmma instructions issued in a range, and measures what it adds
// to a launch: (1) one warpgroup issuing one m64n8k16 wgmma counts 4 gmma (one per warp, as ncu's
// sm__inst_executed_pipe_tensor_op_gmma.sum does); (2) 1000 launches of 132 such warpgroups in one range
// count 4 * 132 * 1000; (3) the median host-clock latency of an empty launch and its synchronisation, with no
// counter, with the counter set up but outside a range, and inside a range. It also reports, unchecked, what
// one warp's mma.sync counts (1 hmma, 0 gmma where the hmma metric includes the wgmma) and what the empty
// launches count. Prints one JSON object on stdout; exits 1 when the counter is unavailable, a range fails or
// a gmma count is not the expected one, 2 on a CUDA error.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "runner/tensor_counter.h"

namespace {

using ptxbench::runner::TensorCounter;
using ptxbench::runner::TensorCounts;

constexpr int kWarpgroup = 128;
constexpr int kBlocks = 132;
constexpr int kLaunches = 1000;
constexpr int kLatencySamples = 200;
constexpr uint64_t kGmmaPerWgmma = 4;  // one per warp of the warpgroup

// A shared-memory matrix descriptor without swizzle: start address, leading and stride byte offsets, each in
// units of 16 bytes; base offset 0 and swizzle mode 0 (none) in the high bits.
__device__ uint64_t descriptor(const void* tile, uint32_t leading_bytes, uint32_t stride_bytes) {
  const auto address = static_cast<uint32_t>(__cvta_generic_to_shared(tile));
  return static_cast<uint64_t>((address & 0x3FFFF) >> 4) | static_cast<uint64_t>(leading_bytes >> 4) << 16 |
         static_cast<uint64_t>(stride_bytes >> 4) << 32;
}

// Each block is one warpgroup that issues exactly one wgmma, D = A * B with A 64x16 and B 16x8 in bf16, read
// from zeroed shared memory; the layout the descriptors describe does not matter for zeros, as long as it
// stays inside the tiles (8x16-byte core matrices: 128 bytes apart along K, 256 along M).
__global__ void __launch_bounds__(kWarpgroup) one_wgmma(float* sink) {
  __shared__ alignas(128) uint32_t a[64 * 16 / 2];
  __shared__ alignas(128) uint32_t b[8 * 16 / 2];
  for (int i = static_cast<int>(threadIdx.x); i < 64 * 16 / 2; i += kWarpgroup) a[i] = 0;
  for (int i = static_cast<int>(threadIdx.x); i < 8 * 16 / 2; i += kWarpgroup) b[i] = 0;
  // The wgmma reads through the async proxy: make the zeros visible to it, then to the whole warpgroup.
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();

  const uint64_t desc_a = descriptor(a, 128, 256);
  const uint64_t desc_b = descriptor(b, 128, 256);
  float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %6, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%0, %1, %2, %3}, %4, %5, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
      : "l"(desc_a), "l"(desc_b), "r"(0)
      : "memory");
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  if (d0 + d1 + d2 + d3 != 0.0f) sink[threadIdx.x] = d0 + d1 + d2 + d3;  // never: the tiles are zeros
}

// One warp issuing one warp-level MMA (mma.sync m16n8k16, bf16 in, f32 out) on zero registers.
__global__ void __launch_bounds__(32) one_mma_sync(float* sink) {
  const uint32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, b0 = 0, b1 = 0;
  float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  if (d0 + d1 + d2 + d3 != 0.0f) sink[threadIdx.x] = d0 + d1 + d2 + d3;  // never: the operands are zeros
}

__global__ void empty_kernel() {}

struct CudaError {
  std::string what;
};

void check(cudaError_t error, const char* what) {
  if (error != cudaSuccess) throw CudaError{std::string(what) + ": " + cudaGetErrorString(error)};
}

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f", value);
  return text;
}

// The median of kLatencySamples launches of an empty kernel, each followed by a synchronisation, on the host
// clock, in microseconds.
double median_launch_us(cudaStream_t stream) {
  std::vector<double> samples;
  samples.reserve(kLatencySamples);
  for (int i = 0; i < kLatencySamples; ++i) {
    const auto start = std::chrono::steady_clock::now();
    empty_kernel<<<1, 1, 0, stream>>>();
    check(cudaStreamSynchronize(stream), "empty kernel");
    const auto stop = std::chrono::steady_clock::now();
    samples.push_back(std::chrono::duration<double, std::micro>(stop - start).count());
  }
  check(cudaGetLastError(), "empty kernel launch");
  std::sort(samples.begin(), samples.end());
  return (samples[kLatencySamples / 2 - 1] + samples[kLatencySamples / 2]) / 2;
}

// One range around `work`, as JSON; `ok` is cleared when the range fails or, given an expectation, when the
// gmma count differs from it.
template <typename Work>
std::string counted(TensorCounter& counter, std::optional<uint64_t> expected_gmma, bool& ok, Work work) {
  if (!counter.begin()) {
    ok = false;
    return "{\"problem\": " + quoted(counter.problem()) + "}";
  }
  work();
  const std::optional<TensorCounts> counts = counter.end();
  if (!counts) {
    ok = false;
    return "{\"problem\": " + quoted(counter.problem()) + "}";
  }
  std::string json =
      "{\"gmma\": " + std::to_string(counts->gmma) + ", \"hmma\": " + std::to_string(counts->hmma);
  if (expected_gmma) {
    const bool as_expected = counts->gmma == *expected_gmma;
    ok = ok && as_expected;
    json += ", \"expected_gmma\": " + std::to_string(*expected_gmma) +
            ", \"as_expected\": " + (as_expected ? "true" : "false");
  }
  return json + "}";
}

int probe() {
  // As the runner's processes do: spinning synchronisations, a non-blocking stream.
  check(cudaSetDeviceFlags(cudaDeviceScheduleSpin), "cudaSetDeviceFlags");
  check(cudaFree(nullptr), "context creation");
  cudaDeviceProp properties{};
  check(cudaGetDeviceProperties(&properties, 0), "cudaGetDeviceProperties");
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  float* sink = nullptr;
  check(cudaMalloc(&sink, kWarpgroup * sizeof(float)), "cudaMalloc");

  // Warm up the launch path and the kernels' modules before anything is timed or counted.
  one_wgmma<<<1, kWarpgroup, 0, stream>>>(sink);
  check(cudaStreamSynchronize(stream), "warm-up wgmma kernel");
  (void)median_launch_us(stream);
  const double no_counter_us = median_launch_us(stream);

  std::string json = "{\"device\": " + quoted(properties.name);
  TensorCounter counter;
  json += ", \"available\": " + std::string(counter.available() ? "true" : "false");
  if (!counter.available()) {
    std::printf("%s, \"problem\": %s, \"ok\": false}\n", json.c_str(), quoted(counter.problem()).c_str());
    return 1;
  }

  bool ok = true;
  json += ", \"one_wgmma\": " + counted(counter, kGmmaPerWgmma, ok, [&] {
            one_wgmma<<<1, kWarpgroup, 0, stream>>>(sink);
            check(cudaGetLastError(), "one_wgmma launch");
          });
  json += ", \"many_wgmma\": " + counted(counter, kGmmaPerWgmma * kBlocks * kLaunches, ok, [&] {
            for (int i = 0; i < kLaunches; ++i) one_wgmma<<<kBlocks, kWarpgroup, 0, stream>>>(sink);
            check(cudaGetLastError(), "one_wgmma launches");
          });
  json += ", \"one_mma_sync\": " + counted(counter, std::nullopt, ok, [&] {
            one_mma_sync<<<1, 32, 0, stream>>>(sink);
            check(cudaGetLastError(), "one_mma_sync launch");
          });
  const double idle_counter_us = median_launch_us(stream);
  double in_range_us = 0;
  json += ", \"empty_launches\": " +
          counted(counter, std::nullopt, ok, [&] { in_range_us = median_launch_us(stream); });
  json += ", \"launch_latency_median_us\": {\"no_counter\": " + number(no_counter_us) +
          ", \"counter_idle\": " + number(idle_counter_us) + ", \"in_range\": " + number(in_range_us) + "}";
  std::printf("%s, \"ok\": %s}\n", json.c_str(), ok ? "true" : "false");

  check(cudaFree(sink), "cudaFree");
  check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  return ok ? 0 : 1;
}

}  // namespace

int main() {
  try {
    return probe();
  } catch (const CudaError& error) {
    std::printf("{\"cuda_error\": %s, \"ok\": false}\n", quoted(error.what).c_str());
    return 2;
  }
}
