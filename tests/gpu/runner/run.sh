#!/usr/bin/env bash
# GPU tests of ptxbench-runner (run on a GPU host, not in CI): builds the runner and the test solutions, runs every
# mode and checks that each solution gets the outcome it must get. Prints each result document and a summary;
# exits non-zero when an expected outcome was not seen.
#
#   tests/gpu/runner/run.sh [log_dir]
#
# Environment: PTXBENCH_RUNNER=<a prebuilt ptxbench-runner> skips the CMake build; PTXBENCH_CMAKE_ARGS adds
# arguments to its configure step; NVCC (default nvcc); SEED (default 20261130). ncu and compute-sanitizer checks
# run when the tools are on the PATH, and are reported as skipped otherwise.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
logs=${1:-$root/build/gpu-runner-logs}
solutions=$root/build/gpu-runner-solutions
nvcc=${NVCC:-nvcc}
seed=${SEED:-20261130}
mkdir -p "$logs" "$solutions"

passed=0
failed=0
skipped=0
summary=()
note() { summary+=("$1"); echo "$1"; }
pass() { passed=$((passed + 1)); note "PASS  $1"; }
fail() { failed=$((failed + 1)); note "FAIL  $1"; }
skip() { skipped=$((skipped + 1)); note "SKIP  $1"; }

# ---- build --------------------------------------------------------------------------------------------------------
runner=${PTXBENCH_RUNNER:-}
if [[ -z $runner ]]; then
  # shellcheck disable=SC2086  # PTXBENCH_CMAKE_ARGS is a list of arguments
  if ! { cmake -S "$root/src/runner" -B "$root/build/runner" -DCMAKE_BUILD_TYPE=Release ${PTXBENCH_CMAKE_ARGS:-} &&
         cmake --build "$root/build/runner" -j; } >"$logs/runner-build.log" 2>&1; then
    tail -40 "$logs/runner-build.log"
    echo "FAIL  the runner did not build"
    exit 1
  fi
  runner=$root/build/runner/ptxbench-runner
fi
echo "== runner: $runner"
ldd "$runner" | tee "$logs/runner-ldd.txt"
if grep -q "not found" "$logs/runner-ldd.txt"; then
  fail "runner: a shared library is missing (ldd)"
fi

