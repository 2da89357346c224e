// The rules the runner holds a solution's reported times to (src/runner/timing_rules.h), with the numbers the
// H200 gave (bench/anti-cheat.md run 3, bench/attention.md, bench/runner.md).
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
