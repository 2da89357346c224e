#!/usr/bin/env bash
# Issue 32 (2026-12-07, thirteenth session), with the binaries of the commit that starts the instruction
# stage's profile beside the sanitize stage's tools (bundled in .device: bench/harness/bundle.sh):
#   1. the references alone (--gpu-share 1) on call W's 9 tasks, with each evaluation's GPU seconds
#      (stage_times.py's `gpu`: the two overlapping stages counted once);
#   2. the corpus's attention entries, then its GEMM entries, with their expected verdicts (record.sh
#      corpus-attention, corpus-gemm), until END (seconds after the call's start; default 540). A record
#      stopped at END goes on with `DEADLINE=... bash bench/harness/record.sh RECORD` once keep_record.sh has put
#      its store in .device/store.
source bench/harness/h200-2026-12-05/env.sh
source bench/harness/h200-2026-12-07d/alone.sh
end=${END:-540}
references_alone 240
for record in corpus-attention corpus-gemm; do
  ((end - SECONDS > 90)) || break
  (OUT=$OUT/$record; mkdir -p "$OUT"; DEADLINE=$((end - SECONDS)) bash bench/harness/record.sh $record)
done
