#include "runner/launch_recorder.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include <cupti.h>

#include "runner/kernel_name_hash.h"

namespace ptxbench::runner {
namespace {

namespace s = solution;

// One kernel as CUPTI recorded it, with its start on CUPTI's clock.
struct Record {
  s::Launch launch;
  uint64_t start = 0;
};

// CUPTI hands its buffers to plain functions, possibly on a thread of its own: the completed records go to
// this one queue, under its lock.
struct Records {
  std::mutex lock;
  std::vector<Record> kernels;
};
Records records;

// Large enough that one buffer holds every launch of a mode's calls: CUPTI asks for a buffer at the first
// launch after the recorder starts (the worker's own, before any call) and again only when one fills.
constexpr size_t kBufferBytes = size_t{16} << 20;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;
}

s::Launch launch_of(const CUpti_ActivityKernel10& kernel) {
  s::Launch launch;
  const char* name = kernel.name != nullptr ? kernel.name : "";
  launch.name_hash = kernel_name_hash(name);
  std::snprintf(launch.name, sizeof(launch.name), "%s", name);
  launch.grid[0] = kernel.gridX, launch.grid[1] = kernel.gridY, launch.grid[2] = kernel.gridZ;
  launch.block[0] = kernel.blockX, launch.block[1] = kernel.blockY, launch.block[2] = kernel.blockZ;
  launch.cluster[0] = static_cast<int32_t>(kernel.clusterX);
  launch.cluster[1] = static_cast<int32_t>(kernel.clusterY);
  launch.cluster[2] = static_cast<int32_t>(kernel.clusterZ);
  launch.dynamic_shared_bytes = kernel.dynamicSharedMemory;
  launch.duration_ns = kernel.end > kernel.start ? kernel.end - kernel.start : 0;
  return launch;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  {
    const std::lock_guard<std::mutex> guard(records.lock);
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
      if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && record->kind != CUPTI_ACTIVITY_KIND_KERNEL)
        continue;
      const auto& kernel = *reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      records.kernels.push_back({.launch = launch_of(kernel), .start = kernel.start});
    }
  }
  std::free(buffer);
}

std::string failure(const char* call, CUptiResult result) {
  const char* text = nullptr;
  (void)cuptiGetResultString(result, &text);
  return std::string(call) + ": " + (text != nullptr ? text : "unknown CUPTI error");
}

}  // namespace

LaunchRecorder::LaunchRecorder() {
  if (const CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
      r != CUPTI_SUCCESS) {
    problem_ = failure("cuptiActivityRegisterCallbacks", r);
  } else if (const CUptiResult e = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
             e != CUPTI_SUCCESS) {
    problem_ = failure("cuptiActivityEnable(CONCURRENT_KERNEL)", e);
  }
}

LaunchRecorder::~LaunchRecorder() {
  if (available()) (void)cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
}

uint32_t LaunchRecorder::begin() {
  Window window;
  if (available()) (void)cuptiGetTimestamp(&window.begin);
  calls_.push_back(window);
  return static_cast<uint32_t>(calls_.size() - 1);
}

void LaunchRecorder::end() {
  if (!available() || calls_.empty()) return;
  (void)cuptiGetTimestamp(&calls_.back().end);
  flushed_ = false;
}

void LaunchRecorder::launches_of(uint32_t index, s::Reply& reply) {
  const auto unavailable = [&](const std::string& why) {
    reply.recorder = s::Tool::unavailable;
    std::snprintf(reply.tool_problem, sizeof(reply.tool_problem), "launch recorder: %s", why.c_str());
  };
  if (!available()) return unavailable(problem_);
  if (index >= calls_.size() || calls_[index].end == 0) return unavailable("no such call was recorded");
  if (!flushed_) {
    if (const CUptiResult r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); r != CUPTI_SUCCESS)
      return unavailable(failure("cuptiActivityFlushAll", r));
    flushed_ = true;
  }
  const Window window = calls_[index];
  const std::lock_guard<std::mutex> guard(records.lock);
  std::vector<const Record*> call;
  for (const Record& record : records.kernels)
    if (record.start >= window.begin && record.start <= window.end) call.push_back(&record);
  std::stable_sort(call.begin(), call.end(),
                   [](const Record* a, const Record* b) { return a->start < b->start; });
  reply.recorder = s::Tool::recorded;
  reply.launch_count = static_cast<uint32_t>(call.size());
  for (size_t k = 0; k < call.size() && k < static_cast<size_t>(s::kMaxLaunches); ++k)
    reply.launches[k] = call[k]->launch;
}

}  // namespace ptxbench::runner
