#!/usr/bin/env bash
# Call N (2026-12-06, fourth session), at the GPU stages of 8015fed: the hung call's rerun for cuda-gdb with
# /proc writable (runner GPU tests; a hung submission through `ptxbench eval`), then the manifest's gemm-cuda
# part if it fits END (seconds after the call's start; default 480).
source bench/harness/h200-2026-12-05/env.sh
end=${END:-480}
step() { echo "== $1: exit $2 at $SECONDS s"; }
PTXBENCH_RUNNER=$PWD/.device/bin/ptxbench-runner timeout 300 bash tests/gpu/runner/run.sh "$OUT/runner-logs" \
  > "$OUT/runner-tests.txt" 2>&1
step "runner GPU tests" $?
sed -n '/^== summary/,$p' "$OUT/runner-tests.txt" | grep -v "^PASS" | head -8
grep -E "^(PASS|FAIL)  never_ends" "$OUT/runner-tests.txt" | cut -c1-700
timeout 120 ptxbench eval tests/data/solutions/never_ends.cu --task gemm-bf16-n4096-k4096-sm90a \
  --stages correct,time --stage-time-limit 15 --json > "$OUT/never_ends.eval.json" 2> "$OUT/never_ends.eval.stderr"
step "hung submission through eval" $?
python3 - "$OUT/never_ends.eval.json" <<'PY' | cut -c1-900
import json, sys
v = json.load(open(sys.argv[1]))
for s in v.get("stages", []):
    if s.get("name") in ("correct", "time"):
        print(s["name"], s.get("status"), "|", s.get("message", "")[:700])
        print("  hang:", json.dumps(s.get("details", {}).get("hang"))[:500])
PY
DEADLINE=$((end - SECONDS)) exec bash bench/harness/h200-owed/manifest.sh gemm-cuda
