#!/usr/bin/env bash
# The same solution evaluated N times, each in a process of its own (`ptxbench eval`: the attention baseline is
# measured anew each time), on each task: every speedup, and their spread (max - min over the median).
#   bench/time-stage/spread.sh N SOLUTION TASK...
# Runs the correct and time stages only. Uses ptxbench from PATH; keeps each verdict under $OUT (default
# /tmp/spread).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/spread}
mkdir -p "$out"
runs=$1 solution=$2
shift 2
for task in "$@"; do
  for ((i = 1; i <= runs; i++)); do
    ptxbench eval "$solution" --task "$task" --stages correct,time --json > "$out/$task-$(basename "$solution")-$i.json" 2> /dev/null
  done
  python3 - "$out" "$task" "$(basename "$solution")" "$runs" <<'PY'
import json, statistics, sys
out, task, solution, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
speedups, times, baselines, placements, clocks = [], [], [], [], []
for i in range(1, runs + 1):
    try:
        v = json.load(open(f"{out}/{task}-{solution}-{i}.json"))
    except (OSError, ValueError):
        continue
    time = next((s for s in v.get("stages", []) if s.get("name") == "time"), {})
    d = time.get("details") or {}
    if isinstance(v.get("speedup"), (int, float)):
        speedups.append(v["speedup"])
        times.append(d["solution"]["event_us"]["median"])
        baselines.append(d["baseline"]["event_us"]["median"])
        placements.append(d.get("placement") or {})
        clocks.append((d.get("sm_clock_during_mhz") or {}).get("median"))
if len(speedups) < 2:
    print(f"{task:40s} {solution:28s} {len(speedups)} speedups of {runs}: no spread")
    sys.exit()
spread = lambda xs: (max(xs) - min(xs)) / statistics.median(xs) * 100
print(f"{task:40s} {solution:28s} speedups {' '.join(f'{s:.3f}' for s in speedups)}: spread {spread(speedups):.1f}% "
      f"(solution us {spread(times):.1f}%, baseline us {spread(baselines):.1f}%)")
# Each run's solution time beside the SM clock after its calls (median) and where its buffers lay (each one's
# offset in its allocation, in bytes), where the verdict says.
for us, mhz, placement in zip(times, clocks, placements):
    if placement:
        print(f"    {us:10.1f} us  {mhz or 0:6.0f} MHz  " + " ".join(f"{k} {v}" for k, v in sorted(placement.items())))
PY
done
