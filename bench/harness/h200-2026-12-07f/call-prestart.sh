#!/usr/bin/env bash
# Owed item 22's third step (prepared 2026-12-07, fifteenth session): branch `prestart` (issue 32; it holds
# baseline-warm's commits too) against main, on one machine, at most 580 s. Main's binaries of 40f8166 in
# .device, the branch's in .device/prestart (from its worktree: scripts/build, then
# bench/harness/bundle.sh PATH/.device/prestart):
#   1. the runner's GPU tests with the branch's runner (its solution worker sets its recorders up at its first
#      request now, and waits for the one-time key before its calibration);
#   2. the 9 references alone (--gpu-share 1: the correct stage's process starts early only without a gate)
#      with main's binaries, then with the branch's: stage times, phases_s (`turn`), setup_s;
#   3. with the time left, the causal backward alone with the judge's kind of inputs (owed item 22's second
#      step): INPUTS=fixed and INPUTS=fresh, two processes each.
source bench/harness/h200-2026-12-05/env.sh
source bench/harness/h200-2026-12-07d/alone.sh
against_main prestart 150 150
for inputs in fixed fresh; do
  ((SECONDS < 480)) && INPUTS=$inputs timeout 90 bash bench/time-stage/placement_interleaved.sh backward-causal 1 2 |
    grep -E "==|all "
done
echo "== end: at $SECONDS s"
