// The GPU as the driver reports it while a runner process works: nvidia-smi samples every GPU's power, SM
// clock, the reasons the driver holds the clocks down and temperature every 50 ms, in a process of the
// judge's own beside the stage (outside the sandbox: it reads the devices, never the solution). The time
// stage keeps the samples of its GPU during its timed calls (`gpu_during` in its details) and says when the
// GPU slowed itself then.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/subprocess.h"

namespace ptxbench {

struct GpuSample {
  double unix_s = 0;   // the sample's time, seconds since the epoch
  std::string bus_id;  // the GPU's PCI bus id, as the runner's device_info gives it
  double power_w = 0, sm_clock_mhz = 0, temperature_c = 0;  // NaN where nvidia-smi gave none
  uint64_t reasons = 0;                                     // the driver's clock event reasons, NVML's bits
};

// nvidia-smi's "--query-gpu=timestamp,pci.bus_id,power.draw,clocks.sm,clocks_event_reasons.active,
// temperature.gpu --format=csv,noheader,nounits" lines (the timestamp in this host's local time); a line that
// does not parse is skipped.
std::vector<GpuSample> parse_gpu_samples(const std::string& csv);

// The reasons of `mask` by which the GPU held itself back (power cap, thermal and hardware slowdowns, the
// power brake), by name; idle, application clocks, sync boost and display clocks are not slowdowns.
std::vector<std::string> slowdown_reasons(uint64_t mask);

// The samples of GPU `bus_id` within [begin_unix_s, end_unix_s]: "samples", "power_w" and "sm_clock_mhz"
// (median, min, max), "temperature_c_max", "slowdown_reasons" (every reason seen in any sample). Null when
// no sample lies in the window (a call shorter than the sampling period).
nlohmann::json gpu_during(const std::vector<GpuSample>& samples, const std::string& bus_id,
                          double begin_unix_s, double end_unix_s);

// Adds to a time part of the runner's result (runner_part: its "timing" and its "device") what `samples` saw
// of that GPU during the timed calls, as timing's "gpu_during"; nothing when the part has no timed window or
// no bus id, or no sample lies in the window.
void note_gpu_during(nlohmann::json& time_part, const std::vector<GpuSample>& samples);

// nvidia-smi sampling from construction to samples(); no samples when nvidia-smi cannot run or is empty.
class GpuMonitor {
 public:
  explicit GpuMonitor(const std::filesystem::path& nvidia_smi);
  ~GpuMonitor();
  GpuMonitor(const GpuMonitor&) = delete;
  GpuMonitor& operator=(const GpuMonitor&) = delete;
  // Stops the sampling and returns what it saw.
  std::vector<GpuSample> samples();

 private:
  void finish();
  std::atomic<bool> stop_{false};
  ProcessResult result_;
  std::thread thread_;
};

}  // namespace ptxbench
