#!/usr/bin/env bash
# What cuda-gdb says about a hung kernel (issue 34's debugging feedback), recorded for the parser to be written
# against: a kernel whose first warp of each block waits forever on a flag, built with -lineinfo as the judge
# compiles, run under cuda-gdb in batch mode and interrupted with SIGINT after 3 s; then the same inside a bwrap
# pid namespace, as the judge's sandbox runs it; then cuda-gdb attached to the running process.
#   gdb_probe.sh OUT_DIR
out=${1:?OUT_DIR}
dir=$(mktemp -d)
mkdir -p "$out"
cat > "$dir/hang.cu" <<'CU'
#include <cstdio>
__device__ volatile int flag = 0;
__global__ void wait_for_flag(int* out) {
  if (threadIdx.x < 32) {
    while (flag == 0) __nanosleep(1000);
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}
int main() {
  int* out = nullptr;
  cudaMalloc(&out, 4096);
  wait_for_flag<<<4, 128>>>(out);
  cudaDeviceSynchronize();
  std::printf("done\n");
  return 0;
}
CU
nvcc -gencode arch=compute_90a,code=sm_90a -lineinfo -o "$dir/hang" "$dir/hang.cu" || exit 1
commands=(-ex run -ex "info cuda kernels" -ex "info cuda threads" -ex "info cuda blocks" -ex "info cuda warps"
  -ex "bt" -ex "info cuda lanes" -ex "x/6i \$pc" -ex "info line *\$pc")
interrupt_later() { (sleep 3; pkill -INT -x hang) & }
interrupt_later
start=$SECONDS
timeout 20 cuda-gdb -q -batch "${commands[@]}" --args "$dir/hang" > "$out/cuda-gdb-plain.txt" 2>&1
echo "== cuda-gdb, plain: exit $? in $((SECONDS - start)) s"; head -60 "$out/cuda-gdb-plain.txt"
interrupt_later
start=$SECONDS
timeout 20 bwrap --dev-bind / / --unshare-pid --die-with-parent --proc /proc -- \
  cuda-gdb -q -batch "${commands[@]}" --args "$dir/hang" > "$out/cuda-gdb-bwrap.txt" 2>&1
echo "== cuda-gdb, in a bwrap pid namespace: exit $? in $((SECONDS - start)) s"; head -40 "$out/cuda-gdb-bwrap.txt"
# Attaching to the hung process instead (what the runner could do at its own deadline, without a second run):
# cuda-gdb started beside it, as the runner's child would be, and its ptrace rules.
echo "ptrace_scope: $(cat /proc/sys/kernel/yama/ptrace_scope 2>&1)" > "$out/cuda-gdb-attach.txt"
"$dir/hang" & hung=$!
sleep 3
start=$SECONDS
timeout 20 cuda-gdb -q -batch -p "$hung" -ex "info cuda kernels" -ex "info cuda threads" -ex "bt" \
  >> "$out/cuda-gdb-attach.txt" 2>&1
echo "== cuda-gdb, attached to the running process: exit $? in $((SECONDS - start)) s"
head -40 "$out/cuda-gdb-attach.txt"
kill -KILL "$hung" 2>/dev/null
cp "$dir/hang.cu" "$out/"
pkill -KILL -x hang 2>/dev/null
rm -rf "$dir"
