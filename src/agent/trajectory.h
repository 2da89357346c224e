// One trajectory: turn after turn of request -> model -> code -> verdict -> feedback, every step stored as it
// happens, until a stop condition or the turn budget. It always continues from what the store holds, so a run
// killed at any point resumes where it stopped: a finished turn is never repeated, a stored reply without a
// verdict is judged again (not asked again), a request without a reply is asked again.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "agent/prompt.h"
#include "eval/evaluator.h"
#include "llm/provider.h"
#include "store/store.h"
#include "task/task.h"
#include "track/track.h"

namespace ptxbench::agent {

struct LoopOptions {
  int max_turns = 8;
  bool stop_when_verified = false;  // stop at the first verified turn (and, on a host that cannot verify,
                                    // at the first turn where nothing failed)
  std::optional<double> target_speedup;  // with stop_when_verified: also this fast
};

// Trajectory statuses (trajectories.status). Terminal ones are never resumed.
inline constexpr const char* kPending = "pending";
inline constexpr const char* kRunning = "running";
inline constexpr const char* kSolved = "solved";  // stopped: verified (and at the target speedup)
inline constexpr const char* kUnverified =
    "unverified";                                     // stopped: nothing failed, but this host cannot verify
inline constexpr const char* kFinished = "finished";  // every turn used
inline constexpr const char* kError = "error";        // the model call or the judge failed; --resume retries
bool is_terminal(const std::string& status);

// What a trajectory is doing, for a progress display: a turn's model call begins, its evaluation begins, the
// turn ends (its error class and outcome), or the trajectory ends (turn 0, its status).
enum class TurnPhase { asking, judging, done };

// What happened, for a progress display.
struct TurnEvent {
  std::string task_id;
  int sample = 0;
  int turn = 0;  // 0 for an event about the trajectory alone
  TurnPhase phase = TurnPhase::done;
  std::string error_class;  // of the turn; empty when it did not fail
  std::string outcome;      // one line
  std::string status;       // the trajectory's status after the event
};

struct TrajectoryContext {
  int64_t run_id = 0;
  TrajectoryRow row;
  const Task* task = nullptr;
  const Track* track = &cuda_track();  // the language the model writes
  std::string first_message;           // used when turn 1 is not stored yet
  LoopOptions options;
  ContextOptions context;  // what later turns show of the earlier ones
  llm::Provider* provider = nullptr;
  Evaluator* evaluator = nullptr;
  Store* store = nullptr;
  std::function<void(const TurnEvent&)> on_event;  // may be empty; called from this thread
};

// Runs the trajectory to a terminal status, or to kError. Returns the status it ends with.
std::string run_trajectory(const TrajectoryContext& context);

// What is stored of a model's reply beside its text: finish reason, usage (only when the provider reported
// it), attempts, HTTP status, latency, and for a failed call the error and the start of the response body.
nlohmann::json reply_meta(const llm::Reply& reply);

// The stop decision after a finished turn `index` with `verdict` (null: no verdict, e.g. no code).
std::optional<std::string> stop_status(const LoopOptions& options, int index, const Verdict* verdict);

}  // namespace ptxbench::agent
