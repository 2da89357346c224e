#!/usr/bin/env bash
# Owed item 20, its first two steps in one call, for a session whose device time is short (prepared 2026-12-07,
# fourteenth session), with main's binaries bundled in .device (bench/harness/bundle.sh):
#   1. the runner's GPU tests (correct.check_then_time checks setup_s's steps and placement's alignment), at
#      most 170 s;
#   2. the shipped record, begun or resumed (record.sh), until the call's end: keep it afterwards with
#      `bench/harness/keep_record.sh FOLDER shipped`, and commit bench/harness/records/shipped.
#   CALL_S=580 bash bench/harness/h200-2026-12-07e/call-g.sh
source bench/harness/h200-2026-12-05/env.sh
trap - EXIT  # record.sh's own keep_store packs this call's files too, its store beside them
call_s=${CALL_S:-580}
source bench/harness/h200-2026-12-07d/alone.sh
runner_tests 170
DEADLINE=$((call_s - SECONDS)) bash bench/harness/record.sh shipped
