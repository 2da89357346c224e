# A module smuggled past the import rule: ctypes through __import__, to reach cuBLAS by hand. Static: the
# dynamic-loading rule refuses __import__ however it is called.
import torch
import triton
import triton.language as tl


def ptxbench_gemm_bf16(A, B, C, M, N, K, stream):
    loader = __import__("ctypes")
    cublas = loader.CDLL("libcublas.so")
    return 0 if cublas else 1
