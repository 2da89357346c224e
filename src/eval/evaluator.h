// The judge as an interface, for every front end (the CLI's eval and run, the agent loop, the service's
// workers): a verdict for a submission on a task. LocalEvaluator judges on this machine; the service's
// RemoteEvaluator (service/remote_evaluator.h) sends the GPU stages to an evaluation service.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "eval/evaluate.h"
#include "eval/gpu_gate.h"
#include "eval/sandbox.h"

namespace ptxbench {

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  // Safe to call from several threads at once. Never throws for a bad submission (the verdict says what is
  // wrong); throws only when the judge itself cannot work.
  virtual Verdict evaluate(const Submission& submission, const Task& task) = 0;
};

// GPUs handed out to evaluations, each to `share` of them at a time. With no devices listed it holds one
// unnamed GPU ("").
class DevicePool {
 public:
  explicit DevicePool(std::vector<std::string> devices, int share = 1);
  std::string acquire();  // waits for one with room: the least used, the first given among equals
  void release(const std::string& device);

 private:
  struct Gpu {
    std::string device;
    int in_use = 0;
  };
  int share_;
  std::mutex mutex_;
  std::condition_variable freed_;
  std::vector<Gpu> gpus_;
};

// ptxbench::evaluate on this machine. Compiles run in parallel; the GPU stages run one evaluation at a time
// per GPU (the harness times kernels, and two at once on one GPU would disturb each other's timings and
// profiles). Given several devices (CUDA_VISIBLE_DEVICES values of identical GPUs), an evaluation takes a
// free one and its runner sees that GPU alone. The compile is done first, outside the wait for a GPU, so the
// evaluation finds it in the compile cache.
// With `gpu_share` above 1, that many evaluations hold each GPU, and everything they do here passes one gate
// (gpu_gate.h): compiles and the sanitize stages side by side; the correct, instruction and time stages
// alone on the host, so that no compile's load and no other process's counters reach what they measure.
// Identical sources are compiled one at a time: the second then finds the first's cache entry instead of
// replacing it while the first still reads it (the compile cache replaces an entry published by a concurrent
// twin). The sandbox is resolved from `sandbox` once, by the first evaluation that runs solution code (the
// probe starts a process), and given to every evaluation's GPU stages.
class LocalEvaluator : public Evaluator {
 public:
  using OptionsFor = std::function<EvalOptions(const Task&)>;
  // `devices`: two or more to evaluate side by side; fewer: one GPU, as the options name it (or as the
  // runner inherits it).
  explicit LocalEvaluator(OptionsFor options_for, std::vector<std::string> devices = {},
                          SandboxSettings sandbox = {}, int gpu_share = 1);
  Verdict evaluate(const Submission& submission, const Task& task) override;
  // With these options instead of options_for's (a service's worker: each job has its own stages and limits).
  Verdict evaluate(const Submission& submission, const Task& task, const EvalOptions& options);

 private:
  std::shared_ptr<std::mutex> source_lock(const std::string& source);
  const SandboxStatus& sandbox();

  OptionsFor options_for_;
  DevicePool gpus_;
  std::unique_ptr<GpuGate> gate_;  // with gpu_share above 1
  SandboxSettings sandbox_settings_;
  std::once_flag sandbox_once_;
  SandboxStatus sandbox_;
  std::mutex locks_mutex_;
  std::map<std::string, std::weak_ptr<std::mutex>> source_locks_;  // by source hash
};

// Whether an evaluation of `task` in `track` with `options` would use the GPU here.
bool uses_gpu(const Task& task, const Track& track, const EvalOptions& options);

}  // namespace ptxbench
