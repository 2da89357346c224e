#!/usr/bin/env bash
# Call V (prepared 2026-12-06, sixth session; issue 31): the decode reference of 04b9f93 (four producer warps,
# setmaxnreg) through the judge, every stage, on its four tasks; then twice more each with the correct and time
# stages alone, for three shares of the read bandwidth per task; then chunks of 512 tokens against the shipped
# 1024 on the 4-KV-head task (its CTAs are half the 8-head tasks'), alternately, three times each; then issue
# 32's interleaved placement probe. About 5 minutes.
# Its first try (seventh session, ../h200-2026-12-06f/) gave no verdict in 185 s, where the four first
# evaluations take about 30 s each: the reference may hang in some stage (its pages-of-64 path with four
# producer warps, and any stage under a tool, ran nowhere before). So the reference runs first alone, outside
# the judge, under a short limit on each path (decode_probe.cu, pages of 1 and of 64), and each evaluation has
# 60 s a stage and says which stage ended how.
source bench/harness/h200-2026-12-05/env.sh
source bench/harness/share.sh
start=$SECONDS
reference=solutions/reference/attention_decode_paged_sm90a.cu
# The reference alone, outside the judge, on both copy paths: it ends, and O is within the tolerance.
nvcc -gencode arch=compute_90a,code=sm_90a -std=c++20 -O3 -lineinfo -I include -I kits/common/ptx -I kits/hopper/ptx \
  -DSOLUTION="\"$PWD/$reference\"" -DVARIANT='"reference"' -o /tmp/decode_probe \
  bench/harness/h200-2026-12-06c/decode_probe.cu 2>&1 | tail -3
for shape in "64 1 8" "32 64 4" "64 64 8"; do
  timeout 30 /tmp/decode_probe $shape || echo "the probe on $shape: exit $? (124: still running after 30 s)"
done 2>&1 | tee "$OUT/decode-alone.txt"
echo "== the reference alone: $((SECONDS - start)) s"
tasks=(attention-decode-gqa32x8-d128-p1-sm90a attention-decode-gqa32x4-d128-p64-sm90a
  attention-decode-gqa32x8-d128-p64-sm90a attention-decode-gqa64x8-d128-p64-sm90a)
for task in "${tasks[@]}"; do share "$reference" "$task"; done
for round in 1 2; do for task in "${tasks[@]}"; do share "$reference" "$task" --stages correct,time; done; done
echo "== the reference through the judge: $((SECONDS - start)) s"
sed 's/constexpr int kChunk = 1024; /constexpr int kChunk = 512;  /' "$reference" > /tmp/chunk512.cu
grep -q "kChunk = 512" /tmp/chunk512.cu || { echo "the chunk edit changed nothing"; exit 1; }
for round in 1 2 3; do
  for solution in "$reference" /tmp/chunk512.cu; do
    share "$solution" attention-decode-gqa32x4-d128-p64-sm90a --stages correct,time
  done
done
echo "== chunks: $((SECONDS - start)) s"
start=$SECONDS
bash bench/time-stage/placement_interleaved.sh gemm 1 2 3 4 | grep -E "==|all "
echo "== placement probe: $((SECONDS - start)) s"
