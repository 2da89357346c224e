# An entry point that raises: the judge reports the exception, its message and the solution's line as a
# runtime error in the first GPU stage, and survives.
import torch
import triton
import triton.language as tl


def ptxbench_gemm_bf16(A, B, C, M, N, K, stream):
    if M > 0:
        raise ValueError(f"no configuration for M = {M}")
    return 0
