#!/usr/bin/env bash
# Call R (2026-12-06, fifth session): call Q's judge put the decode reference at 0.786 of the measured bandwidth
# on gqa32x4-p64 (half the KV heads, half the bytes: 222 us) against 0.873 on the 8-head tasks. Does a chunk of
# 512 tokens (twice the CTAs) lift it? The shipped reference and its kChunk = 512 variant, alternately, twice
# each, through `ptxbench eval --stages correct,time` on both page-64 shapes of 32 query heads.
source bench/harness/h200-2026-12-05/env.sh
sed 's/constexpr int kChunk = 1024; /constexpr int kChunk = 512;  /' solutions/reference/attention_decode_paged_sm90a.cu \
  > /tmp/chunk512.cu
grep -c "kChunk = 512" /tmp/chunk512.cu
for round in 1 2; do
  for task in attention-decode-gqa32x4-d128-p64-sm90a attention-decode-gqa32x8-d128-p64-sm90a; do
    for solution in solutions/reference/attention_decode_paged_sm90a.cu /tmp/chunk512.cu; do
      ptxbench eval "$solution" --task "$task" --stages correct,time --json > /tmp/v.json 2>/dev/null
      python3 -c "
import json,sys; v=json.load(open('/tmp/v.json')); d=next(s for s in v['stages'] if s['name']=='time')['details']
print(sys.argv[1], sys.argv[2], v['status'], 'share %.3f' % d['roofline_share']['solution']['bandwidth'], 'median %.1f us' % d['solution']['event_us']['median'])" \
        "$task" "$(basename "$solution")" 2>&1 | tee -a "$OUT/chunk.txt"
    done
  done
done
