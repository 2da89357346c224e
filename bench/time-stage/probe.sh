#!/usr/bin/env bash
# Where a GPU stage's seconds go: the runner on one request of a given mode, bare and under each
# compute-sanitizer tool, with the tool following every process or the runner's alone.
#   bench/time-stage/probe.sh TASK SOLUTION MODE VARIANT...
# VARIANT: bare, or TOOL:TARGET with TOOL a compute-sanitizer tool and TARGET all (the runner and the solution
# process) or application-only (the runner alone). Prints one line per variant: its seconds and the result's
# status. Uses $PTXBENCH_BIN/ptxbench-runner (default build), python3 for Triton solutions.
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=${PTXBENCH_BIN:-build}
out=${OUT:-/tmp/probe}
mkdir -p "$out"
task=$1 solution=$2 mode=$3
shift 3
library=$solution
if [[ $solution == *.cu ]]; then
  library=$out/$(basename "$solution" .cu).so
  [[ -f $library ]] || nvcc -gencode arch=compute_90a,code=sm_90a -std=c++20 -O3 -lineinfo -shared \
    -Xcompiler -fPIC -cudart shared -lcuda -I include -I kits/common/ptx -I kits/hopper/ptx -o "$library" "$solution" || exit 2
fi
request=$out/$task-$mode.json
python3 - "tasks/sm90a/$task.json" "$mode" "$(realpath "$library")" > "$request" <<'PY'
import json, random, sys
task = json.load(open(sys.argv[1]))
entry = {"gemm": "ptxbench_gemm_bf16", "attention-forward": "ptxbench_attention_forward_bf16",
         "attention-backward": "ptxbench_attention_backward_bf16"}[task["family"]]
shapes = [dict(task["shapes"]["main"], label="main")] + task["shapes"]["check"]
request = {"mode": sys.argv[2], "library": sys.argv[3], "family": task["family"], "entry_point": entry,
           "shapes": shapes, "tolerance": task["tolerance"], "seed": random.getrandbits(62)}
for key in ("tolerances", "parameters"):
    if key in task: request[key] = task[key]
if sys.argv[3].endswith(".py"): request.update(track="triton", python="python3")
print(json.dumps(request))
PY
for variant in "$@"; do
  log=$out/$task-$mode-${variant/:/-}
  wrapper=()
  if [[ $variant != bare ]]; then
    wrapper=(compute-sanitizer --tool "${variant%%:*}" --target-processes "${variant##*:}" --log-file "$log.log"
      --print-limit 20 --error-exitcode 99)
  fi
  start=$(date +%s.%N)
  "${wrapper[@]}" "$bin/ptxbench-runner" < "$request" > "$log.json" 2> "$log.err"
  code=$?
  end=$(date +%s.%N)
  status=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["status"], "|", d["message"][:150])' "$log.json" 2>/dev/null)
  printf '%-40s %-8s %-28s %6.1f s  exit %s  %s\n' "$task" "$mode" "$variant" "$(python3 -c "print($end - $start)")" "$code" "$status"
done
