#!/usr/bin/env bash
# Every shipped solution on every task it serves (README.md, item 5), in parts that fit the device's 10-minute
# calls: `manifest.sh PART...` runs the parts in order, four evaluations sharing the GPU, each under its own
# time limit, and stops before a part that would not end within DEADLINE seconds of the call's start (default
# 560). Each part's verdicts are under its own run in the store ($OUT/ptxbench.db comes back with every call).
#
# The seconds beside each part are estimates from the stage times of ../h200-2026-12-05e/ (H100): what the stages
# that have the GPU alone took (correct, instructions, time; sanitize runs beside them) before the correct and
# time stages shared a process; since, less the 0.7 s a CUDA evaluation and 2.5 s a Triton one that sharing saved
# (../h200-2026-12-05f/, where attention-cuda took 255 s, its stages alone 185 s: the sanitize stages' time beside
# them bounds the rest). In all about 29
# minutes: more than one session's device time. Run them in this order over calls made back to back (the
# machine stays warm for 30 s), and say in bench/ which parts ran.
#
#   attention-cuda   ~330 s  CUDA attention references: forward (the two prefills, d256), backward, paged decode
#   attention-triton ~370 s  Triton attention references
#   gemm-cuda        ~255 s  CUDA GEMM reference, 51 Hopper tasks
#   gemm-triton-a    ~305 s  Triton GEMM reference, the 30 tasks of M 70-952 and gemm-bf16-*
#   gemm-triton-b    ~220 s  Triton GEMM reference, the 21 tasks of M 972-8828
#   examples         ~280 s  the SIMT examples on every task they serve (expected to fail at instructions)
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
declare -A estimate=([attention-cuda]=330 [attention-triton]=370 [gemm-cuda]=255 [gemm-triton-a]=305
  [gemm-triton-b]=220 [examples]=280)
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
