#include "service/worker.h"

#include <unistd.h>

#include <fmt/format.h>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "eval/evaluate.h"

namespace ptxbench::service {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

bool worth_a_health_check(const Verdict& verdict) {
  for (const char* name : kGpuStageNames)
    if (const StageResult* stage = verdict.stage(name);
        stage && (stage->status == StageStatus::timeout || stage->status == StageStatus::harness_error))
      return true;
  return false;
}

namespace {

// What the heartbeat reports and renews, shared between the worker's two threads.
class WorkerState {
 public:
  void set(std::optional<TakenJob> job, std::string activity) {
    std::lock_guard lock(mutex_);
    job_ = std::move(job);
    activity_ = std::move(activity);
  }
  void set_activity(std::string activity, std::string problem = "") {
    std::lock_guard lock(mutex_);
    activity_ = std::move(activity);
    problem_ = std::move(problem);
  }
  std::optional<TakenJob> job() {
    std::lock_guard lock(mutex_);
    return job_;
  }
  void set_counts(const WorkerCounts& counts, int wedged) {
    std::lock_guard lock(mutex_);
    counts_ = counts;
    wedged_ = wedged;
  }
  json describe(const WorkerSettings& settings) {
    std::lock_guard lock(mutex_);
    const WorkerCounts& counts = counts_;
    const int wedged = wedged_;
    json doc = {{"name", settings.name},
                {"description", settings.description},
                {"queues", settings.queues},
                {"pid", getpid()},
                {"activity", activity_},
                {"judged", counts.judged},
                {"released", counts.released},
                {"wedged", wedged},
                {"at", utc_now_iso8601()}};
    if (job_) doc["job"] = job_->id;
    if (!problem_.empty()) doc["problem"] = problem_;
    return doc;
  }

