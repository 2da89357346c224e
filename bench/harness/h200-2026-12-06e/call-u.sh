#!/usr/bin/env bash
# Call U (2026-12-06, sixth session): the rest of issue 29's corpus on the GEMM task. Call S ran
# ../h200-2026-12-05/call3.sh, whose 440 s on the GEMM task held 29 of the corpus's 45 entries there (its
# attention entry ran too); this call runs the other 16, at the same binaries, with the same options. The
# device's copy of the tree is scratch: its manifest is cut to those 16 here.
source bench/harness/h200-2026-12-05/env.sh
python3 - <<'PY'
import json
path = 'tests/adversarial/solutions.json'
rest = set('''profiler_by_process_tree.cu runtime_flag_one_kernel.cu profiler_different_kernels.cu driver_tensor_map.cu
kept_tensor_maps.cu fails_in_one_stage.cu faults_at_one_shape.cu persisting_l2_limit.cu stream_access_policy.cu
smem_race.cu ../../solutions/reference/gemm_bf16_sm90a.cu triton_torch_matmul.py triton_smuggled_import.py
triton_private_stream.py triton_fma_gemm.py triton_raises.py'''.split())
entries = [e for e in json.load(open(path)) if e['path'] in rest]
assert len(entries) == len(rest), sorted(rest - {e['path'] for e in entries})
json.dump(entries, open(path, 'w'), indent=2)
print(len(entries), 'entries')
PY
start=$SECONDS
timeout -s INT ${LIMIT:-560} ptxbench run --solutions tests/adversarial --tasks gemm-bf16-n4096-k4096-sm90a \
  --stage-time-limit 30 --gpu-share 4 > "$OUT/corpus-gemm-rest.txt" 2>&1
echo "== the rest of the corpus on GEMM: exit $? in $((SECONDS - start)) s"; tail -22 "$OUT/corpus-gemm-rest.txt" | cut -c1-250
