#!/usr/bin/env bash
# Compile test of the PTX kits; needs nvcc, no GPU. Compiles, with both kit folders on the include path as solutions
# get them:
#   - tests/kit/blackwell_wrappers.cu for sm_100a to a cubin (every wrapper of kits/blackwell/ptx and
#     kits/common/ptx in a kernel of its own), then checks that its PTX has one .entry per kernel of the source and
#     every tcgen05 instruction the kit wraps;
#   - tests/gpu/kit/kit_test.cu (the Hopper kit's GPU test, which calls every function of kits/hopper/ptx and
#     kits/common/ptx) for sm_90a to a cubin;
#   - tests/gpu/kit/patterns_test.cu (the GPU test of the pattern documents' fragments, kits/hopper/patterns) for
#     sm_90a to a cubin.
# ptxas must accept every instruction and print no warning and no C75xx advisory line.
# Usage: tests/kit/compile.sh [out-dir]    (default: a temporary folder, removed afterwards)
# Environment: NVCC (default $PTXBENCH_NVCC, else /usr/local/cuda/bin/nvcc, else nvcc on PATH).
# Exit status: 0 all compiled cleanly, 1 a failure (its compiler output is printed), 77 skipped (no nvcc).
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"

nvcc="${NVCC:-${PTXBENCH_NVCC:-/usr/local/cuda/bin/nvcc}}"
if ! "$nvcc" --version >/dev/null 2>&1; then
  if [ -z "${NVCC:-}" ] && command -v nvcc >/dev/null 2>&1; then
    nvcc=$(command -v nvcc)
  else
    echo "tests/kit/compile.sh: SKIP: nvcc not found ($nvcc); set NVCC to the CUDA compiler"
    exit 77
  fi
fi

