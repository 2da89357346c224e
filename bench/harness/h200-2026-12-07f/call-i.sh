#!/usr/bin/env bash
# Prepared 2026-12-07, fifteenth session: what owed item 21 wants of an H200, main's binaries of 40f8166 in
# .device, in at most LIMIT seconds (default 570; each step starts only with its time left):
#   0. the interleaved placement probe on the causal backward, two processes for each of three seeds
#      (bench/time-stage/placement_interleaved.sh): do its placements spread as its evaluations do?
#   1. the causal backward reference 10 times, each run's time beside the SM clock after its calls and where
#      its buffers lay (issue 32: is its 3.9% between processes the placement each evaluation draws?);
#   2. the decode reference on the four decode tasks, every stage once and then correct and time twice more
#      (issue 31: the share of the measured bandwidth on an H200; ../h200-2026-12-07b/call-own-bytes.sh's runs);
#   3. five-run spreads of the GEMM reference at n4096 and the forward reference at d128 causal, two of the
#      spreads over 1% in ../h200-2026-12-07d/ (on an H100).
source bench/harness/h200-2026-12-05/env.sh
source bench/harness/share.sh
limit=${LIMIT:-570}
fits() { ((limit - SECONDS >= $1)); }  # fits SECONDS: that many are left
spread() {                             # spread LIMIT RUNS SOLUTION TASK
  (OUT=$OUT/spread timeout "$1" bash bench/time-stage/spread.sh "${@:2}") | tee -a "$OUT/spread.txt"
  echo "== spread of $3 on $4: at $SECONDS s"
}
timeout 90 bash bench/time-stage/placement_interleaved.sh backward-causal 1 1 2 2 3 3 | grep -E "==|all "
echo "== placement probe: at $SECONDS s"
fits 150 && spread $((limit - SECONDS < 200 ? limit - SECONDS : 200)) 10 \
  solutions/reference/attention_backward_sm90a.cu attention-bwd-d64-causal-sm90a
decode=(attention-decode-gqa32x8-d128-p1-sm90a attention-decode-gqa32x4-d128-p64-sm90a
  attention-decode-gqa32x8-d128-p64-sm90a attention-decode-gqa64x8-d128-p64-sm90a)
reference=solutions/reference/attention_decode_paged_sm90a.cu
for task in "${decode[@]}"; do fits 40 && share $reference "$task"; done
for round in 1 2; do
  for task in "${decode[@]}"; do fits 20 && share $reference "$task" --stages correct,time; done
done
echo "== decode: at $SECONDS s"
fits 100 && spread $((limit - SECONDS)) 5 solutions/reference/gemm_bf16_sm90a.cu gemm-bf16-n4096-k4096-sm90a
fits 100 && spread $((limit - SECONDS)) 5 solutions/reference/attention_forward_sm90a.cu \
  attention-fwd-d128-causal-sm90a
