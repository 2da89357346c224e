// What the solution process's CUPTI recorders add to a call, measured the way the worker times one: events on
// the stream around a host sequence like the reference GEMM's (function attribute, occupancy query, cluster
// launch of a 100 us kernel), and the host clock around the recorders' own work between calls. One process
// per configuration, since CUPTI cannot be taken back out of a process:
//   cupti_overhead none|recorder|counter|both [flush-each]
// flush-each reads the launches after every call (a forced flush each time), as the first version of the
// worker did; without it they are read once, after the calls, as the worker does now.
// Built and run by bench/timing/cupti_overhead.sh; prints one JSON line.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include <cuda_runtime.h>

#include "runner/launch_recorder.h"
#include "runner/tensor_counter.h"

namespace {

using Clock = std::chrono::steady_clock;

__global__ void __cluster_dims__(2, 1, 1) spin_kernel(unsigned long long nanoseconds) {
  extern __shared__ char smem[];
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < nanoseconds);
  if (now == 0) smem[threadIdx.x] = 1;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double us_since(Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t).count();
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "none";
  const bool flush_each = argc > 2 && std::strcmp(argv[2], "flush-each") == 0;
  cudaSetDevice(0);
  cudaSetDeviceFlags(cudaDeviceScheduleSpin);
  cudaFree(nullptr);
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  std::unique_ptr<ptxbench::runner::LaunchRecorder> recorder;
  std::unique_ptr<ptxbench::runner::TensorCounter> counter;
  if (!std::strcmp(mode, "recorder") || !std::strcmp(mode, "both"))
    recorder = std::make_unique<ptxbench::runner::LaunchRecorder>();
  if (!std::strcmp(mode, "counter") || !std::strcmp(mode, "both"))
    counter = std::make_unique<ptxbench::runner::TensorCounter>();
  const int smem = 200 * 1024;
  std::vector<double> event_us, host_us, collect_us;
  for (int i = 0; i < 60; ++i) {
    if (recorder) recorder->begin();
    cudaEventRecord(start, stream);
    const auto t1 = Clock::now();
    cudaFuncSetAttribute(spin_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    int device = 0, sms = 0, clusters = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(sms);
    config.blockDim = dim3(384);
    config.dynamicSmemBytes = smem;
    config.stream = stream;
    cudaOccupancyMaxActiveClusters(&clusters, spin_kernel, &config);
    cudaLaunchKernelEx(&config, spin_kernel, 100000ull);
    const double host = us_since(t1);
    cudaEventRecord(stop, stream);
    cudaStreamSynchronize(stream);
    cudaDeviceSynchronize();
    const auto t2 = Clock::now();
    if (recorder) {
      recorder->end();
      ptxbench::runner::solution::Reply reply;
      if (flush_each) recorder->launches_of(static_cast<uint32_t>(i), reply);
    }
    const double collect = us_since(t2);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    if (i >= 10) {
      event_us.push_back(ms * 1e3);
      host_us.push_back(host);
      collect_us.push_back(collect);
    }
  }
  std::printf(
      "{\"mode\": \"%s%s\", \"event_us\": %.1f, \"host_sequence_us\": %.1f, \"recorder_us\": %.1f, "
      "\"recorder\": \"%s\", \"counter\": \"%s\", \"error\": \"%s\"}\n",
      mode, flush_each ? "+flush-each" : "", median(event_us), median(host_us), median(collect_us),
      recorder ? recorder->problem().c_str() : "-", counter ? counter->problem().c_str() : "-",
      cudaGetErrorString(cudaGetLastError()));
  return 0;
}
