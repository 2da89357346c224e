// The evaluator interface (eval/evaluator.h) over the evaluation service: `ptxbench run --evaluator URL`.
// The compile and static stages can be judged here first (`precheck`, when this host has nvcc): a
// submission they reject gets its verdict at once, without the service; one they pass is sent to the
// service, whose workers judge it in full. A service that cannot be reached for `patience_s` (restarting,
// its host down), a job that no worker takes for `queue_wait_s` (none runs for its architecture), a job that
// ends without a verdict, or a verdict for another source, is the judge's failure (an exception), never the
// submission's.
#pragma once

#include <memory>
#include <string>

#include "eval/evaluator.h"

namespace ptxbench::service {

struct RemoteSettings {
  std::string url;                  // http://host:port
  std::string token;                // the service's bearer token
  std::vector<std::string> stages;  // the GPU stages to run; empty: all
  bool cpu_only = false;
  double stage_time_limit_s = 0;
  double patience_s = 600;     // how long the service may stay unreachable before an evaluation fails
  double poll_s = 30;          // each verdict request waits this long on the service
  double queue_wait_s = 1800;  // how long a job may stay queued, no worker taking it, before it fails
  bool profile = false;        // the job's instruction stage keeps the profile's summary (jobs.h)
};

class RemoteEvaluator : public Evaluator {
 public:
  // `precheck`: judges the compile and static stages here first; null: everything is sent.
  RemoteEvaluator(RemoteSettings settings, std::unique_ptr<Evaluator> precheck = nullptr);
  Verdict evaluate(const Submission& submission, const Task& task) override;

 private:
  RemoteSettings settings_;
  std::unique_ptr<Evaluator> precheck_;
};

}  // namespace ptxbench::service
