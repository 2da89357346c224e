#!/usr/bin/env bash
# Call 1: the descriptor-driven runner (e35a359) on the GPU for the first time, every stage, one evaluation each:
# the CUDA references of GEMM (a timed M = 8192 task and an M = 70 one), forward and backward d64; the Triton
# references of GEMM and forward d64.
source bench/harness/h200-2026-12-05/env.sh
one() {  # NAME SOLUTION TASK
  local start=$SECONDS
  timeout -s INT 150 ptxbench eval "$2" --task "$3" --json > "$OUT/$1.json" 2> "$OUT/$1.err"
  echo "$1: exit $? in $((SECONDS - start)) s"
}
one gemm-cuda solutions/reference/gemm_bf16_sm90a.cu gemm-bf16-n4096-k4096-sm90a
one gemm-m70-cuda solutions/reference/gemm_bf16_sm90a.cu gemm-m70-n4096-k4096-sm90a
one fwd-d64-cuda solutions/reference/attention_forward_sm90a.cu attention-fwd-d64-sm90a
one bwd-d64-cuda solutions/reference/attention_backward_sm90a.cu attention-bwd-d64-sm90a
one gemm-triton solutions/reference/gemm_bf16_sm90a.py gemm-bf16-n4096-k4096-sm90a
one fwd-d64-triton solutions/reference/attention_forward_sm90a.py attention-fwd-d64-sm90a
for f in "$OUT"/*.json; do
  python3 - "$f" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(sys.argv[1].split('/')[-1], d.get('status'), 'speedup', d.get('speedup'),
      '|', ', '.join(f"{s['name']} {s['status']} {s.get('wall_s', 0):.1f}s" for s in d.get('stages', [])))
for s in d.get('stages', []):
    if s['status'] not in ('passed', 'skipped'): print('  ', s['name'], s.get('message', '')[:600])
PY
done
