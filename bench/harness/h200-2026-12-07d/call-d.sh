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
end=${END:-540}
gemm='gemm-bf16-n4096-k4096-sm90a gemm-bf16-n7168-k5120-sm90a gemm-bf16-n4096-k14336-sm90a'
fwd='attention-fwd-d64-sm90a attention-fwd-d128-sm90a attention-fwd-d128-causal-sm90a'
bwd='attention-bwd-d64-sm90a attention-bwd-d128-sm90a attention-bwd-d64-causal-sm90a'
timeout -s INT 240 ptxbench run --solutions solutions --gpu-share 1 --only 'reference/*.cu' \
  --tasks "$(echo $gemm $fwd $bwd | tr ' ' ,)" > "$OUT/alone.txt" 2>&1
echo "== stages alone: exit $? at $SECONDS s"; grep -E "evaluations in run|as expected: no" "$OUT/alone.txt" | cut -c1-200
python3 bench/harness/stage_times.py "$PTXBENCH_DATA/ptxbench.db" --run 1 > "$OUT/stage-times-alone.txt" 2>&1
grep -E "^ +[0-9]+ " "$OUT/stage-times-alone.txt" | sed 's/, compile.*//' | cut -c1-140
grep -E "^(sanitize|correct|instructions|time|gpu stages) " "$OUT/stage-times-alone.txt"
for record in corpus-attention corpus-gemm; do
  ((end - SECONDS > 90)) || break
  (OUT=$OUT/$record; mkdir -p "$OUT"; DEADLINE=$((end - SECONDS)) bash bench/harness/record.sh $record)
done
