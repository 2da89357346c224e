#include "eval/gpu_monitor.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>

#include "runner/protocol.h"
#include "util/text.h"

namespace ptxbench {
namespace {

using json = nlohmann::json;

// NVML's clock event reasons that mean the GPU held itself back, and their names.
constexpr std::pair<uint64_t, const char*> kSlowdowns[] = {{0x4, "sw_power_cap"},
                                                           {0x8, "hw_slowdown"},
                                                           {0x20, "sw_thermal_slowdown"},
                                                           {0x40, "hw_thermal_slowdown"},
                                                           {0x80, "hw_power_brake_slowdown"}};

// "2026/12/06 08:40:01.123", this host's local time, as seconds since the epoch; NaN if it does not parse.
double local_time_s(const std::string& text) {
  std::tm tm{};
  char fraction[16] = {};
  const int fields = std::sscanf(text.c_str(), "%d/%d/%d %d:%d:%d.%15[0-9]", &tm.tm_year, &tm.tm_mon,
                                 &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, fraction);
  if (fields < 6) return std::numeric_limits<double>::quiet_NaN();
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  tm.tm_isdst = -1;
  const std::time_t seconds = std::mktime(&tm);
  if (seconds == static_cast<std::time_t>(-1)) return std::numeric_limits<double>::quiet_NaN();
  return static_cast<double>(seconds) + (fields == 7 ? std::stod(std::string("0.") + fraction) : 0.0);
}

double number_or_nan(const std::string& text) {
  try {
    size_t used = 0;
    const double value = std::stod(text, &used);
    return used == text.size() ? value : std::numeric_limits<double>::quiet_NaN();
  } catch (const std::exception&) {
    return std::numeric_limits<double>::quiet_NaN();
  }
}

// A PCI bus id as "domain:bus:device.function" in fixed-width lower-case hex: nvidia-smi writes the domain
// with 8 digits, CUDA with 4.
std::string canonical_bus_id(const std::string& text) {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  if (std::sscanf(text.c_str(), "%x:%x:%x.%x", &domain, &bus, &device, &function) != 4) return text;
  char out[32];
  std::snprintf(out, sizeof(out), "%08x:%02x:%02x.%x", domain, bus, device, function);
  return out;
}

// median, min and max of `values`, null without any. (report/metrics.h has a fuller spread, but the readers
// of eval/ are built without report/: the fuzz harnesses link them alone.)
json median_min_max(std::vector<double> values) {
  if (values.empty()) return json();
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  const double median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  return {{"median", median}, {"min", values.front()}, {"max", values.back()}};
}

}  // namespace

std::vector<GpuSample> parse_gpu_samples(const std::string& csv) {
  std::vector<GpuSample> samples;
  for (const std::string& line : split_lines(csv)) {
    std::vector<std::string> fields = split(line, ',');
    if (fields.size() != 6) continue;
    for (std::string& field : fields) field = trim(field);
    GpuSample sample;
    sample.unix_s = local_time_s(fields[0]);
    sample.bus_id = canonical_bus_id(fields[1]);
    sample.power_w = number_or_nan(fields[2]);
    sample.sm_clock_mhz = number_or_nan(fields[3]);
    try {
      size_t used = 0;
      sample.reasons = std::stoull(fields[4], &used, 16);
      if (used != fields[4].size()) continue;
    } catch (const std::exception&) {
      continue;
    }
    sample.temperature_c = number_or_nan(fields[5]);
    if (std::isnan(sample.unix_s)) continue;
    samples.push_back(sample);
  }
  return samples;
}

std::vector<std::string> slowdown_reasons(uint64_t mask) {
  std::vector<std::string> names;
  for (const auto& [bit, name] : kSlowdowns)
    if (mask & bit) names.emplace_back(name);
  return names;
}

json gpu_during(const std::vector<GpuSample>& samples, const std::string& bus_id, double begin_unix_s,
                double end_unix_s) {
  const std::string gpu = canonical_bus_id(bus_id);
  std::vector<double> power, clock;
  double temperature = -std::numeric_limits<double>::infinity();
  uint64_t reasons = 0;
  int count = 0;
  for (const GpuSample& sample : samples) {
    if (sample.bus_id != gpu || sample.unix_s < begin_unix_s || sample.unix_s > end_unix_s) continue;
    ++count;
    if (!std::isnan(sample.power_w)) power.push_back(sample.power_w);
    if (!std::isnan(sample.sm_clock_mhz)) clock.push_back(sample.sm_clock_mhz);
    if (!std::isnan(sample.temperature_c)) temperature = std::max(temperature, sample.temperature_c);
    reasons |= sample.reasons;
  }
  if (count == 0) return json();
  json during = {{"samples", count}, {"slowdown_reasons", slowdown_reasons(reasons)}};
  during["power_w"] = median_min_max(power);
  during["sm_clock_mhz"] = median_min_max(clock);
  during["temperature_c_max"] = std::isinf(temperature) ? json() : json(temperature);
  return during;
}

void note_gpu_during(json& time_part, const std::vector<GpuSample>& samples) {
  namespace proto = protocol;
  const json window = time_part.value(proto::kTiming, json::object()).value(proto::kTimedWindowUnixS, json());
  const json bus_id = time_part.value(proto::kDeviceInfo, json::object()).value(proto::kPciBusId, json());
  if (!window.is_array() || window.size() != 2 || !window[0].is_number() || !window[1].is_number() ||
      !bus_id.is_string())
    return;
  json during =
      gpu_during(samples, bus_id.get<std::string>(), window[0].get<double>(), window[1].get<double>());
  if (!during.is_null()) time_part[proto::kTiming][proto::kGpuDuring] = std::move(during);
}

GpuMonitor::GpuMonitor(const std::filesystem::path& nvidia_smi) {
  if (nvidia_smi.empty()) return;
  thread_ = std::thread([this, nvidia_smi] {
    result_ = run_process({.argv = {nvidia_smi.string(),
                                    "--query-gpu=timestamp,pci.bus_id,power.draw,clocks.sm,"
                                    "clocks_event_reasons.active,temperature.gpu",
                                    "--format=csv,noheader,nounits", "-lms", "50"},
                           .time_limit = std::chrono::hours(2),
                           .output_limit = size_t{8} << 20,
                           .stop = &stop_});
  });
}

void GpuMonitor::finish() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

GpuMonitor::~GpuMonitor() {
  finish();
}

std::vector<GpuSample> GpuMonitor::samples() {
  finish();
  return parse_gpu_samples(result_.out);
}

}  // namespace ptxbench
