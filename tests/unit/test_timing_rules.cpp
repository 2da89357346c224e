// The rules the runner holds a solution's reported times to (src/runner/timing_rules.h), with the numbers the
// H200 gave (bench/anti-cheat.md run 3, bench/attention.md, bench/runner.md).
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "runner/timing_rules.h"

using namespace ptxbench::runner;

namespace {

// The reference GEMM's run: 30 empty-kernel requests before the library loaded.
const Calibration kH200{.calls = 30, .rungs = {{.call_us = 0, .round_trip_us = 166.8, .gap_us = 7.4}}};

Calibration one_rung(double round_trip_us, double gap_us) {
  return {.calls = 30, .rungs = {{.call_us = 0, .round_trip_us = round_trip_us, .gap_us = gap_us}}};
}

}  // namespace

TEST(TimingRules, TheReferenceGemmsHonestTimesAreVerified) {
  // event 355.6 us, wall 363.9 us, round trip 212.4 us at the median; cuBLASLt's gap in the judge 8 us.
  EXPECT_TRUE(claims_nest({.event_us = 355.6, .wall_us = 363.9, .judge_us = 363.9 + 212.4}));
  EXPECT_TRUE(times_verified(kH200, true, 212.4, 355.6));
  EXPECT_FALSE(hidden_work_suspected(363.9, 355.6, 8.0, kH200));
}

TEST(TimingRules, AProcessThatShavesItsTimesWidensItsRoundTripAndIsCaught) {
  // The same call reported 100 us shorter on both of the process's clocks: the judge's clock did not move.
  const CallTimes lie{.event_us = 255.6, .wall_us = 263.9, .judge_us = 363.9 + 212.4};
  EXPECT_TRUE(claims_nest(lie));  // each claim alone is possible...
  EXPECT_FALSE(
      times_verified(kH200, true, lie.judge_us - lie.wall_us, lie.event_us));  // ...not the round trip
  // What a lie can gain at most: the allowance over the calibrated round trip.
  EXPECT_DOUBLE_EQ(allowed_round_trip_us(kH200, 355.6) - kH200.at(355.6).round_trip_us, kRoundTripMarginUs);
}

TEST(TimingRules, ClaimsThatCannotNestAreFalse) {
  EXPECT_FALSE(claims_nest({.event_us = 400, .wall_us = 363.9, .judge_us = 600}));  // events outside the wall
  EXPECT_FALSE(claims_nest({.event_us = 300, .wall_us = 700, .judge_us = 600}));  // wall outside the request
  EXPECT_FALSE(claims_nest({.event_us = 0, .wall_us = 10, .judge_us = 20}));      // no events at all
  EXPECT_FALSE(times_verified({}, true, 0, 355.6));  // no calibration, nothing to hold the claims to
  EXPECT_FALSE(times_verified(kH200, false, 200, 355.6));
}

TEST(TimingRules, ALongCallGetsTwoPercentOfItselfForWakingUp) {
  // The SIMT attention forward: 296 ms a call, round trip 398 us against 171 us calibrated.
  const Calibration attention = one_rung(171.3, 7.1);
  EXPECT_TRUE(times_verified(attention, true, 398.1, 295694.9));
  EXPECT_FALSE(
      times_verified(attention, true, 398.1, 3000));  // the same round trip for a 3 ms call is too much
}

TEST(TimingRules, HonestWallEventGapsAreNotSuspectedAndShavedEventsAre) {
  // The gaps the H200 showed (calibrated gaps 7-11 us): a 12.6 ms SIMT GEMM, a 1.17 s attention backward.
  EXPECT_FALSE(hidden_work_suspected(12687.3, 12653.8, 0.0, one_rung(170, 11.4)));
  EXPECT_FALSE(hidden_work_suspected(1166980.4, 1166945.2, 0.0, one_rung(172, 7.9)));
  // The backward's events reported 5% shorter than its wall time: more than a wake-up explains.
  EXPECT_TRUE(hidden_work_suspected(1166980.4, 0.95 * 1166980.4, 0.0, kH200));
}

