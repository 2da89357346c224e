#include "service/jobs.h"

#include <openssl/rand.h>

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <set>

#include "eval/evaluate.h"
#include "eval/gpu_stages.h"
#include "util/files.h"
#include "util/hash.h"
#include "util/json_file.h"

namespace ptxbench::service {

using nlohmann::json;

namespace {

constexpr const char* kCachePrefix = "ptxbench:cache:";
constexpr const char* kWorkerPrefix = "ptxbench:worker:";
constexpr const char* kWorkerSet = "ptxbench:workers";

// The Lua scripts: each state change of a job, atomic in Redis. The job's hash and streams are KEYS; the
// cache entry's name is made inside (it is read from the job), which a single Redis allows.

// KEYS: cache entry, job, stream. ARGV: id, request, now, queue, cache key, task.
constexpr const char* kSubmit = R"lua(
local existing = redis.call('GET', KEYS[1])
if existing then
  local state = redis.call('HGET', 'ptxbench:job:' .. existing, 'state')
  if state == 'queued' or state == 'running' or state == 'done' then return {existing, state, 0} end
end
redis.call('HSET', KEYS[2], 'id', ARGV[1], 'request', ARGV[2], 'state', 'queued', 'attempts', '0',
           'queue', ARGV[4], 'cache_key', ARGV[5], 'task', ARGV[6], 'created_at', ARGV[3], 'updated_at', ARGV[3])
redis.call('SET', KEYS[1], ARGV[1])
local entry = redis.call('XADD', KEYS[3], '*', 'job', ARGV[1])
redis.call('HSET', KEYS[2], 'entry', entry)
return {ARGV[1], 'queued', 1}
)lua";

// Forgets the cache entry that points at the job (its verdict must not answer again). A function the other
// scripts include. job: the job's key; id: its id.
constexpr const char* kForget = R"lua(
local function forget(job, id)
  local key = redis.call('HGET', job, 'cache_key')
  if key and redis.call('GET', 'ptxbench:cache:' .. key) == id then redis.call('DEL', 'ptxbench:cache:' .. key) end
end
)lua";

// KEYS: job, stream, dead-letter stream. ARGV: consumer, now, max attempts, entry, group, id.
constexpr const char* kTake = R"lua(
local state = redis.call('HGET', KEYS[1], 'state')
if not state then
  redis.call('XACK', KEYS[2], ARGV[5], ARGV[4])
  return {'missing'}
end
if state == 'done' or state == 'cancelled' or state == 'dead' then
  redis.call('XACK', KEYS[2], ARGV[5], ARGV[4])
  return {'ended', state}
end
local attempts = tonumber(redis.call('HGET', KEYS[1], 'attempts') or '0')
if attempts >= tonumber(ARGV[3]) then
  local why = 'no worker finished it in ' .. attempts .. ' attempt(s); the last was ' ..
              (redis.call('HGET', KEYS[1], 'worker') or '?')
  local released = redis.call('HGET', KEYS[1], 'released')
  if released then why = why .. ' (' .. released .. ')' end
  redis.call('HSET', KEYS[1], 'state', 'dead', 'error', why, 'updated_at', ARGV[2])
  forget(KEYS[1], ARGV[6])
  redis.call('XADD', KEYS[3], '*', 'job', ARGV[6], 'attempts', tostring(attempts), 'reason', why)
  redis.call('XACK', KEYS[2], ARGV[5], ARGV[4])
  return {'dead', why}
end
attempts = attempts + 1
redis.call('HSET', KEYS[1], 'state', 'running', 'attempts', tostring(attempts), 'worker', ARGV[1],
           'entry', ARGV[4], 'updated_at', ARGV[2], 'heartbeat_at', ARGV[2])
return {'run', tostring(attempts), redis.call('HGET', KEYS[1], 'request')}
)lua";

// KEYS: job, stream. ARGV: consumer, entry, group, now.
constexpr const char* kRenew = R"lua(
if redis.call('HGET', KEYS[1], 'worker') ~= ARGV[1] or redis.call('HGET', KEYS[1], 'state') ~= 'running' then
  return 0
