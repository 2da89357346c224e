#!/usr/bin/env bash
# Call Y (prepared 2026-12-06, eighth session; issue 31): why the decode reference's pages-of-one path never
# ends under Nsight Compute (the instructions stage timed out at 60 s and at 180 s on the H100, calls 11 and 12
# of ../h200-2026-12-06g/README.md), where it ends in 0.4 ms in the correct stage, under compute-sanitizer's
# three tools, and where the reference of c72d01f (two producer warps, no setmaxnreg) ended in 2.3 s under ncu.
# Each variant of the reference runs in decode_probe.cu (its share of a plain read, O checked) on pages of one
# token, alone and then under ncu with the judge's per-opcode metric on one launch of the split kernel, 30 s
# at most; the shipped one on pages of 64 too, where the judge's stage passed. About 3 minutes.
#   shipped       four producer warps, setmaxnreg: producers 40 registers, consumers 216
#   no-setmaxnreg the same without the two setmaxnreg (the consumers at the 128 of two CTAs an SM)
#   regs-56-200   setmaxnreg with more room for the producers: 56, the consumers 200
#   own-bytes     each producer warp announces its own rows' bytes (the full barriers count four arrivals),
#                 so the transaction count never goes transiently negative (contracts.md allows it; the least
#                 likely cause: c72d01f's two producer warps, which ended under ncu in 2.3 s, relied on it too)
source bench/harness/h200-2026-12-05/env.sh
src=${SRC:-solutions/reference/attention_decode_paged_sm90a.cu}
probe=bench/harness/h200-2026-12-06c/decode_probe.cu
dir=/tmp/call-y; mkdir -p "$dir"
grep -q "kProducerRegisters = 40, kConsumerRegisters = 216;" "$src" ||
  { echo "call-y.sh edits the reference of f61f251; $src has changed since"; exit 1; }
declare -A edits=(
  [shipped]=''
  [no-setmaxnreg]='/^    setmaxnreg_dec<kProducerRegisters>();$/d; /^  setmaxnreg_inc<kConsumerRegisters>();$/d'
  [regs-56-200]='s/kProducerRegisters = 40, kConsumerRegisters = 216;/kProducerRegisters = 56, kConsumerRegisters = 200;/'
  [own-bytes]='s/mbarrier_init(&full\[s\], 1);/mbarrier_init(\&full[s], kPages64 ? 1 : kProducers);/; s/if (producer == 0 \&\& lane == 0)$/if (lane == 0)/; s/static_cast<uint32_t>(rows) \* D \* 2 \* 2);/static_cast<uint32_t>(max(0, min(kProducerRows, rows - producer * kProducerRows))) * D * 4);/'
)
for name in "${!edits[@]}"; do
  (
    sed -e "${edits[$name]}" "$src" > "$dir/$name.cu"
    if [[ -n ${edits[$name]} ]] && cmp -s "$dir/$name.cu" "$src"; then echo "$name: the edit changed nothing"; exit 1; fi
    nvcc -gencode arch=compute_90a,code=sm_90a -std=c++20 -O3 -lineinfo -I include -I kits/common/ptx \
      -I kits/hopper/ptx -Xptxas -v -DSOLUTION="\"$dir/$name.cu\"" -DVARIANT="\"$name\"" -o "$dir/$name" "$probe" \
      > "$dir/$name.nvcc.log" 2>&1 || { echo "$name: nvcc failed"; tail -5 "$dir/$name.nvcc.log"; }
  ) &
done
wait
grep -h "C75\|spill stores" "$dir"/*.nvcc.log | sort | uniq -c | tee "$OUT/ptxas.txt"
under_ncu() {  # under_ncu NAME "HQ PAGE HKV"
  local name=$1 shape=$2 start=$SECONDS
  timeout 30 ncu --metrics sass__inst_executed_per_opcode_with_modifier_all --kernel-name regex:split_kernel \
    --launch-count 1 --csv --page raw --log-file "$OUT/ncu-$name-${shape// /-}.csv" "$dir/$name" $shape \
    > "$OUT/ncu-$name-${shape// /-}.out" 2>&1
  echo "$name on $shape under ncu: exit $? in $((SECONDS - start)) s (124: still running after 30 s)"
}
for name in shipped no-setmaxnreg regs-56-200 own-bytes; do
  [[ -x $dir/$name ]] || continue
  timeout 30 "$dir/$name" 32 1 8 || echo "$name alone: exit $?"
  under_ncu "$name" "32 1 8"
done 2>&1 | tee "$OUT/call-y.txt"
under_ncu shipped "32 64 8" 2>&1 | tee -a "$OUT/call-y.txt"