TEST(TimingRules, WorkOnAnotherStreamShowsAsAWallEventGap) {
  // The runner's private_stream test solution: its events saw 1.2 us of a call that took 1015 us.
  EXPECT_TRUE(hidden_work_suspected(1014.9, 1.2, 0.0, kH200));
}

// The calibration over call lengths (2026-12-01, H200, bench/timing.md): rungs of 0, 0.1, 1 and 10 ms, with
// the judge and the worker polling and the context switch in a request of its own.
const Calibration kLadder{.calls = 40,
                          .rungs = {{.call_us = 0, .round_trip_us = 29.1, .gap_us = 12.1},
                                    {.call_us = 100, .round_trip_us = 24.6, .gap_us = 9.7},
                                    {.call_us = 1000, .round_trip_us = 29.2, .gap_us = 15.3},
                                    {.call_us = 10000, .round_trip_us = 38.4, .gap_us = 19.6}}};

TEST(TimingRules, ACallIsHeldToTheLargerOfTheTwoRungsAroundIt) {
  EXPECT_DOUBLE_EQ(kLadder.at(0).round_trip_us, 29.1);  // 0 and 100 us: the 0 us rung is larger
  EXPECT_DOUBLE_EQ(kLadder.at(50).round_trip_us, 29.1);
  EXPECT_DOUBLE_EQ(kLadder.at(500).round_trip_us, 29.2);   // 100 and 1000 us
  EXPECT_DOUBLE_EQ(kLadder.at(1000).round_trip_us, 38.4);  // 1000 and 10000 us
  EXPECT_DOUBLE_EQ(kLadder.at(3e6).round_trip_us, 38.4);   // beyond the last rung: the last
  EXPECT_DOUBLE_EQ(kLadder.at(500).gap_us, 15.3);
  EXPECT_DOUBLE_EQ(Calibration{}.at(500).round_trip_us, 0);
}

TEST(TimingRules, TheSweepsHonestCallsAreVerifiedAtEveryLength) {
  // bench/timing/sweep.sh on the H200: event median and round-trip median of each length, 15 us to 1 s.
  const struct {
    double event_us, round_trip_us;
  } sweep[] = {{15.5, 29.3},   {27.4, 26.8},    {118.1, 28.4},    {314.8, 26.4},    {1018.4, 36.1},
               {3015.5, 28.9}, {10015.7, 31.2}, {100022.0, 70.4}, {1000025.0, 77.3}};
  for (const auto& call : sweep)
    EXPECT_TRUE(times_verified(kLadder, true, call.round_trip_us, call.event_us)) << call.event_us;
  // The reference GEMM on the four GEMM tasks (0.36-2.55 ms a call): round trips 23-52 us.
  EXPECT_TRUE(times_verified(kLadder, true, 52, 2553.0));
}

TEST(TimingRules, OneRungCannotHoldCallsWhoseOverheadGrowsWithTheirLengthAndALadderCan) {
  // Before the judge and the worker polled (issue 13): calls of 0.8-2.5 ms paid about 200 us more round trip
  // than the empty calibration calls. A ladder measured the same way sees it; one empty rung does not.
  const Calibration sleeping{.calls = 40,
                             .rungs = {{.call_us = 0, .round_trip_us = 180},
                                       {.call_us = 100, .round_trip_us = 182},
                                       {.call_us = 1000, .round_trip_us = 380},
                                       {.call_us = 10000, .round_trip_us = 400}}};
  EXPECT_FALSE(times_verified(one_rung(180, 7), true, 423, 1227));
  EXPECT_TRUE(times_verified(sleeping, true, 423, 1227));
}

TEST(TimingRules, AWallTimeShavedByMoreThanTheMarginIsCaughtAtEveryLength) {
  for (const double event_us : {20.0, 360.0, 2500.0}) {
    const double honest = kLadder.at(event_us).round_trip_us;
    EXPECT_TRUE(times_verified(kLadder, true, honest + kRoundTripMarginUs, event_us));
    EXPECT_FALSE(times_verified(kLadder, true, honest + kRoundTripMarginUs + 1, event_us));
  }
}

