#!/usr/bin/env bash
# Call L (2026-12-06, fourth session): call K's two probes again, narrowed. gdb_probe2.sh: the solution
# process's own steps (Landlock, spinning synchronisation, CUPTI loaded) under an attaching cuda-gdb.
# decode_probe.sh, its entry point's error named (call K's returned non-zero on the first call, unexplained).
source bench/harness/h200-2026-12-05/env.sh
step() { echo "== $1: exit $2 at $SECONDS s"; }
mkdir -p "$OUT/gdb2"
OUT=$OUT/gdb2 timeout 150 bash bench/harness/h200-2026-12-06c/gdb_probe2.sh > "$OUT/gdb-probe2.txt" 2>&1
step "gdb probe 2" $?; cut -c1-220 "$OUT/gdb-probe2.txt"
timeout 240 bash bench/harness/h200-2026-12-06c/decode_probe.sh > "$OUT/decode-probe.txt" 2>&1
step "decode probe" $?; cut -c1-260 "$OUT/decode-probe.txt"
