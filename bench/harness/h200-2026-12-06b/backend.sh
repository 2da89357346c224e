#!/usr/bin/env bash
# Whether a plain CUDA process on this host, outside the judge, loads the CUDA debugger back-end (call I's
# probe: the solution process loads it, runs its init, unloads it and prints "Could not find CUDA Debugger
# back-end").
cd "$OUT" || exit 1
printf '#include <cstdio>\n#include <cuda_runtime.h>\nint main(){printf("cudaFree: %%d\\n", (int)cudaFree(0));}\n' > plain.cu
nvcc -o plain plain.cu > nvcc.log 2>&1
LD_DEBUG=libs LD_DEBUG_OUTPUT=$OUT/ld ./plain > plain.out 2> plain.err; echo "exit $?"
cat plain.out plain.err
grep -h -A12 "find library=libcudadebugger" ld.* | head -30 | cut -c1-160
id; cat /proc/sys/kernel/yama/ptrace_scope 2>&1; grep -E "CapEff|NoNewPrivs|Seccomp" /proc/self/status
ls -la /tmp/cuda-dbg 2>&1 | head -5; ls -la /dev/nvidia* | head
