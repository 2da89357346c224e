#!/usr/bin/env bash
# Call 4 (2026-12-05, evening): does the cuDNN forward's time depend on where its buffers start? The judge
# places each buffer at a random multiple of 256 bytes into its allocation (src/runner/placement.h), once per
# time stage; the baseline's median moved by 12-34% between evaluations while the solution's stayed within 1-4%.
source bench/harness/h200-2026-12-05/env.sh
for i in 1 2 3; do
  timeout 80 python3 bench/time-stage/baseline_probe.py forward 64 30 0 256 512 1024 4096 33024 65280
done 2>&1 | grep -v "warn" | tee "$OUT/probe-offsets.txt"
