#!/usr/bin/env bash
# Call V (prepared 2026-12-06, sixth session; issue 31): the decode reference of 04b9f93 (four producer warps,
# setmaxnreg) through the judge, every stage, on its four tasks; then twice more each with the correct and time
# stages alone, for three shares of the read bandwidth per task; then chunks of 512 tokens against the shipped
# 1024 on the 4-KV-head task (its CTAs are half the 8-head tasks'), alternately, three times each; then issue
# 32's interleaved placement probe, which call T did not reach. About 4 minutes.
source bench/harness/h200-2026-12-05/env.sh
share() {  # share SOLUTION TASK [eval options]: one line of the verdict's status and time figures
  local solution=$1 task=$2; shift 2
  ptxbench eval "$solution" --task "$task" --json "$@" > /tmp/v.json 2>/dev/null
  python3 -c "
import json, sys
v = json.load(open('/tmp/v.json'))
t = next((s for s in v['stages'] if s['name'] == 'time'), {}).get('details') or {}
share = t.get('roofline_share', {}).get('solution', {}).get('bandwidth')
median = t.get('solution', {}).get('event_us', {}).get('median')
print(sys.argv[1], sys.argv[2], v['status'], 'share', share, 'median_us', median,
      ' '.join(s['name'] + ':' + s['status'] for s in v['stages']))" "$task" "$(basename "$solution")" 2>&1 |
    tee -a "$OUT/decode-judge.txt"
}
start=$SECONDS
reference=solutions/reference/attention_decode_paged_sm90a.cu
tasks=(attention-decode-gqa32x8-d128-p1-sm90a attention-decode-gqa32x4-d128-p64-sm90a
  attention-decode-gqa32x8-d128-p64-sm90a attention-decode-gqa64x8-d128-p64-sm90a)
for task in "${tasks[@]}"; do share "$reference" "$task"; done
for round in 1 2; do for task in "${tasks[@]}"; do share "$reference" "$task" --stages correct,time; done; done
echo "== the reference through the judge: $((SECONDS - start)) s"
sed 's/constexpr int kChunk = 1024; /constexpr int kChunk = 512;  /' "$reference" > /tmp/chunk512.cu
grep -q "kChunk = 512" /tmp/chunk512.cu || { echo "the chunk edit changed nothing"; exit 1; }
for round in 1 2 3; do
  for solution in "$reference" /tmp/chunk512.cu; do
    share "$solution" attention-decode-gqa32x4-d128-p64-sm90a --stages correct,time
  done
done
echo "== chunks: $((SECONDS - start)) s"
start=$SECONDS
bash bench/time-stage/placement_interleaved.sh 4 | grep -E "==|all "
echo "== placement probe: $((SECONDS - start)) s"