end
local claimed = redis.call('XCLAIM', KEYS[2], ARGV[3], ARGV[1], 0, ARGV[2], 'JUSTID')
if #claimed == 0 then return 0 end
redis.call('HSET', KEYS[1], 'heartbeat_at', ARGV[4])
return 1
)lua";

// KEYS: job, stream, verdict stream. ARGV: consumer, now, verdict, entry, group, cacheable, id.
constexpr const char* kFinish = R"lua(
redis.call('XACK', KEYS[2], ARGV[5], ARGV[4])
local state = redis.call('HGET', KEYS[1], 'state')
if state ~= 'running' then
  redis.call('HINCRBY', KEYS[1], 'duplicates', 1)
  return 0
end
redis.call('HSET', KEYS[1], 'state', 'done', 'verdict', ARGV[3], 'worker', ARGV[1], 'updated_at', ARGV[2])
if ARGV[6] ~= '1' then forget(KEYS[1], ARGV[7]) end
redis.call('XADD', KEYS[3], 'MAXLEN', '~', '1000000', '*', 'job', ARGV[7], 'worker', ARGV[1])
return 1
)lua";

// KEYS: job, stream. ARGV: consumer, now, entry, group, why, id.
constexpr const char* kRelease = R"lua(
if redis.call('HGET', KEYS[1], 'worker') ~= ARGV[1] or redis.call('HGET', KEYS[1], 'state') ~= 'running' then
  return 0
end
redis.call('XACK', KEYS[2], ARGV[4], ARGV[3])
local entry = redis.call('XADD', KEYS[2], '*', 'job', ARGV[6])
redis.call('HSET', KEYS[1], 'state', 'queued', 'entry', entry, 'updated_at', ARGV[2], 'released', ARGV[5])
return 1
)lua";

// KEYS: job. ARGV: now, id.
constexpr const char* kCancel = R"lua(
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return '' end
if state == 'queued' or state == 'running' then
  redis.call('HSET', KEYS[1], 'state', 'cancelled', 'updated_at', ARGV[1])
  forget(KEYS[1], ARGV[2])
  return 'cancelled'
end
return state
)lua";

RedisValue eval(Redis& redis, const char* script, const std::vector<std::string>& keys,
                const std::vector<std::string>& args, bool with_forget = false) {
  std::vector<std::string> argv = {"EVAL", with_forget ? std::string(kForget) + script : std::string(script),
                                   std::to_string(keys.size())};
  argv.insert(argv.end(), keys.begin(), keys.end());
  argv.insert(argv.end(), args.begin(), args.end());
  return redis.command(argv);
}

[[noreturn]] void bad(const std::string& message) {
  throw RequestError(400, message);
}

std::vector<std::string> stage_list(const json& value, const char* field) {
  if (!value.is_array()) bad(fmt::format("\"{}\" must be a list of GPU stage names", field));
  std::set<std::string> stages;
  for (const auto& stage : value) {
    if (!stage.is_string()) bad(fmt::format("\"{}\" must be a list of GPU stage names", field));
    const std::string name = stage.get<std::string>();
    if (std::none_of(std::begin(kGpuStageNames), std::end(kGpuStageNames),
                     [&](const char* known) { return name == known; }))
      throw RequestError(422, fmt::format("\"{}\": unknown GPU stage '{}' (sanitize, correct, instructions, "
                                          "time)",
                                          field, name));
    stages.insert(name);
  }
  if (stages.contains("time") && !stages.contains("correct"))
    throw RequestError(422, fmt::format("\"{}\": the time stage needs the correct stage", field));
  return {stages.begin(), stages.end()};
}

