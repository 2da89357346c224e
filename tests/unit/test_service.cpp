// The evaluation service's pure parts: a submission's parsing and errors, the verdict cache's key, the queue
// a job goes to, Redis addresses. The service under faults, with Redis, is tests/service/faults.py.
#include <gtest/gtest.h>
#include <httplib.h>

#include <fmt/format.h>
#include <thread>

#include "eval/evaluate.h"
#include "service/jobs.h"
#include "service/redis.h"
#include "service/remote_evaluator.h"
#include "util/hash.h"

using namespace ptxbench;
using namespace ptxbench::service;

namespace {

const TaskRegistry& registry() {
  static const TaskRegistry r = TaskRegistry::load(std::filesystem::path(PTXBENCH_SOURCE_DIR) / "tasks");
  return r;
}

constexpr const char* kTask = "gemm-bf16-n4096-k4096-sm90a";

int status_of(const std::string& body) {
  try {
    parse_job_request(body, registry());
  } catch (const RequestError& e) {
    return e.status;
  }
  return 0;
}

}  // namespace

TEST(ServiceRequest, AGoodOneKeepsItsFields) {
  const JobRequest r = parse_job_request(
      R"({"task": "gemm-bf16-n4096-k4096-sm90a", "source": "x", "name": "a.cu",
          "stages": ["time", "correct", "correct"], "cpu_only": false, "stage_time_limit_s": 30})",
      registry());
  EXPECT_EQ(r.task, kTask);
  EXPECT_EQ(r.name, "a.cu");
  EXPECT_EQ(r.stages, (std::vector<std::string>{"correct", "time"}));  // sorted, once each
  EXPECT_EQ(r.stage_time_limit_s, 30);
  EXPECT_EQ(job_request_from_json(to_json(r)).stages, r.stages);
  EXPECT_FALSE(r.profile);
  const JobRequest profiled = parse_job_request(
      R"({"task": "gemm-bf16-n4096-k4096-sm90a", "source": "x", "profile": true})", registry());
  EXPECT_TRUE(profiled.profile);
  EXPECT_TRUE(job_request_from_json(to_json(profiled)).profile);
}

TEST(ServiceRequest, BadOnesAreRefusedWithTheirStatus) {
  EXPECT_EQ(status_of("{"), 400);
  EXPECT_EQ(status_of("[]"), 400);
  EXPECT_EQ(status_of(R"({"task": "a", "task": "b", "source": "x"})"), 400);
  // A number no double holds, bytes that are not UTF-8, a lone surrogate: a 400 that says why, never a 500.
  EXPECT_EQ(
      status_of(R"({"task": "gemm-bf16-n4096-k4096-sm90a", "source": "x", "stage_time_limit_s": 1e400})"),
      400);
  EXPECT_EQ(status_of("{\"task\": \"gemm-bf16-n4096-k4096-sm90a\", \"source\": \"\xff\xfe\"}"), 400);
  EXPECT_EQ(status_of(R"({"task": "gemm-bf16-n4096-k4096-sm90a", "source": "\udcff"})"), 400);
  EXPECT_EQ(status_of(R"({"task": "gemm-bf16-n4096-k4096-sm90a"})"), 400);
  EXPECT_EQ(status_of(R"({"task": "gemm-bf16-n4096-k4096-sm90a", "source": "x", "extra": 1})"), 400);
  EXPECT_EQ(status_of(R"({"task": "gemm-bf16-n4096-k4096-sm90a", "source": 5})"), 400);
  EXPECT_EQ(status_of(R"({"task": "gemm-bf16-n4096-k4096-sm90a", "source": "x", "name": "a\nb"})"), 400);
  EXPECT_EQ(status_of(R"({"task": "gemm-bf16-n4096-k4096-sm90a", "source": "x", "name": ""})"), 400);
  EXPECT_EQ(status_of(R"({"task": "gemm-bf16-n4096-k4096-sm90a", "source": "x", "stage_time_limit_s": -1})"),
            400);
  EXPECT_EQ(status_of(R"({"task": "no-such-task", "source": "x"})"), 422);
  EXPECT_EQ(status_of(R"({"task": "gemm-bf16-n4096-k4096-sm90a", "source": ""})"), 422);
  EXPECT_EQ(status_of(R"({"task": "gemm-bf16-n4096-k4096-sm90a", "source": "x", "stages": ["ncu"]})"), 422);
  EXPECT_EQ(status_of(R"({"task": "gemm-bf16-n4096-k4096-sm90a", "source": "x", "stages": ["time"]})"), 422);
  const std::string big = R"({"task": "gemm-bf16-n4096-k4096-sm90a", "source": ")" +
                          std::string(kMaxSolutionBytes + 1, 'x') + "\"}";
  EXPECT_EQ(status_of(big), 413);
  try {
    parse_job_request(R"({"task": "gemm-bf16-n4096-k4096-sm90a", "source": "x", "cpu_only": 1})", registry());
    FAIL();
  } catch (const RequestError& e) {
    EXPECT_NE(std::string(e.what()).find("cpu_only"), std::string::npos) << e.what();
  }
  EXPECT_EQ(status_of(R"({"task": "gemm-bf16-n4096-k4096-sm90a", "source": "x", "profile": "yes"})"), 400);
}

