#!/usr/bin/env bash
# A/B of the reference attention backward's D = 64 dQ path (solutions/reference/attention_backward_sm90a.cu,
# kDq64SumInSharedMemory): "shipped" sums the two consumers' partial dQ tiles in shared memory and reduces once a
# step; "own" lets each consumer reduce its own partial (no meeting of the consumers for it, twice the dQ traffic
# in L2). The shipped value compiles to the same SASS as before the switch existed.
#
#   bench/attention-tune/backward.sh [ROUNDS]     GPU host: `ptxbench eval --stages correct,time` of both on
#                                                 attention-bwd-d64 and -d64-causal, alternating, ROUNDS times
#                                                 (default 2; about 25 s an evaluation); a table on stdout
#
# Uses build/ptxbench and build/ptxbench-runner (or $PTXBENCH_BIN); the variant's source and the store go to a
# temporary folder. Each line of the table is one evaluation: the solution's and cuDNN's medians in the same
# evaluation and the speedup; compare the solution's times across lines (cuDNN's own median moves by several
# percent between evaluations, bench/reference-attention.md).
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=${PTXBENCH_BIN:-build}
rounds=${1:-2}
work=$(mktemp -d)
export PTXBENCH_ROOT=$PWD PTXBENCH_RUNNER=${PTXBENCH_RUNNER:-$bin/ptxbench-runner} PTXBENCH_DATA=$work/data
shipped=solutions/reference/attention_backward_sm90a.cu
own=$work/attention_backward_own_reduce.cu
sed 's/^constexpr bool kDq64SumInSharedMemory = true;/constexpr bool kDq64SumInSharedMemory = false;/' \
  "$shipped" > "$own"
cmp -s "$shipped" "$own" && { echo "kDq64SumInSharedMemory = true not found in $shipped"; exit 2; }

echo "| round | task | variant | status | solution us | cuDNN us | speedup |"
echo "|---|---|---|---|---|---|---|"
for round in $(seq "$rounds"); do
  for task in attention-bwd-d64-sm90a attention-bwd-d64-causal-sm90a; do
    for variant in shipped own; do
      source=$shipped
      [[ $variant == own ]] && source=$own
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
