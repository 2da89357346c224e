#!/usr/bin/env bash
# Owed call A (README.md): the runner's profile-read counters, the split kit, the new paged prefill reference
# cases, and the serving families' manifest entries.
source bench/harness/h200-2026-12-05/env.sh
step() { echo "== $1: exit $2 in $3 s"; }
start=$SECONDS; timeout -s INT 120 tests/gpu/runner/run.sh > "$OUT/runner.txt" 2>&1
step "runner test" $? $((SECONDS - start)); tail -5 "$OUT/runner.txt"
start=$SECONDS; timeout -s INT 80 tests/gpu/kit/run.sh /tmp/kit > "$OUT/kit.txt" 2>&1
step "kit test" $? $((SECONDS - start)); grep -E "functions,|FAIL" "$OUT/kit.txt"
start=$SECONDS; timeout -s INT 90 tests/gpu/attention/run.sh /tmp/attention > "$OUT/attention-reference.txt" 2>&1
step "attention reference check" $? $((SECONDS - start)); grep -E "paged|FAIL|failure" "$OUT/attention-reference.txt"
start=$SECONDS
timeout -s INT 200 ptxbench run --solutions solutions --only '*attention_[dp]*' \
  --tasks 'attention-decode-*-sm90a,attention-prefill-*-sm90a' --gpu-share 4 > "$OUT/serving-run.txt" 2>&1
step "decode and prefill manifest run" $? $((SECONDS - start)); tail -30 "$OUT/serving-run.txt"
task=attention-decode-gqa32x8-d128-p64-sm90a
start=$SECONDS
timeout -s INT 60 ptxbench eval solutions/reference/attention_decode_paged_sm90a.cu --task $task --json \
  > "$OUT/reference-$task.json" 2> "$OUT/reference-$task.err"
step "reference on $task" $? $((SECONDS - start))
python3 - "$OUT/reference-$task.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(' ', d.get('status'), '|', ', '.join(f"{s['name']} {s['status']}" for s in d['stages']))
for s in d['stages']:
    if s['name'] == 'time':
        print('  time:', (s.get('message') or '')[:400])
        print('  roofline_share:', json.dumps((s.get('details') or {}).get('roofline_share')))
PY
