# A Triton GEMM in the shape of the ABI's entry point, for the static scan's tests: every construct here must
# pass it (a persistent grid sized by the SM count, autotuned configs, a host TMA descriptor, annotations with
# torch types, a helper called by the entry point). It is never run; no claim is made about its speed.
from __future__ import annotations

import math

import torch
import triton
import triton.language as tl
from torch import Tensor
from triton.tools.tensor_descriptor import TensorDescriptor

CONFIGS = [
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8}, num_warps=8, num_stages=3),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, num_warps=4, num_stages=4),
]


def set_block_shapes(nargs):
    nargs["a_desc"].block_shape = [nargs["BLOCK_M"], nargs["BLOCK_K"]]
    nargs["b_desc"].block_shape = [nargs["BLOCK_N"], nargs["BLOCK_K"]]


@triton.autotune(configs=CONFIGS, key=["M", "N", "K"])
@triton.jit
def gemm_kernel(a_desc, b_desc, c_ptr, M, N, K, stride_cm, stride_cn, NUM_SMS: tl.constexpr,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    for tile in tl.range(tl.program_id(0), tiles_m * tiles_n, NUM_SMS, flatten=True):
        group = tile // (GROUP_M * tiles_n)
        first_m = group * GROUP_M
        size_m = min(tiles_m - first_m, GROUP_M)
        pid_m = first_m + (tile % size_m)
        pid_n = (tile % (GROUP_M * tiles_n)) // size_m
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, K, BLOCK_K):
            a = a_desc.load([pid_m * BLOCK_M, k])
            b = b_desc.load([pid_n * BLOCK_N, k])
            acc = tl.dot(a, b.T, acc)
        rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn, acc.to(tl.bfloat16), mask=mask)


def launch(A: Tensor, B: Tensor, C: Tensor, M: int, N: int, K: int) -> None:
    sms = torch.cuda.get_device_properties(A.device).multi_processor_count
    dummy = [1, 1]
    a_desc = TensorDescriptor(A, A.shape, A.stride(), dummy)
    b_desc = TensorDescriptor.from_tensor(B, dummy)
    grid = lambda meta: (min(sms, triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"])),)
    gemm_kernel[grid](a_desc, b_desc, C, M, N, K, C.stride(0), C.stride(1), NUM_SMS=sms)


def ptxbench_gemm_bf16(A: torch.Tensor, B: torch.Tensor, C: torch.Tensor, M: int, N: int, K: int,
                       stream: torch.cuda.Stream) -> int:
    assert A.dtype == torch.bfloat16 and B.is_contiguous() and C.numel() == M * N
    assert math.gcd(K, 16) == 16
    launch(A, B, C, M, N, K)
    return 0
