#!/usr/bin/env bash
# Call L's gdb_probe2.sh: cuda-gdb cannot debug a hung process that confined its writes with Landlock as the
# solution process does (runner/landlock.h: /dev, /tmp, /proc/self): "CUDBG_ERROR_NO_DEVICE_AVAILABLE", after
# the process forked. Which write it needs: the same process with one more folder writable, under strace where
# the host has it, and launched under cuda-gdb instead of attached to.
cd "$OUT" || exit 1
root=$OLDPWD
sed -n "/^cat > hang2.cu <<'CU'/,/^CU/p" "$root/bench/harness/h200-2026-12-06c/gdb_probe2.sh" | sed '1d;$d' > hang2.cu
nvcc -gencode arch=compute_90a,code=sm_90a -std=c++20 -lineinfo -I "$root/src" -o hang2 hang2.cu -ldl \
  > nvcc-hang2.log 2>&1 || { cat nvcc-hang2.log; exit 1; }
attach() {  # attach NAME EXTRA-WRITABLE
  ./hang2 landlock "$2" > "$1.out" 2>&1 & local pid=$!; sleep 3
  timeout 20 cuda-gdb -q -batch -p $pid -ex "info cuda kernels" > "attach-$1.txt" 2>&1
  echo "== landlock + $2: cuda-gdb exit $?"
  grep -E "wait_for_flag|CUDBG" "attach-$1.txt" | head -2 | cut -c1-160
  kill -KILL $pid 2>/dev/null; wait $pid 2>/dev/null
}
attach all /
attach proc /proc
attach var /var
attach run /run
attach root /root
attach usr /usr
if command -v strace > /dev/null; then
  strace -f -e trace=%file,%desc -e status=failed -o strace.txt ./hang2 landlock > strace.out 2>&1 & pid=$!; sleep 4
  timeout 20 cuda-gdb -q -batch -p $pid -ex "info cuda kernels" > attach-strace.txt 2>&1
  echo "== under strace: cuda-gdb exit $?"; kill -KILL $pid; wait $pid 2>/dev/null
  grep -E "EACCES|EPERM|EROFS" strace.txt | grep -v ENOENT | head -20 | cut -c1-200
else
  echo "no strace on this host"
fi
timeout 30 cuda-gdb -q -batch -ex run -ex "info cuda kernels" -ex "info cuda threads" --args ./hang2 landlock \
  > launch-landlock.txt 2>&1 & gdb=$!
sleep 6; kill -INT "$(pgrep -n -f 'hang2 landlock$')"; wait $gdb
echo "== launched under cuda-gdb, landlock: exit $?"
grep -E "wait_for_flag|CUDBG|SIGINT" launch-landlock.txt | head -4 | cut -c1-160
pkill -KILL -x hang2 2>/dev/null
