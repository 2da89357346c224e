#include "service/remote_evaluator.h"

#include <httplib.h>

#include <fmt/format.h>
#include <algorithm>
#include <chrono>
#include <thread>

#include "util/hash.h"

namespace ptxbench::service {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

struct Answer {
  int status = 0;  // 0: no answer (the service could not be reached)
  json body;
  std::string problem;  // why there was no usable answer
};

// One request; a connection failure or an answer that is not JSON is no answer.
Answer ask(const RemoteSettings& settings, const std::string& method, const std::string& path,
           const std::string& body = "") {
  httplib::Client client(settings.url);
  client.set_bearer_token_auth(settings.token);
  client.set_connection_timeout(10);
  client.set_read_timeout(static_cast<time_t>(settings.poll_s) + 30);
  client.set_write_timeout(60);
  const httplib::Result result =
      method == "POST" ? client.Post(path, body, "application/json") : client.Get(path);
  if (!result) return {.problem = fmt::format("{} {}: {}", method, path, httplib::to_string(result.error()))};
  Answer answer{.status = result->status};
  try {
    answer.body = json::parse(result->body);
  } catch (const json::exception&) {
    answer.problem = fmt::format("{} {}: HTTP {} with a body that is not JSON", method, path, result->status);
    answer.status = 0;
  }
  return answer;
}

std::string error_of(const Answer& answer) {
  return answer.body.is_object() && answer.body.contains("error") ? answer.body["error"].dump()
                                                                  : answer.body.dump();
}

}  // namespace

RemoteEvaluator::RemoteEvaluator(RemoteSettings settings, std::unique_ptr<Evaluator> precheck)
    : settings_(std::move(settings)), precheck_(std::move(precheck)) {}

Verdict RemoteEvaluator::evaluate(const Submission& submission, const Task& task) {
  if (precheck_) {
    Verdict local = precheck_->evaluate(submission, task);
    for (const char* stage : {"compile", "static"})
      if (const StageResult* s = local.stage(stage); !s || s->status != StageStatus::passed) return local;
  }
  json request = {{"task", task.id}, {"source", submission.source}, {"name", submission.name}};
  // CUDA is every service's default: a service from before tracks takes the request as it always did.
  if (submission.track != &cuda_track()) request["track"] = submission.track->name();
  if (!settings_.stages.empty()) request["stages"] = settings_.stages;
  if (settings_.cpu_only) request["cpu_only"] = true;
  if (settings_.profile) request["profile"] = true;
  if (settings_.stage_time_limit_s > 0) request["stage_time_limit_s"] = settings_.stage_time_limit_s;
  const std::string body = request.dump();

  // Every call is tried again while the service cannot be reached or is briefly unable (503), up to the
  // patience; any other refusal is final.
  auto call = [&](const std::string& method, const std::string& path, const std::string& payload) {
    const auto give_up = Clock::now() + std::chrono::duration<double>(settings_.patience_s);
    for (double pause_s = 0.5;; pause_s = std::min(pause_s * 2, 10.0)) {
      Answer answer = ask(settings_, method, path, payload);
      if (answer.status != 0 && answer.status != 503 && answer.status != 502) return answer;
      if (Clock::now() >= give_up)
        throw std::runtime_error(fmt::format("the evaluation service at {} did not answer for {:.0f} s: {}",
                                             settings_.url, settings_.patience_s,
                                             answer.status ? error_of(answer) : answer.problem));
      std::this_thread::sleep_for(std::chrono::duration<double>(pause_s));
    }
  };

  Answer submitted = call("POST", "/v1/jobs", body);
  if (submitted.status != 200 && submitted.status != 202)
    throw std::runtime_error(fmt::format("the evaluation service at {} refused the submission (HTTP {}): {}",
                                         settings_.url, submitted.status, error_of(submitted)));
  const std::string id = submitted.body.value("id", std::string());
  Answer answer = submitted;
  // Since when the job has waited for a worker (queued: no worker holds it).
  bool queued = false;
  Clock::time_point queued_since = Clock::now();
  while (answer.status != 200 || !answer.body.contains("verdict")) {
    const bool now_queued = answer.body.value("state", std::string()) == "queued";
    if (now_queued && !queued) queued_since = Clock::now();
    queued = now_queued;
    if (queued && Clock::now() - queued_since > std::chrono::duration<double>(settings_.queue_wait_s)) {
      throw std::runtime_error(fmt::format(
          "no worker of the evaluation service at {} took job {} in {:.0f} s: is a `ptxbench worker` running "
          "for the task's architecture ({})? GET /v1/workers lists those alive",
          settings_.url, id, settings_.queue_wait_s, task.arch));
    }
    answer = call("GET",
                  fmt::format("/v1/jobs/{}/verdict?wait={:g}", id,
                              std::min(settings_.poll_s, std::max(1.0, settings_.queue_wait_s / 2))),
                  "");
    if (answer.status != 200 && answer.status != 202)
      throw std::runtime_error(
          fmt::format("the evaluation service at {} has no verdict for job {} (HTTP {}): {}", settings_.url,
                      id, answer.status, error_of(answer)));
  }
  Verdict verdict;
  try {
    verdict = verdict_from_json(answer.body["verdict"]);
  } catch (const std::exception& e) {
    throw std::runtime_error(
        fmt::format("the evaluation service's verdict for job {} cannot be read: {}", id, e.what()));
  }
  // The verdict must be for what was sent.
  if (verdict.submission_hash != sha256_hex(submission.source) || verdict.task_id != task.id ||
      verdict.track != submission.track->name())
    throw std::runtime_error(
        fmt::format("the evaluation service answered job {} with a verdict for another "
                    "submission, task or track",
                    id));
  verdict.source_name = submission.name;
  return verdict;
}

}  // namespace ptxbench::service
