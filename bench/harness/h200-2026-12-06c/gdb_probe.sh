#!/usr/bin/env bash
# Why cuda-gdb, attached to the judge's rerun of a hung call (a fresh solution process, unrecorded), said
# "CUDBG_ERROR_NO_DEVICE_AVAILABLE" (call J, 2026-12-06) when it names the kernel of a plain hung process on
# this host (call I). What differs: the runner, the rerun's parent, holds a CUDA context on the same GPU; the
# first (killed) process's hung kernel was ended just before; the judge's sandbox. Each case: attach 4 s after
# the start, or launch the process under cuda-gdb and interrupt it after 4 s.
cd "$OUT" || exit 1
cat > hang.cu <<'CU'
#include <cstdio>
__device__ volatile int flag = 0;
__global__ void wait_for_flag(int* out) {
  if (threadIdx.x < 32) while (flag == 0) __nanosleep(1000);
  out[threadIdx.x] = 1;
}
int main() {
  int* out = nullptr;
  cudaMalloc(&out, 4096);
  wait_for_flag<<<4, 128>>>(out);
  printf("launched\n"); fflush(stdout);
  cudaDeviceSynchronize();
  return 0;
}
CU
cat > parent.cu <<'CU'
// Holds a CUDA context on the GPU, then runs argv[1..] as its child and waits for it (as the runner does).
#include <cstdio>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char** argv) {
  cudaFree(0);
  if (argc < 2) { sleep(60); return 0; }
  const pid_t child = fork();
  if (child == 0) { execv(argv[1], argv + 1); _exit(127); }
  printf("%d\n", child); fflush(stdout);
  waitpid(child, nullptr, 0);
  return 0;
}
CU
for f in hang parent; do
  nvcc -gencode arch=compute_90a,code=sm_90a -lineinfo -o $f $f.cu > nvcc-$f.log 2>&1 || { cat nvcc-$f.log; exit 1; }
done
attach() {  # attach NAME PID
  timeout 25 cuda-gdb -q -batch -p "$2" -ex "info cuda kernels" -ex "info cuda threads" > "attach-$1.txt" 2>&1
  echo "== $1: cuda-gdb exit $?"
  grep -E "wait_for_flag|hang.cu|CUDBG|Could|No CUDA|rror|denied" "attach-$1.txt" | head -5 | cut -c1-200
}
# 1. A plain hung process (call I's control).
./hang > plain.out 2>&1 & pid=$!; sleep 4; attach plain $pid; kill -KILL $pid; wait $pid 2>/dev/null
# 2. The same, another process holding an idle context on the GPU.
./parent > idle.out 2>&1 & idle=$!; sleep 2
./hang > beside-idle.out 2>&1 & pid=$!; sleep 4; attach beside-idle $pid; kill -KILL $pid; wait $pid 2>/dev/null
kill -KILL $idle; wait $idle 2>/dev/null
# 3. The hung process is the child of a process with a CUDA context (the runner and its solution process).
./parent ./hang > child.out 2>&1 & parent=$!; sleep 4
pid=$(head -1 child.out); attach child-of-context "$pid"; kill -KILL "$pid"; wait $parent 2>/dev/null
# 4. Right after another hung process was killed (the judge kills the first process, then starts the rerun).
./hang > first.out 2>&1 & first=$!; sleep 3; kill -KILL $first
./hang > after-kill.out 2>&1 & pid=$!; sleep 4; attach after-kill $pid; kill -KILL $pid; wait $pid 2>/dev/null
# 5. Launched under cuda-gdb, interrupted after 4 s (SIGINT to the inferior), then the same questions.
launch() {  # launch NAME SIGNAL-TARGET(gdb|inferior) [PREFIX...]
  local name=$1 target=$2; shift 2
  "$@" timeout 30 cuda-gdb -q -batch -ex run -ex "info cuda kernels" -ex "info cuda threads" -ex "bt 3" \
    --args ./hang > "launch-$name.txt" 2>&1 & local gdb=$!
  sleep 5
  local inferior; inferior=$(pgrep -n -f '^\./hang$' || pgrep -n -x hang)
  if [[ $target == gdb ]]; then pkill -INT -f "cuda-gdb -q -batch -ex run" ; else kill -INT "$inferior"; fi
  wait $gdb; echo "== launch $name (SIGINT to $target): exit $?"
  grep -E "wait_for_flag|hang.cu|CUDBG|Could|No CUDA|rror|SIGINT" "launch-$name.txt" | head -6 | cut -c1-200
  pkill -KILL -x hang 2>/dev/null
}
launch inferior-int inferior
launch gdb-int gdb
./parent > idle2.out 2>&1 & idle=$!; sleep 2
launch beside-idle inferior
kill -KILL $idle; wait $idle 2>/dev/null
# 6. Inside a bwrap sandbox like the judge's (user namespace, no capabilities): attach to a sibling.
if command -v bwrap > /dev/null; then
  bwrap --unshare-user --unshare-pid --die-with-parent --bind / / --dev-bind /dev /dev --proc /proc \
    bash -c './hang > sandboxed.out 2>&1 & p=$!; sleep 4; timeout 25 cuda-gdb -q -batch -p $p -ex "info cuda kernels" \
      > attach-sandboxed.txt 2>&1; echo "== sandboxed attach: exit $?"; kill -KILL $p' 
  grep -E "wait_for_flag|CUDBG|Could|No CUDA|rror|denied|ptrace" attach-sandboxed.txt | head -5 | cut -c1-200
  cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null | sed 's/^/yama ptrace_scope /'
fi
