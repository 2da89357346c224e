#!/usr/bin/env bash
# The evaluation service on a GPU host, measured (docs/service.md): evaluations per minute through the service
# with one GPU worker against local `ptxbench eval`, and the latency the service adds to each evaluation.
#   bench/service/run.sh [N]     N evaluations each way (default 12)
# Each evaluation is the reference GEMM with a different trailing comment (a distinct source: no verdict cache
# hit, one compile each, as in an agent run). Local: `ptxbench eval` one after another. Service: a Redis of its own
# on a free port, `ptxbench serve`, `ptxbench worker --gpu 0`; first the same N one after another (the added
# latency: the client's time from submit to verdict less the time the worker spent judging, from the worker's
# log), then N submitted at once (the throughput with the queue never empty).
# Uses build/ptxbench and build/ptxbench-runner (or $PTXBENCH_BIN); writes logs and results.json under $OUT
# (default bench/service/out).
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=$(cd "${PTXBENCH_BIN:-build}" && pwd)
out=${OUT:-bench/service/out}
n=${1:-12}
mkdir -p "$out"
out=$(cd "$out" && pwd)
export PTXBENCH_ROOT=$PWD PTXBENCH_RUNNER=$bin/ptxbench-runner
task=gemm-bf16-n4096-k4096-sm90a

nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader | tee "$out/gpu.txt"
date -u +%FT%TZ | tee -a "$out/gpu.txt"
if ldd "$bin/ptxbench" "$bin/ptxbench-runner" | grep "not found"; then echo "missing libraries"; exit 2; fi

source bench/service/stack.sh
start_redis "$out/redis"
service_port=$(free_port)
mkdir -p "$out/sources"
trap 'stop_redis "$out/redis"; kill ${service:-} ${worker:-} 2>/dev/null' EXIT
new_service_token

for i in $(seq "$n"); do
  { cat solutions/reference/gemm_bf16_sm90a.cu; echo "// service measurement $i"; } > "$out/sources/local_$i.cu"
  { cat solutions/reference/gemm_bf16_sm90a.cu; echo "// service measurement $i, through the service"; } \
    > "$out/sources/serial_$i.cu"
  { cat solutions/reference/gemm_bf16_sm90a.cu; echo "// service measurement $i, all at once"; } \
    > "$out/sources/burst_$i.cu"
done

# Local eval, one after another, into a data folder of its own.
start=$(date +%s.%N)
for i in $(seq "$n"); do
  began=$(date +%s.%N)
  "$bin/ptxbench" --data "$out/local-data" eval "$out/sources/local_$i.cu" --task "$task" --no-store --json \
    > "$out/local_$i.json"
  rc=$?
  python3 -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 3))" "$began" "$(date +%s.%N)" \
    > "$out/local_$i.time"
  echo "local eval $i: exit $rc, $(cat "$out/local_$i.time") s"
done
local_s=$(python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$start" "$(date +%s.%N)")

# The service: one GPU worker.
"$bin/ptxbench" --data "$out/service-data" serve --listen "127.0.0.1:$service_port" \
  --redis "$redis" > "$out/service.log" 2>&1 &
service=$!
"$bin/ptxbench" --data "$out/worker-data" worker --gpu 0 --redis "$redis" \
  --name h200-gpu0 > "$out/worker.log" 2>&1 &
worker=$!
sleep 3

python3 - "$out" "$n" "$service_port" "$local_s" "$task" <<'PY'
import concurrent.futures, json, os, re, statistics, sys, time, urllib.request
out, n, port, local_s, task = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4]), sys.argv[5]
url, token = f"http://127.0.0.1:{port}", os.environ["PTXBENCH_SERVICE_TOKEN"]

def call(method, path, body=None):
    req = urllib.request.Request(url + path, method=method, data=json.dumps(body).encode() if body else None,
                                 headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)

def evaluate(path):
    started = time.monotonic()
    status, doc = call("POST", "/v1/jobs", {"task": task, "source": open(path).read(), "name": os.path.basename(path)})
    assert status in (200, 202), (status, doc)
    while True:
        status, answer = call("GET", f"/v1/jobs/{doc['id']}/verdict?wait=30")
        if status == 200:
            return doc["id"], time.monotonic() - started, answer
        assert status == 202, (status, answer)

# The worker's own judging time per job, from its log ("job ID (task) attempt 1: ... in 9.3 s").
def judged_s():
    times = {}
    for line in open(f"{out}/worker.log"):
        m = re.search(r"job ([0-9a-f]{32}) \(.*\) attempt \d+: .* in ([0-9.]+) s", line)
        if m:
            times[m.group(1)] = float(m.group(2))
    return times

serial = [evaluate(f"{out}/sources/serial_{i}.cu") for i in range(1, n + 1)]
serial_s = sum(s for _, s, _ in serial)
started = time.monotonic()
with concurrent.futures.ThreadPoolExecutor(n) as pool:
    burst = list(pool.map(evaluate, [f"{out}/sources/burst_{i}.cu" for i in range(1, n + 1)]))
burst_s = time.monotonic() - started
time.sleep(1)
judged = judged_s()
added = [s - judged[i] for i, s, _ in serial if i in judged]
local_times = [float(open(f"{out}/local_{i}.time").read()) for i in range(1, n + 1)]
results = {
    "evaluations": n,
    "local": {"total_s": local_s, "per_minute": 60 * n / local_s, "median_s": statistics.median(local_times)},
    "service_one_at_a_time": {"total_s": serial_s, "per_minute": 60 * n / serial_s,
                              "median_s": statistics.median(s for _, s, _ in serial)},
    "service_all_at_once": {"total_s": burst_s, "per_minute": 60 * n / burst_s},
    "added_latency_s": {"median": statistics.median(added), "max": max(added), "samples": len(added)},
    "verdicts": sorted({a["verdict"]["stages"][-1]["status"] for _, _, a in serial + burst}),
}
json.dump(results, open(f"{out}/results.json", "w"), indent=2)
print(json.dumps(results, indent=2))
PY
