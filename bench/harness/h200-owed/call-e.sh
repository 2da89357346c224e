#!/usr/bin/env bash
# Owed call E (README.md, item 5), first of the next session's calls, about 3 minutes: what 2026-12-05's last
# session changed in the GPU stages and never saw on a GPU.
# - The bytecode warm-up leaves nothing beside the installation's sources (the .pyc beside Triton's, before and
#   after).
# - The time stage's SM clock after each timed call (sm_clock_during_mhz, sm_clock_below_max) on the CUDA and
#   Triton GEMM references.
# - The correct stage locates a call that faulted at a shape the sanitize stage does not cover
#   (tests/adversarial/faults_at_one_shape.cu: correct runtime_error, its message "where (memcheck on that
#   shape): ..." naming stray_store and its line).
source bench/harness/h200-2026-12-05/env.sh
dir=$(python3 -c "import triton, os; print(os.path.dirname(triton.__file__))")
echo "before: $(find "$dir" -name '*.pyc' | wc -l) .pyc beside Triton's sources" > "$OUT/installation.txt"
start=$SECONDS
timeout -s INT 200 ptxbench run --solutions solutions --only 'reference/gemm_bf16_sm90a.*' \
  --tasks gemm-bf16-n4096-k4096-sm90a > "$OUT/gemm-references.txt" 2>&1
echo "== GEMM references: exit $? in $((SECONDS - start)) s"; tail -5 "$OUT/gemm-references.txt" | cut -c1-200
echo "after: $(find "$dir" -name '*.pyc' | wc -l) .pyc beside Triton's sources" >> "$OUT/installation.txt"
cat "$OUT/installation.txt"
python3 bench/harness/subset.py tests/adversarial --keep faults_at_one_shape
start=$SECONDS
timeout -s INT 120 ptxbench run --solutions tests/adversarial --tasks gemm-bf16-n4096-k4096-sm90a \
  > "$OUT/faults-at-one-shape.txt" 2>&1
echo "== faults_at_one_shape: exit $? in $((SECONDS - start)) s"; tail -4 "$OUT/faults-at-one-shape.txt" | cut -c1-200
git checkout -q tests/adversarial/solutions.json
python3 - "$PTXBENCH_DATA/ptxbench.db" <<'PY' | tee "$OUT/verdict-figures.txt"
import json, sqlite3, sys
for source, verdict in sqlite3.connect(sys.argv[1]).execute("select source_name, verdict from evaluations"):
    v = json.loads(verdict)
    for stage in v["stages"]:
        d = stage.get("details") or {}
        if stage["name"] == "time" and "sm_clock_during_mhz" in d:
            print(source, "SM clock during the timed calls (MHz):", d["sm_clock_during_mhz"],
                  "maximum", (d.get("roofline") or {}).get("sm_clock_mhz"), "below:", d.get("sm_clock_below_max"))
        if stage["name"] == "correct" and stage["status"] != "passed":
            print(source, "correct:", stage["status"], stage["message"][:400], "| located:", d.get("located"))
PY
python3 bench/harness/stage_times.py "$PTXBENCH_DATA/ptxbench.db" > "$OUT/stage-times.txt" 2>&1
tail -6 "$OUT/stage-times.txt"
