#!/usr/bin/env bash
# Issue 32 (2026-12-07, thirteenth session): can the instructions stage run beside the sanitize stage?
# With main's binaries bundled in .device/head. For three references (GEMM n4096, attention forward d64,
# backward d64), in order:
#   A. the instructions stage alone, as shipped (ncu with the launch metrics, gpu__time_duration included);
#   B. the same without gpu__time_duration (an `ncu` first on PATH that drops it: no counter pass);
#   C. B's instructions stage and the sanitize stage started together, as two evaluations;
#   D. the sanitize stage alone.
# Each verdict's stage statuses and seconds go to $OUT/overlap.txt; ncu's own pass lines to $OUT/ncu-*.log.
source bench/harness/h200-2026-12-05/env.sh
export PATH=$PWD/.device/head/bin:$PATH LD_LIBRARY_PATH=$PWD/.device/head/lib
export PTXBENCH_RUNNER=.device/head/bin/ptxbench-runner PTXBENCH_DATA=/tmp/h/head
mkdir -p "$PTXBENCH_DATA"
real_ncu=$(command -v ncu)
wrap=$PWD/.device/ncu-no-duration
mkdir -p "$wrap"
cat > "$wrap/ncu" <<WRAP
#!/bin/bash
args=()
for a in "\$@"; do args+=("\${a/,gpu__time_duration.sum/}"); done
exec $real_ncu "\${args[@]}"
WRAP
chmod +x "$wrap/ncu"
declare -A task=([gemm_bf16_sm90a]=gemm-bf16-n4096-k4096-sm90a [attention_forward_sm90a]=attention-fwd-d64-sm90a
  [attention_backward_sm90a]=attention-bwd-d64-sm90a)
summary() {  # label, verdict json
  python3 - "$1" "$2" >> "$OUT/overlap.txt" <<'PY'
import json, sys
label, path = sys.argv[1], sys.argv[2]
try:
    v = json.load(open(path))
except Exception as e:
    print(f"{label}: no verdict ({e})"); sys.exit()
parts = []
for s in v.get("stages", []):
    if s.get("status") in ("skipped", None) and "not requested" in s.get("message", ""): continue
    d = s.get("details") or {}
    extra = ""
    if s["name"] == "instructions":
        extra = f" phases {d.get('phases_s')} coverage {v.get('coverage')}"
    parts.append(f"{s['name']} {s['status']} {s.get('wall_s', 0):.2f}s{extra} {s.get('message','')[:120]}")
print(f"{label}: " + " | ".join(parts))
PY
}
eval1() {  # label stages solution task [PATH prefix]
  local label=$1 stages=$2 sol=$3 t=$4 prefix=${5:-}
  local start=$SECONDS
  PATH=${prefix:+$prefix:}$PATH ptxbench eval "solutions/reference/$sol.cu" --task "$t" --stages "$stages" \
    --no-store --json > "$OUT/$label.json" 2> "$OUT/$label.err"
  echo "== $label: exit $? in $((SECONDS - start)) s" >> "$OUT/overlap.txt"
  summary "$label" "$OUT/$label.json"
}
for sol in gemm_bf16_sm90a attention_forward_sm90a attention_backward_sm90a; do
  t=${task[$sol]}
  ptxbench eval "solutions/reference/$sol.cu" --task "$t" --cpu-only --no-store > /dev/null 2>&1  # the compile
  for round in 1 2; do
    eval1 "A$round-$sol" instructions $sol "$t"
    eval1 "B$round-$sol" instructions $sol "$t" "$wrap"
  done
  start=$SECONDS
  eval1 "C-instructions-$sol" instructions $sol "$t" "$wrap" &
  eval1 "C-sanitize-$sol" sanitize $sol "$t" &
  wait
  echo "== C-$sol: both in $((SECONDS - start)) s" >> "$OUT/overlap.txt"
  eval1 "D-$sol" sanitize $sol "$t"
  echo "== $sol done at $SECONDS s"
done
cat "$OUT/overlap.txt"
