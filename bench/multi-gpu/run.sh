#!/usr/bin/env bash
# Judging on several GPUs at once, on a host with two (issue 19's measurement; docs/agent.md's --gpus,
# docs/service.md's workers). Each mode is one device call's worth (a full reference run over the Hopper tasks
# takes about 6 minutes on one H200):
#
#   bench/multi-gpu/run.sh local-1 [TASKS]   ptxbench run --model reference --tasks TASKS --gpus 1
#   bench/multi-gpu/run.sh local-2 [TASKS]   the same with --gpus 2: two evaluations side by side, one per GPU
#   bench/multi-gpu/run.sh service [TASKS]   the same through the service: a Redis of its own, `ptxbench serve`,
#                                            `worker --gpu 0` and `worker --gpu 1`, `run --evaluator URL`; the
#                                            second worker is killed (SIGKILL) after $KILL_AFTER s (default 90),
#                                            so its job must finish on the first after the lease (--lease 20)
#
# TASKS defaults to '*-sm90a'. Each mode writes $OUT/MODE/ (default bench/multi-gpu/out): its own data folder
# (`data/`, the store), the run's output, `time.txt` (start, end, wall seconds), and for the service the logs.
# Then `python3 bench/multi-gpu/summary.py $OUT/local-1 $OUT/local-2 $OUT/service` gives each run's wall time,
# evaluations per minute and each GPU's share (the verdicts' `device`), and whether the verdicts agree.
# Uses build/ptxbench and build/ptxbench-runner (or $PTXBENCH_BIN).
set -uo pipefail
mode=${1:?usage: run.sh local-1|local-2|service [TASKS]}
tasks=${2:-*-sm90a}
cd "$(dirname "$0")/../.."
bin=$(cd "${PTXBENCH_BIN:-build}" && pwd)
out=${OUT:-bench/multi-gpu/out}/$mode
mkdir -p "$out"
out=$(cd "$out" && pwd)
export PTXBENCH_ROOT=$PWD PTXBENCH_RUNNER=$bin/ptxbench-runner
nvidia-smi --query-gpu=index,name,driver_version,pci.bus_id --format=csv,noheader | tee "$out/gpus.txt"

timed() {  # timed COMMAND...: runs it, its output to run.txt, its times to time.txt
  local began=$(date +%s.%N) rc
  echo "start $(date -u +%FT%TZ)" > "$out/time.txt"
  "$@" > "$out/run.txt" 2>&1
  rc=$?
  echo "end $(date -u +%FT%TZ)" >> "$out/time.txt"
  python3 -c "import sys; print('wall_s', round(float(sys.argv[2]) - float(sys.argv[1]), 1))" "$began" \
    "$(date +%s.%N)" >> "$out/time.txt"
  echo "exit $rc" >> "$out/time.txt"
  cat "$out/time.txt"
}

case $mode in
  local-1 | local-2)
    timed "$bin/ptxbench" --data "$out/data" run --model reference --tasks "$tasks" --gpus "${mode#local-}" \
      --progress plain
    ;;
  service)
    source bench/service/stack.sh
    start_redis "$out/redis"
    service_port=$(free_port)
    trap 'kill ${service:-} ${worker0:-} ${worker1:-} 2>/dev/null; sleep 1; stop_redis "$out/redis"' EXIT
    new_service_token
    "$bin/ptxbench" --data "$out/service-data" serve --listen "127.0.0.1:$service_port" --redis "$redis" \
      > "$out/service.log" 2>&1 &
    service=$!
    for gpu in 0 1; do
      "$bin/ptxbench" --data "$out/worker$gpu-data" worker --gpu "$gpu" --redis "$redis" --name "gpu$gpu" \
        --lease 20 --heartbeat 2 > "$out/worker$gpu.log" 2>&1 &
      eval "worker$gpu=$!"
    done
    sleep 3
    (sleep "${KILL_AFTER:-90}"; kill -9 "$worker1" && echo "$(date -u +%FT%TZ) worker gpu1 killed (SIGKILL)") \
      > "$out/kill.txt" 2>&1 &
    timed "$bin/ptxbench" --data "$out/data" run --model reference --tasks "$tasks" \
      --evaluator "http://127.0.0.1:$service_port" --progress plain
    ;;
  *)
    echo "run.sh: local-1, local-2 or service, not '$mode'" >&2
    exit 2
    ;;
esac
