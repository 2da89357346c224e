# Reference Triton solution for the Hopper attention-backward tasks: dQ, dK, dV from Q, K, V, O, LSE and dO
# (docs/triton-abi.md, include/ptxbench/abi.h), bf16 in and out, fp32 accumulation. It is the kit's template
# kits/hopper/triton/templates/attention_backward.py with the ABI's entry points. Measured on the H200:
# bench/triton/README.md; bench/triton/check_references.py checks it against torch.
#
# Attention backward, FlashAttention-2's split (Hopper): three kernels on one stream, no atomics.
#   1. Delta[b, h, i] = sum_d dO * O, into the workspace (fp32 [B, Hq, Sq]).
#   2. dK, dV: one program per (BLOCK_N keys, batch, KV head); it loops over the query blocks of every query head
#      of its group (GQA) and accumulates dV += P^T dO and dK += dS^T Q in registers: each key row is owned by
#      one program, so dK and dV need no atomics and no zeroing.
#   3. dQ: one program per (BLOCK_M queries, batch, query head), looping over key blocks: dQ += dS K.
# P is recomputed from the forward's LSE: P = exp2(s * scale * log2(e) - LSE * log2(e)). Every tl.dot has an
# M of 128 (two warpgroups of m64) and bf16 operands: wgmma. K/V (kernel 3) and Q/dO (kernel 2) tiles are TMA
# descriptor loads over the [B * S, H * D] views, pipelined by tl.range. Masks: key j < Sk, query i < Sq and, when
# causal, j <= i + Sk - Sq (bottom-right); a masked P is 0, so rows without a visible key (LSE = -inf) and rows
# past Sq (the next batch's, in the 2-D view) add nothing. D = 96 is padded to 128: the operand loaded once
# per program has its extra columns zeroed (K and V in kernel 2, Q and dO in kernel 3), and the extra output
# columns are never stored.
# The workspace arrives as a torch.uint8 tensor; the kernels cast its pointer to float (a host-side view would do too).
import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor


@triton.jit
def _attention_bwd_delta(O, dO, Workspace, Hq, Sq, D: tl.constexpr, BLOCK_D: tl.constexpr,
                         BLOCK_M: tl.constexpr):
    bh = tl.program_id(1)
    b = bh // Hq
    h = bh % Hq
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    rows = offs_m < Sq
    offsets = ((b * Sq + offs_m).to(tl.int64) * (Hq * D) + h * D)[:, None] + offs_d[None, :]
    mask = rows[:, None] & (offs_d[None, :] < D)
    o = tl.load(O + offsets, mask=mask, other=0.0).to(tl.float32)
    do = tl.load(dO + offsets, mask=mask, other=0.0).to(tl.float32)
    delta = Workspace.to(tl.pointer_type(tl.float32))
    tl.store(delta + bh.to(tl.int64) * Sq + offs_m, tl.sum(o * do, 1), mask=rows)


