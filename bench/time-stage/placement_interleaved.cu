// Issue 32, the second placement probe. placement_probe.cu timed 8 placements one after another and could not
// tell placement from drift (its first placement, timed again last, took 11% more:
// ../harness/h200-2026-12-06d/). Here the placements take turns call by call: call i uses placement i % 8, so
// drift hits every placement alike, and after each call the time stage's own probe measures the SM clock
// (runner/kernels.h, launch_clock_probe). The reference GEMM at gemm-bf16-n4096-k4096's main shape (M 8192),
// on inputs of the runner's generator, each call after a 256 MiB flush. Prints, per placement, the median of
// its calls in the first and the second half of the run and of all of them, and the clock; then the spread of
// the placements' medians. Run it in several processes (placement_interleaved.sh): if one process's
// placements spread as much as the processes' overall medians do (1-5%), placement is the cause of the
// per-process spread. Built and run by placement_interleaved.sh, with the runner's src/runner/kernels.cu:
// placement_interleaved [seed]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "../../solutions/reference/gemm_bf16_sm90a.cu"
#include "runner/kernels.h"
#include "runner/statistics.h"
#include "runner/timing_rules.h"

using ptxbench::runner::median;

int main(int argc, char** argv) {
  const int M = 8192, N = 4096, K = 4096, kPlacements = 8, kRounds = 40, kWarmup = 2;
  const size_t a_bytes = size_t(M) * K * 2, b_bytes = size_t(N) * K * 2, c_bytes = size_t(M) * N * 2;
  const size_t region = size_t(1) << 30;  // each buffer somewhere in a 1 GiB region of its own
  uint8_t* pool = nullptr;
  if (cudaMalloc(&pool, 3 * region) != cudaSuccess) return 1;
  uint8_t* flush = nullptr;
  const size_t flush_bytes = size_t(256) << 20;
  unsigned long long* clock = nullptr;
  cudaMalloc(&flush, flush_bytes);
  cudaMallocHost(&clock, 2 * sizeof(unsigned long long));
  unsigned long long* clock_device = nullptr;
  cudaMalloc(&clock_device, 2 * sizeof(unsigned long long));
  cudaEvent_t start, stop;
  cudaEventCreate(&start), cudaEventCreate(&stop);
  std::mt19937_64 rng(argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 42);
  const auto offset = [&](size_t bytes) { return (rng() % ((region - bytes) / 256)) * 256; };
  struct Placement {
    __nv_bfloat16 *a, *b, *c;
    std::vector<double> us, mhz;
  };
  std::vector<Placement> placements;
  for (int p = 0; p < kPlacements; ++p) {
    Placement placement{reinterpret_cast<__nv_bfloat16*>(pool + offset(a_bytes)),
                        reinterpret_cast<__nv_bfloat16*>(pool + region + offset(b_bytes)),
                        reinterpret_cast<__nv_bfloat16*>(pool + 2 * region + offset(c_bytes)),
                        {},
                        {}};
    ptxbench::runner::fill_normal_bf16(placement.a, placement.a, int64_t(M) * K, 1, 1.0f, nullptr);
    ptxbench::runner::fill_normal_bf16(placement.b, placement.b, int64_t(N) * K, 2, 1.0f, nullptr);
    placements.push_back(placement);
  }
  std::vector<double> all;
  for (int round = 0; round < kWarmup + kRounds; ++round) {
    for (Placement& p : placements) {
      cudaMemsetAsync(flush, round, flush_bytes);
      cudaEventRecord(start);
      if (ptxbench_gemm_bf16(p.a, p.b, p.c, M, N, K, nullptr) != 0) {
        std::printf("the entry point returned non-zero\n");
        return 1;
      }
      cudaEventRecord(stop);
      ptxbench::runner::launch_clock_probe(ptxbench::runner::kClockProbeNs, clock_device, nullptr);
      cudaMemcpy(clock, clock_device, 2 * sizeof(unsigned long long), cudaMemcpyDeviceToHost);
      float ms = 0;
      cudaEventElapsedTime(&ms, start, stop);
      if (round < kWarmup) continue;
      p.us.push_back(ms * 1000);
      p.mhz.push_back(double(clock[0]) / double(clock[1]) * 1000);
      all.push_back(ms * 1000);
    }
  }
  if (cudaGetLastError() != cudaSuccess) return 1;
  std::vector<double> medians;
  for (int i = 0; i < kPlacements; ++i) {
    const Placement& p = placements[i];
    const std::vector<double> first(p.us.begin(), p.us.begin() + kRounds / 2),
        second(p.us.begin() + kRounds / 2, p.us.end());
    medians.push_back(median(p.us));
    std::printf(
        "placement %d: median %.1f us (first half %.1f, second half %.1f), SM clock median %.0f MHz\n", i,
        medians.back(), median(first), median(second), median(p.mhz));
  }
  const auto [low, high] = std::minmax_element(medians.begin(), medians.end());
  std::printf(
      "all %zu calls: median %.1f us; the placements' medians %.1f-%.1f us, spread %.2f%% of the median\n",
      all.size(), median(all), *low, *high, (*high - *low) / median(all) * 100);
  return 0;
}
