#!/usr/bin/env bash
# Call H (2026-12-06, second session): after 06f01a8 (tool listings read whole; the reference forward's SASS
# listing had passed 4 MB, and call G's reference model and manifest.sh attention-cuda failed 9 forward tasks at
# the instruction stage for it):
# 1. the reference model under each context policy (issue 34's record), which call G lost to the same cut;
# 2. why cuda-gdb's attach to a hung solution process finds no CUDA debugger back-end (call G): where the
#    back-end is on this host, and what the solution process looks for when cuda-gdb attaches (LD_DEBUG);
# 3. the reference forward on every forward task it serves, with the fixed judge, as far as the deadline allows.
source bench/harness/h200-2026-12-05/env.sh
end=${END:-560}
step() { echo "== $1: exit $2 at $3 s"; }
left() { local n=$(($1 - SECONDS)); echo $((n > 1 ? n : 1)); }
for policy in compact full last-pair; do
  timeout "$(left $((end - 40)))" ptxbench run --context "$policy" --gpu-share 2 \
    --tasks gemm-bf16-n4096-k4096-sm90a,attention-fwd-d64-sm90a > "$OUT/context-$policy.txt" 2>&1
  step "reference model, --context $policy" $? $SECONDS
  tail -4 "$OUT/context-$policy.txt" | cut -c1-200
done
# 2. The CUDA debugger back-end: where the driver's is, then a hung call attached as the runner attaches.
{ ldconfig -p | grep -i -E "cudadebugger|libcuda\.so"; ls -la /usr/lib/x86_64-linux-gnu/libcudadebugger* ; } 2>&1 | head
probe=$OUT/gdb; mkdir -p "$probe"
nvcc -gencode arch=compute_90a,code=sm_90a -std=c++20 -O3 -lineinfo -shared -Xcompiler -fPIC -cudart shared \
  -lcuda -I include -o "$probe/never_ends.so" tests/gpu/runner/solutions/never_ends.cu > "$probe/nvcc.log" 2>&1
printf '{"mode":"check_then_time","library":"%s","family":"gemm","entry_point":"ptxbench_gemm_bf16","shapes":%s,%s}\n' \
  "$probe/never_ends.so" '[{"label":"main","M":2048,"N":2048,"K":2048}]' \
  '"tolerance":{"rtol":0.01,"atol":0.01},"trials":1,"seed":1,"warmup":1,"repetitions":5,"device":0,"check_limit_s":8,"time_limit_s":8,"debugger":"cuda-gdb"' \
  > "$probe/request.json"
# The loader's account, one file a process, in /tmp (where the solution process may write).
mkdir -p /tmp/ld-probe
LD_DEBUG=libs LD_DEBUG_OUTPUT=/tmp/ld-probe/ld timeout -s INT 40 .device/bin/ptxbench-runner \
  < "$probe/request.json" > "$probe/result.json" 2> "$probe/stderr.txt"
step "hung call with LD_DEBUG=libs" $? $SECONDS
cp -r /tmp/ld-probe "$probe/"
grep -n -i -E "debugger" "$probe/stderr.txt" | head -5 | cut -c1-240
grep -l -i "cudadebugger" /tmp/ld-probe/* | head; grep -h -i -B2 -A4 "cudadebugger" /tmp/ld-probe/* | head -40 | cut -c1-200
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["check"]["runtime_error"].get("debugger_output","")[-600:])' \
  "$probe/result.json" 2>&1 | tail -12
timeout -s INT "$(left "$end")" ptxbench run --solutions solutions --gpu-share 4 \
  --only 'reference/attention_forward_sm90a.cu' --tasks 'attention-fwd-*-sm90a' > "$OUT/forward.txt" 2>&1
step "the reference forward on the forward tasks" $? $SECONDS
grep -E "evaluations in run|differ" "$OUT/forward.txt" | tail -2
grep -E "as expected: (yes|no)" "$OUT/forward.txt" | cut -c1-200
