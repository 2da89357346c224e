"""Runs the Triton reference solutions (solutions/reference/*.py) directly, on fresh random bf16 tensors, against
fp32 torch math, and times them with triton.testing.do_bench.

    python3 bench/triton/check_references.py

Needs only python3, torch and triton and a Hopper GPU. Each line: the solution, the shape, error/tolerance per
output (<= 1 is within the bound of the task of that head dim and mask, read from tasks/sm90a/ as the judge
reads it, on inputs drawn as the judge draws them), the time and TFLOP/s.
Exits 1 if any output is out of tolerance or an entry point returns other than 0.
"""
import importlib.util
import math
import pathlib
import sys

import torch
import triton.testing

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def load(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


kit = load(HERE / "verify_kit.py")  # error() and reference_attention()
FAILED = []


def bf16(*shape):
    return torch.randn(*shape, device="cuda", dtype=torch.float32).to(torch.bfloat16)


def report(name, shape, errors, ms, flops):
    bad = [k for k, v in errors.items() if not v <= 1]
    if bad:
        FAILED.append((name, shape, bad))
    print("{:<8} {:<44} {:<64} {:8.3f} ms {:7.1f} TFLOP/s {}".format(
        name, str(shape), ", ".join("{} {:.3g}".format(k, v) for k, v in errors.items()), ms,
        flops / ms * 1e-9, "FAIL " + ",".join(bad) if bad else "ok"), flush=True)


def check_gemm(solution, M, N, K):
    stream = torch.cuda.current_stream()
    A, B = kit.gemm_inputs(M, N, K)
    C = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
    status = solution.ptxbench_gemm_bf16(A, B, C, M, N, K, stream)
    torch.cuda.synchronize()
    errors = {"status": 0.0 if status in (0, None) else math.inf,
              "C": kit.error(C, A.float() @ B.float().T, *kit.GEMM_BOUND)}
    ms = triton.testing.do_bench(lambda: solution.ptxbench_gemm_bf16(A, B, C, M, N, K, stream))
    report("gemm", (M, N, K), errors, ms, 2 * M * N * K)


def attention_flops(B, Hq, Sq, Sk, D, causal):
    visible = sum(min(Sk, max(0, i + 1 + Sk - Sq)) for i in range(Sq)) if causal else Sq * Sk
    return 4 * B * Hq * visible * D


def check_attention(forward, backward, shape):
    B, Hq, Hkv, Sq, Sk, D, causal = shape
    stream = torch.cuda.current_stream()
    scale = 1 / math.sqrt(D)
    Q, K, V, dO = bf16(B, Sq, Hq, D), bf16(B, Sk, Hkv, D), bf16(B, Sk, Hkv, D), bf16(B, Sq, Hq, D)
    ref_o, ref_lse, ref_dq, ref_dk, ref_dv = kit.reference_attention(Q, K, V, dO, scale, causal)
    bounds = kit.attention_bounds(Hq, Hkv, D, causal)
    O = torch.full_like(Q, float("nan"))
    LSE = torch.full((B, Hq, Sq), float("nan"), device="cuda", dtype=torch.float32)
    args = (B, Hq, Hkv, Sq, Sk, D, scale, causal, stream)
    status = forward.ptxbench_attention_forward_bf16(Q, K, V, O, LSE, *args)
    torch.cuda.synchronize()
    errors = {"status": 0.0 if status in (0, None) else math.inf, "O": kit.error(O, ref_o, *bounds["O"]),
              "LSE": kit.error(LSE, ref_lse, *bounds["LSE"])}
    ms = triton.testing.do_bench(lambda: forward.ptxbench_attention_forward_bf16(Q, K, V, O, LSE, *args))
    report("forward", shape, errors, ms, attention_flops(B, Hq, Sq, Sk, D, causal))

    # The backward gets the forward's O rounded to bf16 and its LSE in fp32, as the harness gives them.
    O16 = ref_o.to(torch.bfloat16)
    size = backward.ptxbench_attention_backward_workspace_bytes(B, Hq, Hkv, Sq, Sk, D, causal)
    workspace = torch.full((size,), 0xFF, device="cuda", dtype=torch.uint8) if size else None  # not zeroed
    dQ, dK, dV = (torch.full_like(X, float("nan")) for X in (Q, K, V))
    status = backward.ptxbench_attention_backward_bf16(Q, K, V, O16, ref_lse, dO, dQ, dK, dV, workspace, *args)
    torch.cuda.synchronize()
    errors = {"status": 0.0 if status in (0, None) else math.inf,
              **{name: kit.error(got, want, *bounds[name])
                 for name, got, want in (("dQ", dQ, ref_dq), ("dK", dK, ref_dk), ("dV", dV, ref_dv))}}
    ms = triton.testing.do_bench(lambda: backward.ptxbench_attention_backward_bf16(
        Q, K, V, O16, ref_lse, dO, dQ, dK, dV, workspace, *args))
    report("backward", shape, errors, ms, 2.5 * attention_flops(B, Hq, Sq, Sk, D, causal))


def main():
    if not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0):
        print("check_references.py needs a Hopper GPU (compute capability 9.0)")
        return 2
    torch.manual_seed(0)
    reference = ROOT / "solutions" / "reference"
    gemm = load(reference / "gemm_bf16_sm90a.py")
    forward = load(reference / "attention_forward_sm90a.py")
    backward = load(reference / "attention_backward_sm90a.py")
    for M, N, K in [(8192, 4096, 4096), (128, 4096, 4096), (1999, 4096, 4096), (1999, 7168, 5120),
                    (128, 28672, 4096), (8192, 28672, 4096), (1, 4096, 4096), (8192, 4096, 14336)]:
        check_gemm(gemm, M, N, K)
    # (B, Hq, Hkv, Sq, Sk, D, causal): the tasks' check and main shapes, and rows without keys (Sq > Sk).
    shapes = [(2, 4, 4, 1000, 1000, D, c) for D in (64, 96, 128) for c in (0, 1)]
    shapes += [(1, 4, 4, 512, 1536, D, c) for D in (64, 96, 128) for c in (0, 1)]
    shapes += [(1, 32, 4, 1000, 1000, 128, 1), (1, 32, 4, 512, 1536, 128, 1), (1, 2, 1, 300, 200, 96, 1),
               (1, 2, 2, 1, 77, 64, 1)]
    shapes += [(4, 32, 32, 4096, 4096, 64, c) for c in (0, 1)]
    shapes += [(4, 24, 24, 4096, 4096, 96, c) for c in (0, 1)]
    shapes += [(4, 16, 16, 4096, 4096, 128, c) for c in (0, 1)]
    shapes += [(2, 32, 4, 4096, 4096, 128, 1)]
    for shape in shapes:
        check_attention(forward, backward, shape)
    print("{} failed".format(len(FAILED)) if FAILED else "all within tolerance")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
