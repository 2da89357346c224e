// `ptxbench worker`: takes jobs from the service's Redis streams and judges them on this machine, one at a
// time, with a heartbeat. A job it took is its own while its heartbeat renews the lease; a worker that dies
// (kill -9, a lost host) stops renewing, and after the lease another worker claims the job (XAUTOCLAIM). A
// verdict that could not be judged here (a harness error, a wedged GPU) gives the job back to the queue,
// until its attempts are spent.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "eval/verdict.h"
#include "service/jobs.h"
#include "service/redis.h"
#include "arch/profile.h"

namespace ptxbench::service {

struct WorkerSettings {
  std::string name;                 // the consumer's name: unique per worker process
  std::string description;          // "gpu 0: NVIDIA H200 (sm_90)", "cpu"
  std::vector<std::string> queues;  // what it takes: "cpu" and, with a GPU, its architecture
  QueueSettings queue;
  double heartbeat_s = 5;  // also how often the lease is renewed; the lease must be longer
  int block_ms = 2000;     // how long one read of the streams waits for a job
  // Whether the GPU answers ("" when it does, else why not), asked after a stage that timed out or could not
  // be run; empty on a CPU worker.
  std::function<std::string()> gpu_problem;
  double recheck_s = 20;  // how often a wedged GPU is asked again
};

// Judges one job's request on this machine (LocalEvaluator): throws only when the judge cannot work.
using JudgeJob = std::function<Verdict(const JobRequest&, const Task&)>;

struct WorkerCounts {
  int judged = 0;      // verdicts stored
  int duplicates = 0;  // verdicts that came second (the job was finished elsewhere meanwhile)
  int released = 0;    // jobs given back
};

// Runs until `stop` is set (after the job at hand), surviving Redis restarts (it reconnects and keeps a
// verdict until it is stored). `log` gets one line per event.
WorkerCounts run_worker(const RedisAddress& redis, const TaskRegistry& registry, const WorkerSettings& settings,
                        const JudgeJob& judge, const std::atomic<bool>& stop,
                        const std::function<void(const std::string&)>& log);

// True when a verdict's GPU stages hint at a wedged GPU: one timed out or could not be run.
bool worth_a_health_check(const Verdict& verdict);

}  // namespace ptxbench::service
