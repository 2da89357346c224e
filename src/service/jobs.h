// The evaluation service's jobs: what a submission asks for, how it is keyed, and how it moves through Redis.
//
// Every job is a hash `ptxbench:job:<id>` (its request, state, attempts, worker, verdict), entered in the
// stream of the workers that can judge it (`ptxbench:jobs:cpu` for the CPU stages alone, or
// `ptxbench:jobs:<arch>` for a GPU of that architecture), read through the consumer group `workers`. A job is
// found again by its cache key (`ptxbench:cache:<key>`: the source's hash, the task and its file, the options
// and the judge's version), so an identical submission gets the same job and its verdict. Every state change
// is one Lua script, atomic in Redis: a job taken twice (its worker's lease ran out while it still worked)
// stores the verdict of whichever finished first, and the other is counted as a duplicate. A job that no
// worker could finish in `max_attempts` goes to the dead-letter stream `ptxbench:dead`. Every stored verdict
// is also recorded in the stream `ptxbench:verdicts`.
//
// The request parsing and the keys are pure functions (tested without Redis); JobQueue does the I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "service/redis.h"
#include "arch/profile.h"
#include "task/task.h"

namespace ptxbench::service {

// What a client asks to have judged.
struct JobRequest {
  std::string task;
  std::string source;
  std::string name = "solution.cu";  // the file name, for people
  std::string track = "cuda";        // the language it is written in (track/track.h)
  std::vector<std::string> stages;   // the GPU stages to run (sorted); empty: all
  bool cpu_only = false;             // the compile and static stages alone
  double stage_time_limit_s = 0;     // 0: the defaults
  // The instruction stage also collects the architecture profile's Nsight Compute sections and keeps their
  // summary (eval/profile_summary.h): what `run --feedback profile` shows the model.
  bool profile = false;
};

// A request that cannot be accepted, with the HTTP status that says why (400 malformed, 422 not judgeable).
struct RequestError : std::runtime_error {
  RequestError(int status_code, const std::string& message)
      : std::runtime_error(message), status(status_code) {}
  int status;
};

// A submission's body: strict JSON (a key given twice is an error), known fields only, a task `registry`
// knows in a track it accepts, a source of at most kMaxSolutionBytes. Throws RequestError naming the field.
JobRequest parse_job_request(const std::string& body, const TaskRegistry& registry);
nlohmann::json to_json(const JobRequest& request);
JobRequest job_request_from_json(const nlohmann::json& doc);  // the stored form; throws RequestError

// The verdict cache's key: sha256 over the source's hash, the task and its definition (`task_digest`, the
// hash of its file: a changed tolerance or shape is another task), the options that change a verdict and the
// judge's version.
std::string cache_key(const JobRequest& request, const std::string& task_digest,
                      const std::string& judge_version);
// The version of the judge a verdict comes from; a different one never serves a cached verdict.
std::string judge_version();
// The stream a job goes to: "cpu" for the CPU stages alone (cpu_only, or a static-only task), else the task's
// architecture ("sm_90a").
std::string queue_of(const JobRequest& request, const Task& task);

// A job id: 32 random hex digits.
std::string new_job_id();
bool valid_job_id(const std::string& id);

enum class JobState { queued, running, done, cancelled, dead };
std::string to_string(JobState state);
std::optional<JobState> job_state_from_string(const std::string& text);

struct JobStatus {
  std::string id;
  JobState state = JobState::queued;
  int attempts = 0;
  std::string task;
  std::string worker;  // the last worker that took it
  std::string error;   // why it is dead
  std::string created_at, updated_at;
  int duplicates = 0;  // verdicts that came second and were dropped
  std::optional<nlohmann::json> verdict;
  nlohmann::json to_json(bool with_verdict) const;
};

struct Submitted {
  std::string id;
  JobState state = JobState::queued;
  bool created = false;  // false: an existing job with the same key answers it
};

// One job taken by a worker.
struct TakenJob {
  std::string id;
  std::string queue;
  std::string entry;  // the stream entry
  int attempt = 0;    // 1 for the first
  JobRequest request;
};

struct QueueSettings {
  double lease_s = 60;   // a job whose worker gave no sign of life for this long is taken by another
  int max_attempts = 3;  // then it goes to the dead-letter stream
};

class JobQueue {
 public:
  JobQueue(Redis& redis, QueueSettings settings = {});

  // Service side.
  Submitted submit(const JobRequest& request, const Task& task);
  std::optional<JobStatus> status(const std::string& id, bool with_verdict);
  // Cancels a queued or running job (a running one's verdict is dropped when it comes). Returns the state
  // after: cancelled, or the state that could not be cancelled (done, dead); nothing for an unknown id.
  std::optional<JobState> cancel(const std::string& id);

  // Worker side. Creates the consumer groups of `queues` when missing.
  void prepare(const std::vector<std::string>& queues);
  // A job whose worker's lease ran out, else a new one (waiting up to `block_ms`); nothing when none came.
  // Jobs already ended, and jobs past their attempts (moved to the dead-letter stream), are acknowledged and
  // passed over.
  std::optional<TakenJob> take(const std::vector<std::string>& queues, const std::string& consumer,
                               int block_ms);
  // Keeps the lease of a job this consumer works on; false when the job is no longer this consumer's (it was
  // taken by another, or ended).
  bool renew(const TakenJob& job, const std::string& consumer);
  // Stores the verdict, unless the job ended otherwise meanwhile. `cacheable`: the verdict is the source's
  // (not a harness error) and may answer identical submissions. Returns true when this verdict was stored.
  bool finish(const TakenJob& job, const std::string& consumer, const nlohmann::json& verdict,
              bool cacheable);
  // Gives the job back to its queue at once (this worker cannot judge it now: its GPU is wedged, or it
  // stops); the attempt counts.
  void release(const TakenJob& job, const std::string& consumer, const std::string& why);
  // The worker's heartbeat: `ptxbench:worker:<consumer>`, expiring after `ttl_s` without a beat.
  void heartbeat(const std::string& consumer, const nlohmann::json& state, double ttl_s);
  std::vector<nlohmann::json> workers();

  const QueueSettings& settings() const { return settings_; }

 private:
  Redis& redis_;
  QueueSettings settings_;
};

inline constexpr const char* kGroup = "workers";
std::string stream_key(const std::string& queue);
std::string job_key(const std::string& id);
inline constexpr const char* kDeadStream = "ptxbench:dead";
inline constexpr const char* kVerdictStream = "ptxbench:verdicts";

}  // namespace ptxbench::service
