#!/usr/bin/env bash
# Every shipped solution on every task it serves (README.md, item 5), in parts that fit the device's 10-minute
# calls: `manifest.sh PART...` runs the parts in order, four evaluations sharing the GPU, each under its own
# time limit, and stops before a part that would not end within DEADLINE seconds of the call's start (default
# 560). Each part's verdicts are under its own run in the store ($OUT/ptxbench.db comes back with every call).
#
# The seconds beside each part are what it took last on the H100 (../h200-2026-12-06b/ and ../h200-2026-12-06e/,
# the GPU stages of a59661b), gemm-triton-a and examples, not run since 2026-12-05, scaled up by the 12% that
# gemm-triton-b took beyond its estimate then. In all about 34 minutes: more than one session's device time. Run
# them in this order over calls made back to back (the machine stays warm for 30 s), and say in bench/ which
# parts ran.
#
#   attention-cuda   ~345 s  CUDA attention references: forward (the two prefills, d256), backward, paged decode
#   attention-triton ~410 s  Triton attention references
#   gemm-cuda        ~270 s  CUDA GEMM reference, 51 Hopper tasks
#   gemm-triton-a    ~340 s  Triton GEMM reference, the 30 tasks of M 70-952 and gemm-bf16-*
#   gemm-triton-b    ~250 s  Triton GEMM reference, the 21 tasks of M 972-8828
#   examples         ~900 s  the SIMT examples on every task they serve (expected to fail at instructions): 24 of
#                            its 39 in 590 s (../h200-2026-12-06g/); more than a call, so record.sh examples
source bench/harness/h200-2026-12-05/env.sh
deadline=${DEADLINE:-560}
declare -A only=(
  [attention-cuda]='reference/attention_*.cu' [attention-triton]='reference/attention_*.py'
  [gemm-cuda]='reference/gemm_bf16_sm90a.cu' [gemm-triton-a]='reference/gemm_bf16_sm90a.py'
  [gemm-triton-b]='reference/gemm_bf16_sm90a.py' [examples]='examples/*')
declare -A tasks=(
  [attention-cuda]='attention-*-sm90a' [attention-triton]='attention-*-sm90a' [gemm-cuda]='gemm-*-sm90a'
  [gemm-triton-a]='gemm-bf16-*-sm90a,gemm-m70-*-sm90a,gemm-m80-*-sm90a,gemm-m93-*-sm90a,gemm-m901-*-sm90a,gemm-m952-*-sm90a'
  [gemm-triton-b]='gemm-m972-*-sm90a,gemm-m8192-*-sm90a,gemm-m8828-*-sm90a' [examples]='*-sm90a')
declare -A estimate=([attention-cuda]=345 [attention-triton]=410 [gemm-cuda]=270 [gemm-triton-a]=340
  [gemm-triton-b]=250 [examples]=900)
for part in "$@"; do
  [[ -n ${only[$part]:-} ]] || { echo "no part $part (${!only[*]})"; exit 2; }
  left=$((deadline - SECONDS))
  if ((left < estimate[$part])); then
    echo "== $part: not started, ${left} s left of ${deadline} against an estimate of ${estimate[$part]} s"
    continue
  fi
  start=$SECONDS
  timeout -s INT "$left" ptxbench run --solutions solutions --gpu-share 4 --only "${only[$part]}" \
    --tasks "${tasks[$part]}" > "$OUT/$part.txt" 2>&1
  echo "== $part: exit $? in $((SECONDS - start)) s (estimate ${estimate[$part]} s)"
  grep -E "evaluations in run|differ" "$OUT/$part.txt" | tail -2
  grep "as expected: no" "$OUT/$part.txt" | cut -c1-220
done
python3 bench/harness/stage_times.py "$PTXBENCH_DATA/ptxbench.db" > "$OUT/stage-times.txt" 2>&1
tail -6 "$OUT/stage-times.txt"
