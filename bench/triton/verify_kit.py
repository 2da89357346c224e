"""Checks the claims of the Hopper Triton kit (kits/hopper/triton) on a Hopper GPU.

    python3 bench/triton/verify_kit.py

Needs only python3, torch and triton. Each claim is one line: PASS or FAIL, its id (as cited in params.md and
contracts.md) and the evidence. Exits 1 if any claim fails, 2 if there is no Hopper GPU.
"""
import importlib.util
import json
import math
import pathlib
import re
import sys
import traceback

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

ROOT = pathlib.Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "kits" / "hopper" / "triton" / "templates"
TASKS = ROOT / "tasks" / "sm90a"
RESULTS = []


def claim(cid, text):
    """Decorator: runs the check, which returns (ok, evidence); an exception is a FAIL with its message."""
    def wrap(check):
        try:
            ok, evidence = check()
        except Exception as e:  # noqa: BLE001 - every failure is reported, not raised
            ok, evidence = False, "{}: {}".format(type(e).__name__, str(e).splitlines()[0] if str(e) else "")
            traceback.print_exc(file=sys.stderr)
        RESULTS.append(ok)
        print("{} {} {}: {}".format("PASS" if ok else "FAIL", cid, text, evidence), flush=True)
        return check
    return wrap


def load_template(name):
    spec = importlib.util.spec_from_file_location("kit_" + name, TEMPLATES / (name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def ptx_of(kernel):
    return kernel.asm["ptx"]


def sass_of(kernel):
    try:
        return kernel.asm["sass"]
    except Exception:  # noqa: BLE001 - needs nvdisasm; the PTX checks stand alone
        return None


def has(text, needle):
    return text is not None and needle in text


def instructions(kernel):
    """Which of the instruction families the tasks require a kernel's PTX (and SASS, when available) holds."""
    ptx, sass = ptx_of(kernel), sass_of(kernel)
    found = {
        "wgmma": has(ptx, "wgmma.mma_async"),
        "mma.sync": has(ptx, "mma.sync"),
        "tma-load": re.search(r"cp\.async\.bulk\.tensor\.[1-5]d\.shared::cluster\.global", ptx) is not None,
        "tma-store": re.search(r"cp\.async\.bulk\.tensor\.[1-5]d\.global\.shared::cta", ptx) is not None,
        "mbarrier-wait": has(ptx, "mbarrier.try_wait") or has(ptx, "mbarrier.test_wait"),
        "cp.async": has(ptx, "cp.async.ca") or has(ptx, "cp.async.cg"),
    }
    if sass is not None:
        found.update({"HGMMA": "HGMMA" in sass, "HMMA": "HMMA" in sass, "UTMALDG": "UTMALDG" in sass,
                      "UTMASTG": "UTMASTG" in sass, "SYNCS.PHASECHK": "SYNCS.PHASECHK" in sass})
    return found


def shown(found):
    return ", ".join("{}={}".format(k, "yes" if v else "no") for k, v in found.items())


def bf16(*shape, scale=1.0):
    return (torch.randn(*shape, device="cuda", dtype=torch.float32) * scale).to(torch.bfloat16)


def gemm_inputs(M, N, K):
    """A ~ N(0, 1) and B ~ N(0, 1/K), as the judge draws them (every element of C ~ N(0, 1))."""
    return bf16(M, K), bf16(N, K, scale=1 / math.sqrt(K))


def task_bounds(task, outputs):
    """(atol, rtol) of each output, as the task's file gives them to the judge."""
    doc = json.loads((TASKS / (task + ".json")).read_text())
    chosen = {out: doc.get("tolerances", {}).get(out, doc["tolerance"]) for out in outputs}
    return {out: (t["atol"], t["rtol"]) for out, t in chosen.items()}


GEMM_BOUND = task_bounds("gemm-bf16-n4096-k4096-sm90a", ["C"])["C"]  # every GEMM task's


def attention_bounds(Hq, Hkv, D, causal):
    """The bounds of O and LSE (the forward task's) and dQ, dK, dV (the backward's) of the attention tasks of this
    head dim and mask; grouped query heads at D = 128 with the causal mask are the GQA tasks'. The judge's inputs
    are N(0, 1), as bf16() draws them."""
    name = "gqa32x4-d128" if Hq != Hkv and D == 128 and causal else "d{}".format(D)
    suffix = "-causal" if causal else ""
    bounds = task_bounds("attention-fwd-{}{}-sm90a".format(name, suffix), ["O", "LSE"])
    bounds.update(task_bounds("attention-bwd-{}{}-sm90a".format(name, suffix), ["dQ", "dK", "dV"]))
    return bounds


# --- small kernels for the lowering claims ------------------------------------------------------------------

@triton.jit
def _dot_from_pointers(A, B, C, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, K, BLOCK_K):
        a = tl.load(A + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(B + rn[:, None] * K + (k + rk)[None, :])
        acc = tl.dot(a, b.T, acc)
    tl.store(C + rm[:, None] * BLOCK_N + rn[None, :], acc)


@triton.jit
def _dot_from_descriptors(a_desc, b_desc, C, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                          BLOCK_K: tl.constexpr):
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, K, BLOCK_K):
        acc = tl.dot(a_desc.load([0, k]), b_desc.load([0, k]).T, acc)
    rm = tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    tl.store(C + rm[:, None] * BLOCK_N + rn[None, :], acc)


def dot_kernel(block_m, block_n, block_k, warps, descriptors, dtype=torch.bfloat16, K=256, stages=3):
    A = bf16(block_m, K).to(dtype)
    B = bf16(block_n, K).to(dtype)
    C = torch.empty(block_m, block_n, device="cuda", dtype=torch.float32)
    if descriptors:
        kernel = _dot_from_descriptors[(1,)](
            TensorDescriptor.from_tensor(A, [block_m, block_k]), TensorDescriptor.from_tensor(B, [block_n, block_k]),
            C, K, BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, num_warps=warps, num_stages=stages)
    else:
        kernel = _dot_from_pointers[(1,)](A, B, C, K, BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k,
                                          num_warps=warps, num_stages=stages)
    err = (C - A.float() @ B.float().T).abs().max().item()
    return kernel, err


def main():
    if not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0):
        print("verify_kit.py needs a Hopper GPU (compute capability 9.0)")
        return 2
    props = torch.cuda.get_device_properties(0)
    print("device: {}, torch {}, triton {}".format(props.name, torch.__version__, triton.__version__))

    # --- params.md ------------------------------------------------------------------------------------------
    @claim("P1", "the H200 has 132 SMs")
    def _():
        return props.multi_processor_count == 132, "multi_processor_count = {}".format(props.multi_processor_count)

    @claim("P2", "a block may use up to 227 KB (232448 B) of shared memory")
    def _():
        optin = getattr(props, "shared_memory_per_block_optin", None)
        return optin == 232448, "shared_memory_per_block_optin = {}".format(optin)

    @claim("P3", "65536 registers per SM")
    def _():
        regs = getattr(props, "regs_per_multiprocessor", None)
        return regs == 65536, "regs_per_multiprocessor = {}".format(regs)

    @claim("P4", "TensorDescriptor refuses a block dimension that is not a power of two (96)")
    def _():
        X = bf16(256, 96)
        try:
            TensorDescriptor(X, [256, 96], [96, 1], [64, 96])
        except (AssertionError, ValueError, TypeError) as e:
            return True, "refused: {}".format(e)
        return False, "accepted block [64, 96]"

    @claim("P5", "TensorDescriptor refuses a row stride that is not a multiple of 16 bytes")
    def _():
        X = bf16(64, 12)
        try:
            TensorDescriptor(X, [64, 12], [12, 1], [16, 16])
        except (AssertionError, ValueError) as e:
            return True, "refused: {}".format(e)
        return False, "accepted a 24-byte row stride"

    # --- lowering (contracts.md) ----------------------------------------------------------------------------
    for cid, (bm, bn, bk, warps) in {"W1": (64, 64, 64, 4), "W2": (128, 128, 64, 4), "W3": (128, 256, 64, 8),
                                     "W4": (128, 64, 64, 8)}.items():
        @claim(cid, "bf16 tl.dot {}x{}x{} with num_warps={} lowers to wgmma".format(bm, bn, bk, warps))
        def _(bm=bm, bn=bn, bk=bk, warps=warps):
            kernel, err = dot_kernel(bm, bn, bk, warps, descriptors=True)
            found = instructions(kernel)
            return found["wgmma"] and err < 1e-2 * math.sqrt(256), "{}; max error {:.3g}".format(shown(found), err)

    @claim("W5", "a tl.dot with BLOCK_M = 32 does not lower to wgmma (mma.sync instead)")
    def _():
        kernel, err = dot_kernel(32, 64, 64, 4, descriptors=False)
        found = instructions(kernel)
        return not found["wgmma"] and found["mma.sync"], shown(found)

    @claim("W6", "a tl.dot with num_warps = 2 does not lower to wgmma")
    def _():
        kernel, err = dot_kernel(64, 64, 64, 2, descriptors=False)
        found = instructions(kernel)
        return not found["wgmma"], shown(found)

    @claim("W7", "a bf16 tl.dot on pointer loads (tl.load) still lowers to wgmma")
    def _():
        kernel, err = dot_kernel(128, 128, 64, 4, descriptors=False)
        found = instructions(kernel)
        return found["wgmma"], "{}; max error {:.3g}".format(shown(found), err)

    @claim("T1", "pointer loads (tl.load) in a pipelined loop are not TMA (no cp.async.bulk.tensor)")
    def _():
        kernel, _ = dot_kernel(128, 128, 64, 4, descriptors=False)
        found = instructions(kernel)
        return not found["tma-load"], shown(found)

    @claim("T2", "descriptor loads are TMA (cp.async.bulk.tensor) completed on mbarriers (mbarrier.try_wait)")
    def _():
        kernel, _ = dot_kernel(128, 128, 64, 4, descriptors=True)
        found = instructions(kernel)
        return found["tma-load"] and found["mbarrier-wait"], shown(found)

    # --- templates ------------------------------------------------------------------------------------------
    tma = load_template("tma_descriptors")

    @claim("K1", "tma_descriptors.copy_matrix copies exactly, partial edge tiles included (1000 x 200)")
    def _():
        src = bf16(1000, 200)
        dst = torch.zeros_like(src)
        kernel = tma.copy_matrix(src, dst)
        torch.cuda.synchronize()
        found = instructions(kernel)
        ok = torch.equal(src, dst) and found["tma-load"]
        return ok, "equal={}; {}".format(torch.equal(src, dst), shown(found))

    gemm = load_template("persistent_gemm")
    for cid, (M, N, K, config) in {"K2": (1999, 4096, 4096, {}),
                                   "K3": (128, 4096, 4096, dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=128,
                                                                num_warps=4, num_stages=4,
                                                                split_epilogue=False))}.items():
        @claim(cid, "persistent_gemm at M={} N={} K={} {} matches torch, with wgmma, TMA and mbarrier"
               .format(M, N, K, config or "(default config)"))
        def _(M=M, N=N, K=K, config=config):
            A, B = gemm_inputs(M, N, K)
            C = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
            kernel = gemm.launch_persistent_gemm(A, B, C, M, N, K, **config)
            ref = A.float() @ B.float().T
            err = error(C, ref, *GEMM_BOUND)
            found = instructions(kernel)
            ok = err <= 1 and found["wgmma"] and found["tma-load"] and found["mbarrier-wait"]
            return ok, "error/tolerance {:.3g}; shared {} B; {}".format(err, kernel.metadata.shared, shown(found))

    fwd = load_template("attention_forward")
    bwd = load_template("attention_backward")
    for cid, shape in {"K4": (2, 4, 4, 1000, 1000, 64, 1), "K5": (1, 4, 4, 512, 1536, 96, 1),
                       "K6": (1, 8, 2, 1000, 1000, 128, 1), "K7": (2, 4, 4, 1000, 1000, 128, 0),
                       "K8": (1, 2, 2, 300, 200, 64, 1)}.items():
        @claim(cid, "attention_forward and attention_backward (B,Hq,Hkv,Sq,Sk,D,causal)={} match torch, "
               "with wgmma, TMA and mbarrier".format(shape))
        def _(shape=shape):
            B, Hq, Hkv, Sq, Sk, D, causal = shape
            scale = 1 / math.sqrt(D)
            Q, K, V = bf16(B, Sq, Hq, D), bf16(B, Sk, Hkv, D), bf16(B, Sk, Hkv, D)
            dO = bf16(B, Sq, Hq, D)
            ref_o, ref_lse, ref_dq, ref_dk, ref_dv = reference_attention(Q, K, V, dO, scale, causal)
            O = torch.full_like(Q, float("nan"))
            LSE = torch.full((B, Hq, Sq), float("nan"), device="cuda", dtype=torch.float32)
            k_fwd = fwd.launch_attention_forward(Q, K, V, O, LSE, B, Hq, Hkv, Sq, Sk, D, scale, causal)
            dQ, dK, dV = torch.full_like(Q, float("nan")), torch.full_like(K, float("nan")), torch.full_like(
                V, float("nan"))
            ws = torch.empty(bwd.attention_backward_workspace_bytes(B, Hq, Hkv, Sq, Sk, D, causal),
                             device="cuda", dtype=torch.uint8)
            kernels = bwd.launch_attention_backward(Q, K, V, ref_o.to(torch.bfloat16), ref_lse, dO, dQ, dK, dV,
                                                    ws, B, Hq, Hkv, Sq, Sk, D, scale, causal)
            torch.cuda.synchronize()
            bounds = attention_bounds(Hq, Hkv, D, causal)
            errors = {name: error(got, want, *bounds[name]) for name, got, want in
                      [("O", O, ref_o), ("LSE", LSE, ref_lse), ("dQ", dQ, ref_dq), ("dK", dK, ref_dk),
                       ("dV", dV, ref_dv)]}
            found_fwd = instructions(k_fwd)
            found_bwd = [instructions(k) for k in kernels[1:]]
            ok = (all(e <= 1 for e in errors.values()) and found_fwd["wgmma"] and found_fwd["tma-load"]
                  and found_fwd["mbarrier-wait"] and all(f["wgmma"] and f["tma-load"] for f in found_bwd))
            return ok, "errors {}; forward {}; dkdv {}; dq {}".format(
                {k: round(v, 5) for k, v in errors.items()}, shown(found_fwd), shown(found_bwd[0]),
                shown(found_bwd[1]))

    failed = RESULTS.count(False)
    print("{} claims, {} passed, {} failed".format(len(RESULTS), RESULTS.count(True), failed))
    return 1 if failed else 0


