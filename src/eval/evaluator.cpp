#include "eval/evaluator.h"

#include <algorithm>

#include "arch/profile.h"
#include "util/hash.h"

namespace ptxbench {

bool uses_gpu(const Task& task, const Track& track, const EvalOptions& options) {
  const ArchProfile* arch = find_arch(task.arch);
  return options.gpu.present && task.mode == TaskMode::full && arch &&
         arch->compute_capability == options.gpu.compute_capability && !options.tools.runner.empty() &&
         track.worker().implemented;
}

std::shared_ptr<std::mutex> LocalEvaluator::source_lock(const std::string& source) {
  const std::string key = sha256_hex(source);
  std::lock_guard lock(locks_mutex_);
  for (auto it = source_locks_.begin(); it != source_locks_.end();)  // forget the ones nobody holds
    it = it->second.expired() ? source_locks_.erase(it) : std::next(it);
  std::shared_ptr<std::mutex> mutex = source_locks_[key].lock();
  if (!mutex) source_locks_[key] = mutex = std::make_shared<std::mutex>();
  return mutex;
}

Verdict LocalEvaluator::evaluate(const Submission& submission, const Task& task) {
  return evaluate(submission, task, options_for_(task));
}

Verdict LocalEvaluator::evaluate(const Submission& submission, const Task& task, const EvalOptions& options) {
  const std::shared_ptr<std::mutex> same_source = source_lock(submission.source);
  // With the GPU shared, a compile waits while a stage has the host alone (and the source's lock is taken
  // first: no pass is held while waiting for it).
  auto beside_others = [&] {
    return gate_ ? std::optional<GpuGate::Pass>(gate_->enter(GpuGate::Use::shared)) : std::nullopt;
  };
  if (!uses_gpu(task, *submission.track, options)) {
    std::lock_guard lock(*same_source);
    const auto pass = beside_others();
    return ptxbench::evaluate(submission, task, options);
  }
  if (options.compile.use_cache) {
    std::lock_guard lock(*same_source);
    const auto pass = beside_others();
    compile_solution(*submission.track, submission.source, task, options.compile);
  }
  struct Held {
    DevicePool& pool;
    std::string device;
    ~Held() { pool.release(device); }
  } gpu{gpus_, gpus_.acquire()};
  EvalOptions on_device = options;
  if (!gpu.device.empty()) on_device.tools.visible_device = gpu.device;
  on_device.tools.gate = gate_.get();
  on_device.tools.sandbox = sandbox();
  return ptxbench::evaluate(submission, task, on_device);
}

DevicePool::DevicePool(std::vector<std::string> devices, int share) : share_(std::max(1, share)) {
  if (devices.size() < 2) devices = {""};
  for (std::string& device : devices) gpus_.push_back({.device = std::move(device)});
}

std::string DevicePool::acquire() {
  std::unique_lock lock(mutex_);
  Gpu* chosen = nullptr;
  freed_.wait(lock, [&] {
    chosen = nullptr;
    for (Gpu& gpu : gpus_)  // in the order given, among the least used
      if (gpu.in_use < share_ && (!chosen || gpu.in_use < chosen->in_use)) chosen = &gpu;
    return chosen != nullptr;
  });
  ++chosen->in_use;
  return chosen->device;
}

void DevicePool::release(const std::string& device) {
  {
    std::lock_guard lock(mutex_);
    for (Gpu& gpu : gpus_)
      if (gpu.device == device) --gpu.in_use;
  }
  freed_.notify_all();
}

LocalEvaluator::LocalEvaluator(OptionsFor options_for, std::vector<std::string> devices,
                               SandboxSettings sandbox, int gpu_share)
    : options_for_(std::move(options_for)),
      gpus_(std::move(devices), gpu_share),
      gate_(gpu_share > 1 ? std::make_unique<GpuGate>() : nullptr),
      sandbox_settings_(std::move(sandbox)) {}

const SandboxStatus& LocalEvaluator::sandbox() {
  std::call_once(sandbox_once_, [&] { sandbox_ = resolve_sandbox(sandbox_settings_); });
  return sandbox_;
}

}  // namespace ptxbench
