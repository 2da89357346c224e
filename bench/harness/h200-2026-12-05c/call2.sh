#!/usr/bin/env bash
# Call 2 (2026-12-05): (1) the pattern documents' GPU test, its log kept; (2) Nsight Compute's raw page with the
# profiler feedback's sections on the multi-kernel program (a parser fixture) and which of the profile's candidate
# metrics this ncu knows; (3) the profiler feedback end to end: the reference model with --feedback profile on one
# GEMM task; (4) issue 29's adversarial corpus on the GEMM task with the time left.
source bench/harness/h200-2026-12-05/env.sh
start=$SECONDS
bash tests/gpu/kit/run_patterns.sh /tmp/kit > "$OUT/patterns-test.txt" 2>&1
echo "== patterns test: exit $? in $((SECONDS - start)) s"; tail -20 "$OUT/patterns-test.txt"

mkdir -p /tmp/mk && nvcc -gencode arch=compute_90a,code=sm_90a -O2 -lcublas -o /tmp/mk/multi_kernel \
  tests/data/ncu/multi_kernel.cu > "$OUT/multi-kernel-build.txt" 2>&1
sections=(--section SpeedOfLight --section ComputeWorkloadAnalysis --section Occupancy --section LaunchStats
  --section WarpStateStats)
timeout 120 ncu --clock-control none --profile-from-start off --metrics \
  sass__inst_executed_per_opcode_with_modifier_all,gpu__time_duration.sum "${sections[@]}" \
  --print-metric-instances details --csv --page raw /tmp/mk/multi_kernel > "$OUT/multi_kernel_sections_h200.csv" 2>&1
echo "== ncu with sections: exit $?, $(wc -c < "$OUT/multi_kernel_sections_h200.csv") bytes"
ncu --query-metrics --chip gh100 > /tmp/metrics.txt 2>&1
python3 - "$OUT/multi_kernel_sections_h200.csv" <<'PY' | tee "$OUT/profile-metrics.txt"
import csv, io, json, sys
text = open(sys.argv[1]).read()
header = next(csv.reader(io.StringIO(text[text.index('"ID"'):]))) if '"ID"' in text else []
profile = json.load(open("arch/common.json"))["profile"]
tensor = json.load(open("arch/sm_90a.json"))["profile_tensor_pipe"]
known = open("/tmp/metrics.txt").read()
for figure, names in list(profile["figures"].items()) + [("tensor_pipe_pct", tensor)]:
    for n in names:
        print(f"{figure:24s} {n:80s} in report: {n in header}; queried base known: {n.split('.')[0] in known}")
print("stall columns:", [h for h in header if h.startswith(profile["stalls"]["prefix"])])
print("tensor-like columns:", [h for h in header if "tensor" in h])
PY

start=$SECONDS
timeout -s INT 150 ptxbench run --feedback profile --tasks gemm-bf16-n4096-k4096-sm90a --json \
  > "$OUT/profile-run.json" 2> "$OUT/profile-run.txt"
echo "== profile feedback run: exit $? in $((SECONDS - start)) s"; tail -5 "$OUT/profile-run.txt"
ptxbench results --run 1 --json > "$OUT/profile-run-results.json" 2>&1
python3 - <<'PY'
import json, sqlite3, os
db = sqlite3.connect(os.environ["PTXBENCH_DATA"] + "/ptxbench.db")
for (feedback,) in db.execute("SELECT feedback FROM turns ORDER BY id"):
    print("---- turn feedback ----"); print(feedback)
PY

start=$SECONDS
timeout -s INT $((590 - SECONDS)) ptxbench run --solutions tests/adversarial --tasks gemm-bf16-n4096-k4096-sm90a \
  --stage-time-limit 60 --gpu-share 4 > "$OUT/corpus-gemm.txt" 2>&1
echo "== corpus on GEMM: exit $? in $((SECONDS - start)) s"; tail -50 "$OUT/corpus-gemm.txt"