TEST(ServiceRequest, TheCacheKeyFollowsWhatChangesAVerdict) {
  JobRequest a{.task = kTask, .source = "x"};
  JobRequest renamed = a;
  renamed.name = "other.cu";
  EXPECT_EQ(cache_key(a, "t1", "v1"), cache_key(renamed, "t1", "v1"));  // the name is for people
  JobRequest b = a;
  b.source = "y";
  JobRequest c = a;
  c.cpu_only = true;
  JobRequest d = a;
  d.stages = {"correct"};
  JobRequest e = a;
  e.task = "gemm-bf16-n7168-k5120-sm90a";
  JobRequest f = a;
  f.profile = true;  // its verdict holds the profile's summary
  for (const JobRequest& other : {b, c, d, e, f})
    EXPECT_NE(cache_key(a, "t1", "v1"), cache_key(other, "t1", "v1"));
  EXPECT_NE(cache_key(a, "t1", "v1"), cache_key(a, "t1", "v2"));  // another judge
  EXPECT_NE(cache_key(a, "t1", "v1"), cache_key(a, "t2", "v1"));  // the task file changed (a tolerance)
}

// A job says its track (default cuda); the task must accept it. A CUDA job keeps the cache key it had before
// tracks, so that verdicts cached then still answer it; another track's job has a key of its own.
TEST(ServiceRequest, TheTrackIsCheckedAndKeyed) {
  const JobRequest cuda =
      parse_job_request(R"({"task": "gemm-bf16-n4096-k4096-sm90a", "source": "x"})", registry());
  EXPECT_EQ(cuda.track, "cuda");
  const JobRequest triton = parse_job_request(
      R"({"task": "gemm-bf16-n4096-k4096-sm90a", "source": "x", "track": "triton"})", registry());
  EXPECT_EQ(triton.track, "triton");
  EXPECT_EQ(job_request_from_json(to_json(triton)).track, "triton");
  EXPECT_EQ(status_of(R"({"task": "gemm-bf16-n4096-k4096-sm90a", "source": "x", "track": "cutile"})"), 422);
  EXPECT_EQ(status_of(R"({"task": "gemm-bf16-n4096-k4096-sm90a", "source": "x", "track": 1})"), 400);
  try {
    parse_job_request(R"({"task": "gemm-bf16-n4096-k4096-sm100a", "source": "x", "track": "triton"})",
                      registry());
    FAIL() << "a Blackwell task accepts CUDA alone";
  } catch (const RequestError& e) {
    EXPECT_EQ(e.status, 422);
    EXPECT_NE(std::string(e.what()).find("does not accept the triton track"), std::string::npos) << e.what();
  }
  const nlohmann::json before_tracks = {
      {"source", sha256_hex("x")}, {"task", kTask}, {"task_file", "t1"}, {"stages", nlohmann::json::array()},
      {"cpu_only", false},         {"limit", 0.0},  {"judge", "v1"}};
  EXPECT_EQ(cache_key(cuda, "t1", "v1"), sha256_hex(before_tracks.dump()));
  EXPECT_NE(cache_key(triton, "t1", "v1"), cache_key(cuda, "t1", "v1"));
}

