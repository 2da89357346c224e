# Sourced by the call scripts of this folder and the next (after env.sh):
#   references_alone LIMIT runs the CUDA references alone (--gpu-share 1) on call W's 9 tasks within LIMIT
#     seconds, into $OUT/alone.txt, with their stage times (stage_times.py, its `gpu` column and the time
#     stage's steps) in $OUT/stage-times-alone.txt;
#   runner_tests LIMIT runs the runner's GPU tests (tests/gpu/runner/run.sh, with $PTXBENCH_RUNNER) within LIMIT
#     seconds, into $OUT/runner-tests.txt, and prints its failures and summary;
#   against_main BUNDLE REFERENCES_LIMIT TESTS_LIMIT measures a branch's binaries, bundled in .device/BUNDLE,
#     against main's in .device on one machine: the references alone with main's (into $OUT/main), then the
#     runner's GPU tests with the branch's runner and the references alone with the branch's (into
#     $OUT/BUNDLE).
runner_tests() {
  timeout "$1" bash tests/gpu/runner/run.sh > "$OUT/runner-tests.txt" 2>&1
  echo "== runner tests: exit $? at $SECONDS s"
  grep -E "^FAIL|summary" "$OUT/runner-tests.txt" | cut -c1-300
}
references_alone() {
  local gemm='gemm-bf16-n4096-k4096-sm90a gemm-bf16-n7168-k5120-sm90a gemm-bf16-n4096-k14336-sm90a'
  local fwd='attention-fwd-d64-sm90a attention-fwd-d128-sm90a attention-fwd-d128-causal-sm90a'
  local bwd='attention-bwd-d64-sm90a attention-bwd-d128-sm90a attention-bwd-d64-causal-sm90a'
  timeout -s INT "$1" ptxbench run --solutions solutions --gpu-share 1 --only 'reference/*.cu' \
    --tasks "$(echo $gemm $fwd $bwd | tr ' ' ,)" > "$OUT/alone.txt" 2>&1
  echo "== stages alone: exit $? at $SECONDS s"
  grep -E "evaluations in run|as expected: no" "$OUT/alone.txt" | cut -c1-200
  local run
  run=$(sed -n 's/^run \([0-9]*\)[ :].*/\1/p' "$OUT/alone.txt" | head -1)
  python3 bench/harness/stage_times.py "$PTXBENCH_DATA/ptxbench.db" --run "$run" > "$OUT/stage-times-alone.txt" 2>&1
  grep -E "^ +[0-9]+ " "$OUT/stage-times-alone.txt" | sed 's/, compile.*//' | cut -c1-140
  grep -E "time:" "$OUT/stage-times-alone.txt" | sed 's/.*checked_calls/checked_calls/' | cut -c1-300
  grep -E "^(sanitize|correct|instructions|time|gpu stages) " "$OUT/stage-times-alone.txt"
}
against_main() {
  local bundle=$1 references_limit=$2 tests_limit=$3
  (OUT=$OUT/main; mkdir -p "$OUT"; references_alone "$references_limit")
  (
    export PATH=$PWD/.device/$bundle/bin:$PATH LD_LIBRARY_PATH=$PWD/.device/$bundle/lib
    export PTXBENCH_RUNNER=.device/$bundle/bin/ptxbench-runner
    runner_tests "$tests_limit"
    OUT=$OUT/$bundle
    mkdir -p "$OUT"
    references_alone "$references_limit"
  )
}
