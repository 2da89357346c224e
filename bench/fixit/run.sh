#!/usr/bin/env bash
# Fixit end to end on a GPU host (issue 16's closing run), from the reference model's trajectories, recorded:
# every step's output, the data sets and a check of every exported line against the store go under $OUT.
#   bench/fixit/run.sh            (TASKS='gemm-bf16-*-sm90a' by default; SAMPLES=2)
# 1. the student: `ptxbench run` with the reference model (turn 1 a broken copy, a compile error; turn 2 the
#    shipped solution, verified on the GPU);
# 2. mined: the failed turns, one per task after deduplication by normalised code;
# 3. s3 in spirit: repaired by the reference model as teacher (its solution, verified by the full pipeline) and
#    explained by the built-in reference reasoner; s0: the verified solutions as direct-generation data; a
#    transfer split holding out the largest GEMM;
# 4. every exported line parsed back, its roles in order, and its evaluation looked up: passed, same code.
# With a real model API, the same with catalogue names: --teacher claude-opus-4 --reasoner gpt-5 (docs/fixit.md).
# Uses build/ptxbench and build/ptxbench-runner (or $PTXBENCH_BIN). About 5 minutes of GPU time for the GEMM tasks.
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=${PTXBENCH_BIN:-build}
out=${OUT:-bench/fixit/out}
tasks=${TASKS:-gemm-bf16-*-sm90a}
samples=${SAMPLES:-2}
mkdir -p "$out"
export PTXBENCH_ROOT=$PWD PTXBENCH_DATA=$out/data PTXBENCH_RUNNER=$bin/ptxbench-runner

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"
date -u +%FT%TZ | tee -a "$out/gpu.txt"
git log -1 --format='commit %H' | tee -a "$out/gpu.txt"
status=0
step() {  # step NAME COMMAND...: runs it, its output in $out/NAME.txt, with its time and exit status
  local name=$1 start=$SECONDS rc
  shift
  "$@" > "$out/$name.txt" 2> "$out/$name.err"
  rc=$?
  echo "$name: exit $rc in $((SECONDS - start)) s" | tee -a "$out/steps.txt"
  return $rc
}

step student "$bin/ptxbench" run --tasks "$tasks" --samples "$samples" --json || status=1
run=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_id"])' "$out/student.txt") || exit 1
step mine "$bin/ptxbench" fixit mine --runs "$run" || status=1
step s3 "$bin/ptxbench" fixit build fixit/s3.json --out "$out/s3" --runs "$run" --tasks "$tasks" \
  --teacher reference --reasoner reference || status=1
step s0 "$bin/ptxbench" fixit build fixit/s0.json --out "$out/s0" --runs "$run" --tasks "$tasks" || status=1
step transfer "$bin/ptxbench" fixit build fixit/transfer.json --out "$out/transfer" --runs "$run" \
  --tasks "$tasks" --teacher reference --reasoner reference --holdout 'gemm-bf16-n28672-*' || status=1
# The same build again resumes: every step is found done and nothing is asked or judged again.
step s3-again "$bin/ptxbench" fixit build fixit/s3.json --out "$out/s3" --runs "$run" --tasks "$tasks" \
  --teacher reference --reasoner reference || status=1

# Every line (the default format, TRL's prompt-completion): parsed, the prompt's roles in order, the completion
# the one assistant message that fixes, its code the submission of a passing evaluation in the store.
python3 - "$out" "$bin/ptxbench" <<'PY' | tee "$out/check.txt" || status=1
import json, os, subprocess, sys, re, hashlib
out, ptxbench = sys.argv[1], sys.argv[2]
bad = 0
for variant, roles in (("s3", ["system", "user", "assistant", "user"]),
                       ("s0", ["system", "user"]),
                       ("transfer", ["system", "user", "assistant", "user"])):
    for split in ("train", "test"):  # test.jsonl: the held-out tasks, written only when there are some
        path = f"{out}/{variant}/{split}.jsonl"
        lines = [json.loads(l) for l in open(path)] if os.path.exists(path) else []
        for line in lines:
            messages = line["prompt"] + line["completion"]
            ok = [m["role"] for m in line["prompt"]] == roles and [m["role"] for m in line["completion"]] == ["assistant"]
            verdict = json.loads(subprocess.run([ptxbench, "results", "--id", str(line["metadata"]["evaluation_id"]),
                                                 "--json"], capture_output=True, text=True).stdout)
            code = re.findall(r"```cuda\n(.*?)```", messages[-1]["content"], re.S)[-1]
            hashes = {hashlib.sha256(c.encode()).hexdigest() for c in (code, code[:-1])}  # the fence's newline
            ok = ok and verdict["status"] == "passed" and verdict["submission"] in hashes
            ok = ok and verdict["submission"] == line["metadata"]["submission"]
            bad += not ok
        print(f"{variant} {split}: {len(lines)} examples")
print(f"examples failing the check: {bad}")
sys.exit(1 if bad else 0)
PY
cp "$out"/s3/README.md "$out/s3-card.md" 2>/dev/null
echo "exit status $status" | tee -a "$out/steps.txt"
exit $status