if [ $# -ge 1 ]; then
  out=$1
  mkdir -p "$out"
else
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi

echo "nvcc: $nvcc ($("$nvcc" --version | grep -o 'release [0-9.]*' | head -1))"
failed=0
flags=(-std=c++20 -O3 -I "$root/include" -I "$root/kits/common/ptx")

# compile NAME ARCH SOURCE KIT_DIR: SOURCE -> $out/NAME.cubin for ARCH, with KIT_DIR on the include path after the
# common folder. Fails on an error, a ptxas warning or a C75xx line.
compile() {
  local name=$1 arch=$2 src=$3 kit=$4
  local log="$out/$name.log"
  if ! "$nvcc" -gencode "arch=compute_${arch},code=sm_${arch}" "${flags[@]}" -I "$kit" -cubin \
      -o "$out/$name.cubin" "$src" >"$log" 2>&1; then
    echo "FAIL  $name: ${src#$root/} for sm_$arch does not compile:"
    cat "$log"
    failed=1
    return 1
  fi
  if grep -qiE 'warning|C75[0-9][0-9]' "$log"; then
    echo "FAIL  $name: ${src#$root/} for sm_$arch compiles with warnings:"
    cat "$log"
    failed=1
    return 1
  fi
  echo "ok    $name: ${src#$root/} for sm_$arch -> cubin ($(wc -c <"$out/$name.cubin") bytes), no warnings"
}

# --- Blackwell (sm_100a): the wrappers translation unit
bw_src="$root/tests/kit/blackwell_wrappers.cu"
if compile blackwell_wrappers 100a "$bw_src" "$root/kits/blackwell/ptx"; then
  if ! "$nvcc" -gencode arch=compute_100a,code=sm_100a "${flags[@]}" -I "$root/kits/blackwell/ptx" -ptx \
      -o "$out/blackwell_wrappers.ptx" "$bw_src" >"$out/blackwell_wrappers.ptx.log" 2>&1; then
    echo "FAIL  blackwell_wrappers: PTX generation failed:"
    cat "$out/blackwell_wrappers.ptx.log"
    failed=1
  else
    # One kernel per wrapper: the kernels the preprocessed source defines (its macros expanded) must all be
    # .entry points of the PTX.
    "$nvcc" -E -gencode arch=compute_100a,code=sm_100a "${flags[@]}" -I "$root/kits/blackwell/ptx" "$bw_src" \
        2>/dev/null |
      awk '{ n = split($0, parts, /extern "C" __attribute__\(\(global\)\)/)
             for (i = 2; i <= n; i++) {
               s = parts[i]
               gsub(/__attribute__\(\([^()]*(\([^()]*\))?[^()]*\)\)/, "", s)
               if (match(s, /void +[A-Za-z0-9_]+\(/)) { t = substr(s, RSTART + 4, RLENGTH - 5); gsub(/ /, "", t); print t }
             } }' | sort >"$out/kernels.source"
    sed -nE 's/^\.(visible )?\.entry ([A-Za-z0-9_]+)\(.*/\2/p' "$out/blackwell_wrappers.ptx" | sort >"$out/kernels.ptx"
    if [ ! -s "$out/kernels.source" ] || ! cmp -s "$out/kernels.source" "$out/kernels.ptx"; then
      echo "FAIL  blackwell_wrappers: the kernels of the source and the .entry points of the PTX differ:"
      diff "$out/kernels.source" "$out/kernels.ptx"
      failed=1
    else
      echo "      blackwell_wrappers: $(wc -l <"$out/kernels.ptx") kernels, each an .entry of the PTX"
    fi
    # Every tcgen05 form the kit wraps must be in the PTX (a wrapper compiled away would drop out here).
    missing=()
    for form in \
        'tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32' \
        'tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32' \
        'tcgen05.dealloc.cta_group::1.sync.aligned.b32' \
        'tcgen05.dealloc.cta_group::2.sync.aligned.b32' \
        'tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned' \
        'tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned' \
        'tcgen05.ld.sync.aligned.32x32b.x1.b32' 'tcgen05.ld.sync.aligned.32x32b.x128.b32' \
        'tcgen05.st.sync.aligned.32x32b.x1.b32' 'tcgen05.st.sync.aligned.32x32b.x128.b32' \
        'tcgen05.ld.sync.aligned.16x256b.x1.b32' 'tcgen05.ld.sync.aligned.16x256b.x32.b32' \
        'tcgen05.st.sync.aligned.16x256b.x1.b32' 'tcgen05.st.sync.aligned.16x256b.x32.b32' \
        'tcgen05.wait::ld.sync.aligned' 'tcgen05.wait::st.sync.aligned' \
        'tcgen05.mma.cta_group::1.kind::f16' 'tcgen05.mma.cta_group::2.kind::f16' \
        'tcgen05.cp.cta_group::1.128x256b' 'tcgen05.cp.cta_group::2.128x256b' \
        'tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64' \
        'tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.b64' \
        'tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64' \
        'tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64' \
        'tcgen05.fence::before_thread_sync' 'tcgen05.fence::after_thread_sync' \
        'mbarrier::complete_tx::bytes.cta_group::2'; do
      grep -qF -- "$form" "$out/blackwell_wrappers.ptx" || missing+=("$form")
    done
    if [ ${#missing[@]} -gt 0 ]; then
      echo "FAIL  blackwell_wrappers: PTX lacks: ${missing[*]}"
      failed=1
    else
      echo "      blackwell_wrappers: every wrapped tcgen05 form is in the PTX"
    fi
  fi
fi

# --- Hopper (sm_90a): the kit's GPU test, compiled only
compile hopper_kit_test 90a "$root/tests/gpu/kit/kit_test.cu" "$root/kits/hopper/ptx" || true
compile hopper_patterns_test 90a "$root/tests/gpu/kit/patterns_test.cu" "$root/kits/hopper/ptx" || true

if [ "$failed" -ne 0 ]; then
  echo "tests/kit/compile.sh: FAILED"
  exit 1
fi
echo "tests/kit/compile.sh: passed"
