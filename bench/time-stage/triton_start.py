#!/usr/bin/env python3
"""What a Triton solution's process spends before its first call returns: importing torch, Triton and numpy,
CUDA's start in torch, and the first call of the reference GEMM at the task's smallest shape, whose kernels
Triton compiles into TRITON_CACHE_DIR (or finds there). Prints one line of seconds.

    TRITON_CACHE_DIR=DIR python3 bench/time-stage/triton_start.py
"""
import importlib.util
import time

start = time.perf_counter()
import numpy  # noqa: E402,F401

numpy_imported = time.perf_counter()
import torch  # noqa: E402

torch_imported = time.perf_counter()
import triton  # noqa: E402,F401

imported = time.perf_counter()
torch.zeros(1, device="cuda")
torch.cuda.synchronize()
cuda = time.perf_counter()
spec = importlib.util.spec_from_file_location("solution", "solutions/reference/gemm_bf16_sm90a.py")
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
M, N, K = 128, 4096, 4096
A = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
B = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
C = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
loaded = time.perf_counter()
module.ptxbench_gemm_bf16(A, B, C, M, N, K, torch.cuda.current_stream().cuda_stream)
torch.cuda.synchronize()
called = time.perf_counter()
module.ptxbench_gemm_bf16(A, B, C, M, N, K, torch.cuda.current_stream().cuda_stream)
torch.cuda.synchronize()
again = time.perf_counter()
print(f"imports {imported - start:.2f} s (numpy {numpy_imported - start:.2f}, torch {torch_imported - numpy_imported:.2f}, "
      f"triton {imported - torch_imported:.2f}), cuda start {cuda - imported:.2f} s, solution loaded {loaded - cuda:.2f} s, "
      f"first call {called - loaded:.2f} s, second call {again - called:.3f} s")
