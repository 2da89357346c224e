#!/usr/bin/env bash
# Call T (2026-12-06, sixth session; issue 31): decode_probe.sh's variants of the decode reference, pages of one
# token (more producer warps, with and without setmaxnreg) and the 4-KV-head task (chunks of 512 and 256
# tokens); then issue 32's interleaved placement probe. About 3 minutes.
source bench/harness/h200-2026-12-05/env.sh
start=$SECONDS
bash bench/harness/h200-2026-12-06e/decode_probe.sh 2>&1 | tee "$OUT/decode-probe.txt"
echo "== decode probe: $((SECONDS - start)) s"
# Issue 32: placements taking turns call by call in four processes (bench/time-stage/placement_interleaved.cu).
start=$SECONDS
bash bench/time-stage/placement_interleaved.sh gemm 1 2 3 4 | grep -E "==|all "
echo "== placement probe: $((SECONDS - start)) s"
