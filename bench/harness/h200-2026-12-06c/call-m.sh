#!/usr/bin/env bash
# Call M (2026-12-06, fourth session): gdb_probe3.sh (which write the CUDA debugger needs in a process confined
# with Landlock), then decode_probe.sh with its plain read within its buffer (call L's read past K's end).
source bench/harness/h200-2026-12-05/env.sh
step() { echo "== $1: exit $2 at $SECONDS s"; }
mkdir -p "$OUT/gdb3"
OUT=$OUT/gdb3 timeout 200 bash bench/harness/h200-2026-12-06c/gdb_probe3.sh > "$OUT/gdb-probe3.txt" 2>&1
step "gdb probe 3" $?; cut -c1-220 "$OUT/gdb-probe3.txt"
timeout 240 bash bench/harness/h200-2026-12-06c/decode_probe.sh > "$OUT/decode-probe.txt" 2>&1
step "decode probe" $?; cut -c1-260 "$OUT/decode-probe.txt"
