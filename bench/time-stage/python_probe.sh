#!/usr/bin/env bash
# Where a Python process of the judge (a Triton solution's worker, the attention baseline) spends its time, and
# whether the sandbox slows it: the host's CPUs and quota, whether the packages' bytecode is compiled, then
# bench/time-stage/triton_start.py and a host-time loop (pure Python, and torch's dispatch of a small CUDA op),
# each outside and inside a sandbox of the judge's kind (bubblewrap, new namespaces, a private /tmp), alone and
# beside three processes that spin as the runner's and the workers' do while they wait.
#   bench/time-stage/python_probe.sh [sandbox]  (from the repository's root; bwrap and python3 from PATH)
# With `sandbox`: the sandboxed runs and the host-time loop outside it, alone (no cold/warm cache runs outside).
set -uo pipefail
cd "$(dirname "$0")/../.."
echo "== host"
echo "nproc $(nproc); cpu.max $(cat /sys/fs/cgroup/cpu.max 2> /dev/null || echo none)"
lscpu | grep -E '^(Model name|Thread\(s\) per core|Core\(s\) per socket|Socket\(s\)|CPU\(s\)|CPU max MHz)' | tr -s ' '
python3 --version
for module in torch triton numpy; do
  dir=$(python3 -c "import $module, os; print(os.path.dirname($module.__file__))" 2> /dev/null) || continue
  echo "$module: $(find "$dir" -name '*.py' | wc -l) .py, $(find "$dir" -name '*.pyc' | wc -l) .pyc, in $dir"
done

loop=$(mktemp /tmp/loop-XXXX.py)
cat > "$loop" << 'PY'
import time
t = time.perf_counter()
s = 0
for i in range(10_000_000):
    s += i
python_s = time.perf_counter() - t
import torch
x = torch.zeros(1024, device="cuda")
for _ in range(100):
    x.add_(1)
torch.cuda.synchronize()
t = time.perf_counter()
for _ in range(10_000):
    x.add_(1)
dispatch_us = (time.perf_counter() - t) / 10_000 * 1e6
torch.cuda.synchronize()
print(f"python loop {python_s:.2f} s, torch dispatch {dispatch_us:.1f} us a call")
PY

python=$(command -v python3)
sandbox=(env -i "$(command -v bwrap)" --unshare-all --die-with-parent --new-session --ro-bind / / --dev /dev)
for node in /dev/nvidia*; do sandbox+=(--dev-bind "$node" "$node"); done
sandbox+=(--proc /proc --tmpfs /tmp --ro-bind "$PWD" "$PWD" --ro-bind "$loop" "$loop" --chdir "$PWD" --clearenv
  --setenv PATH /usr/local/bin:/usr/bin:/bin --setenv HOME /tmp --setenv TRITON_CACHE_DIR /tmp/triton
  --cap-drop ALL -- prlimit --core=0 --data=$((32 << 30)) --)

spinners() { for _ in 1 2 3; do timeout "$1" sh -c 'while :; do :; done' & done; }

cache=$(mktemp -d /tmp/triton-XXXX)
if [[ ${1:-} != sandbox ]]; then
  echo "== triton_start.py, outside, a cold Triton cache, then warm"
  TRITON_CACHE_DIR=$cache python3 bench/time-stage/triton_start.py
  TRITON_CACHE_DIR=$cache python3 bench/time-stage/triton_start.py
  echo "== triton_start.py, python3 -I -B as the judge starts it, warm cache"
  TRITON_CACHE_DIR=$cache python3 -I -B bench/time-stage/triton_start.py
fi
echo "== triton_start.py, in the sandbox (its cache cold: a private /tmp), twice"
"${sandbox[@]}" "$python" -I -B bench/time-stage/triton_start.py
"${sandbox[@]}" "$python" -I -B bench/time-stage/triton_start.py
echo "== host-time loop: outside, outside beside 3 spinners, sandbox, sandbox beside 3 spinners (3 each)"
for i in 1 2 3; do python3 "$loop"; done | sed 's/^/outside: /'
if [[ ${1:-} != sandbox ]]; then
  spinners 40
  for i in 1 2 3; do python3 "$loop"; done | sed 's/^/outside, spinners: /'
  wait
fi
for i in 1 2 3; do "${sandbox[@]}" "$python" -I -B "$loop"; done | sed 's/^/sandbox: /'
if [[ ${1:-} != sandbox ]]; then
  spinners 40
  for i in 1 2 3; do "${sandbox[@]}" "$python" -I -B "$loop"; done | sed 's/^/sandbox, spinners: /'
  wait
fi
rm -rf "$cache" "$loop"
