#!/usr/bin/env bash
# Prepared 2026-12-07, fifteenth session, for a session with one call left: what informs the next code change
# most, on an H100 or an H200, at most 580 s; main's binaries of 40f8166 in .device, branch baseline-warm's in
# .device/warm (../h200-2026-12-07e/call-warm.sh says how they are made):
#   1. the interleaved placement probe on the causal backward, two processes for each of three seeds (issue 32:
#      do its placements spread as its evaluations do, and do two processes of one seed agree?);
#   2. call-warm.sh's steps: the references alone with main's binaries, the runner's GPU tests with the
#      branch's runner, the references alone with the branch's binaries (does setup_s.baseline_check drop?);
#   3. with the time left, call-i.sh's decode steps (issue 31, wanted of an H200).
source bench/harness/h200-2026-12-05/env.sh
source bench/harness/h200-2026-12-07d/alone.sh
source bench/harness/share.sh
timeout 90 bash bench/time-stage/placement_interleaved.sh backward-causal 1 1 2 2 3 3 | grep -E "==|all "
echo "== placement probe: at $SECONDS s"
against_main warm 140 150
decode=(attention-decode-gqa32x4-d128-p64-sm90a attention-decode-gqa32x8-d128-p64-sm90a
  attention-decode-gqa64x8-d128-p64-sm90a attention-decode-gqa32x8-d128-p1-sm90a)
for task in "${decode[@]}"; do
  ((SECONDS < 540)) && share solutions/reference/attention_decode_paged_sm90a.cu "$task" --stages correct,time
done
echo "== end: at $SECONDS s"
