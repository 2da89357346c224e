#!/usr/bin/env bash
# Call I's first step again (its request asked for 5 repetitions, under the runner's minimum of 30, and was refused):
# a hung call attached by cuda-gdb as the runner attaches, with the loader's account of the solution process.
source bench/harness/h200-2026-12-05/env.sh
probe=$OUT/gdb; mkdir -p "$probe"
nvcc -gencode arch=compute_90a,code=sm_90a -std=c++20 -O3 -lineinfo -shared -Xcompiler -fPIC -cudart shared \
  -lcuda -I include -o "$probe/never_ends.so" tests/gpu/runner/solutions/never_ends.cu > "$probe/nvcc.log" 2>&1
sed -n '/^printf/,/request.json"$/p' bench/harness/h200-2026-12-06b/call-i.sh > "$probe/request.sh"
source "$probe/request.sh"
mkdir -p /tmp/ld-probe
LD_DEBUG=libs LD_DEBUG_OUTPUT=/tmp/ld-probe/ld timeout -s INT 60 .device/bin/ptxbench-runner \
  < "$probe/request.json" > "$probe/result.json" 2> "$probe/stderr.txt"
echo "== hung call with LD_DEBUG=libs: exit $? at $SECONDS s"
cp -r /tmp/ld-probe "$probe/"
grep -n -i -E "debugger" "$probe/stderr.txt" | head -5 | cut -c1-240
grep -l -i "cudadebugger" /tmp/ld-probe/* | head; grep -h -i -B2 -A4 "cudadebugger" /tmp/ld-probe/* | head -40 | cut -c1-200
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["check"]["message"]); print(r["check"]["runtime_error"].get("debugger_output","")[-1500:])' \
  "$probe/result.json" 2>&1 | tail -30
