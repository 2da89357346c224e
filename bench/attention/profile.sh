#!/usr/bin/env bash
# Nsight Compute profile of an attention solution's kernels at one task's main shape, for the "why" of a speed
# gap: tensor-pipe utilisation, issue stalls, memory throughput.
#
#   bench/attention/profile.sh build SOLUTION.cu...     any host with nvcc: the solutions as the judge builds them
#                                                       (shared libraries) and the driver, into $BUILD_DIR
#   bench/attention/profile.sh run NAME TASK [KERNEL_REGEX]
#                                                       GPU host: `ncu --set full` of the second call's launches of
#                                                       KERNEL_REGEX (default: every kernel) of solution NAME (the
#                                                       .cu's base name) at the main shape of task TASK (its id);
#                                                       the report and text summaries in $OUT
#
# BUILD_DIR defaults to build/attention-profile, OUT to bench/attention/out.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${BUILD_DIR:-$root/build/attention-profile}"
out="${OUT:-$root/bench/attention/out}"
flags=(-gencode arch=compute_90a,code=sm_90a -std=c++20 -O3)

case "${1:-}" in
  build)
    shift
    mkdir -p "$build"
    for solution in "$@"; do
      nvcc "${flags[@]}" -shared -Xcompiler -fPIC -cudart shared -lcuda -I "$root/include" \
        -I "$root/kits/common/ptx" -I "$root/kits/hopper/ptx" "$solution" -o "$build/$(basename "$solution" .cu).so"
    done
    nvcc "${flags[@]}" -I "$root/include" "$root/bench/attention/profile_driver.cu" -o "$build/profile_driver" -ldl
    ;;
  run)
    name=$2 task=$3 kernels=${4:-}
    mkdir -p "$out"
    # direction D causal B Hq Hkv Sq Sk, from the task file.
    read -r direction d causal shape < <(python3 - "$root/tasks/sm90a/$task.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
m = t["shapes"]["main"]
print("bwd" if t["family"] == "attention-backward" else "fwd", m["D"], int(t["parameters"]["causal"]),
      *(m[k] for k in ("B", "Hq", "Hkv", "Sq", "Sk")))
PY
    )
    report="$out/$name-$task"
    filter=()
    [[ -n $kernels ]] && filter=(--kernel-name "regex:$kernels")
    # The launches of the second call only (the first pays its module's load): one of a named kernel, else every
    # kernel of a call (the reference forward launches one, the reference backward three; LAUNCHES for others).
    per_call=${LAUNCHES:-$([[ -n $kernels || $direction == fwd ]] && echo 1 || echo 3)}
    # Clocks as the judge's profile leaves them (not locked to base), so durations compare with the time stage.
    ncu --set full --clock-control none --import-source no "${filter[@]}" --launch-skip "$per_call" --launch-count "$per_call" \
      --export "$report" --force-overwrite "$build/profile_driver" "$build/$name.so" "$direction" "$d" "$causal" 1 \
      $shape
    ncu --import "$report.ncu-rep" --page details --print-units base > "$report.txt"
    # The tensor pipes' share of the elapsed cycles, then the issue-stall samples by reason, most first.
    ncu --import "$report.ncu-rep" --page raw --print-units base | sed 's/,//g' > "$report-raw.txt"
    { grep -E "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed" "$report-raw.txt"
      grep -E "pcsamp_warps_issue_stalled_[a-z_]+ " "$report-raw.txt" | grep -v _not_issued | sort -k3 -n -r
    } > "$report-stalls.txt" || true
    echo "report: $report.ncu-rep, summary: $report.txt ($per_call launches per call)"
    grep -E "^  [^ ]|Duration|Compute \(SM\) Throughput|Memory Throughput|Registers Per|Achieved Occupancy|Issue Slots Busy|No Eligible|One or More Eligible|Warp Cycles Per Issued" \
      "$report.txt" || true
    head -13 "$report-stalls.txt"
    ;;
  *)
    sed -n 2,14p "$0"
    exit 2
    ;;
esac