@triton.jit
def _attention_bwd_dkdv(q_desc, k_desc, v_desc, do_desc, LSE, Workspace, dK, dV, Hq, Hkv, Sq, Sk, scale,
                        qk_scale, GROUP: tl.constexpr, D: tl.constexpr, BLOCK_D: tl.constexpr,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    start_n = tl.program_id(0) * BLOCK_N
    bg = tl.program_id(1)
    b = bg // Hkv
    g = bg % Hkv
    offs_n = start_n + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    k = k_desc.load([b * Sk + start_n, g * D])
    v = v_desc.load([b * Sk + start_n, g * D])
    if BLOCK_D != D:
        k = tl.where(offs_d[None, :] < D, k, tl.zeros_like(k))
        v = tl.where(offs_d[None, :] < D, v, tl.zeros_like(v))
    delta_ptr = Workspace.to(tl.pointer_type(tl.float32))
    diagonal = Sk - Sq
    # Query rows before start_n - diagonal see none of these keys.
    start_m = 0
    if CAUSAL:
        start_m = tl.maximum(start_n - diagonal, 0) // BLOCK_M * BLOCK_M
    blocks = tl.cdiv(Sq - start_m, BLOCK_M)
    dk = tl.zeros([BLOCK_N, BLOCK_D], dtype=tl.float32)
    dv = tl.zeros([BLOCK_N, BLOCK_D], dtype=tl.float32)
    # One pipelined loop over (query head of the group, query block).
    for it in tl.range(0, GROUP * blocks):
        h = g * GROUP + it // blocks
        m0 = start_m + (it % blocks) * BLOCK_M
        offs_m = m0 + tl.arange(0, BLOCK_M)
        q = q_desc.load([b * Sq + m0, h * D])
        do = do_desc.load([b * Sq + m0, h * D])
        row = (b * Hq + h).to(tl.int64) * Sq + offs_m
        lse = tl.load(LSE + row, mask=offs_m < Sq, other=0.0) * 1.4426950408889634
        delta = tl.load(delta_ptr + row, mask=offs_m < Sq, other=0.0)
        visible = (offs_m[None, :] < Sq) & (offs_n[:, None] < Sk)
        if CAUSAL:
            visible = visible & (offs_n[:, None] <= offs_m[None, :] + diagonal)
        s_t = tl.dot(k, q.T)                                        # S^T: [BLOCK_N, BLOCK_M]
        p_t = tl.where(visible, tl.math.exp2(s_t * qk_scale - lse[None, :]), 0.0)
        dv = tl.dot(p_t.to(tl.bfloat16), do, dv)
        dp_t = tl.dot(v, do.T)                                      # dP^T
        ds_t = p_t * (dp_t - delta[None, :])
        dk = tl.dot(ds_t.to(tl.bfloat16), q, dk)
    offsets = ((b * Sk + offs_n).to(tl.int64) * (Hkv * D) + g * D)[:, None] + offs_d[None, :]
    mask = (offs_n[:, None] < Sk) & (offs_d[None, :] < D)
    tl.store(dK + offsets, (dk * scale).to(tl.bfloat16), mask=mask)
    tl.store(dV + offsets, dv.to(tl.bfloat16), mask=mask)


@triton.jit
def _attention_bwd_dq(q_desc, k_desc, v_desc, do_desc, LSE, Workspace, dQ, Hq, Sq, Sk, scale, qk_scale,
                      GROUP: tl.constexpr, D: tl.constexpr, BLOCK_D: tl.constexpr,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    bh = tl.program_id(1)
    b = bh // Hq
    h = bh % Hq
    g = h // GROUP
    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    q = q_desc.load([b * Sq + start_m, h * D])
    do = do_desc.load([b * Sq + start_m, h * D])
    if BLOCK_D != D:
        q = tl.where(offs_d[None, :] < D, q, tl.zeros_like(q))
        do = tl.where(offs_d[None, :] < D, do, tl.zeros_like(do))
    row = bh.to(tl.int64) * Sq + offs_m
    lse = tl.load(LSE + row, mask=offs_m < Sq, other=0.0) * 1.4426950408889634
    delta = tl.load(Workspace.to(tl.pointer_type(tl.float32)) + row, mask=offs_m < Sq, other=0.0)
    diagonal = Sk - Sq
    end = Sk
    if CAUSAL:
        end = tl.minimum(tl.maximum(start_m + BLOCK_M + diagonal, 0), Sk)
    dq = tl.zeros([BLOCK_M, BLOCK_D], dtype=tl.float32)
    for start_n in tl.range(0, end, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        k = k_desc.load([b * Sk + start_n, g * D])
        v = v_desc.load([b * Sk + start_n, g * D])
        visible = (offs_m[:, None] < Sq) & (offs_n[None, :] < Sk)
        if CAUSAL:
            visible = visible & (offs_n[None, :] <= offs_m[:, None] + diagonal)
        s = tl.dot(q, k.T)
        p = tl.where(visible, tl.math.exp2(s * qk_scale - lse[:, None]), 0.0)
        dp = tl.dot(do, v.T)
        ds = p * (dp - delta[:, None])
        dq = tl.dot(ds.to(tl.bfloat16), k, dq)
    offsets = ((b * Sq + offs_m).to(tl.int64) * (Hq * D) + h * D)[:, None] + offs_d[None, :]
    tl.store(dQ + offsets, (dq * scale).to(tl.bfloat16), mask=(offs_m[:, None] < Sq) & (offs_d[None, :] < D))


def launch_attention_backward(Q, K, V, O, LSE, dO, dQ, dK, dV, workspace, B, Hq, Hkv, Sq, Sk, D, scale, causal):
    block_d = triton.next_power_of_2(D)
    qk_scale = scale * 1.4426950408889634
    grid = (triton.cdiv(Sq, 64), B * Hq)
    delta = _attention_bwd_delta[grid](O, dO, workspace, Hq, Sq, D=D, BLOCK_D=block_d, BLOCK_M=64, num_warps=4)
    # dK, dV: 128 keys per program, query blocks of 64 streamed through.
    q_desc = TensorDescriptor(Q, [B * Sq, Hq * D], [Hq * D, 1], [64, block_d])
    do_desc = TensorDescriptor(dO, [B * Sq, Hq * D], [Hq * D, 1], [64, block_d])
    k_desc = TensorDescriptor(K, [B * Sk, Hkv * D], [Hkv * D, 1], [128, block_d])
    v_desc = TensorDescriptor(V, [B * Sk, Hkv * D], [Hkv * D, 1], [128, block_d])
    dkdv = _attention_bwd_dkdv[(triton.cdiv(Sk, 128), B * Hkv)](
        q_desc, k_desc, v_desc, do_desc, LSE, workspace, dK, dV, Hq, Hkv, Sq, Sk, scale, qk_scale,
        GROUP=Hq // Hkv, D=D, BLOCK_D=block_d, BLOCK_M=64, BLOCK_N=128, CAUSAL=bool(causal),
        num_warps=8, num_stages=2)
    # dQ: 128 queries per program, key blocks of 64 streamed through.
    q_desc = TensorDescriptor(Q, [B * Sq, Hq * D], [Hq * D, 1], [128, block_d])
    do_desc = TensorDescriptor(dO, [B * Sq, Hq * D], [Hq * D, 1], [128, block_d])
    k_desc = TensorDescriptor(K, [B * Sk, Hkv * D], [Hkv * D, 1], [64, block_d])
    v_desc = TensorDescriptor(V, [B * Sk, Hkv * D], [Hkv * D, 1], [64, block_d])
    dq = _attention_bwd_dq[(triton.cdiv(Sq, 128), B * Hq)](
        q_desc, k_desc, v_desc, do_desc, LSE, workspace, dQ, Hq, Sq, Sk, scale, qk_scale,
        GROUP=Hq // Hkv, D=D, BLOCK_D=block_d, BLOCK_M=128, BLOCK_N=64, CAUSAL=bool(causal),
        num_warps=8, num_stages=2)
    return delta, dkdv, dq  # the compiled kernels


def ptxbench_attention_backward_workspace_bytes(B: int, Hq: int, Hkv: int, Sq: int, Sk: int,
                                                D: int, causal: int) -> int:
    return 4 * B * Hq * Sq  # Delta = rowsum(dO * O), fp32 [B, Hq, Sq]


def ptxbench_attention_backward_bf16(Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor,
                                     O: torch.Tensor, LSE: torch.Tensor, dO: torch.Tensor,
                                     dQ: torch.Tensor, dK: torch.Tensor, dV: torch.Tensor,
                                     workspace: torch.Tensor | None,
                                     B: int, Hq: int, Hkv: int, Sq: int, Sk: int, D: int,
                                     scale: float, causal: int, stream: torch.cuda.Stream) -> int:
    # Launched on the current stream, which the caller made `stream`.
    launch_attention_backward(Q, K, V, O, LSE, dO, dQ, dK, dV, workspace, B, Hq, Hkv, Sq, Sk, D, scale, causal)
    return 0
