# share SOLUTION TASK [eval options]: one evaluation, as one line of its status, share of the read bandwidth,
# median time and stages; the line goes to $OUT/decode-judge.txt. LIMIT: each GPU stage's seconds (60). Sourced by
# the calls that judge the decode reference (h200-2026-12-06e/call-v.sh, h200-2026-12-06h/call-z.sh).
share() {
  local solution=$1 task=$2; shift 2
  ptxbench eval "$solution" --task "$task" --json --stage-time-limit "${LIMIT:-60}" "$@" > /tmp/v.json 2>/dev/null
  python3 -c "
import json, sys
v = json.load(open('/tmp/v.json'))
t = next((s for s in v['stages'] if s['name'] == 'time'), {}).get('details') or {}
share = t.get('roofline_share', {}).get('solution', {}).get('bandwidth')
median = t.get('solution', {}).get('event_us', {}).get('median')
print(sys.argv[1], sys.argv[2], v['status'], 'share', share, 'median_us', median,
      ' '.join(s['name'] + ':' + s['status'] for s in v['stages']))
for s in v['stages']:
    if s['status'] not in ('passed', 'skipped'): print('  ', s['name'], (s.get('message') or '')[:300])" \
    "$task" "$(basename "$solution")" 2>&1 |
    tee -a "$OUT/decode-judge.txt"
}
