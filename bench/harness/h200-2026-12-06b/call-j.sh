#!/usr/bin/env bash
# Call J (prepared 2026-12-06, third session, for the next): what this session changed, never yet run on a GPU,
# most telling first, within the call's deadline (END, seconds after its start; default 560):
# 1. The runner's GPU tests: never_ends.check_then_time now wants cuda-gdb to name the kernel of a call run again
#    in a fresh, unrecorded solution process (runner/session.cpp, debug_rerun); every other test after the open
#    request grew its `recorded` field.
# 2. A hung submission through `ptxbench eval --stages correct,time`: the message's "where its threads wait"
#    line, from inside the sandbox (issue 34).
# 3. The kit's GPU test: mma_m16n8k16_bf16 (kits/common/ptx/mma.cuh), new.
# 4. The attention families' reference check (tests/gpu/attention/run.sh): the judge's fp32 reference now makes
#    every product on the tensor cores from bf16 operands (the inputs, and P and dS as three bf16 parts each)
#    with fp32 compute; against float64 on small shapes,
#    and its time at the main shapes (printed: compare with the time stage's judge_call_s of
#    ../h200-2026-12-05f/, 0.026 s a forward call and 0.079 s a backward one at d64).
# 5. The decode reference, rewritten on mma.sync, on its four tasks: the share of the read bandwidth (issue 31's
#    target 0.8; the first version reached 0.26-0.30 on the H100).
#    Their time stages also show the GPU's power and slowdown reasons during the calls (gpu_during, nvidia-smi's
#    samples; new).
# 6. `../h200-owed/manifest.sh attention-cuda` if it fits (the first part of the whole record at this version).
source bench/harness/h200-2026-12-05/env.sh
end=${END:-560}
step() { echo "== $1: exit $2 at $3 s"; }
left() { local n=$(($1 - SECONDS)); echo $((n > 1 ? n : 1)); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
PTXBENCH_RUNNER=$PWD/.device/bin/ptxbench-runner timeout 300 bash tests/gpu/runner/run.sh "$OUT/runner-logs" \
  > "$OUT/runner-tests.txt" 2>&1
step "runner GPU tests" $? $SECONDS
sed -n '/^== summary/,$p' "$OUT/runner-tests.txt" | grep -v "^PASS" | head -20
grep -E "^(PASS|FAIL)  never_ends" "$OUT/runner-tests.txt" | cut -c1-400
timeout 120 ptxbench eval tests/data/solutions/never_ends.cu --task gemm-bf16-n4096-k4096-sm90a \
  --stages correct,time --stage-time-limit 15 --json > "$OUT/never_ends.eval.json" 2> "$OUT/never_ends.eval.stderr"
step "hung submission through eval" $? $SECONDS
python3 - "$OUT/never_ends.eval.json" <<'PY' | cut -c1-900
import json, sys
v = json.load(open(sys.argv[1]))
for s in v.get("stages", []):
    if s.get("name") in ("correct", "time"):
        print(s["name"], s.get("status"), "|", s.get("message", "")[:700])
        print("  hang:", json.dumps(s.get("details", {}).get("hang"))[:400])
PY
timeout 150 bash tests/gpu/kit/run.sh "$OUT/kit" > "$OUT/kit-test.txt" 2>&1
step "kit GPU test" $? $SECONDS
grep -E "mma|FAIL|functions," "$OUT/kit-test.txt" | head -12
timeout 200 bash tests/gpu/attention/run.sh "$OUT/attention-check" > "$OUT/attention-check.txt" 2>&1
step "attention reference check" $? $SECONDS
grep -E "FAIL|^time" "$OUT/attention-check.txt" | head -12
timeout -s INT "$(left $((end - 20)))" ptxbench run --solutions solutions --gpu-share 1 \
  --only 'reference/attention_decode_paged_sm90a.cu' --tasks 'attention-decode-*-sm90a' > "$OUT/decode.txt" 2>&1
step "the decode reference" $? $SECONDS
grep -E "as expected: (yes|no)" "$OUT/decode.txt" | cut -c1-220
python3 - "$PTXBENCH_DATA/ptxbench.db" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for task, verdict in db.execute("select task_id, verdict from evaluations where task_id like 'attention-decode-%'"):
    for stage in json.loads(verdict).get("stages", []):
        if stage.get("name") == "time":
            details = stage.get("details", {})
            share = details.get("roofline_share", {}).get("solution", {}).get("bandwidth")
            print(task, "bandwidth share", share, "| gpu_during", json.dumps(details.get("gpu_during")))
PY
DEADLINE=$((end - SECONDS)) exec bash bench/harness/h200-owed/manifest.sh attention-cuda
