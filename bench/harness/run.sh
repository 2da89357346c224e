#!/usr/bin/env bash
# The GPU evaluation end to end on a GPU host, recorded: bench/harness.md says what it showed.
#   bench/harness/run.sh [shipped|tests|repeat|agent|attention|attention-correct|attention-stages|anticheat|corpus|runner|reference|attention-reference|all]
#   bench/harness/run.sh stages TASK...   (correct, instructions and time of the shipped solutions on each task)
# attention (not part of all: about 15 minutes of GPU time) is issue 7's proof, in two halves that each fit a
# 10-minute slot: attention-correct, the examples' correctness on every shape of every Hopper attention task and
# the broken variants on every task they match; attention-stages, every stage of the examples on the GQA tasks
# and the d64 causal backward. anticheat (not part of all either, about 6 minutes):
# the adversarial corpus with its expected verdicts and the runner's own GPU tests (issue 5's proof); corpus and
# runner are its two halves, for device calls of 10 minutes (the corpus of 32 entries alone took over 5 minutes).
# Uses build/ptxbench and build/ptxbench-runner (or $PTXBENCH_BIN); writes logs and the store under $OUT
# (default bench/harness/out).
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=${PTXBENCH_BIN:-build}
out=${OUT:-bench/harness/out}
mkdir -p "$out"
export PTXBENCH_ROOT=$PWD PTXBENCH_DATA=$out/data PTXBENCH_RUNNER=$bin/ptxbench-runner
what=${1:-all}
task=gemm-bf16-n4096-k4096-sm90a
# Evaluations sharing the GPU in the manifest runs (run --gpu-share): their sanitize and correct stages side
# by side, the instruction and time stages alone. ONLY narrows a manifest run to the entries matching it.
share=${SHARE:-4}
only=${ONLY:-*}
# TASKS narrows the shipped run to the tasks matching it; STAGES to some GPU stages (a manifest entry is then held
# to the stages it expects that ran).
tasks=${TASKS:-*-sm90a}
stages=${STAGES:-sanitize,correct,instructions,time}

nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader | tee "$out/gpu.txt"
date -u +%FT%TZ | tee -a "$out/gpu.txt"
if ldd "$bin/ptxbench" "$bin/ptxbench-runner" | grep "not found"; then echo "missing libraries"; exit 2; fi

status=0
if [[ $what == tests || $what == all ]]; then
  # The test solutions (tests/data/solutions/solutions.json) with their expected verdicts; a hanging kernel
  # among them, followed by the reference.
  start=$SECONDS
  "$bin/ptxbench" run --solutions tests/data/solutions --tasks "$task" --stage-time-limit 60 2>&1 |
    tee "$out/tests.txt" || status=1
  echo "tests run: $((SECONDS - start)) s" | tee -a "$out/tests.txt"
fi
if [[ $what == repeat || $what == all ]]; then
  # The same solution twice: the speedups must agree within 3%.
  for i in 1 2; do
    "$bin/ptxbench" eval solutions/reference/gemm_bf16_sm90a.cu --task "$task" --json > "$out/reference_$i.json"
    echo "reference eval $i: exit $?"
  done
  python3 - "$out" <<'PY'
import json, sys
v = [json.load(open(f"{sys.argv[1]}/reference_{i}.json")) for i in (1, 2)]
for i, d in enumerate(v, 1):
    print(f"eval {i}: {d['status']}, speedup {d['speedup']}, coverage {d['coverage']}, " +
          ", ".join(f"{s['name']} {s['status']} {s['wall_s']:.1f}s" for s in d['stages']) +
          f", total {sum(s['wall_s'] for s in d['stages']):.1f} s")
a, b = v[0]['speedup'], v[1]['speedup']
print(f"speedup difference: {abs(a - b) / max(a, b) * 100:.2f}%")
PY
fi
if [[ $what == shipped || $what == all ]]; then
  start=$SECONDS
  "$bin/ptxbench" run --solutions solutions --gpu-share "$share" --only "$only" --tasks "$tasks" \
    --stages "$stages" 2>&1 |
    tee -a "$out/shipped.txt" || status=1
  echo "shipped run: $((SECONDS - start)) s" | tee -a "$out/shipped.txt"
fi
if [[ $what == agent || $what == all ]]; then
  # The main job's default: the agent loop with the reference model on every Hopper task.
  start=$SECONDS
  "$bin/ptxbench" run 2>&1 | tee "$out/agent.txt" || status=1
  echo "agent run: $((SECONDS - start)) s" | tee -a "$out/agent.txt"
