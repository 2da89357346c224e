# The Triton track's vendor library: C = A B^T by torch.matmul (cuBLAS), no Triton kernel at all. Static: the
# torch rule refuses torch computing on the inputs and writing into the output.
import torch
import triton
import triton.language as tl


def ptxbench_gemm_bf16(A, B, C, M, N, K, stream):
    C.copy_(torch.matmul(A, B.T))
    return 0
