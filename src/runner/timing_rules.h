// The rules the runner holds a solution's reported times to (time mode): header-only and free of CUDA, so
// that the CPU tests can check them with the numbers seen on the GPU. The solution process measures its call
// (events on its stream, a wall clock around the call and the synchronisations); the runner, the judge, keeps
// its own clock around each request and a calibration made before the solution's library was loaded.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <iterator>
#include <vector>

#include "runner/layouts.h"

namespace ptxbench::runner {

// The solution process's honest overheads for calls of one length, measured before its library is loaded
// (solution_protocol.h, Op::calibrate): a kernel of the worker's own that runs for `call_us`, timed as a
// solution's call is; the medians of the judge's clock around a request less the wall time the worker
// reports, and of that wall time less its events.
struct CalibrationRung {
  double call_us = 0;
  double round_trip_us = 0;
  double gap_us = 0;
  double worker_us =
      0;  // of the round trip, the worker's own time before and after its wall clock (diagnosis)
};

// The overheads over the range of call lengths, rungs in increasing `call_us`. One rung is not enough: the
// overhead of a request grows with the length of the call it waits for (on the H200, before the judge and the
// worker polled instead of sleeping, calls of 0.8-2.5 ms paid 200 us more than empty ones: a core that slept
// that long woke up from a deeper idle state), so an honest call is held to what calls of its own length
// cost.
struct Calibration {
  int calls = 0;
  std::vector<CalibrationRung> rungs;

