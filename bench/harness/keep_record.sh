#!/usr/bin/env bash
# After a device call of record.sh, here: the call's store and the record's run id into .device/store, so that
# the next call (the same record.sh command, .device carried) resumes the run. FOLDER holds what the call
# brought back (its ptxbench.db and results.tgz).
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
echo "kept run $(cat ".device/store/$record.run") of $record"
