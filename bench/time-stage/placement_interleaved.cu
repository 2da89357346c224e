// Issue 32, the second placement probe. placement_probe.cu timed 8 placements one after another and could not
// tell placement from drift (its first placement, timed again last, took 11% more:
// ../harness/h200-2026-12-06d/). Here the placements take turns call by call: call i uses placement i % 8, so
// drift hits every placement alike, and after each call the time stage's own probe measures the SM clock
// (runner/kernels.h, launch_clock_probe). Each buffer lies at a 256-byte-aligned offset of its own 1 GiB
// region, drawn from the seed; inputs of the runner's generator; each call after a 256 MiB flush. Prints, per
// placement, the median of its calls in the first and the second half of the run and of all of them, and the
// clock; then the spread of the placements' medians. Run it in several processes (placement_interleaved.sh):
// if one process's placements spread as much as the processes' overall medians do, placement is the cause of
// the per-process spread; if two processes of the same seed differ as much, something else of the process is.
// The workload, chosen when built (placement_interleaved.sh):
//   default                 the reference GEMM at gemm-bf16-n4096-k4096's main shape (M 8192);
//   -DPROBE_BACKWARD_CAUSAL the reference backward at attention-bwd-d64-causal's main shape (B 4, H 32,
//                           S 4096, D 64), its workspace a buffer of its own.
// INPUTS (the backward only; the GEMM's are always its generator's, fixed):
//   zero-lse  random Q, K, V, O, dO and LSE 0 (P = exp(S): not the softmax the judge's inputs give);
//   fixed     random Q, K, V, dO, and O and LSE from the runner's reference forward (the judge's kind of
//             inputs), made once per placement;
//   fresh     as fixed, made anew before every call from the round's key (the judge's timed calls each get
//             fresh inputs): 10 rounds, the reference's seconds between the calls.
// Built and run by placement_interleaved.sh, with the runner's src/runner/kernels.cu (and, for the backward,
// attention_kernels.cu, cuBLAS):
// placement_interleaved SEED [INPUTS]
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#ifdef PROBE_BACKWARD_CAUSAL
#include "../../solutions/reference/attention_backward_sm90a.cu"
#include "runner/attention_kernels.h"
#else
#include "../../solutions/reference/gemm_bf16_sm90a.cu"
#endif
#include "runner/kernels.h"
#include "runner/statistics.h"
#include "runner/timing_rules.h"

using ptxbench::runner::median;

