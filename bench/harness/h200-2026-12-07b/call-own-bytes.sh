#!/usr/bin/env bash
# Issue 31, 2026-12-07 (eleventh session): the shipped decode reference with call Y's own-bytes edit (each
# producer warp announces its own rows' bytes), in batch order, through the judge on the four decode tasks: every
# stage once, then the correct and time stages twice more (three figures of the bandwidth share a task).
source bench/harness/h200-2026-12-05/env.sh
source bench/harness/share.sh
reference=solutions/reference/attention_decode_paged_sm90a.cu
tasks=(attention-decode-gqa32x8-d128-p1-sm90a attention-decode-gqa32x4-d128-p64-sm90a
  attention-decode-gqa32x8-d128-p64-sm90a attention-decode-gqa64x8-d128-p64-sm90a)
for task in "${tasks[@]}"; do share $reference "$task"; done
for round in 1 2; do
  for task in "${tasks[@]}"; do share $reference "$task" --stages correct,time; done
done