TEST(ServiceRequest, CpuJobsAndStaticTasksGoToTheCpuQueue) {
  const Task& hopper = *registry().find(kTask);
  EXPECT_EQ(queue_of({.task = kTask, .source = "x"}, hopper), "sm_90a");
  EXPECT_EQ(queue_of({.task = kTask, .source = "x", .cpu_only = true}, hopper), "cpu");
  const Task& blackwell = *registry().find("gemm-bf16-n4096-k4096-sm100a");
  EXPECT_EQ(queue_of({.task = blackwell.id, .source = "x"}, blackwell), "cpu");
}

TEST(ServiceJobs, IdsAreRandomHex) {
  const std::string id = new_job_id();
  EXPECT_TRUE(valid_job_id(id)) << id;
  EXPECT_NE(id, new_job_id());
  EXPECT_FALSE(valid_job_id("../../etc"));
  EXPECT_EQ(job_state_from_string("dead"), JobState::dead);
  EXPECT_FALSE(job_state_from_string("lost"));
}

TEST(RedisAddress, ParsesWhatUsersWrite) {
  EXPECT_EQ(parse_redis_address("redis://10.0.0.5:7000").describe(), "10.0.0.5:7000");
  EXPECT_EQ(parse_redis_address("localhost").port, 6379);
  const RedisAddress with_password = parse_redis_address("redis://:s3cret@db:6380/");
  EXPECT_EQ(with_password.password, "s3cret");
  EXPECT_EQ(with_password.describe(), "db:6380");  // never the password
  for (const char* bad : {"redis://", "host:port", "host:0", "host:70000", "redis://a/b"})
    EXPECT_THROW(parse_redis_address(bad), std::invalid_argument) << bad;
}

TEST(RedisConnection, AnUnreachableRedisIsAClearError) {
  Redis redis(parse_redis_address("127.0.0.1:1"), 2);
  try {
    redis.command({"PING"});
    FAIL();
  } catch (const RedisError& e) {
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:1 cannot be reached"), std::string::npos) << e.what();
  }
}

// A run with --feedback profile and --evaluator asks the service's workers for the profile: the job says so.
TEST(RemoteEvaluator, TheJobAsksForTheProfileWhenTheRunDoes) {
  const Task& task = *registry().find(kTask);
  Verdict answered;
  answered.task_id = task.id;
  answered.submission_hash = sha256_hex("x");
  std::vector<nlohmann::json> bodies;
  httplib::Server server;
  server.Post("/v1/jobs", [&](const httplib::Request& request, httplib::Response& response) {
    bodies.push_back(nlohmann::json::parse(request.body));
    response.set_content(
        nlohmann::json{{"id", "j1"}, {"state", "done"}, {"verdict", to_json(answered)}}.dump(),
        "application/json");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread listening([&] { server.listen_after_bind(); });
  for (const bool profile : {true, false}) {
    RemoteEvaluator evaluator(
        {.url = fmt::format("http://127.0.0.1:{}", port), .token = "t", .profile = profile});
    EXPECT_EQ(evaluator.evaluate({.source = "x", .name = "a.cu"}, task).submission_hash, sha256_hex("x"));
  }
  server.stop();
  listening.join();
  ASSERT_EQ(bodies.size(), 2u);
  EXPECT_EQ(bodies[0].value("profile", false), true);
  EXPECT_FALSE(bodies[1].contains("profile")) << "a service from before profiles takes the job as it did";
}