def error(got, want, atol, rtol):
    """max |got - want| / (atol + rtol |want|) over the finite reference values (<= 1: within the tasks'
    tolerance); -inf in the reference must be -inf in `got`, and a NaN in `got` is infinitely wrong."""
    got, want = got.float(), want.float()
    finite = torch.isfinite(want)
    if not torch.equal(torch.isinf(want) & (want < 0), torch.isinf(got) & (got < 0)) or torch.isnan(
            got[finite]).any():
        return float("inf")
    if not finite.any():
        return 0.0
    return ((got[finite] - want[finite]).abs() / (atol + rtol * want[finite].abs())).max().item()


def reference_attention(Q, K, V, dO, scale, causal):
    """fp32 attention by the ABI's definition (bottom-right causal, GQA): O, LSE, dQ, dK, dV."""
    B, Sq, Hq, D = Q.shape
    Sk, Hkv = K.shape[1], K.shape[2]
    group = Hq // Hkv
    q = Q.float().permute(0, 2, 1, 3).requires_grad_()
    k = K.float().permute(0, 2, 1, 3).requires_grad_()
    v = V.float().permute(0, 2, 1, 3).requires_grad_()
    kg, vg = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    s = scale * q @ kg.transpose(-1, -2)
    if causal:
        i = torch.arange(Sq, device=Q.device)[:, None]
        j = torch.arange(Sk, device=Q.device)[None, :]
        s = s.masked_fill(j > i + (Sk - Sq), float("-inf"))
    lse = torch.logsumexp(s, dim=-1)  # -inf for a row without a visible key
    p = torch.exp(s - torch.where(torch.isinf(lse), 0.0, lse)[..., None])  # 0 there, not NaN
    o = p @ vg
    o.backward(dO.float().permute(0, 2, 1, 3))
    # Back to the ABI's [B, S, H, D], contiguous: the backward indexes its input O by that layout.
    def abi(x):
        return x.detach().permute(0, 2, 1, 3).contiguous()
    return abi(o), lse.detach(), abi(q.grad), abi(k.grad), abi(v.grad)


if __name__ == "__main__":
    sys.exit(main())
