#!/usr/bin/env bash
# The time stage over the range of call lengths, under the sandbox, through `ptxbench eval`: a correct GEMM
# followed by a kernel of a set length (spin_gemm.cu), on a task of its own (timing-sweep-gemm-sm90a.json, a 64 x 64 x 64
# GEMM), so that one honest call lasts from about 10 us (no extra kernel) to 1 s. Each length must pass the
# time stage with its times verified; the table shows how far the honest round trip stayed from its allowance.
#   bench/timing/sweep.sh [LENGTH_US...]   (default: 0 10 100 300 1000 3000 10000 100000 1000000)
# Uses build/ptxbench and build/ptxbench-runner (or $PTXBENCH_BIN); writes the verdicts under $OUT (default
# bench/timing/out). Exits non-zero when a length did not pass.
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=${PTXBENCH_BIN:-build}
out=${OUT:-bench/timing/out}
mkdir -p "$out"
export PTXBENCH_RUNNER=$bin/ptxbench-runner PTXBENCH_DATA=${PTXBENCH_DATA:-$out/data}
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/tasks/sm90a"
cp -r include kits "$root/"
cp bench/timing/timing-sweep-gemm-sm90a.json "$root/tasks/sm90a/"
lengths=("$@")
((${#lengths[@]})) || lengths=(0 10 100 300 1000 3000 10000 100000 1000000)
for us in "${lengths[@]}"; do
  sed "s/^#define SPIN_US .*/#define SPIN_US $us/" bench/timing/spin_gemm.cu >"$root/spin_gemm_$us.cu"
  "$bin/ptxbench" --root "$root" eval "$root/spin_gemm_$us.cu" --task timing-sweep-gemm-sm90a \
    --stages correct,time --json >"$out/sweep_$us.json"
  echo "spin $us us: exit $?"
done
python3 - "$out" "${lengths[@]}" <<'PY'
import json, sys
out, lengths = sys.argv[1], sys.argv[2:]
print("| spin | event median | round trip median | calibrated (applied) | allowed | verified | time stage | speedup |")
print("|---|---|---|---|---|---|---|---|")
failed = 0
for us in lengths:
    v = json.load(open(f"{out}/sweep_{us}.json"))
    t = next(s for s in v["stages"] if s["name"] == "time")
    d = t.get("details") or {}
    s, c = d.get("solution") or {}, d.get("calibration") or {}
    ev = s.get("event_us", {}).get("median", float("nan"))
    rt = s.get("round_trip_us", {}).get("median", float("nan"))
    applied = c.get("round_trip_us", float("nan"))
    allowed = applied + max(50.0, 0.02 * ev)
    ok = t["status"] == "passed" and d.get("times_verified") is True
    failed += not ok
    speedup = d.get("speedup")
    print(f"| {us} us | {ev:.1f} us | {rt:.1f} us | {applied:.1f} us | {allowed:.1f} us | {d.get('times_verified')} "
          f"| {t['status']} | {speedup if speedup is None else round(speedup, 4)} |")
    if not ok:
        print(f"  {us} us: {t['message']}")
rungs = json.load(open(f"{out}/sweep_{lengths[0]}.json"))
rungs = next(s for s in rungs["stages"] if s["name"] == "time").get("details", {}).get("calibration", {}).get("rungs")
print("calibration rungs of the first length:", json.dumps(rungs))
sys.exit(1 if failed else 0)
PY
