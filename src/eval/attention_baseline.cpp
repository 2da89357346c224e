#include "eval/attention_baseline.h"

#include <fmt/format.h>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <mutex>

#include "runner/protocol.h"

namespace ptxbench {
namespace fs = std::filesystem;
using nlohmann::json;
namespace proto = protocol;

namespace {

std::string tail(const std::string& text, size_t max_chars = 400) {
  return text.size() <= max_chars ? text : "..." + text.substr(text.size() - max_chars);
}

// The script writes one JSON object on stdout. Its last non-empty line, in case anything printed before it.
std::optional<json> result_document(const std::string& out) {
  json doc = json::parse(out, nullptr, false);
  if (doc.is_discarded()) {
    const size_t end = out.find_last_not_of(" \t\r\n");
    if (end == std::string::npos) return std::nullopt;
    const size_t begin = out.rfind('\n', end);
    doc = json::parse(out.substr(begin == std::string::npos ? 0 : begin + 1, end + 1), nullptr, false);
  }
  if (doc.is_discarded() || !doc.is_object()) return std::nullopt;
  return doc;
}

double median(const json& series, const char* clock) {
  const json stats = series.is_object() ? series.value(clock, json()) : json();
  const json value = stats.is_object() ? stats.value(proto::kMedian, json()) : json();
  return value.is_number() ? value.get<double>() : 0.0;
}

// A result the time stage can use: a name and a positive event median.
bool usable(const json& doc) {
  return doc.value(proto::kName, json()).is_string() && median(doc, proto::kEventUs) > 0;
}

// A failure may be passing (memory another process held, a driver hiccup), so it is measured again, but only
// once: a task evaluated many times in a run (an agent's turns) must not pay for a broken setup every time.
constexpr int kAttemptsPerKey = 2;

struct Cache {
  std::mutex mutex;  // held while measuring too: two measurements at once would disturb each other's times
  struct Entry {
    AttentionBaseline last;
    int failures = 0;
  };
  std::map<std::string, Entry> entries;
};

Cache& cache() {
  static Cache instance;
  return instance;
}

}  // namespace

AttentionBaselineSetup attention_baseline_setup(const fs::path& root, const std::string& python) {
  AttentionBaselineSetup setup;
  setup.script = root / "baselines" / "attention_torch.py";
  if (!python.empty()) setup.python = python;
  return setup;
}

json attention_baseline_request(const Task& task, const AttentionBaselineRun& run) {
  json dims = json::object();
  for (const auto& [name, value] : task.main_shape.dims) dims[name] = value;
  const auto causal = task.parameters.find("causal");
  json request = {{"direction", task.family == "attention-backward" ? "backward" : "forward"},
                  {"dims", dims},
                  {"causal", causal != task.parameters.end() && causal->second},
                  // The runner calls solutions with scale = 1/sqrt(D) (src/runner/protocol.h).
                  {"scale", 1.0 / std::sqrt(static_cast<double>(task.main_shape["D"]))},
                  {"warmup", run.warmup},
                  {"repetitions", run.repetitions},
                  {"device", 0}};  // the runner's default device, under the same CUDA_VISIBLE_DEVICES
  if (run.l2_flush_bytes) request["l2_flush_bytes"] = *run.l2_flush_bytes;
  return request;
}

AttentionBaseline read_attention_baseline(const ProcessResult& process, const AttentionBaselineSetup& setup) {
  AttentionBaseline baseline{.wall_s = process.wall_s};
  if (process.timed_out) {
    baseline.problem =
        fmt::format("{} did not finish within {:.0f} s", setup.script.filename().string(), setup.limit_s);
    return baseline;
  }
  if (process.spawn_failed) {
    baseline.problem = fmt::format("could not start {} ({}); set PTXBENCH_PYTHON to a python with torch",
                                   setup.python, process.describe());
    return baseline;
  }
  const std::optional<json> doc = result_document(process.out);
  if (doc && doc->value("error", json()).is_string()) {
    baseline.problem = doc->at("error").get<std::string>();
  } else if (doc && process.ok() && usable(*doc)) {
    baseline.series = *doc;
  } else {
    baseline.problem = fmt::format("{} ended with {} without a usable result; last output: {}",
                                   setup.script.filename().string(), process.describe(), tail(process.err));
  }
  return baseline;
}

std::string attention_baseline_key(const Task& task, const std::string& gpu) {
  return fmt::format("{} | {} | {}", task.id, task.main_shape.to_string(), gpu);
}

AttentionBaseline measure_attention_baseline(const Task& task, const AttentionBaselineSetup& setup,
                                             const AttentionBaselineRun& run) {
  std::error_code ec;
  if (setup.script.empty() || !fs::is_regular_file(setup.script, ec))
    return {.problem =
                fmt::format("the script {} is not there",
                            setup.script.empty() ? "baselines/attention_torch.py" : setup.script.string())};
  const std::string key = attention_baseline_key(task, run.gpu);
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  Cache::Entry& entry = c.entries[key];
  if (entry.last.series || entry.failures >= kAttemptsPerKey) {
    AttentionBaseline earlier = entry.last;
    earlier.cached = true;
    earlier.wall_s = 0;
    return earlier;
  }
  std::map<std::string, std::string> environment;
  if (!run.visible_device.empty()) environment["CUDA_VISIBLE_DEVICES"] = run.visible_device;
  const ProcessResult process =
      run_process({.argv = {setup.python, setup.script.string()},
                   .time_limit = std::chrono::milliseconds(static_cast<long>(setup.limit_s * 1000)),
                   .env_overrides = environment,
                   .stdin_data = attention_baseline_request(task, run).dump()});
  entry.last = read_attention_baseline(process, setup);
  if (!entry.last.series) ++entry.failures;
  return entry.last;
}

void forget_attention_baselines() {
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  c.entries.clear();
}

std::optional<double> speedup_of(const json& baseline, const json& solution, const char* clock) {
  const double b = median(baseline, clock), s = median(solution, clock);
  if (b <= 0 || s <= 0) return std::nullopt;
  return b / s;
}

void add_attention_baseline(json& timing, const AttentionBaseline& baseline) {
  const std::string earlier = baseline.cached ? " (measured earlier in this run)" : "";
  if (!baseline.series) {
    timing[proto::kBaseline] = nullptr;
    timing[proto::kSpeedup] = nullptr;
    timing[proto::kSpeedupWall] = nullptr;
    timing[kBaselineNote] = "no attention baseline: " + baseline.problem + earlier;
    return;
  }
  json series = *baseline.series;
  series["cached"] = baseline.cached;
  const json solution = timing.value(proto::kSolution, json());
  const std::optional<double> event = speedup_of(series, solution, proto::kEventUs);
  const std::optional<double> wall = speedup_of(series, solution, proto::kWallUs);
  timing[proto::kSpeedup] = event ? json(*event) : json(nullptr);
  timing[proto::kSpeedupWall] = wall ? json(*wall) : json(nullptr);
  if (!event)
    timing[kBaselineNote] = "the solution's timing has no event median: no speedup";
  else if (baseline.cached)
    timing[kBaselineNote] = "baseline measured earlier in this run";
  timing[proto::kBaseline] = std::move(series);
}

}  // namespace ptxbench
