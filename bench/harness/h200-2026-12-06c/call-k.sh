#!/usr/bin/env bash
# Call K (2026-12-06, fourth session): after call J (../h200-2026-12-06b/call-j.sh).
# 1. gdb_probe.sh: why cuda-gdb could not attach to the rerun of a hung call.
# 2. decode_probe.sh: where the decode reference's time goes (0.47-0.51 of the read bandwidth in call J).
# 3. The decode reference on its four tasks with their new O tolerance (atol 0.01, the causal forward's).
source bench/harness/h200-2026-12-05/env.sh
step() { echo "== $1: exit $2 at $SECONDS s"; }
mkdir -p "$OUT/gdb"
OUT=$OUT/gdb timeout 200 bash bench/harness/h200-2026-12-06c/gdb_probe.sh > "$OUT/gdb-probe.txt" 2>&1
step "gdb probe" $? ; cat "$OUT/gdb-probe.txt" | cut -c1-220
timeout 200 bash bench/harness/h200-2026-12-06c/decode_probe.sh > "$OUT/decode-probe.txt" 2>&1
step "decode probe" $?; cat "$OUT/decode-probe.txt" | cut -c1-260
timeout -s INT 150 ptxbench run --solutions solutions --gpu-share 1 \
  --only 'reference/attention_decode_paged_sm90a.cu' --tasks 'attention-decode-*-sm90a' > "$OUT/decode.txt" 2>&1
step "the decode reference" $?
grep -E "as expected: (yes|no|NO)" "$OUT/decode.txt" | cut -c1-300
