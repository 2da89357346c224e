# An entry point that raises: the judge survives, and the correct stage reports the exception, its message and the
# solution's line as a runtime error (sanitize, finding no memory error, only names the failed call).
import torch
import triton
import triton.language as tl


def ptxbench_gemm_bf16(A, B, C, M, N, K, stream):
    if M > 0:
        raise ValueError(f"no configuration for M = {M}")
    return 0
