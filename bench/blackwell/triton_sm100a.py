"""Compiles the Triton reference solutions for Blackwell (sm_100a) on a GPU that is not one, and lists the SASS
opcodes of each kernel: the static half of the Triton-versus-CUDA comparison on Blackwell that a Hopper host can
make (issue 33; docs/tasks.md, "Blackwell").

    python3 bench/blackwell/triton_sm100a.py OUT_DIR

Triton compiles for the target its driver reports; here the driver reports compute capability 10.0 (warp size 32)
instead of the GPU's, and each reference's entry point is called once on a small shape. Triton compiles each
kernel (into a cache under OUT_DIR) and then fails to load it on this GPU: the failure is expected, printed and
passed over, so that the call goes on to its next kernel. Each cubin found in the cache is disassembled with cuobjdump (CUOBJDUMP, default: on PATH) into
OUT_DIR/<kernel>.sass, and one line per kernel gives its architecture and its opcodes (base names, first
appearance), with the tcgen05 ones (UTC*) and the TMEM ones (LDTM, STTM) named apart.
Exits 1 when no sm_100a cubin came out, 2 without torch, Triton or a CUDA GPU.
"""
import importlib.util
import json
import math
import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    out = pathlib.Path(sys.argv[1]).resolve()
    cache = out / "triton-cache"
    cache.mkdir(parents=True, exist_ok=True)
    os.environ["TRITON_CACHE_DIR"] = str(cache)  # before Triton is imported: it reads the variable once
    try:
        import torch
        import triton
        from triton.backends.compiler import GPUTarget
    except ImportError as error:
        print(f"triton_sm100a.py: {error}")
        return 2
    if not torch.cuda.is_available():
        print("triton_sm100a.py: no CUDA GPU (Triton's driver needs one to start)")
        return 2
    driver = triton.runtime.driver.active
    driver.get_current_target = lambda: GPUTarget("cuda", 100, 32)
    # A launch compiles its kernel, then fails to load it here. A solution that launches several kernels
    # would stop at the first: each launch's load failure is swallowed, so that every kernel gets compiled.
    from triton.runtime.jit import JITFunction
    launch = JITFunction.run

    def compile_only(self, *args, **kwargs):
        try:
            return launch(self, *args, **kwargs)
        except RuntimeError as error:
            if "no kernel image" not in str(error):
                raise
            print(f"  {self.__name__}: compiled; its load failed as expected ({str(error)[:80]})")
            return None

    JITFunction.run = compile_only
    print(f"triton {triton.__version__}, torch {torch.__version__}, GPU {torch.cuda.get_device_name()}; "
          f"target {driver.get_current_target()}")

    def load(name):
        path = ROOT / "solutions" / "reference" / name
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    def bf16(*shape):
        return torch.randn(*shape, device="cuda", dtype=torch.float32).to(torch.bfloat16)

    stream = torch.cuda.current_stream()
    M = N = K = 1024
    A, B, C = bf16(M, K), bf16(N, K), bf16(M, N)
    Bt, H, S, D = 1, 4, 512, 128
    Q, Kt, V, dO = bf16(Bt, S, H, D), bf16(Bt, S, H, D), bf16(Bt, S, H, D), bf16(Bt, S, H, D)
    O = torch.empty_like(Q)
    LSE = torch.zeros((Bt, H, S), device="cuda", dtype=torch.float32)
    dQ, dK, dV = (torch.empty_like(X) for X in (Q, Kt, V))
    args = (Bt, H, H, S, S, D, 1 / math.sqrt(D), True, stream)
    calls = [
        ("gemm_bf16_sm90a.py", lambda m: m.ptxbench_gemm_bf16(A, B, C, M, N, K, stream)),
        ("attention_forward_sm90a.py",
         lambda m: m.ptxbench_attention_forward_bf16(Q, Kt, V, O, LSE, *args)),
        ("attention_backward_sm90a.py", lambda m: m.ptxbench_attention_backward_bf16(
            Q, Kt, V, O, LSE, dO, dQ, dK, dV,
            torch.empty((max(1, m.ptxbench_attention_backward_workspace_bytes(Bt, H, H, S, S, D, True)),),
                        device="cuda", dtype=torch.uint8), *args)),
    ]
    for name, call in calls:
        try:
            call(load(name))
            torch.cuda.synchronize()
            print(f"{name}: the call returned")
        except Exception as error:  # not a load failure: the host code of the solution stopped
            print(f"{name}: stopped: {type(error).__name__}: {str(error).splitlines()[0][:160] if str(error) else ''}")

    cuobjdump = os.environ.get("CUOBJDUMP", "cuobjdump")
    found = 0
    for cubin in sorted(cache.rglob("*.cubin")):
        meta_path = cubin.with_suffix(".json")
        meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
        target = meta.get("target", {})
        sass = subprocess.run([cuobjdump, "-sass", str(cubin)], capture_output=True, text=True)
        if sass.returncode != 0:
            print(f"{cubin.name}: cuobjdump failed: {sass.stderr.strip()[:200]}")
            continue
        (out / f"{cubin.stem}.sass").write_text(sass.stdout)
        arch = re.search(r"code for (sm_\w+)", sass.stdout)
        opcodes = []
        for line in sass.stdout.splitlines():
            match = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", line)
            if match and match.group(1) not in opcodes:
                opcodes.append(match.group(1))
        tensor = [op for op in opcodes if op.startswith("UTC") or op in ("LDTM", "STTM")]
        found += arch is not None and arch.group(1).startswith("sm_100")
        print(f"{cubin.stem}: {arch.group(1) if arch else 'arch unknown'} (target {target}), "
              f"tcgen05/TMEM: {' '.join(tensor) or 'none'}; all: {' '.join(opcodes)}")
    print(f"{found} sm_100a cubins")
    return 0 if found else 1


if __name__ == "__main__":
    sys.exit(main())
