#!/usr/bin/env bash
# Call T's probe (issue 31): the decode reference's share of a plain read of the same bytes (decode_probe.cu) in
# variants, where call Q's judge left it short of 0.8: pages of one token (0.733, per-row bulk copies from two
# producer warps) and the 4-KV-head task (0.786, half the CTAs of the 8-head tasks). From the repository's
# root; writes under $OUT/decode. Variants compile in parallel, then run one at a time.
set -u
dir=$OUT/decode; mkdir -p "$dir"
here=bench/harness/h200-2026-12-06c  # its decode_probe.cu
src=solutions/reference/attention_decode_paged_sm90a.cu
# The edits were written against the reference of 157f6d6 (two producer warps, no setmaxnreg); on a later one
# some would change nothing and others would add a second setmaxnreg.
grep -q "constexpr int kProducers = 2; " "$src" ||
  { echo "decode_probe.sh edits the reference of 157f6d6; $src has changed since (git show 157f6d6:$src)"; exit 1; }
producers() { echo "s/constexpr int kProducers = 2; /constexpr int kProducers = $1; /"; }
# setmaxnreg (a warpgroup's budget): the producer warpgroup(s) down to $1, the consumer warpgroup up to $2.
regs() {
  echo "s/  if (warp >= kWarps) {/  if (warp >= kWarps) {\n    setmaxnreg_dec<$1>();/; s|^  // The consumers. Lane|  setmaxnreg_inc<$2>();\n  // The consumers. Lane|"
}
chunk() { echo "s/constexpr int kChunk = 1024; /constexpr int kChunk = $1; /"; }
declare -A edits=(
  [base]=''
  [four-producers]="$(producers 4)"
  [four-producers-regs]="$(producers 4); $(regs 40 216)"
  [eight-producers-regs]="$(producers 8); $(regs 24 208)"
  [chunk-512]="$(chunk 512)"
  [chunk-256]="$(chunk 256)"
)
build() {  # build NAME: the solution edited, included in the probe
  local name=$1
  sed -e "${edits[$name]}" "$src" > "$dir/$name.cu"
  if [[ -n ${edits[$name]} ]] && cmp -s "$dir/$name.cu" "$src"; then echo "$name: the edit changed nothing"; return 1; fi
  nvcc -gencode arch=compute_90a,code=sm_90a -std=c++20 -O3 -lineinfo -I include -I kits/common/ptx -I kits/hopper/ptx \
    -DSOLUTION="\"$dir/$name.cu\"" -DVARIANT="\"$name\"" -o "$dir/$name" "$here/decode_probe.cu" > "$dir/$name.nvcc.log" 2>&1 \
    || { echo "$name: nvcc failed"; tail -5 "$dir/$name.nvcc.log"; return 1; }
}
for name in "${!edits[@]}"; do build "$name" & done
wait
run() {  # run NAME "HQ PAGE HKV"...
  local name=$1; shift
  [[ -x $dir/$name ]] || return
  for shape in "$@"; do "$dir/$name" $shape; done
}
# Pages of one token: the producers' count (and registers); twice each, interleaved.
for round in 1 2; do
  for name in base four-producers four-producers-regs eight-producers-regs; do run "$name" "64 1 8" "32 1 8"; done
done
# The 4-KV-head task (and an 8-head one beside it): the chunk, twice each, interleaved.
for round in 1 2; do
  for name in base chunk-512 chunk-256; do run "$name" "32 64 4" "32 64 8"; done
done
