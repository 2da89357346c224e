#!/usr/bin/env bash
# The browser test of `ptxbench report` (CTest: cpu.report.browser.*). Fails loudly when Chromium is missing:
# scripts/deps installs it.
#   run.sh reference WORK  a store filled by the reference model at two knowledge levels, as the README shows
#   run.sh fixture WORK    tests/report/fixture_store.h's stores, where every chart has data and its count of marks
#                          is known: the two models', then the knowledge ablation's and the tracks'
#                          (write_ablation_store)
# Environment: PTXBENCH (the binary), PYTHON, CHROMIUM, MAKE_FIXTURE (the fixture's writer).
set -euo pipefail
mode=$1 work=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
case $mode in
  reference)
    for level in params templates; do
      "$PTXBENCH" --data "$work/data" run --cpu-only --knowledge "$level" --json >"$work/run-$level.json"
    done
    "$PTXBENCH" --data "$work/data" report --out "$work/report"
    # On a CPU host nothing is timed: the speedup charts say so. Drawn: the correct and verified rates where a
    # failure decided them (the first turn's broken compile), each run's outcomes per turn and the stage times.
    # The ablation compares verified rates at the turn limit both levels reached, and there every task's
    # trajectory is undecided (the reference's second answer, which only a GPU can judge): the chart says so.
    # The fixture below draws it with data.
    exec "$PYTHON" "$here/check_report.py" "$work/report/report.html" --chromium "$CHROMIUM" \
      --screenshot "$work/report.png" --min-charts 6 --expect-chart rates-sm-90a-gemm=4 --expect-empty ablation-1 \
      --expect-empty speedup-per-task --expect-empty speedup-vs-reasoning
    ;;
  fixture)
    "$MAKE_FIXTURE" "$work/data"
    "$PTXBENCH" --data "$work/data" report --out "$work/report"
    # The marks fixture_store.h's turns give: m1's correct and verified rates at turns 1-4 and m2's at 1-2 (12);
    # the best speedup of m1 and m2 on the task; m1's 11 and m2's 3 (turn, outcome) bars; three trajectories with
    # a timed verified turn; six stages.
    "$PYTHON" "$here/check_report.py" "$work/report/report.html" --chromium "$CHROMIUM" \
      --screenshot "$work/report.png" --min-charts 6 --expect-chart rates-sm-90a-gemm=12 \
      --expect-chart speedup-per-task=2 --expect-chart outcomes-m1-contracts-sm-90a=11 \
      --expect-chart outcomes-m2-contracts-sm-90a=3 --expect-chart speedup-vs-reasoning=3 \
      --expect-chart stage-times=6 --expect-reasoning 1
    # The ablation's store: four runs' correct and verified rates at turns 1-3 (24); the three levels' correct
    # and verified bars at 3 turns, zeros included (6); CUDA's and Triton's (4).
    "$MAKE_FIXTURE" "$work/ablation-data" ablation
    "$PTXBENCH" --data "$work/ablation-data" report --out "$work/ablation-report"
    exec "$PYTHON" "$here/check_report.py" "$work/ablation-report/report.html" --chromium "$CHROMIUM" \
      --screenshot "$work/ablation-report.png" --min-charts 4 --expect-chart rates-sm-90a-gemm=24 \
      --expect-chart ablation-1=6 --expect-chart tracks-1=4
    ;;
  *)
    echo "run.sh: reference or fixture, not '$mode'" >&2
    exit 2
    ;;
esac
