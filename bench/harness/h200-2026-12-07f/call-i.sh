#!/usr/bin/env bash
# Prepared 2026-12-07, fifteenth session: what owed item 21 wants of an H200, main's binaries of 40f8166 in
# .device, at most 580 s:
#   0. the interleaved placement probe on the causal backward, two processes for each of three seeds
#      (bench/time-stage/placement_interleaved.sh): do its placements spread as its evaluations do?
#   1. the causal backward reference 10 times, each run's time beside the SM clock after its calls and where
#      its buffers lay (issue 32: is its 3.9% between processes the placement each evaluation draws?);
#   2. the decode reference on the four decode tasks, every stage once and then correct and time twice more
#      (issue 31: the share of the measured bandwidth on an H200; ../h200-2026-12-07b/call-own-bytes.sh's runs);
#   3. five-run spreads of the GEMM reference at n4096 and the forward reference at d128 causal, two of the
#      spreads over 1% in ../h200-2026-12-07d/ (on an H100), as long as time is left.
source bench/harness/h200-2026-12-05/env.sh
source bench/harness/share.sh
spread() {  # spread LIMIT RUNS SOLUTION TASK
  (OUT=$OUT/spread timeout "$1" bash bench/time-stage/spread.sh "${@:2}") | tee -a "$OUT/spread.txt"
  echo "== spread of $3 on $4: at $SECONDS s"
}
timeout 90 bash bench/time-stage/placement_interleaved.sh backward-causal 1 1 2 2 3 3 | grep -E "==|all "
echo "== placement probe: at $SECONDS s"
spread 200 10 solutions/reference/attention_backward_sm90a.cu attention-bwd-d64-causal-sm90a
decode=(attention-decode-gqa32x8-d128-p1-sm90a attention-decode-gqa32x4-d128-p64-sm90a
  attention-decode-gqa32x8-d128-p64-sm90a attention-decode-gqa64x8-d128-p64-sm90a)
for task in "${decode[@]}"; do share solutions/reference/attention_decode_paged_sm90a.cu "$task"; done
for round in 1 2; do
  for task in "${decode[@]}"; do
    share solutions/reference/attention_decode_paged_sm90a.cu "$task" --stages correct,time
  done
done
echo "== decode: at $SECONDS s"
((SECONDS < 400)) && spread $((560 - SECONDS)) 5 solutions/reference/gemm_bf16_sm90a.cu gemm-bf16-n4096-k4096-sm90a
((SECONDS < 480)) &&
  spread $((570 - SECONDS)) 5 solutions/reference/attention_forward_sm90a.cu attention-fwd-d128-causal-sm90a