  // The overheads that apply to a call of `call_us`: the larger of the two rungs around it (the last rung's
  // beyond it), so that an honest call between two rungs is never held to the cheaper one.
  CalibrationRung at(double call_us) const {
    if (rungs.empty()) return {};
    const auto above = std::find_if(rungs.begin(), rungs.end(),
                                    [&](const CalibrationRung& rung) { return rung.call_us > call_us; });
    const auto below = above == rungs.begin() ? above : std::prev(above);
    const CalibrationRung& high = above == rungs.end() ? *below : *above;
    return {.call_us = call_us,
            .round_trip_us = std::max(below->round_trip_us, high.round_trip_us),
            .gap_us = std::max(below->gap_us, high.gap_us)};
  }
};

// One timed call as the two processes saw it, in microseconds.
struct CallTimes {
  double event_us = 0;  // the solution process's events around the call
  double wall_us = 0;   // its clock around the call and the synchronisations
  double judge_us = 0;  // the judge's clock from request to reply
};

// The claims nest as they must if true: the events within the wall time, the wall time within the request.
inline bool claims_nest(const CallTimes& call) {
  return call.event_us > 0 && call.event_us <= call.wall_us && call.wall_us <= call.judge_us;
}

// How far the solution's median round trip (judge_us - wall_us) may exceed the calibrated one for calls of
// its length: max(kRoundTripMarginUs, 2% of the call). A process that reports a wall time shorter than the
// truth widens its round trip by as much, so this margin is what a lie can take off the wall median, and with
// the margin of hidden_work_suspected below (events shorter than the wall time) off the event median, which
// the speedup is computed from: at most 50 + 20 us for calls up to 1 ms, 4% of a long one.
inline constexpr double kRoundTripMarginUs = 50;

inline double allowed_round_trip_us(const Calibration& calibration, double event_median_us) {
  return calibration.at(event_median_us).round_trip_us + std::max(kRoundTripMarginUs, 0.02 * event_median_us);
}

// The median times are trustworthy: a calibration was made, every call's claims nested, and the median round
// trip is within its allowance.
inline bool times_verified(const Calibration& calibration, bool every_call_nested,
                           double round_trip_median_us, double event_median_us) {
  return calibration.calls > 0 && every_call_nested &&
         round_trip_median_us <= allowed_round_trip_us(calibration, event_median_us);
}

// Work outside the call's stream, or events reported shorter than they were: the wall time exceeds the
// events by more than the launch and synchronisation overhead (the larger of the baseline's, measured in the
// judge, and the calibrated one) plus max(20 us, 2% of the call). Honest gaps on the H200 were 11 us for a
// 0.37 ms GEMM, 23-34 us for 12-15 ms ones and 33-42 us for 0.28-1.2 s attention calls (bench/anti-cheat.md,
// bench/attention.md): far inside it.
inline bool hidden_work_suspected(double wall_median_us, double event_median_us, double baseline_gap_us,
                                  const Calibration& calibration) {
  return wall_median_us - event_median_us >
         std::max(baseline_gap_us, calibration.at(event_median_us).gap_us) +
             std::max(20.0, 0.02 * event_median_us);
}

// The physics floor: no call can be faster than its task's roofline, its FLOPs at the GPU's dense tensor peak
// or the bytes of its inputs at the device's read bandwidth (after the cold-L2 flush before every timed call
// the inputs come from DRAM; outputs are not counted, since writes may still sit in the L2 when the stop
// event fires). A faster call means the timing itself is broken. The peak is counted at the maximum SM
// clock, so no call reaches it (cuBLASLt's bf16 GEMMs: 680-820 TFLOP/s on the H200, kits/hopper/params.md,
// against 1070 at 1980 MHz). The bandwidth is the best of the runner's own read passes, which a solution's
// loads may beat by a few percent, and a call of a few microseconds is within the events' resolution of its
// floor: so a call is impossible only below kRooflineMargin x the floor, and one at the roofline never is.
inline constexpr double kRooflineMargin = 0.8;

struct RooflineInputs {
  double flops = 0;
  double input_bytes = 0;
  int sm_count = 0;
  double sm_clock_khz = 0;                // cudaDevAttrClockRate: the maximum clock
  double flops_per_sm_per_clock = 0;      // the architecture's dense bf16 tensor rate; 0: not known
  double read_bandwidth_bytes_per_s = 0;  // measured; 0: not measured
  double fastest_us = 0;                  // the fastest timed call (events)
};

struct Roofline {
  double peak_flops_per_s = 0;  // 0 when not known, and then so is the FLOPs floor
  double flops_floor_us = 0;
  double bytes_floor_us = 0;  // 0 when the bandwidth is not known
  double floor_us = 0;        // the larger of the two
  bool applied = false;       // both known: the fastest call was held to the floor
  bool impossible = false;    // applied, and the fastest call below kRooflineMargin x the floor
};

inline Roofline roofline(const RooflineInputs& in) {
  Roofline floor;
  floor.peak_flops_per_s = in.sm_count * in.sm_clock_khz * 1e3 * in.flops_per_sm_per_clock;
  if (floor.peak_flops_per_s > 0) floor.flops_floor_us = in.flops / floor.peak_flops_per_s * 1e6;
  if (in.read_bandwidth_bytes_per_s > 0)
    floor.bytes_floor_us = in.input_bytes / in.read_bandwidth_bytes_per_s * 1e6;
  floor.floor_us = std::max(floor.flops_floor_us, floor.bytes_floor_us);
  floor.applied = floor.peak_flops_per_s > 0 && in.read_bandwidth_bytes_per_s > 0;
  floor.impossible = floor.applied && in.fastest_us < kRooflineMargin * floor.floor_us;
  return floor;
}

// The SM clock during the timed calls: after each, the runner measures it (kernels.h, launch_clock_probe,
// over kClockProbeNs). A median below kClockBelowMaxShare of the GPU's maximum clock means the calls ran on a
// GPU held below its maximum (power or temperature, another tenant's clock setting): the verdict says so,
// since the solution and the baseline are then timed on a slower GPU than the roofline's peak assumes.
inline constexpr unsigned long long kClockProbeNs = 100000;  // 100 us: %globaltimer's ticks are 1 us or finer
inline constexpr double kClockBelowMaxShare = 0.97;

inline bool clock_below_max(double median_mhz, double max_mhz) {
  return median_mhz > 0 && max_mhz > 0 && median_mhz < kClockBelowMaxShare * max_mhz;
}

// The timed calls stop before `repetitions` once both medians (the solution's and the baseline's) are
// settled: after at least kSettledAfter calls, the order statistics that hold the median with 95% confidence
// (0-based ranks (n - 1) / 2 -+ 0.98 sqrt(n), the normal approximation of the binomial) lie within
// kMedianPrecision of each other, relative to the median. More calls would move the median by less than that,
// while the same kernel's median moves by 1-5% between processes (bench/harness/h200-2026-12-06d): the calls
// past it cost time and say nothing. The interval assumes calls independent of each other: a drift through
// the calls widens it, and so does a solution that adds jitter to its own times, which only makes more calls.
inline constexpr int kSettledAfter = 20;
inline constexpr double kMedianPrecision = 0.005;

inline bool median_settled(std::vector<double> samples) {
  const size_t n = samples.size();
  if (n < static_cast<size_t>(kSettledAfter)) return false;
  std::sort(samples.begin(), samples.end());
  const double half = 0.98 * std::sqrt(static_cast<double>(n)), centre = (static_cast<double>(n) - 1) / 2;
  const auto low = static_cast<size_t>(std::max(0.0, std::floor(centre - half)));
  const auto high = std::min(n - 1, static_cast<size_t>(std::ceil(centre + half)));
  const double median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
  return median > 0 && samples[high] - samples[low] <= kMedianPrecision * median;
}

// The time stage's calls besides the timed ones are counted with hardware counters (tensor_counter.h): each
// call is one with kCountedShare's chance, drawn just before it from a source the solution cannot predict, so
// that no call, early or late, is sure to go uncounted however many calls the medians take to settle (a
// solution that runs another path from its nth call on is counted there as often as before it); and once
// enough calls are timed, every call until kCountedTimeCalls are counted. About kCountedTimeCalls among the
// kSettledAfter + kCountedTimeCalls calls that settled medians take.
inline constexpr int kCountedTimeCalls = 2;
inline constexpr double kCountedShare =
    static_cast<double>(kCountedTimeCalls) / (kSettledAfter + kCountedTimeCalls);

// How many warm-up and timed calls the time stage makes, and the share of the blocks each sampled check draws
// (layouts.h). The request asks for `warmup` and `repetitions`; two budgets can lower them, never below
// kMinRepetitions timed calls.
// - The solution's: a slow solution (a plain SIMT kernel can take a second a call) gets as many calls as fit
//   kSolutionBudgetS; at that length a call's noise is far below what separates it from the baseline.
// - The judge's: every timed call gets fresh inputs and its output is checked against the reference, outside
//   the clocks, and the stage's time limit covers that work too. An attention backward's inputs need a
//   reference forward and its check a reference backward: 19 + 43 ms at B=4 H=16 S=4096 D=128 on the H200
//   since the reference's products are SGEMMs, but about 1.7 s causal and twice that without the mask with
//   the plain kernels it had before, when 52 calls ran past the 120-s limit. So the calls, each with its
//   inputs and check (`judge_s`, measured once, a check drawing kSampleShare's share), fit
//   kCheckedLoopBudgetS, whatever the reference costs: the timed calls and the counted ones, which are
//   checked too (kCountedTimeCalls at least, and a share kCountedShare of all the calls on average).
// The calls' number is the solution's to sway: warm-up call 1 sizes them, and is neither timed nor checked,
// and `judge_s` is measured while the solution's process lives (work it leaves running could slow it). So a
// sampled check's share keeps the blocks a stage checks from falling with the calls: kSampleShare from
// kSettledAfter calls on (the fewest that settled medians end on), proportionally more blocks a call below
// that (a solution that gets kMinRepetitions calls has each checked on a quarter of its blocks). It depends
// on the calls' number alone: at least kSettledAfter calls' worth at kSampleShare, whatever the calls' length
// or the judge's measured work. Below kSettledAfter calls, the checks then cost what kSettledAfter calls'
// would at kSampleShare, beyond what the budget held: kSettledAfter judge_s at most (`judge_call_s` was 0.1
// ms to 74 ms over 176 verdicts of the shipped references on an H100, bench/harness/h200-2026-12-07c).
inline constexpr double kSolutionBudgetS = 10;
inline constexpr double kCheckedLoopBudgetS = 60;
inline constexpr int kMinRepetitions = 5;

struct TimeStageCalls {
  int warmup = 1;
  int repetitions = kMinRepetitions;
  int sample_share = kSampleShare;
};

inline TimeStageCalls time_stage_calls(int warmup, int repetitions, double call_s, double judge_s) {
  const auto fit = [](double budget_s, double each_s) {
    return static_cast<int>(std::min(budget_s / std::max(each_s, 1e-6), 1e9));
  };
  const int solution_calls = fit(kSolutionBudgetS, call_s);
  // The checked calls that fit the judge's budget, and the timed ones among them (the rest counted).
  const int checked_calls = fit(kCheckedLoopBudgetS, call_s + judge_s);
  const int timed_checked_calls =
      std::min(static_cast<int>(checked_calls * (1 - kCountedShare)), checked_calls - kCountedTimeCalls);
  const int calls =
      std::min(repetitions, std::max(kMinRepetitions, std::min(solution_calls, timed_checked_calls)));
  return {.warmup = std::max(1, std::min(warmup, solution_calls / 10)),
          .repetitions = calls,
          .sample_share = std::max(1, kSampleShare * std::min(calls, kSettledAfter) / kSettledAfter)};
}

enum class NextTimeCall { done, counted, timed };

// The next call of the time stage: `timed_enough` once `repetitions` calls are timed or both medians are
// settled, `counted` the calls counted so far, `draw` uniform in [0, 1) from the judge's random source.
inline NextTimeCall next_time_call(bool timed_enough, int counted, double draw) {
  if (timed_enough) return counted >= kCountedTimeCalls ? NextTimeCall::done : NextTimeCall::counted;
  return draw < kCountedShare ? NextTimeCall::counted : NextTimeCall::timed;
}

// The time stage's loop: each call decided by next_time_call, `repetitions` timed calls at most, and at most
// bound() calls in all. That the draws leave fewer than `repetitions` timed calls within the bound has a
// chance of 2e-6 at 5 repetitions and 1e-13 at 20; two calls are counted within it whatever the draws.
class TimeStageLoop {
 public:
  explicit TimeStageLoop(int repetitions)
      : repetitions_(repetitions), bound_(2 * repetitions + kCountedTimeCalls) {}

  // The next call, given whether both medians are settled and a draw uniform in [0, 1).
  NextTimeCall next(bool medians_settled, double draw) {
    if (made_ >= bound_) return NextTimeCall::done;
    const NextTimeCall call = next_time_call(timed_ >= repetitions_ || medians_settled, counted_, draw);
    if (call == NextTimeCall::done) return call;
    ++made_;
    ++(call == NextTimeCall::counted ? counted_ : timed_);
    return call;
  }
  int bound() const { return bound_; }
  int made() const { return made_; }
  int timed() const { return timed_; }
  int counted() const { return counted_; }

 private:
  int repetitions_, bound_;
  int made_ = 0, timed_ = 0, counted_ = 0;
};

}  // namespace ptxbench::runner
