// The judge's samples of the GPU beside the time stage (eval/gpu_monitor.h): nvidia-smi's lines read, the
// samples of the runner's GPU in its timed window summarised, its slowdowns named.
#include <gtest/gtest.h>

#include <cmath>
#include <ctime>

#include "eval/gpu_monitor.h"
#include "runner/protocol.h"

using namespace ptxbench;
using nlohmann::json;
namespace proto = protocol;

namespace {

// Seconds since the epoch of a local time, as the parser reads nvidia-smi's timestamps.
double local(int hour, int minute, double second) {
  std::tm tm{};
  tm.tm_year = 2026 - 1900, tm.tm_mon = 11, tm.tm_mday = 6, tm.tm_hour = hour, tm.tm_min = minute;
  tm.tm_sec = static_cast<int>(second);
  tm.tm_isdst = -1;
  return static_cast<double>(std::mktime(&tm)) + (second - std::floor(second));
}

// Two GPUs, one slowing itself by its power cap in its third sample; a line that is not a sample.
const char* kCsv =
    "2026/12/06 08:40:01.000, 00000000:19:00.0, 512.25, 1980, 0x0000000000000000, 51\n"
    "2026/12/06 08:40:01.000, 00000000:3B:00.0, 71.50, 345, 0x0000000000000001, 33\n"
    "2026/12/06 08:40:01.050, 00000000:19:00.0, 698.00, 1755, 0x0000000000000000, 53\n"
    "2026/12/06 08:40:01.100, 00000000:19:00.0, 700.00, 1650, 0x0000000000000004, 55\n"
    "No devices were found\n"
    "2026/12/06 08:40:01.150, 00000000:19:00.0, [N/A], 1980, 0x0000000000000001, 54\n";

}  // namespace

TEST(GpuMonitor, NvidiaSmisLinesAreReadAndTheRestSkipped) {
  const std::vector<GpuSample> samples = parse_gpu_samples(kCsv);
  ASSERT_EQ(samples.size(), 5u);
  EXPECT_DOUBLE_EQ(samples[0].unix_s, local(8, 40, 1.0));
  EXPECT_NEAR(samples[2].unix_s - samples[0].unix_s, 0.05, 1e-6);
  EXPECT_EQ(samples[0].bus_id, "00000000:19:00.0");
  EXPECT_EQ(samples[1].bus_id, "00000000:3b:00.0");
  EXPECT_DOUBLE_EQ(samples[0].power_w, 512.25);
  EXPECT_DOUBLE_EQ(samples[3].sm_clock_mhz, 1650);
  EXPECT_EQ(samples[3].reasons, 0x4u);
  EXPECT_TRUE(std::isnan(samples[4].power_w));  // "[N/A]"
}

TEST(GpuMonitor, OnlySlowdownsAreReasonsToSay) {
  EXPECT_TRUE(slowdown_reasons(0x1 | 0x2 | 0x10 | 0x100).empty());  // idle, app clocks, sync boost, display
  EXPECT_EQ(slowdown_reasons(0x4 | 0x40), (std::vector<std::string>{"sw_power_cap", "hw_thermal_slowdown"}));
  EXPECT_EQ(slowdown_reasons(0x8 | 0x20 | 0x80),
            (std::vector<std::string>{"hw_slowdown", "sw_thermal_slowdown", "hw_power_brake_slowdown"}));
}

// The runner's GPU by its CUDA bus id (a 4-digit domain), within the timed window only.
TEST(GpuMonitor, TheWindowOfTheRunnersGpuIsSummarised) {
  const std::vector<GpuSample> samples = parse_gpu_samples(kCsv);
  const json all = gpu_during(samples, "0000:19:00.0", local(8, 40, 0.0), local(8, 40, 2.0));
  EXPECT_EQ(all["samples"], 4);
  EXPECT_DOUBLE_EQ(all["power_w"]["max"].get<double>(), 700.0);  // the [N/A] sample has no power
  EXPECT_DOUBLE_EQ(all["power_w"]["median"].get<double>(), 698.0);
  EXPECT_DOUBLE_EQ(all["sm_clock_mhz"]["min"].get<double>(), 1650);
  EXPECT_DOUBLE_EQ(all["temperature_c_max"].get<double>(), 55);
  EXPECT_EQ(all["slowdown_reasons"], json::array({"sw_power_cap"}));

  const json before_the_cap = gpu_during(samples, "0000:19:00.0", local(8, 40, 0.99), local(8, 40, 1.06));
  EXPECT_EQ(before_the_cap["samples"], 2);
  EXPECT_TRUE(before_the_cap["slowdown_reasons"].empty());
  EXPECT_TRUE(gpu_during(samples, "0000:19:00.0", local(8, 41, 0.0), local(8, 42, 0.0)).is_null());
  EXPECT_TRUE(gpu_during(samples, "0000:af:00.0", local(8, 40, 0.0), local(8, 40, 2.0)).is_null());
}

TEST(GpuMonitor, ATimePartGetsItsGpusSamplesOnlyWithAWindowAndABusId) {
  const std::vector<GpuSample> samples = parse_gpu_samples(kCsv);
  json part = {{proto::kDeviceInfo, {{proto::kPciBusId, "0000:19:00.0"}}},
               {proto::kTiming, {{proto::kTimedWindowUnixS, {local(8, 40, 0.0), local(8, 40, 2.0)}}}}};
  note_gpu_during(part, samples);
  EXPECT_EQ(part[proto::kTiming][proto::kGpuDuring]["samples"], 4);
  json no_window = {{proto::kDeviceInfo, {{proto::kPciBusId, "0000:19:00.0"}}},
                    {proto::kTiming, json::object()}};
  note_gpu_during(no_window, samples);
  EXPECT_FALSE(no_window[proto::kTiming].contains(proto::kGpuDuring));
}

// nvidia-smi absent: the monitor samples nothing, and says nothing.
TEST(GpuMonitor, WithoutNvidiaSmiThereAreNoSamples) {
  GpuMonitor absent("/nonexistent/nvidia-smi");
  EXPECT_TRUE(absent.samples().empty());
  GpuMonitor none{std::filesystem::path()};
  EXPECT_TRUE(none.samples().empty());
}