for source in "$here"/solutions/*.cu; do
  name=$(basename "$source" .cu)
  link=$(sed -n 's|^// link: ||p' "$source")  # extra libraries a test solution names in its first line
  # shellcheck disable=SC2086  # $link is a list of arguments
  "$nvcc" -gencode arch=compute_90a,code=sm_90a -std=c++20 -O3 -shared -Xcompiler -fPIC -cudart shared -lcuda \
    -I "$root/include" -o "$solutions/$name.so" "$source" $link >"$logs/nvcc-$name.log" 2>&1 &
done
wait
for source in "$here"/solutions/*.cu; do
  name=$(basename "$source" .cu)
  [[ -f $solutions/$name.so ]] || { cat "$logs/nvcc-$name.log"; echo "FAIL  $name did not compile"; exit 1; }
done

# ---- requests -----------------------------------------------------------------------------------------------------
check_shapes='[{"label":"main","M":8192,"N":4096,"K":4096},{"label":"small-m","M":128,"N":4096,"K":4096},{"label":"odd-m","M":1999,"N":4096,"K":4096}]'
small_shapes='[{"label":"main","M":2048,"N":2048,"K":2048},{"label":"odd-m","M":1999,"N":1024,"K":512}]'
time_shape='[{"label":"main","M":8192,"N":4096,"K":4096}]'
profile_shape='[{"label":"main","M":1024,"N":1024,"K":1024}]'
sanitize_shapes='[{"label":"main","M":2048,"N":2048,"K":2048},{"label":"tiny","M":65,"N":256,"K":128}]'

request() {  # mode solution shapes; $LIMITS: more fields, as ',"check_limit_s":60'
  printf '{"mode":"%s","library":"%s","family":"gemm","entry_point":"ptxbench_gemm_bf16","shapes":%s,' \
    "$1" "$solutions/$2.so" "$3"
  printf '"tolerance":{"rtol":0.01,"atol":0.01},"trials":3,"seed":%s,"warmup":10,"repetitions":50,"device":0%s}\n' \
    "$seed" "${LIMITS:-}"
}

# expect ID SOLUTION MODE SHAPES STATUS CONDITION [WRAPPER...]: runs the runner (under WRAPPER, e.g. ncu) and
# checks its exit code 0, the status, and CONDITION, a Python expression over the result document `r`, its first
# shape's first trial `t` and that trial's first output `o`.
expect() {
  local id=$1 solution=$2 mode=$3 shapes=$4 status=$5 condition=$6
  shift 6
  local out=$logs/$id.json
  request "$mode" "$solution" "$shapes" >"$logs/$id.request.json"
  timeout 300 "$@" "$runner" <"$logs/$id.request.json" >"$out" 2>"$logs/$id.stderr"
  local code=$?
  echo "== $id: exit code $code"
  cat "$out"
  if [[ $code -ne 0 ]]; then
    tail -5 "$logs/$id.stderr"
    fail "$id: exit code $code"
    return
  fi
  local verdict
  verdict=$(python3 - "$out" "$status" "$condition" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ok = r["status"] == sys.argv[2]
try:
    names = {"r": r}
    if r.get("shapes") and r["shapes"][0]["trials"]:
        names["t"] = r["shapes"][0]["trials"][0]
        if names["t"]["outputs"]:  # none in sanitize mode: the tools' call is not compared
            names["o"] = names["t"]["outputs"][0]
    ok = ok and bool(eval("(" + sys.argv[3] + ")", names))
except Exception as error:  # a missing field is a failed expectation
    ok = False
    print(f"condition raised {error!r}: ", end="")
print(("ok" if ok else "unexpected") + f": status {r['status']}: {r['message']}")
PY
)
  if [[ $verdict == ok* ]]; then pass "$id: $verdict"; else fail "$id: $verdict (wanted $status and $condition)"; fi
}

# ---- check --------------------------------------------------------------------------------------------------------
# The solution process confined its writes while it was its only thread (before CUDA started its own).
# The main shape's trials but the first are recorded (one launch of the SIMT kernel each) and one of them is
# counted: a SIMT GEMM executes no wgmma.
expect correct.check correct check "$check_shapes" passed \
  'len(r["shapes"]) == 3 and all(len(s["trials"]) == 3 and s["passed"] for s in r["shapes"])
   and r["solution_process"] == {"writes_confined": True, "threads_when_confined": 1}
   and r["launches"]["recorder"] == "recorded" and r["launches"]["calls"] == 2
   and len(r["launches"]["signatures"]) == 1 and r["launches"]["signatures"][0]["launch_count"] == 1
   and len(r["launches"]["counted"]) == 1 and r["launches"]["counted"][0]["mma"] == 0'
expect unwritten.check unwritten check "$small_shapes" failed \
  'o["mismatches"] == 2048 and o["first_mismatches"][0]["row"] == 2047 and o["first_mismatches"][0]["col"] == 0
   and o["first_mismatches"][0]["actual"] == "nan" and len(o["first_mismatches"]) == 10'
expect writes_inputs.check writes_inputs check "$small_shapes" failed \
  'not t["inputs_unchanged"] and t["changed_inputs"]["A"] == 1 and t["changed_inputs"]["B"] == 0'
expect private_stream.check private_stream check "$small_shapes" failed \
  'not t["passed"] and not t["output_stable"]'
expect default_stream.check default_stream check "$small_shapes" failed \
  'not t["passed"] and not t["output_stable"]'
# Buffers move before every checked call (session.cpp, move_buffers), so a cache keyed by pointer never hits
# here and the solution computes every trial right; the time mode, whose calls keep their buffers, fails it.
expect caching.check caching check "$small_shapes" passed 'all(s["passed"] for s in r["shapes"])'
expect noisy.check noisy check "$small_shapes" passed 'all(s["passed"] for s in r["shapes"])'
if grep -q "noisy: loaded" "$logs/noisy.check.stderr" && grep -q "noisy: device printf" "$logs/noisy.check.stderr"; then
  pass "noisy.check: the solution's prints went to stderr"
else
  fail "noisy.check: the solution's prints are not on stderr"
fi
expect returns_error.check returns_error check "$small_shapes" runtime_error \
  'r["runtime_error"]["return_code"] == 7 and r["runtime_error"]["trial"] == 0'
expect illegal_address.check illegal_address check "$small_shapes" runtime_error \
  'r["runtime_error"]["cuda_error"] == "cudaErrorIllegalAddress"'

# ---- time ---------------------------------------------------------------------------------------------------------
# Every call recorded: 20 to 50 timed (the calls stop once both medians are settled), two or more counted (each
# call by a draw), every one checked and traced; the calibration over four call lengths, the times verified.
expect correct.time correct time "$time_shape" passed \
  'r["timing"]["recheck"]["passed"] and 20 <= r["timing"]["repetitions"] <= 50
   and r["timing"]["baseline"]["tflops"] > 100 and not r["timing"]["hidden_work_suspected"]
   and r["timing"]["times_verified"] and len(r["timing"]["calibration"]["rungs"]) == 4
   and len(r["launches"]["counted"]) >= 2
   and r["timing"]["checked_calls"] == r["timing"]["repetitions"] + len(r["launches"]["counted"])
   and r["launches"]["calls"] == r["timing"]["checked_calls"] and len(r["launches"]["signatures"]) == 1'
# The same GEMM as the baseline, timed twice: the speedup must be near 1 and the two runs show the spread.
expect cublaslt_call.check cublaslt_call check "$check_shapes" passed 'all(s["passed"] for s in r["shapes"])'
for run in 1 2; do
  expect "cublaslt_call.time.$run" cublaslt_call time "$time_shape" passed \
    '0.9 < r["timing"]["speedup"] < 1.1 and r["timing"]["recheck"]["passed"] and not r["timing"]["hidden_work_suspected"]'
done
expect private_stream.time private_stream time '[{"label":"main","M":2048,"N":2048,"K":2048}]' failed \
  'r["timing"]["hidden_work_suspected"]'
expect caching.time caching time '[{"label":"main","M":2048,"N":2048,"K":2048}]' failed \
  'not r["timing"]["recheck"]["passed"]'

# ---- check_then_time: both in one process --------------------------------------------------------------------------
# The check's trials, then the main shape timed, one solution process; each part its own result and launches.
LIMITS=',"check_limit_s":120,"time_limit_s":120' expect correct.check_then_time correct check_then_time \
  "$check_shapes" passed \
  'r["check"]["status"] == "passed" and r["time"]["status"] == "passed" and len(r["check"]["shapes"]) == 3
   and r["time"]["timing"]["recheck"]["passed"] and r["time"]["timing"]["times_verified"]
   and r["check"]["launches"]["calls"] == 2 and 20 <= r["time"]["timing"]["repetitions"] <= 50
   and r["time"]["launches"]["calls"] == r["time"]["timing"]["checked_calls"]
   and set(r["time"]["timing"]["loop_s"]) == {"inputs", "solution", "check", "baseline"}
   and set(r["time"]["timing"]["setup_s"]) == {"judge", "warm_up", "baseline_check", "baseline_warm_up"}
   and all(v % 256 == 0 for v in r["time"]["timing"]["placement"].values())
   and 0 < r["time"]["timing"]["loop_s"]["solution"] < r["time"]["wall_s"]
   and 0 < r["check"]["wall_s"] and 0 < r["time"]["wall_s"]
   and {"check_calls", "time_calls", "calibration"} <= set(r["phases_s"])'
# A check that failed is not timed.
expect unwritten.check_then_time unwritten check_then_time "$small_shapes" failed \
  'r["check"]["status"] == "failed" and "time" not in r'

# ---- profile (under ncu when it is there) -------------------------------------------------------------------------
# Checks what ncu saw between cudaProfilerStart and Stop: only the solution's kernel, on the stream the runner
# reports ("same") or on another one ("other").
ncu_kernels() {  # ncu_csv result_json same|other
  python3 - "$@" <<'PY'
import csv, json, sys
rows = list(csv.DictReader(line for line in open(sys.argv[1]) if not line.startswith("==")))
stream = json.load(open(sys.argv[2]))["profile"]["stream_id"]
names = sorted({row["Kernel Name"] for row in rows})
streams = sorted({int(row["Stream"]) for row in rows})
where = "same" if streams == [stream] else "other"
ok = len(names) == 1 and "gemm_kernel" in names[0] and where == sys.argv[3]
print(("ok" if ok else "unexpected") + f": kernels {names} on streams {streams}, runner's stream {stream}: {where}")
PY
}
if command -v ncu >/dev/null; then
  for solution in correct private_stream; do
    expect "$solution.profile" "$solution" profile "$profile_shape" passed 'r["profile"]["stream_id"] > 0' \
      ncu --profile-from-start off --clock-control none --metrics gpu__time_duration.sum --csv \
      --log-file "$logs/$solution.profile.ncu.csv"
    want=$([[ $solution == correct ]] && echo same || echo other)
    seen=$(ncu_kernels "$logs/$solution.profile.ncu.csv" "$logs/$solution.profile.json" "$want" 2>&1)
    if [[ $seen == ok* ]]; then pass "$solution.profile ncu $seen"
    else head -20 "$logs/$solution.profile.ncu.csv"; fail "$solution.profile ncu $seen"; fi
  done
else
  expect correct.profile correct profile "$profile_shape" passed 'r["profile"]["stream_id"] > 0'
  skip "profile under ncu: ncu is not on the PATH"
fi

# ---- sanitize (under compute-sanitizer when it is there) ----------------------------------------------------------
if command -v compute-sanitizer >/dev/null; then
  expect correct.sanitize correct sanitize "$sanitize_shapes" passed \
    'r["shapes"][0]["label"] == "tiny" and r["shapes"][0]["passed"]' \
    compute-sanitizer --tool memcheck --log-file "$logs/correct.sanitize.memcheck.txt"
  if grep -q "ERROR SUMMARY: 0 errors" "$logs/correct.sanitize.memcheck.txt"; then
    pass "correct.sanitize memcheck: 0 errors"
  else
    fail "correct.sanitize memcheck: $(grep "ERROR SUMMARY" "$logs/correct.sanitize.memcheck.txt")"
  fi
  expect illegal_address.sanitize illegal_address sanitize "$sanitize_shapes" runtime_error 'True' \
    compute-sanitizer --tool memcheck --log-file "$logs/illegal_address.sanitize.memcheck.txt"
  if grep -q "Invalid __global__ write" "$logs/illegal_address.sanitize.memcheck.txt"; then
    pass "illegal_address.sanitize memcheck: invalid global write reported"
  else
    fail "illegal_address.sanitize memcheck: no invalid write reported"
  fi
else
  expect correct.sanitize correct sanitize "$sanitize_shapes" passed 'r["shapes"][0]["label"] == "tiny"'
  skip "sanitize under compute-sanitizer: compute-sanitizer is not on the PATH"
fi

# ---- calls that never end (last: their killed contexts must not disturb the timings above) -----------------------
request check never_ends "$small_shapes" >"$logs/never_ends.request.json"
timeout 20 "$runner" <"$logs/never_ends.request.json" >"$logs/never_ends.json" 2>"$logs/never_ends.stderr"
code=$?
if [[ $code -eq 124 ]]; then pass "never_ends.check: killed by timeout 20 (exit 124), as the parent would"
else fail "never_ends.check: exit code $code, wanted 124"; fi

# The runner's own limit on the check part (check_then_time): the hung call's process is killed, the call is run
# again in a fresh, unrecorded solution process, and cuda-gdb, when it is on the PATH, is attached to that one and
# names its kernel; then the runner reports it and ends.
LIMITS=',"check_limit_s":10,"time_limit_s":10,"debugger":"cuda-gdb"' request check_then_time never_ends \
  "$small_shapes" \
  >"$logs/never_ends.check_then_time.request.json"
timeout 60 "$runner" <"$logs/never_ends.check_then_time.request.json" >"$logs/never_ends.check_then_time.json" \
  2>"$logs/never_ends.check_then_time.stderr"
code=$?
seen=$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
c = r["check"]
ok = r["status"] == c["status"] == "timeout" and c["runtime_error"]["trial"] == 0 and "time" not in r
debugged = c["runtime_error"].get("debugger_output", "")
ok = ok and ("spin_forever" in debugged or sys.argv[2] == "absent")
failure = c["runtime_error"].get("debugger_failure", "")
print(("ok" if ok else "unexpected") + ": " + c["message"] + " | cuda-gdb: " + debugged[-300:] + failure)' \
  "$logs/never_ends.check_then_time.json" "$(command -v cuda-gdb >/dev/null && echo present || echo absent)" 2>&1)
if [[ $code -eq 0 && $seen == ok* ]]; then pass "never_ends.check_then_time: $seen"
else fail "never_ends.check_then_time: exit code $code, $seen"; fi

# ---- summary ------------------------------------------------------------------------------------------------------
python3 - "$logs" <<'PY'
import json, pathlib, sys
logs = pathlib.Path(sys.argv[1])
for path in sorted(logs.glob("*.time*.json")):
    if path.name.endswith(".request.json"):
        continue
    t = json.loads(path.read_text()).get("timing")
    if not t:
        continue
    s, b = t["solution"], t["baseline"]
    print(f"{path.stem:24} solution {s['event_us']['median']:9.1f} us ({s['tflops']:6.1f} TFLOP/s, wall "
          f"{s['wall_us']['median']:9.1f} us)  cuBLASLt {b['event_us']['median']:8.1f} us ({b['tflops']:6.1f} "
          f"TFLOP/s, p10 {b['event_us']['p10']:.1f} p90 {b['event_us']['p90']:.1f}, wall {b['wall_us']['median']:.1f})"
          f"  speedup {t['speedup']:.4f}")
PY
echo
echo "== summary: $passed passed, $failed failed, $skipped skipped"
printf '%s\n' "${summary[@]}"
[[ $failed -eq 0 ]]
