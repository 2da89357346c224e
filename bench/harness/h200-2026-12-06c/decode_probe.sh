#!/usr/bin/env bash
# The decode reference's share of the read bandwidth in variants of it (decode_probe.cu), then one Nsight
# Compute profile of its split kernel. From the repository's root; writes under $OUT/decode.
set -u
dir=$OUT/decode; mkdir -p "$dir"
here=bench/harness/h200-2026-12-06c
src=solutions/reference/attention_decode_paged_sm90a.cu
variant() {  # variant NAME SED-SCRIPT [SOURCE]
  local name=$1
  sed -e "$2" "${3:-$src}" > "$dir/$name.cu"
  # The edits were written against the reference of ef4d5d0 (calls M and P): one that no longer matches would
  # time the reference under the variant's name.
  if [[ -n $2 ]] && cmp -s "$dir/$name.cu" "${3:-$src}"; then echo "$name: the edit changed nothing"; return; fi
  nvcc -gencode arch=compute_90a,code=sm_90a -std=c++20 -O3 -lineinfo -I include -I kits/common/ptx -I kits/hopper/ptx \
    -DSOLUTION="\"$dir/$name.cu\"" -DVARIANT="\"$name\"" -o "$dir/$name" "$here/decode_probe.cu" > "$dir/$name.nvcc.log" 2>&1 \
    || { echo "$name: nvcc failed"; tail -5 "$dir/$name.nvcc.log"; return; }
  for hq in 64 32; do for page in 64 1; do "$dir/$name" $hq $page; done; done
}
variant base ''
# The copies alone: the consumers release each stage at once (the producer's and the copies' ceiling).
variant copies-only '/mbarrier_wait(&full\[stage\], (i \/ kStages) & 1);/a\    __syncwarp(); if (lane == 0) mbarrier_arrive(&empty[stage]); continue;'
# (Chunks of 512 and 2048 tokens, and tiles of 32 with 6 stages, ran in call M: README.md.)
# Two producer warps, each issuing the copies of half of a tile's rows: whether the copies' issue, one warp's
# cp.async.bulk after another, or the SM's copy engine bounds copies-only (0.58-0.67 of the read in call M).
two='s/constexpr int kThreads = kConsumers + 32;/constexpr int kThreads = kConsumers + 64;/; s/if (warp == kWarps) {/if (warp >= kWarps) { const int pw = warp - kWarps;/; s/if (lane == 0) mbarrier_arrive_expect_tx(/if (pw == 0 \&\& lane == 0) mbarrier_arrive_expect_tx(/; s/if (r < rows) {/if (r < rows \&\& k % 2 == pw) {/'
variant two-producers "$two"
variant two-producers-copies-only "$two"'; /mbarrier_wait(&full\[stage\], (i \/ kStages) \& 1);/a\    __syncwarp(); if (lane == 0) mbarrier_arrive(\&empty[stage]); continue;'
# The copies' ceiling with two bulk copies a tile instead of 128: each of K and V as one copy of the tile's
# rows from its first row on, contiguous (other heads' rows, the same bytes from DRAM; wrong data, which the
# consumers, releasing at once, never read). What one tensor-map copy per page and KV head could reach.
variant big-copies-only 's/bulk_load(k_stage + r \* L::kPitch, K_cache + offsets\[k\], D \* 2, &full\[stage\]);/if (r == 0) bulk_load(k_stage, K_cache + offsets[0], rows * D * 2, \&full[stage]);/; s/bulk_load(v_stage + r \* L::kPitch, V_cache + offsets\[k\], D \* 2, &full\[stage\]);/if (r == 0) bulk_load(v_stage, V_cache + offsets[0], rows * D * 2, \&full[stage]);/; /mbarrier_wait(&full\[stage\], (i \/ kStages) \& 1);/a\    __syncwarp(); if (lane == 0) mbarrier_arrive(\&empty[stage]); continue;'
# Pages of 64 by tensor-map copies (variant tma-page in call P): the shipped reference's path since c72d01f; the
# experiment's source is decode_tma_page.cu in the tree of a2eefc9.
# The profile of the base ran in call M (call-m/ncu-decode-base.txt); NCU=0 skips it.
[[ ${NCU:-1} == 1 ]] || exit 0
timeout 120 ncu --kernel-name regex:split_kernel --launch-skip 2 --launch-count 1 \
  --section SpeedOfLight --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis \
  --section LaunchStats "$dir/base" 64 64 > "$dir/ncu-base.txt" 2>&1
echo "== ncu: exit $?"
grep -E "DRAM Throughput|Memory Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Duration|Stall|Block Limit|Waves" \
  "$dir/ncu-base.txt" | head -30
