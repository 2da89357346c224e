#!/usr/bin/env bash
# Call 2 (2026-12-05, evening): where the attention baseline's spread comes from (bench/time-stage/
# baseline_probe.py, separate processes), the Triton references' Blackwell kernels (every kernel this time), the
# backward's 5-run spreads, and the profiler feedback rerun after its tensor-pipe metric changed.
source bench/harness/h200-2026-12-05/env.sh
step() { echo "== $1: exit $2 in $3 s"; }
start=$SECONDS
for i in 1 2 3; do timeout 60 python3 bench/time-stage/baseline_probe.py forward 64 40; done > "$OUT/probe-forward.txt" 2>&1
for i in 1 2; do timeout 60 python3 bench/time-stage/baseline_probe.py backward 64 30; done > "$OUT/probe-backward.txt" 2>&1
step "baseline probe" $? $((SECONDS - start)); grep -v "^    " "$OUT/probe-forward.txt" "$OUT/probe-backward.txt" | cut -c1-200
start=$SECONDS
timeout -s INT 120 python3 bench/blackwell/triton_sm100a.py /tmp/triton-sm100a > "$OUT/triton-sm100a.txt" 2>&1
step "Triton references for sm_100a" $? $((SECONDS - start)); cut -c1-300 "$OUT/triton-sm100a.txt"
mkdir -p "$OUT/triton-sm100a" && cp /tmp/triton-sm100a/*.sass "$OUT/triton-sm100a/" 2>/dev/null
start=$SECONDS
OUT=$OUT/spread timeout -s INT 250 bench/time-stage/spread.sh 5 solutions/reference/attention_backward_sm90a.cu \
  attention-bwd-d64-sm90a attention-bwd-d128-sm90a attention-bwd-d64-causal-sm90a | tee "$OUT/spread-backward.txt"
step "backward spreads" $? $((SECONDS - start))
start=$SECONDS
timeout -s INT $((585 - SECONDS)) ptxbench run --feedback profile \
  --tasks gemm-bf16-n4096-k4096-sm90a,attention-fwd-d64-sm90a > "$OUT/profile-run.txt" 2>&1
step "profile feedback run" $? $((SECONDS - start)); tail -6 "$OUT/profile-run.txt"
python3 - <<'PY' | tee "$OUT/profile-feedback.txt" | cut -c1-300
import os, sqlite3
db = sqlite3.connect(os.environ["PTXBENCH_DATA"] + "/ptxbench.db")
for (feedback,) in db.execute("SELECT feedback FROM turns ORDER BY id"):
    if "Profile of the main shape" in (feedback or ""):
        print(feedback[feedback.index("Profile of the main shape"):])
PY
python3 bench/harness/stage_times.py "$PTXBENCH_DATA/ptxbench.db" > "$OUT/stage-times.txt" 2>&1
