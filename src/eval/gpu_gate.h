// Who uses the GPUs and the host at a time, when evaluations share them (LocalEvaluator, run --gpu-share):
// each GPU stage, and each compile, passes the gate. The work whose verdict nothing else on the host can
// change runs side by side (compiles, the sanitize stage); the profiler (Nsight Compute counting executed
// opcodes by patching the kernels) runs beside that work but one at a time; the stages that measure
// (counters, times) have the host alone (gpu_stages.cpp's registry says which). A stage waiting to be alone
// goes first: no stream of other work keeps it waiting.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace ptxbench {

class GpuGate {
 public:
  // In order of what each excludes: shared excludes alone; profiler excludes alone and another profiler;
  // alone excludes everything.
  enum class Use { shared, profiler, alone };

  // Held for one stage. overlapped(): whether another stage held the gate at some moment of this one's
  // (a time-out then may be the other's doing).
  class Pass {
   public:
    Pass(const Pass&) = delete;
    Pass& operator=(const Pass&) = delete;
    Pass(Pass&& other) noexcept
        : gate_(other.gate_),
          use_(other.use_),
          entered_(other.entered_),
          others_at_entry_(other.others_at_entry_) {
      other.gate_ = nullptr;
    }
    ~Pass() {
      if (gate_) gate_->leave(use_);
    }
    bool overlapped() const {
      if (!gate_) return false;
      std::lock_guard lock(gate_->mutex_);
      return others_at_entry_ > 0 || gate_->entries_ != entered_;
    }

   private:
    friend class GpuGate;
    Pass(GpuGate* gate, Use use, uint64_t entered, int others)
        : gate_(gate), use_(use), entered_(entered), others_at_entry_(others) {}
    GpuGate* gate_;
    Use use_;
    uint64_t entered_;     // the gate's entry count just after this entry
    int others_at_entry_;  // stages inside when this one entered
  };

  Pass enter(Use use) {
    std::unique_lock lock(mutex_);
    int others = 0;
    if (use == Use::alone) {
      ++waiting_alone_;
      changed_.wait(lock, [&] { return shared_ == 0 && !profiler_ && !alone_; });
      --waiting_alone_;
      alone_ = true;
    } else if (use == Use::profiler) {
      changed_.wait(lock, [&] { return !alone_ && !profiler_ && waiting_alone_ == 0; });
      profiler_ = true;
      others = shared_;
    } else {
      changed_.wait(lock, [&] { return !alone_ && waiting_alone_ == 0; });
      others = shared_ + (profiler_ ? 1 : 0);
      ++shared_;
    }
    return Pass(this, use, ++entries_, others);
  }

 private:
  void leave(Use use) {
    {
      std::lock_guard lock(mutex_);
      if (use == Use::alone)
        alone_ = false;
      else if (use == Use::profiler)
        profiler_ = false;
      else
        --shared_;
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
};

}  // namespace ptxbench