TEST(TimingRules, AFastCallWithACheapCheckGetsTheCallsItAsked) {
  // The reference GEMM: 0.36 ms a call, its inputs and cuBLASLt reference about 5 ms.
  const TimeStageCalls calls = time_stage_calls(10, 50, 0.00036, 0.005);
  EXPECT_EQ(calls.warmup, 10);
  EXPECT_EQ(calls.repetitions, 50);
}

TEST(TimingRules, ASlowSolutionGetsTheCallsThatFitItsBudget) {
  // The SIMT attention forward: 0.3 s a call, 33 calls fit 10 s, 3 warm-up calls.
  const TimeStageCalls calls = time_stage_calls(10, 50, 0.3, 0.2);
  EXPECT_EQ(calls.warmup, 3);
  EXPECT_EQ(calls.repetitions, 33);
}

TEST(TimingRules, AnExpensiveCheckLowersTheCallsSoThatTheStageFitsItsLimit) {
  // The reference backward on the non-causal B=4 H=16 S=4096 task: a 3.3-ms kernel, but inputs and the
  // reference check take about 3.4 s a call. 52 checked calls ran past the stage's 120 s; these fit 60 s, the
  // counted calls (checked too) with them.
  const TimeStageCalls calls = time_stage_calls(10, 50, 0.0033, 3.4);
  EXPECT_EQ(calls.warmup, 10);  // warm-up calls are not checked: the solution's budget alone
  EXPECT_EQ(calls.repetitions, 15);
  EXPECT_LE((calls.repetitions + kCountedTimeCalls) * (0.0033 + 3.4), kCheckedLoopBudgetS);
  // Many cheap checked calls: a tenth more of them counted on average, within the budget too.
  const TimeStageCalls many = time_stage_calls(10, 1000, 0.0001, 0.1);  // 599 checked calls fit 60 s
  EXPECT_EQ(many.repetitions, 544);
  EXPECT_LE(many.repetitions / (1 - kCountedShare) * 0.1001, kCheckedLoopBudgetS);
}

TEST(TimingRules, NeitherBudgetGoesBelowTheMinimumOrAboveTheRequest) {
  EXPECT_EQ(time_stage_calls(10, 50, 4.0, 30.0).repetitions, kMinRepetitions);  // a 4-s call, a 30-s check
  EXPECT_EQ(time_stage_calls(10, 50, 4.0, 30.0).warmup, 1);
  EXPECT_EQ(time_stage_calls(10, 3, 0.001, 0.001).repetitions, 3);  // the request asked for fewer
  EXPECT_EQ(time_stage_calls(10, 50, 0.0, 0.0).repetitions, 50);    // a call too short to measure
}

// A solution sways how many calls it gets (warm-up call 1 sizes them, untimed and unchecked; the judge's work
// is measured while its process lives), never how many blocks the stage's sampled checks draw: n calls at
// share s check n / s calls' worth of every block.
TEST(TimingRules, FewerCallsDrawMoreBlocksEach) {
  EXPECT_EQ(time_stage_calls(10, 50, 0.00036, 0.005).sample_share, kSampleShare);  // 50 calls
  const TimeStageCalls slowed = time_stage_calls(10, 50, 2.0, 0.1);  // a 2-s warm-up call: 5 calls
  EXPECT_EQ(slowed.repetitions, kMinRepetitions);
  EXPECT_EQ(slowed.sample_share, kSampleShare * kMinRepetitions / kSettledAfter);  // a quarter of the blocks
  // However long the call: a 30-s warm-up call buys no smaller sample.
  EXPECT_EQ(time_stage_calls(10, 50, 30.0, 0.1).sample_share, slowed.sample_share);
  // Nor does a judge's check made to look slow: 5 calls, a quarter of the blocks each.
  const TimeStageCalls inflated = time_stage_calls(10, 50, 0.001, 20.0);
  EXPECT_EQ(inflated.repetitions, kMinRepetitions);
  EXPECT_EQ(inflated.sample_share, slowed.sample_share);
  const TimeStageCalls slow = time_stage_calls(10, 50, 0.6, 1.0);  // 16 calls, 12 for the blocks
  EXPECT_EQ(slow.repetitions, 16);
  EXPECT_EQ(slow.sample_share, 12);
  const TimeStageCalls expensive = time_stage_calls(10, 50, 0.0033, 3.4);  // 15 calls, 12 for the blocks
  EXPECT_EQ(expensive.repetitions, 15);
  EXPECT_EQ(expensive.sample_share, 12);
}

