#!/usr/bin/env bash
# Call Z (2026-12-06, ninth session; issue 31). About 7 minutes: no evaluation of step 4 begins after STOP
# (400 s). The whole of the decode's work this session can afford, so it decides the fix itself. Before it:
#   git show f61f251:solutions/reference/attention_decode_paged_sm90a.cu > bench/harness/h200-2026-12-06h/decode-f61f251.cu
#  1. Call Y (../h200-2026-12-06g/call-y.sh) on the decode reference of f61f251 (decode-f61f251.cu here): why its
#     pages-of-one path never ends under Nsight Compute. Its variants are edits (sed) of that reference.
#  2. The reference with its CTAs in longest-first order (chunk_of, on the branch decode-order: run this call from
#     its tree) against f61f251's batch order, alone (decode_probe.cu), alternately, on the four tasks' shapes
#     (SHAPES): the share of a plain read.
#  3. The candidate: the first of call Y's edits, in the order own-bytes, regs-56-200, no-setmaxnreg, whose
#     variant ended under ncu, applied to the working tree's reference (candidate.cu); when none ended there,
#     the first whose candidate passes the judge's instructions stage on pages of one token (45 s).
#  4. The candidate through the judge on the four decode tasks, every stage, then the correct and time stages
#     once more, as long as the call has time.
source bench/harness/h200-2026-12-05/env.sh
here=bench/harness/h200-2026-12-06h
reference=solutions/reference/attention_decode_paged_sm90a.cu
start=$SECONDS
OUT=$OUT/call-y SRC=$here/decode-f61f251.cu bash bench/harness/h200-2026-12-06g/call-y.sh
tar xzf "$OUT/call-y/results.tgz" -C "$OUT/call-y" ./call-y.txt 2>/dev/null
echo "== call Y: $((SECONDS - start)) s"
probe() {  # probe NAME SOURCE: decode_probe.cu built with SOURCE
  nvcc -gencode arch=compute_90a,code=sm_90a -std=c++20 -O3 -lineinfo -I include -I kits/common/ptx \
    -I kits/hopper/ptx -DSOLUTION="\"$PWD/$2\"" -DVARIANT="\"$1\"" -o "/tmp/probe-$1" \
    bench/harness/h200-2026-12-06c/decode_probe.cu 2>&1 | tail -3
}
probe batch-order $here/decode-f61f251.cu & probe longest-first $reference &
wait
IFS=, read -ra shapes <<< "${SHAPES:-32 64 4,32 64 8,64 64 8,32 1 8}"  # Hq page Hkv, comma-separated
for shape in "${shapes[@]}"; do
  for name in batch-order longest-first batch-order longest-first; do
    timeout 20 "/tmp/probe-$name" $shape || echo "$name on $shape: exit $?"
  done
done 2>&1 | tee "$OUT/decode-order.txt"
echo "== the order, alone: $((SECONDS - start)) s"
source bench/harness/share.sh
p1=attention-decode-gqa32x8-d128-p1-sm90a
eval "$(sed -n '/^declare -A edits/,/^)/p' bench/harness/h200-2026-12-06g/call-y.sh)"
chosen=
for name in own-bytes regs-56-200 no-setmaxnreg; do
  if grep -q "^$name on 32 1 8 under ncu: exit 0 " "$OUT/call-y/call-y.txt"; then chosen=$name; break; fi
done
if [[ -z $chosen ]]; then
  for name in own-bytes regs-56-200 no-setmaxnreg; do
    sed -e "${edits[$name]}" $reference > /tmp/candidate.cu
    LIMIT=45 share /tmp/candidate.cu $p1 --stages correct,instructions
    if tail -1 "$OUT/decode-judge.txt" | grep -q "instructions:passed"; then chosen=$name; break; fi
  done
fi
echo "== the candidate: ${chosen:-none}: $((SECONDS - start)) s" | tee "$OUT/candidate.txt"
[[ -n $chosen ]] || exit 0
sed -e "${edits[$chosen]}" $reference > /tmp/candidate.cu
cp /tmp/candidate.cu "$OUT/candidate.cu"
tasks=($p1 attention-decode-gqa32x4-d128-p64-sm90a attention-decode-gqa32x8-d128-p64-sm90a
  attention-decode-gqa64x8-d128-p64-sm90a)
for task in "${tasks[@]}"; do (( SECONDS - start < ${STOP:-400} )) && share /tmp/candidate.cu "$task"; done
for task in "${tasks[@]}"; do
  (( SECONDS - start < ${STOP:-400} + 15 )) && share /tmp/candidate.cu "$task" --stages correct,time
done
echo "== the candidate through the judge: $((SECONDS - start)) s"
