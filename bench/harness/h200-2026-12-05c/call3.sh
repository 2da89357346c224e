#!/usr/bin/env bash
# Call 3 (2026-12-05): the profiler feedback after its tensor-pipe metric changed, on a GEMM and an attention task.
source bench/harness/h200-2026-12-05/env.sh
start=$SECONDS
timeout -s INT 130 ptxbench run --feedback profile --tasks gemm-bf16-n4096-k4096-sm90a,attention-fwd-d64-sm90a \
  > "$OUT/profile-run-2.txt" 2>&1
echo "== profile feedback run: exit $? in $((SECONDS - start)) s"; tail -6 "$OUT/profile-run-2.txt"
python3 - <<'PY' | tee "$OUT/profile-feedback-2.txt"
import os, sqlite3
db = sqlite3.connect(os.environ["PTXBENCH_DATA"] + "/ptxbench.db")
for (feedback,) in db.execute("SELECT feedback FROM turns ORDER BY id"):
    if "Profile of the main shape" in (feedback or ""):
        print(feedback[feedback.index("Profile of the main shape"):])
PY