TEST(TimingRules, TheBlocksCheckedDoNotFallWithTheCallsOrTheJudgesLength) {
  const double floor = static_cast<double>(kSettledAfter) / kSampleShare;  // kSettledAfter calls' worth
  for (const double judge_s : {0.0, 0.002, 0.05, 0.4, 1.0, 2.9, 3.4, 10.0, 40.0}) {
    for (double call_s = 1e-5; call_s < 100; call_s *= 1.7) {
      const TimeStageCalls calls = time_stage_calls(10, 50, call_s, judge_s);
      const double worth = static_cast<double>(calls.repetitions) / calls.sample_share;
      EXPECT_GE(worth, floor) << "judge " << judge_s << " s, call " << call_s << " s";
      EXPECT_GE(calls.sample_share, 1);
      EXPECT_LE(calls.sample_share, kSampleShare) << "never fewer blocks than kSampleShare's";
    }
  }
}

// ---- when the timed calls may stop

namespace {

// n calls spread evenly over +- `width` / 2 around 100 us, in an order that is not sorted.
std::vector<double> spread_calls(int n, double width) {
  std::vector<double> us;
  for (int i = 0; i < n; ++i) us.push_back(100.0 * (1 + width * ((i * 7 % n) / double(n - 1) - 0.5)));
  return us;
}

}  // namespace

// A median is settled once the ranks of its 95% interval lie within half a percent: never before
// kSettledAfter calls, soon for calls as tight as the H100's (a p10-p90 band of about 1%), not for calls
// spread by 10%.
TEST(TimingRules, TheCallsStopOnceTheMedianIsSettled) {
  EXPECT_FALSE(median_settled(spread_calls(kSettledAfter - 1, 0.0))) << "never before kSettledAfter calls";
  EXPECT_TRUE(median_settled(spread_calls(kSettledAfter, 0.0)));
  // About 1.25% from the slowest to the fastest: the 95% ranks of 20 (5 and 14 of 0..19) lie 0.59% apart.
  EXPECT_FALSE(median_settled(spread_calls(20, 0.0125)));
  // 50 calls (ranks 17 and 32): 0.38% apart.
  EXPECT_TRUE(median_settled(spread_calls(50, 0.0125)));
  EXPECT_FALSE(median_settled(spread_calls(50, 0.10))) << "calls spread by 10% never settle";
  // Outliers outside the interval's ranks do not hold the calls back.
  std::vector<double> with_outliers = spread_calls(30, 0.002);
  with_outliers[3] = 500, with_outliers[11] = 20;
  EXPECT_TRUE(median_settled(with_outliers));
  EXPECT_FALSE(median_settled(std::vector<double>(40, 0.0))) << "a median of 0 is no measurement";
}

