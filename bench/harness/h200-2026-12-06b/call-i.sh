#!/usr/bin/env bash
# Call I (2026-12-06, third session): call H's first two steps, then the whole of the CUDA attention references
# (which holds call H's third step, the reference forward on every forward task) at the GPU stages of 06f01a8 or
# later:
# 1. why cuda-gdb's attach to a hung solution process finds no CUDA debugger back-end (call G): where the
#    back-end is on this host, and what the solution process looks for when cuda-gdb attaches (LD_DEBUG);
# 2. the reference model under each context policy (issue 34's record), which call G lost to the 4 MB cut;
# 3. `../h200-owed/manifest.sh attention-cuda`, within the call's deadline (END, default 590 s).
source bench/harness/h200-2026-12-05/env.sh
end=${END:-590}
step() { echo "== $1: exit $2 at $3 s"; }
left() { local n=$(($1 - SECONDS)); echo $((n > 1 ? n : 1)); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
# 1. The CUDA debugger back-end: where the driver's is, then a hung call attached as the runner attaches.
{ ldconfig -p | grep -i -E "cudadebugger|libcuda\.so"; ls -la /usr/lib/x86_64-linux-gnu/libcudadebugger* ; } 2>&1 | head
probe=$OUT/gdb; mkdir -p "$probe"
nvcc -gencode arch=compute_90a,code=sm_90a -std=c++20 -O3 -lineinfo -shared -Xcompiler -fPIC -cudart shared \
  -lcuda -I include -o "$probe/never_ends.so" tests/gpu/runner/solutions/never_ends.cu > "$probe/nvcc.log" 2>&1
printf '{"mode":"check_then_time","library":"%s","family":"gemm","entry_point":"ptxbench_gemm_bf16","shapes":%s,%s}\n' \
  "$probe/never_ends.so" '[{"label":"main","M":2048,"N":2048,"K":2048}]' \
  '"tolerance":{"rtol":0.01,"atol":0.01},"trials":1,"seed":1,"warmup":1,"repetitions":30,"device":0,"check_limit_s":8,"time_limit_s":8,"debugger":"cuda-gdb"' \
  > "$probe/request.json"
mkdir -p /tmp/ld-probe
LD_DEBUG=libs LD_DEBUG_OUTPUT=/tmp/ld-probe/ld timeout -s INT 40 .device/bin/ptxbench-runner \
  < "$probe/request.json" > "$probe/result.json" 2> "$probe/stderr.txt"
step "hung call with LD_DEBUG=libs" $? $SECONDS
cp -r /tmp/ld-probe "$probe/"
grep -n -i -E "debugger" "$probe/stderr.txt" | head -5 | cut -c1-240
grep -l -i "cudadebugger" /tmp/ld-probe/* | head; grep -h -i -B2 -A4 "cudadebugger" /tmp/ld-probe/* | head -40 | cut -c1-200
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["check"]["runtime_error"].get("debugger_output","")[-600:])' \
  "$probe/result.json" 2>&1 | tail -12
# 2. The reference model per context policy.
for policy in compact full last-pair; do
  timeout "$(left $((end - 330)))" ptxbench run --context "$policy" --gpu-share 2 \
    --tasks gemm-bf16-n4096-k4096-sm90a,attention-fwd-d64-sm90a > "$OUT/context-$policy.txt" 2>&1
  step "reference model, --context $policy" $? $SECONDS
  tail -4 "$OUT/context-$policy.txt" | cut -c1-200
done
# 3. The CUDA attention references on every task they serve.
DEADLINE=$((end - SECONDS)) bash bench/harness/h200-owed/manifest.sh attention-cuda
