# Reference Triton solution for the Hopper attention-forward tasks: O = softmax(scale Q K^T) V and LSE, bf16 in and
# out, fp32 softmax (docs/triton-abi.md, include/ptxbench/abi.h). The idioms are the kit's (kits/hopper/triton).
#
# Design (FlashAttention-2's, in Triton)
#   - One program per (BLOCK_M query rows, batch, query head); causal tiles are taken longest first (the last
#     query rows see the most keys). GQA: query head h reads KV head h // (Hq // Hkv), and the heads of a group
#     are neighbouring programs, so they share K and V in L2.
#   - Q, K and V are host-side TMA tensor descriptors over their 2-D views [B * S, H * D] (D contiguous): a tile
#     of BLOCK rows of one (batch, head) is one descriptor load at row b * S + s, column head * D. Rows past the
#     end of the tensor load as zeros; rows past S of one batch are the next batch's, and the masks below keep
#     them out (they are never visible keys, and query rows past Sq are never stored).
#   - Per key block: S = Q K^T by tl.dot (wgmma, K^T a view of the shared-memory tile), online softmax in base 2
#     (exp2 with scale * log2(e) folded into one multiply), O += P V by tl.dot with P from registers (wgmma with A
#     in registers). K/V loads are software-pipelined by the loop (num_stages).
#   - Masks cost only where needed: key blocks that every row of the tile sees run without a mask; the blocks
#     on the causal diagonal and the last partial block of keys run with it. Causal masking is aligned to the
#     bottom-right corner: query i sees key j iff j <= i + Sk - Sq. A row that sees no key (causal with Sq > Sk)
#     gets O = 0 and LSE = -inf: its running maximum stays -inf, and 0 is subtracted instead, so no NaN appears.
#   - D = 96 is not a power of two, and Triton's blocks are: the head dim is padded to BLOCK_D = 128. The Q tile's
#     columns 96..127 (the next head's, or zeros past the tensor's end) are zeroed after the load, so S is exact
#     whatever K holds there; O's extra columns are computed and never stored.
#   - Epilogue: O = acc / l and LSE = (m + log2 l) * ln 2 (natural log), stored with masks (rows < Sq, columns < D);
#     a TMA store of the 2-D view would write rows past Sq into the next batch.
# Measured on the H200: bench/triton/README.md; bench/triton/check_references.py checks it against torch.
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


def ptxbench_attention_forward_bf16(Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor,
                                    O: torch.Tensor, LSE: torch.Tensor,
                                    B: int, Hq: int, Hkv: int, Sq: int, Sk: int, D: int,
                                    scale: float, causal: int, stream: torch.cuda.Stream) -> int:
    block_d = triton.next_power_of_2(D)
    # (BLOCK_M, BLOCK_N, num_warps, num_stages). Shared memory: the Q tile plus num_stages K and V tiles,
    # 16 + 3 x 16 KB at D = 64, 32 + 2 x 64 KB at D = 96 and 128, 64 + 2 x 64 KB at D = 256 (whose accumulator,
    # 128 x 256 fp32, takes 128 registers a thread of eight warps).
    if block_d <= 64:
        block_m, block_n, warps, stages = 128, 64, 4, 3
    elif block_d <= 128:
        block_m, block_n, warps, stages = 128, 128, 8, 2
    else:
        block_m, block_n, warps, stages = 128, 64, 8, 2
    q_desc = TensorDescriptor(Q, [B * Sq, Hq * D], [Hq * D, 1], [block_m, block_d])
    k_desc = TensorDescriptor(K, [B * Sk, Hkv * D], [Hkv * D, 1], [block_n, block_d])
    v_desc = TensorDescriptor(V, [B * Sk, Hkv * D], [Hkv * D, 1], [block_n, block_d])
    grid = (triton.cdiv(Sq, block_m), B * Hq)
    # Launched on the current stream, which the caller made `stream`.
    _attention_forward[grid](q_desc, k_desc, v_desc, O, LSE, Hq, Sq, Sk, scale * 1.4426950408889634,
                             GROUP=Hq // Hkv, D=D, BLOCK_D=block_d, BLOCK_M=block_m, BLOCK_N=block_n,
                             CAUSAL=bool(causal), num_warps=warps, num_stages=stages)
    return 0
