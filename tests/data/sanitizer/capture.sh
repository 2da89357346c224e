#!/usr/bin/env bash
# Captures the real tool outputs that the parser tests read (run once on an H200, 2026-11-30; see README.md here
# and ../ncu/README.md, ../sass/README.md: it writes compute-sanitizer, ncu and cuobjdump outputs).
# Usage (repo root): tests/data/sanitizer/capture.sh OUTDIR   -> OUTDIR/captures.tar.gz
# Every output file is the tool's stdout+stderr as printed; exit codes go to exit_codes.txt.
set -u
out=${1:?OUTDIR}
work=$(mktemp -d)
cap=$work/cap
mkdir -p "$cap"
here=$(cd "$(dirname "$0")" && pwd)
ncu_dir=$here/../ncu
flags=(-gencode arch=compute_90a,code=sm_90a -lineinfo)
record() {  # record NAME COMMAND...: output to NAME.txt, exit code to exit_codes.txt
  local name=$1; shift
  timeout 60 "$@" >"$cap/$name.txt" 2>&1
  echo "$name $?" >>"$cap/exit_codes.txt"
}
{
  nvcc --version; ncu --version; compute-sanitizer --version; nvidia-smi --query-gpu=name,driver_version --format=csv
} >"$cap/versions.txt" 2>&1

cd "$work"
nvcc "${flags[@]}" -o sanitizer_cases "$here/sanitizer_cases.cu" >"$cap/build_sanitizer.txt" 2>&1 &
nvcc "${flags[@]}" -o multi_kernel "$ncu_dir/multi_kernel.cu" -lcublas >"$cap/build_multi.txt" 2>&1 &
nvcc -gencode=arch=compute_90a,code=sm_90a -O2 -o probe_dev "$ncu_dir/probe.cu" >"$cap/build_probe.txt" 2>&1 &
nvcc -gencode=arch=compute_90a,code=sm_90a -O2 -cubin -o probe.cubin "$ncu_dir/probe.cu" >"$cap/build_cubin.txt" 2>&1 &
wait

# compute-sanitizer
mc=(compute-sanitizer --tool memcheck --print-limit 10 --error-exitcode 99)
sc=(compute-sanitizer --tool synccheck --print-limit 10 --error-exitcode 99)
record memcheck_clean "${mc[@]}" ./sanitizer_cases clean
record memcheck_oob_global "${mc[@]}" ./sanitizer_cases oob_global
record memcheck_oob_global_limit3 compute-sanitizer --tool memcheck --print-limit 3 --error-exitcode 99 ./sanitizer_cases oob_global
record memcheck_oob_shared "${mc[@]}" ./sanitizer_cases oob_shared
record memcheck_misaligned "${mc[@]}" ./sanitizer_cases misaligned
record synccheck_clean "${sc[@]}" ./sanitizer_cases clean
record synccheck_divergent_warp "${sc[@]}" ./sanitizer_cases divergent_warp
record synccheck_divergent_block "${sc[@]}" ./sanitizer_cases divergent_block
rc=(compute-sanitizer --tool racecheck --print-limit 10 --error-exitcode 99)
ic=(compute-sanitizer --tool initcheck --print-limit 10 --error-exitcode 99)
record racecheck_clean "${rc[@]}" ./sanitizer_cases clean
record racecheck_race "${rc[@]}" ./sanitizer_cases race
record initcheck_clean "${ic[@]}" ./sanitizer_cases clean
record initcheck_uninit "${ic[@]}" ./sanitizer_cases uninit
record initcheck_uninit_ipc "${ic[@]}" --target-processes all ./sanitizer_cases uninit_ipc
record initcheck_uninit_ipc_raw "${ic[@]}" --target-processes all ./sanitizer_cases uninit_ipc_raw
record memcheck_no_cuda_program "${mc[@]}" /bin/true
record memcheck_missing_program "${mc[@]}" ./no_such_program

# Nsight Compute, per-opcode executed counts
nc=(ncu --clock-control none --metrics sass__inst_executed_per_opcode_with_modifier_all
    --print-metric-instances details --csv --page raw)
record ncu_multi_kernel "${nc[0]}" --profile-from-start off "${nc[@]:1}" ./multi_kernel
record ncu_probe_arg0 "${nc[@]}" ./probe_dev 0
record ncu_probe_arg1_modifier_all "${nc[@]}" ./probe_dev 1
record ncu_nothing_profiled "${nc[0]}" --profile-from-start off "${nc[@]:1}" ./probe_dev 1

# Static SASS
record sass_probe_cubin cuobjdump -sass probe.cubin
record sass_multi_kernel cuobjdump -sass ./multi_kernel

tar -C "$work" -czf "$out/captures.tar.gz" cap
cat "$cap/exit_codes.txt"
