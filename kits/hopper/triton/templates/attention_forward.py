# Attention forward with LSE, FlashAttention-2 style (Hopper). Q [B,Sq,Hq,D], K/V [B,Sk,Hkv,D], O like Q, LSE
# [B,Hq,Sq] fp32 natural log; causal aligned bottom-right (query i sees key j iff j <= i + Sk - Sq); GQA.
#   - grid (query blocks, B * Hq); a group's query heads are neighbours (K/V shared in L2).
#   - descriptors over the 2-D views [B * S, H * D]: tile (b, s, head) is at [b * S + s, head * D]. Rows past S
#     are the next batch's: mask keys j >= Sk, never store rows >= Sq (masked tl.store, not a TMA store).
#   - softmax in base 2: qk_scale = scale * log2(e) folded into one multiply; LSE = (m + log2 l) * ln 2.
#   - unmasked key blocks run apart from masked ones (diagonal, tail): the mask costs only where it is needed.
#   - -inf and NaN: a row with no visible key keeps m = -inf; subtract 0 instead, and store O = 0, LSE = -inf.
#   - D = 96: blocks are powers of two; pad the head dim to 128 and zero Q's extra columns after the load.
#   - S = tl.dot(q, k.T) is wgmma from shared memory; tl.dot(p.to(bf16), v, acc) is wgmma with P in registers.
import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor


@triton.jit
def _attend(acc, l_i, m_i, q, k_desc, v_desc, kv_row, kv_col, offs_m, start, end, Sk, diagonal, qk_scale,
            BLOCK_N: tl.constexpr, MASKED: tl.constexpr, CAUSAL: tl.constexpr):
    """Online softmax over the key blocks [start, end) (start a multiple of BLOCK_N)."""
    offs_block = tl.arange(0, BLOCK_N)
    for start_n in tl.range(start, end, BLOCK_N):
        k = k_desc.load([kv_row + start_n, kv_col])
        qk = tl.dot(q, k.T)
        if MASKED:
            offs_n = start_n + offs_block
            visible = offs_n[None, :] < Sk
            if CAUSAL:
                visible = visible & (offs_n[None, :] <= offs_m[:, None] + diagonal)
            qk = tl.where(visible, qk * qk_scale, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(qk, 1))
            # A row with no visible key so far keeps m = -inf; subtracting 0 then gives p = 0, not NaN.
            m_sub = tl.where(m_new == float("-inf"), 0.0, m_new)
            p = tl.math.exp2(qk - m_sub[:, None])
            alpha = tl.math.exp2(m_i - m_sub)
        else:
            m_new = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            p = tl.math.exp2(qk * qk_scale - m_new[:, None])
            alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = v_desc.load([kv_row + start_n, kv_col])
        acc = tl.dot(p.to(tl.bfloat16), v, acc)
        m_i = m_new
    return acc, l_i, m_i


@triton.jit
def _attention_forward(q_desc, k_desc, v_desc, O, LSE, Hq, Sq, Sk, qk_scale,
                       GROUP: tl.constexpr, D: tl.constexpr, BLOCK_D: tl.constexpr,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    pid_m = tl.program_id(0)
    if CAUSAL:
        pid_m = tl.num_programs(0) - 1 - pid_m  # longest tiles first
    bh = tl.program_id(1)
    b = bh // Hq
    h = bh % Hq
    g = h // GROUP
    start_m = pid_m * BLOCK_M
    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)

    q = q_desc.load([b * Sq + start_m, h * D])
    if BLOCK_D != D:
        q = tl.where(offs_d[None, :] < D, q, tl.zeros_like(q))

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_D], dtype=tl.float32)
    diagonal = Sk - Sq
    if CAUSAL:
        # Keys [0, full_end) are visible to every row of the tile (j <= start_m + diagonal); [full_end, end)
        # are visible to some rows; keys from end on to none.
        full_end = tl.minimum(tl.maximum(start_m + diagonal + 1, 0), Sk) // BLOCK_N * BLOCK_N
        end = tl.minimum(tl.maximum(start_m + BLOCK_M + diagonal, 0), Sk)
    else:
        full_end = Sk // BLOCK_N * BLOCK_N
        end = Sk
    kv_row = b * Sk
    kv_col = g * D
    acc, l_i, m_i = _attend(acc, l_i, m_i, q, k_desc, v_desc, kv_row, kv_col, offs_m, 0, full_end, Sk,
                            diagonal, qk_scale, BLOCK_N, False, CAUSAL)
    acc, l_i, m_i = _attend(acc, l_i, m_i, q, k_desc, v_desc, kv_row, kv_col, offs_m, full_end, end, Sk,
                            diagonal, qk_scale, BLOCK_N, True, CAUSAL)

    empty = l_i == 0.0  # no visible key: O = 0, LSE = -inf
    o = acc / tl.where(empty, 1.0, l_i)[:, None]
    lse = tl.where(empty, float("-inf"), (m_i + tl.math.log2(l_i)) * 0.6931471805599453)
    rows = offs_m < Sq
    o_offsets = (b * Sq + offs_m).to(tl.int64) * (Hq * D) + h * D
    tl.store(O + o_offsets[:, None] + offs_d[None, :], o.to(tl.bfloat16),
             mask=rows[:, None] & (offs_d[None, :] < D))
    tl.store(LSE + bh.to(tl.int64) * Sq + offs_m, lse, mask=rows)


def launch_attention_forward(Q, K, V, O, LSE, B, Hq, Hkv, Sq, Sk, D, scale, causal):
    block_d = triton.next_power_of_2(D)
    if block_d <= 64:
        block_m, block_n, warps, stages = 128, 64, 4, 3
    else:
        block_m, block_n, warps, stages = 128, 128, 8, 2
    q_desc = TensorDescriptor(Q, [B * Sq, Hq * D], [Hq * D, 1], [block_m, block_d])
    k_desc = TensorDescriptor(K, [B * Sk, Hkv * D], [Hkv * D, 1], [block_n, block_d])
    v_desc = TensorDescriptor(V, [B * Sk, Hkv * D], [Hkv * D, 1], [block_n, block_d])
    grid = (triton.cdiv(Sq, block_m), B * Hq)
    return _attention_forward[grid](q_desc, k_desc, v_desc, O, LSE, Hq, Sq, Sk, scale * 1.4426950408889634,
                                    GROUP=Hq // Hkv, D=D, BLOCK_D=block_d, BLOCK_M=block_m, BLOCK_N=block_n,
                                    CAUSAL=bool(causal), num_warps=warps, num_stages=stages)