fi
if [[ $what == attention || $what == attention-correct ]]; then
  start=$SECONDS
  "$bin/ptxbench" run --solutions solutions --tasks 'attention-*-sm90a' --stages sanitize,correct 2>&1 |
    tee "$out/attention-examples.txt" || status=1
  "$bin/ptxbench" run --solutions tests/data/solutions --tasks 'attention-*-sm90a' --stages correct 2>&1 |
    tee "$out/attention-broken.txt" || status=1
  echo "attention correctness run: $((SECONDS - start)) s" | tee -a "$out/attention-broken.txt"
fi
if [[ $what == attention || $what == attention-stages ]]; then
  start=$SECONDS
  for task in attention-fwd-gqa32x4-d128-causal-sm90a attention-bwd-gqa32x4-d128-causal-sm90a \
    attention-bwd-d64-causal-sm90a; do
    "$bin/ptxbench" run --solutions solutions --tasks "$task" 2>&1 | tee -a "$out/attention-full.txt" || status=1
  done
  echo "attention stages run: $((SECONDS - start)) s" | tee -a "$out/attention-full.txt"
fi
if [[ $what == stages ]]; then
  # The attention examples are slow (a second or more a call): a few tasks fit one 10-minute slot.
  shift
  for task in "$@"; do
    start=$SECONDS
    "$bin/ptxbench" run --solutions solutions --tasks "$task" --stages correct,instructions,time 2>&1 |
      tee -a "$out/stages.txt" || status=1
    echo "$task: $((SECONDS - start)) s" | tee -a "$out/stages.txt"
  done
fi
if [[ $what == reference ]]; then
  # Issue 13's proof: the reference GEMM through every stage on each Hopper GEMM task, three times, then the
  # time stage's sweep over call lengths (bench/timing.md).
  for round in 1 2 3; do
    for gemm in gemm-bf16-n4096-k4096-sm90a gemm-bf16-n28672-k4096-sm90a gemm-bf16-n4096-k14336-sm90a \
      gemm-bf16-n7168-k5120-sm90a; do
      "$bin/ptxbench" eval solutions/reference/gemm_bf16_sm90a.cu --task "$gemm" 2>&1 |
        grep -E "^(verdict|\[)" | sed "s/^/$gemm $round: /" | tee -a "$out/reference.txt"
    done
  done
  OUT=$out/sweep bench/timing/sweep.sh 2>&1 | tee "$out/sweep.txt" || status=1
fi
if [[ $what == attention-reference ]]; then
  # Issue 14's proof: the kit's GPU test, then the reference attention kernels alone (a manifest of just them)
  # through every stage on every Hopper attention task they serve; the figures go to bench/reference-attention.md.
  tests/gpu/kit/run.sh "$out/kit" 2>&1 | tee "$out/kit-tests.txt" || status=1
  refs=$out/attention-references
  mkdir -p "$refs"
  python3 - "$refs" <<'PY'
import json, sys
entries = [e for e in json.load(open("solutions/solutions.json")) if e["path"].startswith("reference/attention_")]
json.dump(entries, open(sys.argv[1] + "/solutions.json", "w"), indent=2)
PY
  mkdir -p "$refs/reference" && cp solutions/reference/attention_*.cu "$refs/reference/"
  start=$SECONDS
  "$bin/ptxbench" run --solutions "$refs" --tasks 'attention-*-sm90a' 2>&1 | tee "$out/attention-reference.txt" ||
    status=1
  echo "attention reference run: $((SECONDS - start)) s" | tee -a "$out/attention-reference.txt"
fi
if [[ $what == anticheat || $what == corpus ]]; then
  start=$SECONDS
  "$bin/ptxbench" run --solutions tests/adversarial --tasks "$task" --stage-time-limit 30 --gpu-share "$share" \
    --only "$only" 2>&1 | tee -a "$out/adversarial.txt" || status=1
  # The entries of an attention task (the backward's workspace).
  "$bin/ptxbench" run --solutions tests/adversarial --tasks attention-bwd-d64-sm90a --stage-time-limit 60 \
    --only "$only" 2>&1 | tee -a "$out/adversarial.txt" || status=1
  echo "corpus run: $((SECONDS - start)) s" | tee -a "$out/adversarial.txt"
fi
if [[ $what == anticheat || $what == runner ]]; then
  start=$SECONDS
  PTXBENCH_RUNNER=$bin/ptxbench-runner tests/gpu/runner/run.sh "$out/runner-logs" 2>&1 |
    tee "$out/runner-tests.txt" || status=1
  echo "runner tests: $((SECONDS - start)) s" | tee -a "$out/runner-tests.txt"
fi
exit $status
