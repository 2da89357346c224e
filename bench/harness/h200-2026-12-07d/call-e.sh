#!/usr/bin/env bash
# Call E (2026-12-07, thirteenth session): the corpus's GEMM record resumed (its store in .device/store, or
# bench/harness/records/corpus-gemm), then, while END allows (default 280 s), the references alone again.
source bench/harness/h200-2026-12-05/env.sh
end=${END:-280}
(OUT=$OUT/corpus-gemm; mkdir -p "$OUT"; DEADLINE=$((end - 20)) bash bench/harness/record.sh corpus-gemm)
if ((end - SECONDS > 100)); then
  timeout -s INT $((end - SECONDS)) ptxbench run --solutions solutions --gpu-share 1 --only 'reference/*.cu' \
    --tasks gemm-bf16-n4096-k4096-sm90a,attention-fwd-d128-sm90a,attention-bwd-d64-sm90a > "$OUT/alone.txt" 2>&1
  echo "== stages alone: exit $? at $SECONDS s"
  python3 bench/harness/stage_times.py "$PTXBENCH_DATA/ptxbench.db" --run "$(sed -n 's/^run \([0-9]*\)[ :].*/\1/p' "$OUT/alone.txt" | head -1)" \
    > "$OUT/stage-times-alone.txt" 2>&1
  grep -E "^ +[0-9]+ " "$OUT/stage-times-alone.txt" | sed 's/, compile.*//' | cut -c1-140
fi
