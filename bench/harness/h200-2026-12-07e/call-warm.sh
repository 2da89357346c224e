#!/usr/bin/env bash
# Issue 32, branch baseline-warm (not merged; prepared 2026-12-07, fourteenth session): the attention baseline's
# process makes its first call beside the check (runner/main.cpp, warm_up_baseline), so that the time stage's
# setup loses the 0.6-2.4 s of that call's one-time work (README.md here; the branch's change is
# baseline-warm.patch here, for a checkout without the branch: git apply). The branch's binaries bundled in
# .device/warm (from its worktree: scripts/build, then bench/harness/bundle.sh PATH/.device/warm), main's
# in .device; each run on the same machine:
#   1. the runner's GPU tests with the branch's runner;
#   2. the 9 references alone with main's binaries, then with the branch's: stage times, setup_s. At most
#      570 s (each part under a timeout); about 4-5 minutes expected.
source bench/harness/h200-2026-12-05/env.sh
source bench/harness/h200-2026-12-07d/alone.sh
against_main warm 200 170