// The counted calls: none before the draw says so, every call once enough are timed until two are; and over
// many runs of the time stage's loop (TimeStageLoop, the runner's), whose medians settle at 20 or 40 timed
// calls or never, the calls after the 22nd are counted as often as those before (a solution that switches
// paths late is counted there), every run counts two calls or more, and none ends before it has timed
// `repetitions` calls or the medians settled, within its bound.
TEST(TimingRules, EveryTimedCallMayBeCountedAndTwoAreAlways) {
  EXPECT_EQ(next_time_call(false, 0, kCountedShare), NextTimeCall::timed);
  EXPECT_EQ(next_time_call(false, 5, kCountedShare / 2), NextTimeCall::counted);
  EXPECT_EQ(next_time_call(true, 1, 0.99), NextTimeCall::counted) << "enough timed, one counted: count";
  EXPECT_EQ(next_time_call(true, kCountedTimeCalls, 0.0), NextTimeCall::done);
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> uniform(0, 1);
  constexpr int kRuns = 20000, kSettle = 20, kLate = 22;
  double counted_early = 0, calls_early = 0, counted_late = 0, calls_late = 0;
  for (int run = 0; run < kRuns; ++run) {
    const int repetitions = run % 3 == 2 ? kMinRepetitions : 50;
    // Medians that settle once 20 or 40 calls are timed (then 20 more calls for a late switch to happen in),
    // or never.
    const int settles_at = run % 3 == 0 ? kSettle : run % 3 == 1 ? 2 * kSettle : 1 << 30;
    TimeStageLoop loop(repetitions);
    for (int call = 0;; ++call) {
      const NextTimeCall next = loop.next(loop.timed() >= settles_at, uniform(random));
      if (next == NextTimeCall::done) break;
      if (settles_at == 2 * kSettle && loop.timed() <= settles_at) {
        const bool is_counted = next == NextTimeCall::counted;
        (call < kLate ? calls_early : calls_late) += 1;
        (call < kLate ? counted_early : counted_late) += is_counted;
      }
    }
    ASSERT_GE(loop.counted(), kCountedTimeCalls) << "run " << run;
    ASSERT_LE(loop.made(), loop.bound()) << "run " << run;
    ASSERT_EQ(loop.made(), loop.timed() + loop.counted()) << "run " << run;
    ASSERT_LE(loop.timed(), repetitions) << "run " << run;
    ASSERT_GE(loop.timed(), std::min(repetitions, settles_at)) << "run " << run << ": stopped early";
  }
  const double early = counted_early / calls_early, late = counted_late / calls_late;
  EXPECT_NEAR(early, kCountedShare, 0.01);
  EXPECT_NEAR(late, kCountedShare, 0.01) << "calls after the 22nd are counted as often as before";
}

// The loop's bound holds whatever the draws: with every draw counting, the loop still times nothing past
// its bound and stops there, two counted; with no draw counting, it times `repetitions` and then counts two.
TEST(TimingRules, TheTimeStageLoopStopsAtItsBound) {
  TimeStageLoop all_counted(kMinRepetitions);
  while (all_counted.next(false, 0.0) != NextTimeCall::done) {
  }
  EXPECT_EQ(all_counted.made(), all_counted.bound());
  EXPECT_EQ(all_counted.timed(), 0);
  TimeStageLoop none_counted(kMinRepetitions);
  while (none_counted.next(false, 0.999) != NextTimeCall::done) {
  }
  EXPECT_EQ(none_counted.timed(), kMinRepetitions);
  EXPECT_EQ(none_counted.counted(), kCountedTimeCalls);
  EXPECT_EQ(none_counted.made(), kMinRepetitions + kCountedTimeCalls);
}

// ---- the physics floor

namespace {

// The H200: 132 SMs at a 1980 MHz maximum clock, 4096 dense bf16 FLOPs per SM per clock (1070 TFLOP/s), and a
// read bandwidth of 4.0 TB/s.
RooflineInputs h200(double flops, double input_bytes, double fastest_us) {
  return {.flops = flops,
          .input_bytes = input_bytes,
          .sm_count = 132,
          .sm_clock_khz = 1980000,
          .flops_per_sm_per_clock = 4096,
          .read_bandwidth_bytes_per_s = 4.0e12,
          .fastest_us = fastest_us};
}

// The GEMM M=8192 N=4096 K=4096: 2.75e11 FLOPs; A (8192 x 4096) and B (4096 x 4096) in bf16.
constexpr double kGemmFlops = 2.0 * 8192 * 4096 * 4096;
constexpr double kGemmInputBytes = (8192.0 * 4096 + 4096.0 * 4096) * 2;

}  // namespace

TEST(TimingRules, TheFloorIsTheFlopsAtTheDensePeakOrTheInputsAtTheBandwidth) {
  const Roofline floor = roofline(h200(kGemmFlops, kGemmInputBytes, 380));
  EXPECT_NEAR(floor.peak_flops_per_s / 1e12, 1070.5, 0.1);
  EXPECT_NEAR(floor.flops_floor_us, 256.8, 0.1);
  EXPECT_NEAR(floor.bytes_floor_us, 25.2, 0.1);  // 100.7 MB at 4.0 TB/s
  EXPECT_DOUBLE_EQ(floor.floor_us, floor.flops_floor_us);
  EXPECT_TRUE(floor.applied);
}

