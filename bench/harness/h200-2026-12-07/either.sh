#!/usr/bin/env bash
# Whichever GPU comes (2026-12-07; device starts were scarce): on an H100 the examples' record resumes
# (record.sh examples, whose run 1 was judged on an H100 and refuses another GPU); on any other Hopper, call Z
# (../h200-2026-12-06h/call-z.sh, the decode's work of issue 31). Carry .device and that call's decode-f61f251.cu.
# From the second call on (binaries of 141632c or later in .device), the H100 branch first judges the sanitize
# stage of the pair whose racecheck run ended badly in the first (README.md), one evaluation of its own
# ($OUT/gqa-sanitize.json), then resumes the record.
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H100; then
  if [[ -n ${RECHECK:-} ]]; then
    # env.sh's settings, but a store of its own: record.sh takes the record's store only into an empty one.
    PATH=$PWD/.device/bin:$PATH LD_LIBRARY_PATH=$PWD/.device/lib PTXBENCH_ROOT=$PWD PTXBENCH_DATA=/tmp/h/recheck \
      PTXBENCH_RUNNER=.device/bin/ptxbench-runner \
      ptxbench eval solutions/examples/attention_backward_simt.cu --task attention-bwd-gqa32x4-d128-causal-sm90a \
      --stages sanitize --json > "$OUT/gqa-sanitize.json" 2> "$OUT/gqa-sanitize.err"
    python3 -c "import json; s = json.load(open('$OUT/gqa-sanitize.json'))['stages']; \
      [print(x['name'], x['status'], x.get('wall_s'), x.get('message')) for x in s]"
  fi
  DEADLINE=${DEADLINE:-585} bash bench/harness/record.sh examples
elif grep -q chunk_of solutions/reference/attention_decode_paged_sm90a.cu; then
  bash bench/harness/h200-2026-12-06h/call-z.sh
else
  echo "call Z needs the branch decode-order's reference in the tree (git checkout decode-order -- solutions/reference/attention_decode_paged_sm90a.cu)"
  exit 2
fi
