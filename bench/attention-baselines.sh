#!/usr/bin/env bash
# The vendor attention baseline (baselines/attention_torch.py) on the main shape of every Hopper attention task,
# forward and backward, measured as the time stage measures it: 10 warm-up calls, 50 timed calls, each after an
# L2 flush that the script sizes from the device's L2 as the runner does (twice the L2, at least 64 MiB). Prints
# a Markdown table on stdout: per task the backend chosen, its median time and TFLOP/s, and every candidate's
# status and median; the script's logs go to stderr. Run it on a GPU host; it writes no file:
#   bench/attention-baselines.sh > attention-baselines.md
# Each candidate's largest error over the task's tolerance (at most 1 passes) is measured on one batch and one KV
# head at the main shape; the script's raw result for every task goes to stderr as a line "RESULT {json}".
# PTXBENCH_PYTHON: the python with torch (default python3).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
python="${PTXBENCH_PYTHON:-python3}"
"$python" - "$root" "$python" <<'PY'
import glob, json, math, subprocess, sys

root, python = sys.argv[1], sys.argv[2]
backends = ("cudnn", "flash", "efficient")
rows, about = [], None
for path in sorted(glob.glob(f"{root}/tasks/sm90a/attention-*.json")):
    task = json.load(open(path))
    dims = {k: v for k, v in task["shapes"]["main"].items() if k != "label"}
    request = {"direction": "backward" if task["family"] == "attention-backward" else "forward",
               "dims": dims, "causal": task["parameters"]["causal"], "scale": 1 / math.sqrt(dims["D"]),
               "warmup": 10, "repetitions": 50, "device": 0,
               "tolerance": task["tolerance"], "tolerances": task.get("tolerances", {})}
    print(f"{task['id']} ...", file=sys.stderr, flush=True)
    try:
        done = subprocess.run([python, f"{root}/baselines/attention_torch.py"], input=json.dumps(request),
                              stdout=subprocess.PIPE, text=True, timeout=600)
        result = json.loads(done.stdout.strip().splitlines()[-1])
    except (subprocess.TimeoutExpired, IndexError, ValueError) as e:
        result = {"error": f"no result ({type(e).__name__})"}
    about = about or (result if "gpu" in result else None)
    print("RESULT " + json.dumps({"task": task["id"], **result}), file=sys.stderr, flush=True)
    candidates = {c["backend"]: c for c in result.get("candidates", [])}

    def cell(c):
        if c is None:
            return "-"
        ratios = c.get("task_error_ratio") or {}
        errors = ", ".join(f"{name} {ratio:.2f}" for name, ratio in ratios.items())
        if c["status"] == "ok":
            return f"ok {c['event_us']['median']:.1f} us ({c['gqa']}); error/tolerance {errors}"
        return c["status"] + (f"; error/tolerance {errors}" if errors else "")
    if "error" in result:
        chosen = [f"none: {result['error']}", "-", "-"]
    else:
        chosen = [f"{result['backend']} ({result['gqa']})", f"{result['event_us']['median']:.1f}",
                  f"{result['tflops']:.0f}"]
    rows.append([task["id"]] + chosen + [cell(candidates.get(b)) for b in backends])

if about:
    print(f"GPU {about['gpu']}, torch {about['torch']}, cuDNN {about['cudnn']}, warm-up {about['warmup']}, "
          f"{about['repetitions']} timed calls, L2 flush {about['l2_flush_bytes'] / 2**20:.0f} MiB\n")
header = ["task", "backend chosen (gqa)", "median us", "TFLOP/s"] + [f"{b} median" for b in backends]
print("| " + " | ".join(header) + " |")
print("|" + "|".join("---" for _ in header) + "|")
for row in rows:
    print("| " + " | ".join(row) + " |")
PY
