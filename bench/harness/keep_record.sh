#!/usr/bin/env bash
# After a device call of record.sh, here: the call's store and the record's run id into .device/store, so that
# the next call (the same record.sh command, .device carried) resumes the run; and a copy into
# bench/harness/records/RECORD (the store gzipped, the run id, the commit of the binaries that judged it), to be
# committed: .device does not outlive every checkout, and a record can take more than a session's device time.
# FOLDER holds what the call brought back (its ptxbench.db and results.tgz).
#   bench/harness/keep_record.sh FOLDER RECORD
set -euo pipefail
folder=${1:?keep_record.sh FOLDER RECORD}
record=${2:?keep_record.sh FOLDER RECORD}
cd "$(dirname "$0")/../.."
mkdir -p .device/store
tar xzf "$folder/results.tgz" -O "./$record.run" > ".device/store/$record.run.new"
[[ -s .device/store/$record.run.new ]] || { echo "no run id for $record in $folder"; exit 1; }
install -m 644 "$folder/ptxbench.db" .device/store/ptxbench.db
mv ".device/store/$record.run.new" ".device/store/$record.run"
kept=bench/harness/records/$record
mkdir -p "$kept"
gzip -9 -c .device/store/ptxbench.db > "$kept/ptxbench.db.gz"
cp ".device/store/$record.run" "$kept/run"
cp .device/commit "$kept/commit"
echo "kept run $(cat ".device/store/$record.run") of $record, judged by $(cat "$kept/commit")'s binaries"