 private:
  std::mutex mutex_;
  std::optional<TakenJob> job_;
  std::string activity_ = "starting";
  std::string problem_;
  WorkerCounts counts_;
  int wedged_ = 0;
};

}  // namespace

WorkerCounts run_worker(const RedisAddress& address, const TaskRegistry& registry, const WorkerSettings& settings,
                        const JudgeJob& judge, const std::atomic<bool>& stop,
                        const std::function<void(const std::string&)>& log) {
  Redis redis(address), beat_redis(address);  // hiredis connections are not shared between threads
  JobQueue queue(redis, settings.queue), beat_queue(beat_redis, settings.queue);
  WorkerState state;
  WorkerCounts counts;
  int wedged = 0;

  // The heartbeat: the worker's record (expiring after three missed beats) and the lease of its job.
  std::mutex beat_mutex;
  std::condition_variable beat_wake;
  bool beat_stop = false;
  std::thread beat([&] {
    bool reported = false;
    std::unique_lock lock(beat_mutex);
    while (!beat_stop) {
      lock.unlock();
      try {
        beat_queue.heartbeat(settings.name, state.describe(settings), 3 * settings.heartbeat_s);
        // A renewal refused while the job is still at hand: it was cancelled or taken over (not just finished).
        if (const auto job = state.job(); job && !beat_queue.renew(*job, settings.name))
          if (const auto now = state.job(); now && now->id == job->id)
            log(fmt::format("job {} is no longer this worker's (cancelled, or taken over after its lease)",
                            job->id));
        reported = false;
      } catch (const RedisError& e) {
        if (!reported) log(fmt::format("heartbeat: {}", e.what()));
        reported = true;
      }
      lock.lock();
      beat_wake.wait_for(lock, std::chrono::duration<double>(settings.heartbeat_s), [&] { return beat_stop; });
    }
  });

  // Redis calls that must happen (a stored verdict) are tried again until they do, or the worker stops.
  auto persist = [&](const char* what, const std::function<void()>& call) {
    for (double wait_s = 0.5;; wait_s = std::min(wait_s * 2, 10.0)) {
      try {
        call();
        return true;
      } catch (const RedisError& e) {
        log(fmt::format("{}: {}; trying again in {:.1f} s", what, e.what(), wait_s));
        if (stop) return false;
        std::this_thread::sleep_for(std::chrono::duration<double>(wait_s));
      }
    }
  };

  bool prepared = false;
  bool redis_down = false;
  log(fmt::format("worker {} ({}) takes jobs from {} at {}", settings.name, settings.description,
                  fmt::join(settings.queues, ", "), address.describe()));
  while (!stop) {
    std::optional<TakenJob> job;
    try {
      if (!prepared) queue.prepare(settings.queues);
      prepared = true;
      state.set_activity("waiting");
      job = queue.take(settings.queues, settings.name, settings.block_ms);
      if (redis_down) log("Redis answers again");
      redis_down = false;
    } catch (const RedisError& e) {
      if (!redis_down) log(fmt::format("{}; trying again", e.what()));
      redis_down = true;
      // A Redis that lost its data (no append-only file) lost the consumer groups too: make them again.
      if (std::string(e.what()).find("NOGROUP") != std::string::npos) prepared = false;
      std::this_thread::sleep_for(std::chrono::seconds(1));
      continue;
    } catch (const std::exception& e) {
      // A job whose stored request cannot be read: left to its lease, it runs out of attempts and goes to the
      // dead-letter stream.
      log(fmt::format("a job could not be taken: {}", e.what()));
      continue;
    }
    if (!job) continue;
    state.set(job, "judging");
    const Task* task = registry.find(job->request.task);
    const auto started = Clock::now();
    std::optional<Verdict> verdict;
    std::string problem;
    if (!task) {
      problem = fmt::format("this worker has no task '{}'", job->request.task);
    } else {
      try {
        verdict = judge(job->request, *task);
      } catch (const std::exception& e) {
        problem = fmt::format("the judge failed: {}", e.what());
      }
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
    // A stage that timed out or could not run may be the GPU's fault, not the solution's: ask the GPU.
    if (settings.gpu_problem && (!verdict || worth_a_health_check(*verdict))) {
      if (std::string gpu = settings.gpu_problem(); !gpu.empty()) problem = "the GPU does not answer: " + gpu;
    }
    const bool harness_error = verdict && verdict->overall() == OverallStatus::error;
    if (problem.empty() && harness_error && job->attempt < settings.queue.max_attempts)
      problem = "harness error: " + verdict->summary();
    if (!problem.empty()) {
      ++counts.released;
      log(fmt::format("job {} ({}) attempt {}: given back after {:.1f} s: {}", job->id, job->request.task,
                      job->attempt, seconds, problem));
      persist("giving a job back", [&] { queue.release(*job, settings.name, problem); });
      state.set(std::nullopt, "waiting");
      state.set_counts(counts, wedged);
      if (problem.starts_with("the GPU does not answer")) {
        // Nothing more is taken until the GPU answers again; every child of a job is already gone (each
        // stage's process group is killed at its time limit).
        ++wedged;
        state.set_counts(counts, wedged);
        state.set_activity("wedged", problem);
        while (!stop) {
          std::this_thread::sleep_for(std::chrono::duration<double>(settings.recheck_s));
          if (const std::string gpu = settings.gpu_problem(); gpu.empty()) break;
        }
        log("the GPU answers again: taking jobs");
      }
      continue;
    }
    bool stored = false;
    persist("storing a verdict",
            [&] { stored = queue.finish(*job, settings.name, to_json(*verdict), verdict->reusable()); });
    stored ? ++counts.judged : ++counts.duplicates;
    log(fmt::format("job {} ({}) attempt {}: {} in {:.1f} s{}", job->id, job->request.task, job->attempt,
                    verdict->summary(), seconds, stored ? "" : " (not stored: the job had ended meanwhile)"));
    state.set(std::nullopt, "waiting");
    state.set_counts(counts, wedged);
  }
  {
    std::lock_guard lock(beat_mutex);
    beat_stop = true;
  }
  beat_wake.notify_all();
  beat.join();
  log(fmt::format("worker {} stops: {} verdict(s) stored, {} job(s) given back", settings.name, counts.judged,
                  counts.released));
  return counts;
}

}  // namespace ptxbench::service