JobRequest request_from(const json& doc) {
  if (!doc.is_object()) bad("the request must be a JSON object");
  static const std::set<std::string> known = {
      "task", "source", "name", "track", "stages", "cpu_only", "stage_time_limit_s", "profile"};
  for (const auto& [key, value] : doc.items())
    if (!known.contains(key))
      bad(fmt::format("unknown field \"{}\" (known: {})", key, fmt::join(known, ", ")));
  JobRequest request;
  auto text = [&](const char* field, std::string& out, bool required) {
    if (!doc.contains(field)) {
      if (required) bad(fmt::format("\"{}\" is missing", field));
      return;
    }
    if (!doc[field].is_string()) bad(fmt::format("\"{}\" must be a string", field));
    out = doc[field].get<std::string>();
  };
  text("task", request.task, true);
  text("source", request.source, true);
  text("name", request.name, false);
  text("track", request.track, false);
  if (!find_track(request.track))
    throw RequestError(422, fmt::format("\"track\": no track '{}' ({})", request.track, track_names()));
  if (request.source.size() > kMaxSolutionBytes)
    throw RequestError(413, fmt::format("\"source\" holds {} bytes, over the limit of {} bytes",
                                        request.source.size(), kMaxSolutionBytes));
  if (request.source.empty()) throw RequestError(422, "\"source\" is empty");
  if (request.name.empty() || request.name.size() > 1024 ||
      std::any_of(request.name.begin(), request.name.end(), [](char ch) { return ch >= 0 && ch < 0x20; }))
    bad("\"name\" must be a file name of 1 to 1024 characters without control characters");
  if (doc.contains("stages")) request.stages = stage_list(doc["stages"], "stages");
  for (const auto& [field, value] :
       {std::pair{"cpu_only", &request.cpu_only}, std::pair{"profile", &request.profile}}) {
    if (!doc.contains(field)) continue;
    if (!doc[field].is_boolean()) bad(fmt::format("\"{}\" must be true or false", field));
    *value = doc[field].get<bool>();
  }
  if (doc.contains("stage_time_limit_s")) {
    const json& limit = doc["stage_time_limit_s"];
    if (!limit.is_number() || !std::isfinite(limit.get<double>()) || limit.get<double>() < 0 ||
        limit.get<double>() > 3600)
      bad("\"stage_time_limit_s\" must be a number of seconds from 0 (the defaults) to 3600");
    request.stage_time_limit_s = limit.get<double>();
  }
  return request;
}

}  // namespace

JobRequest parse_job_request(const std::string& body, const TaskRegistry& registry) {
  json doc;
  try {
    doc = parse_json_text(body, "request body");
  } catch (const ConfigError& e) {
    bad(e.what());
  }
  JobRequest request = request_from(doc);
  const Task* task = registry.find(request.task);
  if (!task)
    throw RequestError(422,
                       fmt::format("no task '{}' on this service (GET /v1/tasks lists them)", request.task));
  if (const Track& track = *find_track(request.track); !accepts(*task, track))
    throw RequestError(422, not_accepted(*task, track));
  return request;
}

json to_json(const JobRequest& r) {
  return {{"task", r.task},
          {"source", r.source},
          {"name", r.name},
          {"track", r.track},
          {"stages", r.stages},
          {"cpu_only", r.cpu_only},
          {"stage_time_limit_s", r.stage_time_limit_s},
          {"profile", r.profile}};
}

JobRequest job_request_from_json(const json& doc) {
  return request_from(doc);
}

std::string judge_version() {
  return fmt::format("ptxbench {}", PTXBENCH_VERSION);
}

std::string cache_key(const JobRequest& r, const std::string& task_digest, const std::string& version) {
  json key = {{"source", sha256_hex(r.source)},
              {"task", r.task},
              {"task_file", task_digest},
              {"stages", r.stages},
              {"cpu_only", r.cpu_only},
              {"limit", r.stage_time_limit_s},
              {"judge", version}};
  // A CUDA job's key is what it was before tracks and profiles, so that its cached verdicts still answer it.
  if (r.track != cuda_track().name()) key["track"] = r.track;
  if (r.profile) key["profile"] = true;
  return sha256_hex(key.dump());
}

std::string queue_of(const JobRequest& request, const Task& task) {
  return request.cpu_only || task.mode == TaskMode::static_only ? "cpu" : task.arch;
}

std::string new_job_id() {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof bytes) != 1) throw std::runtime_error("RAND_bytes failed");
  std::string id;
  for (unsigned char b : bytes) id += fmt::format("{:02x}", b);
  return id;
}