TEST(TimingRules, AGemmAtTheSpeedOfCublasIsPossibleAndOneAtTenTimesThePeakIsNot) {
  // cuBLASLt: 380 us, 723 TFLOP/s.
  EXPECT_FALSE(roofline(h200(kGemmFlops, kGemmInputBytes, 380)).impossible);
  // 10 700 TFLOP/s, ten times the peak.
  EXPECT_TRUE(roofline(h200(kGemmFlops, kGemmInputBytes, 25.7)).impossible);
}

TEST(TimingRules, OnlyACallBelowTheMarginTimesTheFloorIsImpossible) {
  const double floor_us = roofline(h200(kGemmFlops, kGemmInputBytes, 0)).floor_us;
  EXPECT_FALSE(roofline(h200(kGemmFlops, kGemmInputBytes, floor_us)).impossible);  // at the roofline
  EXPECT_FALSE(roofline(h200(kGemmFlops, kGemmInputBytes, kRooflineMargin * floor_us)).impossible);
  EXPECT_TRUE(roofline(h200(kGemmFlops, kGemmInputBytes, 0.999 * kRooflineMargin * floor_us)).impossible);
}

TEST(TimingRules, AMemoryBoundCallIsHeldToItsBytes) {
  // M=16 N=8192 K=8192: 2.0 us of FLOPs at the peak, but B alone is 134 MB, 33.6 us at 4.0 TB/s.
  const double flops = 2.0 * 16 * 8192 * 8192, input_bytes = (16.0 * 8192 + 8192.0 * 8192) * 2;
  const Roofline floor = roofline(h200(flops, input_bytes, 20));
  EXPECT_NEAR(floor.flops_floor_us, 2.0, 0.1);
  EXPECT_NEAR(floor.bytes_floor_us, 33.6, 0.1);
  EXPECT_DOUBLE_EQ(floor.floor_us, floor.bytes_floor_us);
  EXPECT_TRUE(floor.impossible);  // the FLOPs alone would have let 20 us pass
  EXPECT_FALSE(roofline(h200(flops, input_bytes, 30)).impossible);
}

TEST(TimingRules, WithoutThePeakOrTheBandwidthThereIsNoVerdict) {
  RooflineInputs no_peak = h200(kGemmFlops, kGemmInputBytes, 1);  // an older request: no rate
  no_peak.flops_per_sm_per_clock = 0;
  const Roofline without_peak = roofline(no_peak);
  EXPECT_FALSE(without_peak.applied);
  EXPECT_FALSE(without_peak.impossible);
  EXPECT_EQ(without_peak.peak_flops_per_s, 0);
  EXPECT_EQ(without_peak.flops_floor_us, 0);
  EXPECT_NEAR(without_peak.bytes_floor_us, 25.2, 0.1);

  RooflineInputs no_bandwidth = h200(kGemmFlops, kGemmInputBytes, 1);
  no_bandwidth.read_bandwidth_bytes_per_s = 0;
  EXPECT_FALSE(roofline(no_bandwidth).applied);
  EXPECT_FALSE(roofline(no_bandwidth).impossible);
}

// The clock during the calls is below the maximum when its median is under 97% of it; unknown figures say no.
TEST(TimingRules, TheClockIsBelowItsMaximumUnderAShare) {
  EXPECT_FALSE(clock_below_max(1980, 1980));
  EXPECT_FALSE(clock_below_max(1925, 1980));  // 97.2%: the probe's resolution and a boost step
  EXPECT_TRUE(clock_below_max(1905, 1980));   // 96.2%
  EXPECT_TRUE(clock_below_max(1755, 1980));   // 11% below
  EXPECT_FALSE(clock_below_max(0, 1980));
  EXPECT_FALSE(clock_below_max(1755, 0));
}
