#!/usr/bin/env bash
# Call G (2026-12-06): what issue 34 still owes on a GPU, then a part of the manifest (issue 29).
# Most telling first, as the device time left may cut it short:
# 1. The judge's cuda-gdb attach on a hung call: a hung submission through `ptxbench eval`, the attach made from
#    inside the sandbox.
# 2. The reference model on a GEMM and an attention task under each context policy (--context).
# 3. The new d256 forward tasks with every solution that serves them (the CUDA and Triton forward references, the
#    SIMT example); then the references on the tasks this session changed: both prefills (the forward reference's
#    new layouts and the ragged prefill's baseline) and the causal backward tasks (their dQ and dK tolerances).
# 4. The runner's GPU tests (never_ends.check_then_time wants cuda-gdb to name the kernel).
# 5. manifest.sh attention-cuda, if it fits before the call's deadline.
source bench/harness/h200-2026-12-05/env.sh
end=${END:-560}  # the call's own deadline, seconds after its start
step() { echo "== $1: exit $2 at $3 s"; }
left() { local n=$(($1 - SECONDS)); echo $((n > 1 ? n : 1)); }  # seconds to a deadline, at least 1 (0: no limit)
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
for policy in compact full last-pair; do
  timeout 200 ptxbench run --context "$policy" --gpu-share 2 \
    --tasks gemm-bf16-n4096-k4096-sm90a,attention-fwd-d64-sm90a > "$OUT/context-$policy.txt" 2>&1
  step "reference model, --context $policy" $? $SECONDS
  tail -4 "$OUT/context-$policy.txt" | cut -c1-200
done
timeout -s INT "$(left $((end - 20)))" ptxbench run --solutions solutions --gpu-share 4 --only '*attention_forward*' \
  --tasks 'attention-fwd-d256-*-sm90a' > "$OUT/d256.txt" 2>&1
step "the d256 forward tasks" $? $SECONDS
grep -E "evaluations in run|differ" "$OUT/d256.txt" | tail -2
grep -E "as expected: (yes|no)" "$OUT/d256.txt" | cut -c1-260
# What changed this session on its first GPU: the reference forward's two prefill layouts (never run), with the
# ragged prefill's new vendor baseline, and the causal backward tasks' new dQ and dK tolerances.
timeout -s INT "$(left $((end - 20)))" ptxbench run --solutions solutions --gpu-share 4 --only 'reference/attention_*.cu' \
  --tasks 'attention-prefill-*-sm90a,attention-bwd-*causal*-sm90a' > "$OUT/changed.txt" 2>&1
step "the changed tasks' references" $? $SECONDS
grep -E "evaluations in run|differ" "$OUT/changed.txt" | tail -2
grep -E "as expected: (yes|no)" "$OUT/changed.txt" | cut -c1-260
PTXBENCH_RUNNER=$PWD/.device/bin/ptxbench-runner timeout "$(left "$end")" bash tests/gpu/runner/run.sh "$OUT/runner-logs" \
  > "$OUT/runner-tests.txt" 2>&1
step "runner GPU tests" $? $SECONDS
sed -n '/^== summary/,$p' "$OUT/runner-tests.txt" | grep -v "^PASS" | head -20
grep -E "^(PASS|FAIL)  never_ends" "$OUT/runner-tests.txt" | cut -c1-400
DEADLINE=$((end - SECONDS)) exec bash bench/harness/h200-owed/manifest.sh attention-cuda
