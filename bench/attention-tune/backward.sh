#!/usr/bin/env bash
# A/B of the reference attention backward (solutions/reference/attention_backward_sm90a.cu) against another
# version of it, on the GPU host, through the judge: `ptxbench eval --stages correct,time` of both, alternating, on
# each task, ROUNDS times.
#
#   bench/attention-tune/backward.sh OTHER.cu [ROUNDS] [TASK...]
#       OTHER.cu  the other version (for instance `git show REV:solutions/reference/attention_backward_sm90a.cu`)
#       ROUNDS    default 2; about 25 s an evaluation
#       TASK      default attention-bwd-d64-sm90a attention-bwd-d64-causal-sm90a
#
# Uses build/ptxbench and build/ptxbench-runner (or $PTXBENCH_BIN); the store goes to a temporary folder. Each line
# of the table is one evaluation: the solution's and cuDNN's medians in the same evaluation and the speedup;
# compare the solution's times across lines (cuDNN's own median moves by several percent between evaluations,
# bench/reference-attention.md).
set -uo pipefail
other=$(realpath "${1:?usage: backward.sh OTHER.cu [ROUNDS] [TASK...]}")
rounds=${2:-2}
shift $(($# < 2 ? $# : 2))
tasks=("$@")
((${#tasks[@]})) || tasks=(attention-bwd-d64-sm90a attention-bwd-d64-causal-sm90a)
cd "$(dirname "$0")/../.."
bin=${PTXBENCH_BIN:-build}
work=$(mktemp -d)
export PTXBENCH_ROOT=$PWD PTXBENCH_RUNNER=${PTXBENCH_RUNNER:-$bin/ptxbench-runner} PTXBENCH_DATA=$work/data
shipped=solutions/reference/attention_backward_sm90a.cu

echo "| round | task | variant | status | solution us | cuDNN us | speedup |"
echo "|---|---|---|---|---|---|---|"
for round in $(seq "$rounds"); do
  for task in "${tasks[@]}"; do
    for variant in shipped other; do
      source=$shipped
      [[ $variant == other ]] && source=$other
      "$bin/ptxbench" eval "$source" --task "$task" --stages correct,time --json > "$work/verdict.json" 2>/dev/null
      python3 - "$work/verdict.json" "$round" "$task" "$variant" <<'PY'
import json, sys
path, round_, task, variant = sys.argv[1:]
try:
    v = json.load(open(path))
except ValueError:
    print(f"| {round_} | {task} | {variant} | no verdict | - | - | - |")
    sys.exit()
time = next((s.get("details") or {} for s in v["stages"] if s["name"] == "time"), {})
median = lambda series: (((time.get(series) or {}).get("event_us") or {}).get("median"))
fmt = lambda x, spec: format(x, spec) if isinstance(x, (int, float)) else "-"
print(f"| {round_} | {task} | {variant} | {v['status']} | {fmt(median('solution'), '.1f')} | "
      f"{fmt(median('baseline'), '.1f')} | {fmt(v.get('speedup'), '.3f')} |")
PY
    done
  done
done
