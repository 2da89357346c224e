#!/usr/bin/env bash
# Call 2: the paged decode and ragged prefill families on the GPU for the first time: the manifest's decode and
# prefill entries (the Hopper decode reference, the SIMT examples) on every task they serve; the runner's fp32
# decode against float64; the kit's new bulk copy; one decode verdict kept whole; then, with the time left, the
# CUDA attention references on the long-context tasks (correct and time).
source bench/harness/h200-2026-12-05/env.sh
step() { echo "== $1: exit $2 in $3 s"; }
start=$SECONDS
timeout -s INT 170 ptxbench run --solutions solutions --only '*attention_[dp]*' \
  --tasks 'attention-decode-*-sm90a,attention-prefill-*-sm90a' --gpu-share 4 > "$OUT/serving-run.txt" 2>&1
step "decode and prefill manifest run" $? $((SECONDS - start)); tail -26 "$OUT/serving-run.txt"
start=$SECONDS; timeout -s INT 80 tests/gpu/attention/run.sh /tmp/attention > "$OUT/attention-reference.txt" 2>&1
step "attention reference check" $? $((SECONDS - start)); grep -E "decode|FAIL|failure" "$OUT/attention-reference.txt"
start=$SECONDS; timeout -s INT 80 tests/gpu/kit/run.sh /tmp/kit > "$OUT/kit.txt" 2>&1
step "kit test" $? $((SECONDS - start)); grep -E "bulk|functions," "$OUT/kit.txt"
task=attention-decode-gqa32x8-d128-p1-sm90a
[[ $SECONDS -lt 330 ]] || exit 0
start=$SECONDS
timeout -s INT 60 ptxbench eval solutions/reference/attention_decode_paged_sm90a.cu --task $task --json \
  > "$OUT/reference-$task.json" 2> "$OUT/reference-$task.err"
step "reference on $task" $? $((SECONDS - start))
python3 - "$OUT/reference-$task.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(' ', d.get('status'), '|', ', '.join(f"{s['name']} {s['status']} {s.get('wall_s', 0):.1f}s" for s in d['stages']))
for s in d['stages']:
    if s['name'] in ('time', 'instructions') or s['status'] not in ('passed', 'skipped'):
        print('   ', s['name'], (s.get('message') or '')[:700])
PY
[[ $SECONDS -lt 330 ]] || exit 0  # the session's device time was nearly spent: what follows waits for the next
start=$SECONDS
timeout -s INT $((380 - SECONDS)) ptxbench run --solutions solutions --only 'reference/attention_*_sm90a.cu' \
  --tasks 'attention-*-causal-s*-sm90a' --stages correct,time > "$OUT/long-run.txt" 2>&1
step "long-context run" $? $((SECONDS - start)); tail -16 "$OUT/long-run.txt"
