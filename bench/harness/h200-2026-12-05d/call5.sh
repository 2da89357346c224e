#!/usr/bin/env bash
# Call 5 (2026-12-05, evening): the attention baseline's calls queued behind a 1 ms spin (solution::kBehindSpin):
# the 5-run spreads again, with the binaries of this change.
source bench/harness/h200-2026-12-05/env.sh
start=$SECONDS
for pair in attention_forward_sm90a.cu:attention-fwd-d64-sm90a attention_forward_sm90a.cu:attention-fwd-d128-causal-sm90a \
  attention_backward_sm90a.cu:attention-bwd-d64-causal-sm90a; do
  OUT=$OUT/spread timeout -s INT 75 bench/time-stage/spread.sh 5 solutions/reference/${pair%%:*} ${pair#*:}
done | tee "$OUT/spread-attention.txt"
echo "== attention spreads: $((SECONDS - start)) s"
python3 - "$OUT/spread" <<'PY'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    try:
        v = json.load(open(f))
    except ValueError:
        continue
    t = next((s for s in v.get("stages", []) if s["name"] == "time"), {})
    b = (t.get("details") or {}).get("baseline") or {}
    d = b.get("dispatch_us") or {}
    print(f.rsplit("/", 1)[1][:60], v.get("status"), "baseline", (b.get("event_us") or {}).get("median"),
          "dispatch median", d.get("median"), "max", d.get("max"), "outran", b.get("dispatch_outran_spin"))
PY
