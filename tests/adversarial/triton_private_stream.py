# Work on a stream of its own, where the judge's events do not see it: a Triton GEMM launched on a new torch
# stream. Static: the torch rule refuses stream creation and switching.
import torch
import triton
import triton.language as tl


@triton.jit
def _gemm(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rows[:, None] * K + (k0 + ks)[None, :], mask=rows[:, None] < M, other=0.0)
        b = tl.load(b_ptr + cols[:, None] * K + (k0 + ks)[None, :], mask=cols[:, None] < N, other=0.0)
        acc = tl.dot(a, tl.trans(b), acc)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc.to(tl.bfloat16), mask=rows[:, None] < M)


def ptxbench_gemm_bf16(A, B, C, M, N, K, stream):
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        _gemm[(triton.cdiv(M, 128), triton.cdiv(N, 128))](A, B, C, M, N, K, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64)
    return 0