bool valid_job_id(const std::string& id) {
  return id.size() == 32 && id.find_first_not_of("0123456789abcdef") == std::string::npos;
}

std::string to_string(JobState state) {
  switch (state) {
    case JobState::queued:
      return "queued";
    case JobState::running:
      return "running";
    case JobState::done:
      return "done";
    case JobState::cancelled:
      return "cancelled";
    case JobState::dead:
      return "dead";
  }
  return "dead";
}

std::optional<JobState> job_state_from_string(const std::string& text) {
  for (auto s : {JobState::queued, JobState::running, JobState::done, JobState::cancelled, JobState::dead})
    if (to_string(s) == text) return s;
  return std::nullopt;
}

json JobStatus::to_json(bool with_verdict) const {
  json doc = {{"id", id},
              {"state", service::to_string(state)},
              {"task", task},
              {"attempts", attempts},
              {"worker", worker},
              {"created_at", created_at},
              {"updated_at", updated_at}};
  if (!error.empty()) doc["error"] = error;
  if (duplicates) doc["duplicates"] = duplicates;
  if (with_verdict && verdict) doc["verdict"] = *verdict;
  return doc;
}

std::string stream_key(const std::string& queue) {
  return "ptxbench:jobs:" + queue;
}

std::string job_key(const std::string& id) {
  return "ptxbench:job:" + id;
}

JobQueue::JobQueue(Redis& redis, QueueSettings settings) : redis_(redis), settings_(settings) {}

Submitted JobQueue::submit(const JobRequest& request, const Task& task) {
  const std::string key = cache_key(request, sha256_hex(read_file(task.file)), judge_version());
  const std::string id = new_job_id();
  const RedisValue r =
      eval(redis_, kSubmit, {kCachePrefix + key, job_key(id), stream_key(queue_of(request, task))},
           {id, to_json(request).dump(), utc_now_iso8601(), queue_of(request, task), key, request.task});
  return {.id = r.items.at(0).text,
          .state = job_state_from_string(r.items.at(1).text).value_or(JobState::queued),
          .created = r.items.at(2).integer == 1};
}

std::optional<JobStatus> JobQueue::status(const std::string& id, bool with_verdict) {
  const RedisValue fields = with_verdict
                                ? redis_.command({"HGETALL", job_key(id)})
                                : redis_.command({"HMGET", job_key(id), "state", "attempts", "task", "worker",
                                                  "error", "created_at", "updated_at", "duplicates"});
  auto field = [&](const char* name, int index) {
    return with_verdict ? fields.field(name) : fields.items.at(index).text;
  };
  const std::string state = field("state", 0);
  if (state.empty()) return std::nullopt;
  JobStatus s{.id = id,
              .state = job_state_from_string(state).value_or(JobState::dead),
              .attempts = std::atoi(field("attempts", 1).c_str()),
              .task = field("task", 2),
              .worker = field("worker", 3),
              .error = field("error", 4),
              .created_at = field("created_at", 5),
              .updated_at = field("updated_at", 6),
              .duplicates = std::atoi(field("duplicates", 7).c_str())};
  if (with_verdict && !fields.field("verdict").empty()) s.verdict = json::parse(fields.field("verdict"));
  return s;
}

std::optional<JobState> JobQueue::cancel(const std::string& id) {
  const RedisValue r = eval(redis_, kCancel, {job_key(id)}, {utc_now_iso8601(), id}, true);
  if (r.text.empty()) return std::nullopt;
  return job_state_from_string(r.text);
}

void JobQueue::prepare(const std::vector<std::string>& queues) {
  for (const auto& queue : queues) {
    try {
      redis_.command({"XGROUP", "CREATE", stream_key(queue), kGroup, "0", "MKSTREAM"});
    } catch (const RedisError& e) {
      if (std::string(e.what()).find("BUSYGROUP") == std::string::npos) throw;  // it exists: fine
    }
  }
}

