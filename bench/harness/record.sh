#!/usr/bin/env bash
# A record that does not fit one device call, as one run carried across calls: `ptxbench run --solutions`
# begun in the first call and continued with `ptxbench run --resume N` in the next ones, until every pair
# has a verdict. The store travels with the tree: carry .device (bundle.sh keeps .device/store), and after
# each call copy the call's ptxbench.db and RECORD.run back into .device/store (`keep_record.sh FOLDER
# RECORD`, FOLDER what the call brought back), which also keeps them in bench/harness/records/RECORD, committed,
# for a later checkout without .device/store (its binaries must be the record's commit's); once the run is
# whole, remove that copy (git rm -r). A resumption on another GPU is refused: then begin again (remove
# RECORD.run and the kept copy).
#   DEADLINE=590 bash bench/harness/record.sh RECORD      (on the GPU host, from the repository's root)
# RECORD:
#   shipped           every shipped solution on every task it serves (README.md, item 5)
#   examples          the SIMT examples on every task they serve (the manifest's part of shipped that
#                     manifest.sh's `examples` named; 39 evaluations, more than one call)
#   corpus-gemm       the adversarial corpus on the GEMM task, with its expected verdicts
#   corpus-attention  the corpus's attention entries on their tasks
source bench/harness/h200-2026-12-05/env.sh
record=${1:?record.sh RECORD: shipped, examples, corpus-gemm or corpus-attention}
deadline=${DEADLINE:-560}
case $record in
  shipped) what=(--solutions solutions) ;;
  examples) what=(--solutions solutions --only 'examples/*' --tasks '*-sm90a') ;;
  corpus-gemm) what=(--solutions tests/adversarial --tasks gemm-bf16-n4096-k4096-sm90a --stage-time-limit 30) ;;
  corpus-attention)
    what=(--solutions tests/adversarial --tasks attention-bwd-d64-sm90a,attention-fwd-d64-sm90a --stage-time-limit 60) ;;
  *) echo "no record $record"; exit 2 ;;
esac
store=.device/store
kept=bench/harness/records/$record  # keep_record.sh's committed copy, when .device/store has none
if [[ ! -f $store/$record.run && -f $kept/run ]]; then
  if [[ $(cat .device/commit) != "$(cat "$kept/commit")" ]]; then
    echo "run $(cat "$kept/run") of $record was judged by $(cat "$kept/commit")'s binaries, these are" \
      "$(cat .device/commit)'s: bundle those (a worktree at that commit, scripts/build, bundle.sh), or begin" \
      "again (git rm -r $kept)"
    exit 2
  fi
  mkdir -p "$store" && gunzip -c "$kept/ptxbench.db.gz" > "$store/ptxbench.db" && cp "$kept/run" "$store/$record.run"
fi
[[ -f $store/ptxbench.db && ! -f $PTXBENCH_DATA/ptxbench.db ]] && cp "$store/ptxbench.db" "$PTXBENCH_DATA/"
if [[ -f $store/$record.run ]]; then
  run=(run --resume "$(cat "$store/$record.run")" --gpu-share 4)
else
  run=(run "${what[@]}" --gpu-share 4)
fi
start=$SECONDS
timeout -s INT $((deadline - SECONDS)) ptxbench "${run[@]}" > "$OUT/$record.txt" 2> "$OUT/$record.err"
status=$?
# The run's id, from its first line ("run 3: ..." or "run 3 (resumed): ..."), for the next call.
sed -n 's/^run \([0-9]*\)[ :].*/\1/p' "$OUT/$record.err" | head -1 > "$OUT/$record.run"
echo "== $record: ${run[*]}: exit $status in $((SECONDS - start)) s (124 or 130: stopped at the deadline; resume)"
grep -E "evaluations in run|differ" "$OUT/$record.txt" | tail -1
grep -c "as expected:" "$OUT/$record.err" | sed 's/^/verdicts judged in this call: /'
grep "as expected: NO" "$OUT/$record.err" | cut -c1-220
grep "^ptxbench:" "$OUT/$record.err" | head -3