namespace {

#ifdef PROBE_BACKWARD_CAUSAL
constexpr int B = 4, H = 32, S = 4096, D = 64;
constexpr size_t kTensor = size_t(B) * S * H * D * 2;  // Q, K, V, O, dO, dQ, dK, dV: bf16 [B][S][H][D]
// Buffers: Q K V O dO (inputs), LSE, dQ dK dV (outputs), workspace.
const std::vector<size_t> kBytes = {
    kTensor, kTensor,
    kTensor, kTensor,
    kTensor, size_t(B) * H* S * 4,
    kTensor, kTensor,
    kTensor, ptxbench_attention_backward_workspace_bytes(B, H, H, S, S, D, 1)};
const float kScale = 1.0f / std::sqrt(float(D));
// Q, K, V, dO from `key`; O and LSE as INPUTS says (zero-lse: O random too, LSE as zeroed).
void make_inputs(const std::vector<uint8_t*>& b, uint64_t key, const std::string& inputs) {
  const auto bf = [&](int i) { return reinterpret_cast<__nv_bfloat16*>(b[i]); };
  for (int i : {0, 1, 2, 4})
    ptxbench::runner::fill_normal_bf16(bf(i), bf(i), int64_t(kTensor / 2), key + i, 1.0f, nullptr);
  if (inputs == "zero-lse") {
    ptxbench::runner::fill_normal_bf16(bf(3), bf(3), int64_t(kTensor / 2), key + 3, 1.0f, nullptr);
    return;
  }
  ptxbench::runner::AttentionDims dims{
      .b = B, .hq = H, .hkv = H, .sq = S, .sk = S, .d = D, .causal = true, .scale = kScale};
  static float* const o32 = [] {  // the reference's fp32 O, before it is rounded to bf16
    float* o = nullptr;
    return cudaMalloc(&o, kTensor * 2) == cudaSuccess ? o : nullptr;
  }();
  ptxbench::runner::attention_forward_reference(dims, bf(0), bf(1), bf(2), o32,
                                                reinterpret_cast<float*>(b[5]), nullptr,
                                                ptxbench::runner::kAttentionScoreBlockBytes, true);
  ptxbench::runner::round_to_bf16(o32, bf(3), bf(3), int64_t(kTensor / 2), nullptr);
}
int call(const std::vector<uint8_t*>& b) {
  const auto bf = [&](int i) { return reinterpret_cast<__nv_bfloat16*>(b[i]); };
  return ptxbench_attention_backward_bf16(bf(0), bf(1), bf(2), bf(3), reinterpret_cast<float*>(b[5]), bf(4),
                                          bf(6), bf(7), bf(8), b[9], B, H, H, S, S, D, kScale, 1, nullptr);
}
#else
constexpr int M = 8192, N = 4096, K = 4096;
const std::vector<size_t> kBytes = {size_t(M) * K * 2, size_t(N) * K * 2, size_t(M) * N * 2};  // A, B, C
constexpr int kInputs = 2;
void make_inputs(const std::vector<uint8_t*>& b, uint64_t key, const std::string&) {
  for (int i = 0; i < kInputs; ++i)
    ptxbench::runner::fill_normal_bf16(reinterpret_cast<__nv_bfloat16*>(b[i]),
                                       reinterpret_cast<__nv_bfloat16*>(b[i]), int64_t(kBytes[i] / 2),
                                       key + i, 1.0f, nullptr);
}
int call(const std::vector<uint8_t*>& b) {
  return ptxbench_gemm_bf16(reinterpret_cast<__nv_bfloat16*>(b[0]), reinterpret_cast<__nv_bfloat16*>(b[1]),
                            reinterpret_cast<__nv_bfloat16*>(b[2]), M, N, K, nullptr);
}
#endif

}  // namespace

int main(int argc, char** argv) {
  const std::string inputs = argc > 2 ? argv[2] : "zero-lse";
  if (inputs != "zero-lse" && inputs != "fixed" && inputs != "fresh") {
    std::printf("INPUTS: zero-lse, fixed or fresh\n");
    return 2;
  }
  const bool fresh = inputs == "fresh";
  const int kPlacements = 8, kRounds = fresh ? 10 : 40, kWarmup = 2;
  const size_t region = size_t(1) << 30;  // each buffer somewhere in a 1 GiB region of its own
  const size_t buffers = kBytes.size();
  uint8_t* pool = nullptr;
  if (cudaMalloc(&pool, buffers * region) != cudaSuccess) return 1;
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
    std::vector<uint8_t*> buffers;
    std::vector<double> us, mhz;
  };
  std::vector<Placement> placements(kPlacements);
  for (Placement& p : placements) {
    for (size_t i = 0; i < buffers; ++i) {
      p.buffers.push_back(pool + i * region + offset(kBytes[i]));
      cudaMemset(p.buffers[i], 0, kBytes[i]);  // zero outputs (and LSE, with zero-lse)
    }
    make_inputs(p.buffers, 1, inputs);
  }
  std::vector<double> all;
  for (int round = 0; round < kWarmup + kRounds; ++round) {
    for (Placement& p : placements) {
      if (fresh) make_inputs(p.buffers, 1000 * (round + 1), inputs);
      cudaMemsetAsync(flush, round, flush_bytes);
      cudaEventRecord(start);
      if (call(p.buffers) != 0) {
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
