#!/usr/bin/env bash
# Builds and runs the GPU test of the Hopper kit's pattern documents (kits/hopper/patterns/*.md): every code
# fragment of the documents, run in kernels and checked against the host (run.sh's build, patterns_test.cu).
# tests/kit/check_patterns.py (no GPU) checks that the documents' fragments and the test's copies agree.
# Usage: tests/gpu/kit/run_patterns.sh [build-dir]     Exit status: the test's (0 = every fragment passed).
exec "$(dirname "$0")/run.sh" "${1:-$(cd "$(dirname "$0")/../../.." && pwd)/build/kit}" patterns_test
