// Who uses the GPUs and the host at a time, when evaluations share them (LocalEvaluator, run --gpu-share):
// each GPU stage, and each compile, passes the gate. The work whose verdict nothing else on the host can
// change runs side by side (compiles, the sanitize stage); the profiler (Nsight Compute counting executed
// opcodes by patching the kernels) runs beside that work but one at a time; the stages that measure
// (counters, times) have the host alone (gpu_stages.cpp's registry says which). A stage waiting to be alone
// goes first: no stream of other work keeps it waiting.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>

namespace ptxbench {

class GpuGate {
 public:
  // In order of what each excludes: shared excludes alone; profiler excludes alone and another profiler;
  // alone excludes everything.
  enum class Use { shared, profiler, alone };

  // Held for one stage. overlapped(): whether a stage of another owner (another evaluation's) held the gate
  // at some moment of this one's (a time-out then may be the other's doing); the stages of one owner, run
  // beside each other on purpose, do not count.
  class Pass {
   public:
    Pass(const Pass&) = delete;
    Pass& operator=(const Pass&) = delete;
    Pass(Pass&& other) noexcept : gate_(other.gate_), use_(other.use_), id_(other.id_) {
      other.gate_ = nullptr;
    }
    ~Pass() {
      if (gate_) gate_->leave(use_, id_);
    }
    bool overlapped() const {
      if (!gate_) return false;
      std::lock_guard lock(gate_->mutex_);
      return gate_->inside_.at(id_).overlapped;
    }

   private:
    friend class GpuGate;
    Pass(GpuGate* gate, Use use, uint64_t id) : gate_(gate), use_(use), id_(id) {}
    GpuGate* gate_;
    Use use_;
    uint64_t id_;
  };

  // `owner`: whose stage it is (an evaluation's); null: nobody else's, every other stage overlaps it.
  Pass enter(Use use, const void* owner = nullptr) {
    std::unique_lock lock(mutex_);
    if (use == Use::alone) {
      ++waiting_alone_;
      changed_.wait(lock, [&] { return shared_ == 0 && !profiler_ && !alone_; });
      --waiting_alone_;
      alone_ = true;
    } else if (use == Use::profiler) {
      changed_.wait(lock, [&] { return !alone_ && !profiler_ && waiting_alone_ == 0; });
      profiler_ = true;
    } else {
      changed_.wait(lock, [&] { return !alone_ && waiting_alone_ == 0; });
      ++shared_;
    }
    Inside entered{.owner = owner};
    for (auto& [id, other] : inside_)
      if (owner == nullptr || other.owner != owner) other.overlapped = entered.overlapped = true;
    const uint64_t id = ++entries_;
    inside_.emplace(id, entered);
    return Pass(this, use, id);
  }

 private:
  struct Inside {
    const void* owner = nullptr;
    bool overlapped = false;
  };

  void leave(Use use, uint64_t id) {
    {
      std::lock_guard lock(mutex_);
      if (use == Use::alone)
        alone_ = false;
      else if (use == Use::profiler)
        profiler_ = false;
      else
        --shared_;
      inside_.erase(id);
    }
    changed_.notify_all();
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  int shared_ = 0;         // shared stages inside
  bool profiler_ = false;  // the profiler inside
  bool alone_ = false;     // a stage inside alone
  int waiting_alone_ = 0;  // stages waiting to be alone
  uint64_t entries_ = 0;
  std::map<uint64_t, Inside> inside_;  // the passes held, by entry
};

}  // namespace ptxbench
