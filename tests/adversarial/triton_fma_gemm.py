# A correct Triton GEMM that never reaches the tensor cores: the tiles are widened to fp32 and multiplied with
# input_precision="ieee", which Triton lowers to FMA, and they are loaded through pointers (no TMA, no mbarrier).
# It passes the static stage and the correct stage; the instruction stage fails it (no wgmma, TMA or mbarrier
# executed). K and N multiples of 32 (the tasks' are).
import torch
import triton
import triton.language as tl


@triton.jit
def _gemm_fma(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rows[:, None].to(tl.int64) * K + (k0 + ks)[None, :], mask=rows[:, None] < M, other=0.0)
        b = tl.load(b_ptr + cols[:, None].to(tl.int64) * K + (k0 + ks)[None, :], mask=cols[:, None] < N, other=0.0)
        acc = tl.dot(a.to(tl.float32), tl.trans(b.to(tl.float32)), acc, input_precision="ieee")
    c = c_ptr + rows[:, None].to(tl.int64) * N + cols[None, :]
    tl.store(c, acc.to(tl.bfloat16), mask=(rows[:, None] < M) & (cols[None, :] < N))


def ptxbench_gemm_bf16(A, B, C, M, N, K, stream):
    grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
    _gemm_fma[grid](A, B, C, M, N, K, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, num_warps=4)
    return 0
