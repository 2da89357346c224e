#!/usr/bin/env bash
# Owed call B (README.md): every shipped solution on every task it serves, after the GPU stages changed.
source bench/harness/h200-2026-12-05/env.sh
start=$SECONDS
timeout -s INT 560 ptxbench run --solutions solutions --gpu-share 4 > "$OUT/shipped-run.txt" 2>&1
echo "== shipped solutions: exit $? in $((SECONDS - start)) s"; tail -12 "$OUT/shipped-run.txt"
