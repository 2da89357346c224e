#!/usr/bin/env bash
# Call 3 (2026-12-05, late): every attention reference (CUDA and Triton, forward and backward, and the paged
# decode) on every task it serves, four evaluations sharing the GPU: the rule after the time stage's change
# (the baseline behind a spin, f93094b) and this session's (bytecode, one Triton cache per evaluation). Then
# whether the bytecode warm-up wrote anything beside the installation's sources (it must not).
source bench/harness/h200-2026-12-05/env.sh
dir=$(python3 -c "import triton, os; print(os.path.dirname(triton.__file__))")
echo "before: $(find "$dir" -name '*.pyc' | wc -l) .pyc beside Triton's sources" > "$OUT/installation.txt"
start=$SECONDS
timeout -s INT 560 ptxbench run --solutions solutions --only 'reference/attention_*' --gpu-share 4 \
  > "$OUT/attention-references.txt" 2>&1
echo "== attention references: exit $? in $((SECONDS - start)) s"; grep -c "passed\|failed" "$OUT/attention-references.txt"
grep -v "  passed  " "$OUT/attention-references.txt" | tail -8 | cut -c1-220
echo "after: $(find "$dir" -name '*.pyc' | wc -l) .pyc beside Triton's sources" >> "$OUT/installation.txt"
cat "$OUT/installation.txt"
python3 bench/harness/stage_times.py "$PTXBENCH_DATA/ptxbench.db" > "$OUT/stage-times.txt" 2>&1
tail -6 "$OUT/stage-times.txt"
