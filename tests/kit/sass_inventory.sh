#!/usr/bin/env bash
# SASS inventory of the Blackwell kit: compiles tests/kit/blackwell_wrappers.cu for sm_100a to a cubin, disassembles
# it with cuobjdump -sass, and prints for each kernel (one per wrapper, see that file) the SASS opcodes it contains,
# base names only (UTCHMMA, not UTCHMMA.2CTA), in order of first appearance. Needs nvcc and cuobjdump (a full CUDA
# toolkit), no GPU. The output is meant to be recorded next to the task catalogue's SASS names.
# Usage: tests/kit/sass_inventory.sh [--all] [out-dir]
#   --all    print every opcode; by default the ones every kernel has (EXIT, BRA, NOP, S2R, MOV, LDC, ULDC, ...)
#            are left out, so that each line shows what its wrapper added
#   out-dir  keep the cubin and the full disassembly there (default: a temporary folder, removed afterwards)
# Environment: NVCC (default $PTXBENCH_NVCC, else /usr/local/cuda/bin/nvcc, else nvcc on PATH); CUOBJDUMP (default:
# cuobjdump next to nvcc, else on PATH).
# Exit status: 0 printed, 1 a compile or disassembly failure, 77 skipped (no nvcc or no cuobjdump).
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"

all=0
if [ "${1:-}" = "--all" ]; then
  all=1
  shift
fi

nvcc="${NVCC:-${PTXBENCH_NVCC:-/usr/local/cuda/bin/nvcc}}"
if ! "$nvcc" --version >/dev/null 2>&1; then
  if [ -z "${NVCC:-}" ] && command -v nvcc >/dev/null 2>&1; then
    nvcc=$(command -v nvcc)
  else
    echo "tests/kit/sass_inventory.sh: SKIP: nvcc not found ($nvcc); set NVCC to the CUDA compiler"
    exit 77
  fi
fi
cuobjdump="${CUOBJDUMP:-$(dirname "$nvcc")/cuobjdump}"
if ! "$cuobjdump" --version >/dev/null 2>&1; then
  if [ -z "${CUOBJDUMP:-}" ] && command -v cuobjdump >/dev/null 2>&1; then
    cuobjdump=$(command -v cuobjdump)
  else
    echo "tests/kit/sass_inventory.sh: SKIP: cuobjdump not found ($cuobjdump); set CUOBJDUMP"
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

src="$root/tests/kit/blackwell_wrappers.cu"
if ! "$nvcc" -gencode arch=compute_100a,code=sm_100a -std=c++20 -O3 -I "$root/include" -I "$root/kits/common/ptx" \
    -I "$root/kits/blackwell/ptx" -cubin -o "$out/blackwell_wrappers.cubin" "$src" >"$out/compile.log" 2>&1; then
  echo "tests/kit/sass_inventory.sh: ${src#$root/} does not compile for sm_100a:"
  cat "$out/compile.log"
  exit 1
fi
if ! "$cuobjdump" -sass "$out/blackwell_wrappers.cubin" >"$out/blackwell_wrappers.sass" 2>"$out/cuobjdump.log"; then
  echo "tests/kit/sass_inventory.sh: cuobjdump -sass failed:"
  cat "$out/cuobjdump.log"
  exit 1
fi

echo "# SASS opcodes per kernel of tests/kit/blackwell_wrappers.cu (sm_100a)"
echo "# nvcc: $("$nvcc" --version | grep -o 'release [0-9.]*' | head -1); cuobjdump: $("$cuobjdump" --version | grep -o 'release [0-9.]*' | head -1)"
# Opcodes of address arithmetic and control flow that nearly every kernel has, left out unless --all.
boring="EXIT BRA NOP RET S2R S2UR CS2R MOV UMOV MOV32I LDC ULDC LDCU IMAD IADD3 UIADD3 ISETP UISETP SEL USEL LOP3 ULOP3
SHF USHF LEA ULEA BSSY BSYNC"
[ "$all" -eq 1 ] || echo "# left out: $(echo $boring)"

# A line "Function : NAME" starts a kernel; an instruction line is "/*0040*/  [@[!]P] OPCODE[.MODS] operands ;".
# Kernels are printed in name order.
awk -v all="$all" -v boring_list="$(echo $boring)" '
  BEGIN {
    split(boring_list, common, " ")
    for (i in common) boring[common[i]] = 1
  }
  /Function : / { name = $NF; order[++n] = name; seen_kernel[name] = 1; next }
  /\/\*[0-9a-f]+\*\// && name != "" {
    line = $0
    sub(/^[^\/]*\/\*[0-9a-f]+\*\/[ \t]*/, "", line)       # drop the address
    sub(/[ \t]*;.*$/, "", line)                            # drop operands end and encoding
    sub(/^@!?U?P[0-9T]+[ \t]+/, "", line)                  # drop a predicate guard
    split(line, tok, /[ \t]+/)
    op = tok[1]
    base = op
    sub(/\..*$/, "", base)
    if (base == "" || (!all && (base in boring))) next
    key = name SUBSEP base
    if (!(key in have)) { have[key] = 1; ops[name] = ops[name] " " base }
  }
  END {
    for (i = 1; i <= n; i++) printf "%-44s%s\n", order[i], (ops[order[i]] == "" ? " (nothing else)" : ops[order[i]])
  }' "$out/blackwell_wrappers.sass" | sort
