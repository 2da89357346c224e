// Progress of `ptxbench run`'s agent mode. On a terminal a live view redrawn in place below the log of finished
// turns: trajectories and turns done out of the total, evaluations in flight, elapsed time and an estimate of
// what is left, and each task's trajectories. The terminal is driven through terminfo (ncurses's tinfo): its
// own capabilities for moving up and clearing, no escape codes of ours. Off a terminal (or for a terminal
// without those capabilities) plain lines, one per finished turn and ended trajectory.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "agent/trajectory.h"

namespace ptxbench {

enum class ProgressMode { automatic, live, plain };

// What the view shows, kept from the events (one at a time, under the run's event lock).
struct ProgressState {
  struct Trajectory {
    std::string status = "pending";  // pending, or the last phase: asking, judging; then its end status
    int turn = 0;                    // the turn in progress, or the last finished one
    int finished_turns = 0;
    bool ended = false;
  };
  std::string title;  // "run 3: gpt-5, contracts knowledge, up to 8 turns"
  int max_turns = 0;
  std::map<std::pair<std::string, int>, Trajectory> trajectories;  // (task, sample)
  int ended_before = 0;          // ended before this process started (a resumed run)
  int turns_before = 0;          // finished before this process started
  int ended_here = 0, turns_here = 0;

  void apply(const agent::TurnEvent& event);
  int total() const { return static_cast<int>(trajectories.size()); }
  int ended() const { return ended_before + ended_here; }
  int in_flight() const;           // evaluations running now
  int turns_left_at_most() const;  // of the trajectories not ended
};

// The live view's lines for a terminal of `width` x `height` (ASCII, each at most width - 1 characters).
std::vector<std::string> render_progress(const ProgressState& state, std::chrono::seconds elapsed, int width,
                                         int height);
// "4m12s", "1h03m", "12s".
std::string human_duration(std::chrono::seconds seconds);

class RunProgress {
 public:
  // `initial`: the run's trajectories as stored when this process starts (all pending for a new run).
  RunProgress(ProgressMode mode, ProgressState initial, std::FILE* out = stderr);
  ~RunProgress();
  RunProgress(const RunProgress&) = delete;
  RunProgress& operator=(const RunProgress&) = delete;

  bool live() const { return live_; }
  void on_event(const agent::TurnEvent& event);
  void finish();  // the last frame stays; later output goes below it

 private:
  void redraw(const std::vector<std::string>& log);  // under mutex_
  void put(const char* capability);

  std::FILE* out_;
  bool live_ = false;
  std::string up_, clear_down_, carriage_return_;
  std::mutex mutex_;
  std::condition_variable wake_;
  ProgressState state_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  int drawn_lines_ = 0;
  bool done_ = false;
  std::thread ticker_;  // redraws once a second: the elapsed time and the estimate move between events
};

}  // namespace ptxbench
