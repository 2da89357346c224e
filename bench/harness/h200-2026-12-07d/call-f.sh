#!/usr/bin/env bash
# Owed item 20's first step (prepared 2026-12-07, thirteenth session), with main's binaries bundled in .device
# (bench/harness/bundle.sh), about 4 minutes:
#   1. the runner's GPU tests (correct.check_then_time checks setup_s's steps and placement's alignment);
#   2. the 9 references alone, their stage times with setup_s (where the backward's second before its timed
#      loop goes);
#   3. the causal backward reference 10 times, each run's time beside where its buffers lay (placement).
source bench/harness/h200-2026-12-05/env.sh
source bench/harness/h200-2026-12-07d/alone.sh
runner_tests 200
references_alone 200
(OUT=$OUT/spread timeout 180 bash bench/time-stage/spread.sh 10 solutions/reference/attention_backward_sm90a.cu \
  attention-bwd-d64-causal-sm90a)
