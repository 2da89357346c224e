# Sourced by each call's script on the GPU host, from the repository's root: the bundled binaries
# (bench/harness/bundle.sh) and a store kept under /tmp between calls on one warm machine.
export PATH=$PWD/.device/bin:$PATH LD_LIBRARY_PATH=$PWD/.device/lib PTXBENCH_ROOT=$PWD
export PTXBENCH_DATA=/tmp/h/data PTXBENCH_RUNNER=.device/bin/ptxbench-runner
mkdir -p "$PTXBENCH_DATA" "$OUT"
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader >> "$OUT/gpu.txt"
date -u +%FT%TZ >> "$OUT/gpu.txt"
# What comes back is few files: the logs and verdicts of a call in one archive, the store beside it.
# The store's write-ahead log is folded into it first: a run stopped by a signal leaves its verdicts there.
keep_store() {
  python3 -c "import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute('PRAGMA wal_checkpoint(TRUNCATE)')" \
    "$PTXBENCH_DATA/ptxbench.db" 2>/dev/null
  cp "$PTXBENCH_DATA/ptxbench.db" "$OUT/ptxbench.db" 2>/dev/null
  # (Only the top folder's store stays beside the archive: a nested call's folder goes into it whole.)
  (cd "$OUT" && tar czf /tmp/results.tgz --exclude ./ptxbench.db . &&
    find . -mindepth 1 -maxdepth 1 ! -name ptxbench.db -exec rm -rf {} + && mv /tmp/results.tgz .)
}
trap keep_store EXIT