std::optional<TakenJob> JobQueue::take(const std::vector<std::string>& queues, const std::string& consumer,
                                       int block_ms) {
  struct Entry {
    std::string queue, id, job;
  };
  std::optional<Entry> entry;
  const std::string lease_ms = std::to_string(static_cast<int64_t>(settings_.lease_s * 1000));
  for (const auto& queue : queues) {  // first, what a lost worker left
    const RedisValue r =
        redis_.command({"XAUTOCLAIM", stream_key(queue), kGroup, consumer, lease_ms, "0-0", "COUNT", "1"});
    if (r.items.size() >= 2)
      for (const auto& e : r.items[1].items)
        if (e.items.size() == 2 && !entry) entry = Entry{queue, e.items[0].text, e.items[1].field("job")};
    if (entry) break;
  }
  if (!entry) {
    std::vector<std::string> argv = {
        "XREADGROUP", "GROUP", kGroup, consumer, "COUNT", "1", "BLOCK", std::to_string(block_ms), "STREAMS"};
    for (const auto& queue : queues) argv.push_back(stream_key(queue));
    for (size_t i = 0; i < queues.size(); ++i) argv.push_back(">");
    const RedisValue r = redis_.command(argv);
    for (const auto& stream : r.items) {
      if (stream.items.size() != 2 || stream.items[1].items.empty()) continue;
      const RedisValue& e = stream.items[1].items.front();
      const std::string queue = stream.items[0].text.substr(std::string("ptxbench:jobs:").size());
      entry = Entry{queue, e.items.at(0).text, e.items.at(1).field("job")};
      break;
    }
  }
  if (!entry) return std::nullopt;
  if (!valid_job_id(entry->job)) {  // not ours: put it out of the way
    redis_.command({"XACK", stream_key(entry->queue), kGroup, entry->id});
    return std::nullopt;
  }
  const RedisValue r = eval(
      redis_, kTake, {job_key(entry->job), stream_key(entry->queue), kDeadStream},
      {consumer, utc_now_iso8601(), std::to_string(settings_.max_attempts), entry->id, kGroup, entry->job},
      true);
  if (r.items.empty() || r.items[0].text != "run") return std::nullopt;
  return TakenJob{.id = entry->job,
                  .queue = entry->queue,
                  .entry = entry->id,
                  .attempt = std::stoi(r.items.at(1).text),
                  .request = job_request_from_json(json::parse(r.items.at(2).text))};
}

bool JobQueue::renew(const TakenJob& job, const std::string& consumer) {
  return eval(redis_, kRenew, {job_key(job.id), stream_key(job.queue)},
              {consumer, job.entry, kGroup, utc_now_iso8601()})
             .integer == 1;
}

bool JobQueue::finish(const TakenJob& job, const std::string& consumer, const json& verdict, bool cacheable) {
  return eval(redis_, kFinish, {job_key(job.id), stream_key(job.queue), kVerdictStream},
              {consumer, utc_now_iso8601(), verdict.dump(), job.entry, kGroup, cacheable ? "1" : "0", job.id},
              true)
             .integer == 1;
}

void JobQueue::release(const TakenJob& job, const std::string& consumer, const std::string& why) {
  eval(redis_, kRelease, {job_key(job.id), stream_key(job.queue)},
       {consumer, utc_now_iso8601(), job.entry, kGroup, why, job.id});
}

void JobQueue::heartbeat(const std::string& consumer, const json& state, double ttl_s) {
  redis_.command({"SET", kWorkerPrefix + consumer, state.dump(), "PX",
                  std::to_string(static_cast<int64_t>(ttl_s * 1000))});
  redis_.command({"SADD", kWorkerSet, consumer});
}

std::vector<json> JobQueue::workers() {
  std::vector<json> out;
  for (const auto& name : redis_.command({"SMEMBERS", kWorkerSet}).items) {
    const RedisValue beat = redis_.command({"GET", kWorkerPrefix + name.text});
    if (beat.nil()) {
      redis_.command({"SREM", kWorkerSet, name.text});  // gone quiet: its heartbeat expired
      continue;
    }
    out.push_back(json::parse(beat.text));
  }
  return out;
}

}  // namespace ptxbench::service
