#!/usr/bin/env bash
# Call 4 (2026-12-05, late; call 3's machine stopped answering and nothing came back): both forward references
# on two tasks, four evaluations sharing the GPU, within the session's last device seconds.
source bench/harness/h200-2026-12-05/env.sh
start=$SECONDS
timeout -s INT 100 ptxbench run --solutions solutions --only 'reference/attention_forward*' --gpu-share 4 \
  --tasks 'attention-fwd-d64-sm90a,attention-fwd-d128-causal-sm90a' > "$OUT/forward-references.txt" 2>&1
echo "== forward references: exit $? in $((SECONDS - start)) s"; tail -9 "$OUT/forward-references.txt" | cut -c1-200
python3 bench/harness/stage_times.py "$PTXBENCH_DATA/ptxbench.db" > "$OUT/stage-times.txt" 2>&1
tail -6 "$OUT/stage-times.txt"; free -g | head -2
