"""Where a Triton call's host time goes, and whether a spinning kernel hides it from the clocks.

    python3 bench/triton/launch_overhead.py

On the H200 (2026-12-01) the judge's time stage found each reference Triton call 83-313 us longer than its
kernels (bench/triton/README.md): the time stage records its start event on an idle GPU and then calls the entry
point, so the host's work before the first launch is inside the clocks. This script measures, for each reference
at its task's main shape, outside the judge:

- idle: the call timed as the judge times it (synchronised, start event, call, stop event), median of 30;
- behind a spin: the same with `torch.cuda._sleep` enqueued before the start event, so the launches queue while
  the GPU spins and the events hold the GPU's work alone (what nvbench's blocking kernel does);
- host: the entry point's wall time on the CPU, and for the GEMM its parts (the three TensorDescriptors, the JIT
  launch with descriptors made in advance), each a median of 200;
- idle again with the garbage collector off.

idle - behind a spin is the host time the judge charges. Needs python3, torch, triton and a Hopper GPU.
"""
import gc
import math
import pathlib
import statistics
import sys
import time

import torch
import triton
from triton.tools.tensor_descriptor import TensorDescriptor

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from check_references import bf16, load  # noqa: E402  (after the path)

REFERENCE = HERE.parents[1] / "solutions" / "reference"
REPEATS = 30
SPIN_CYCLES = 4_000_000  # about 2 ms at 1.98 GHz: longer than any host time measured


def event_times(call, spin):
    """Median event time (us) of `call` on an idle GPU, or behind a spinning kernel."""
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(REPEATS):
        torch.cuda.synchronize()
        if spin:
            torch.cuda._sleep(SPIN_CYCLES)
        start.record()
        call()
        stop.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(stop) * 1e3)
    return statistics.median(times)


def host_time(work, repeats=200):
    """Median wall time (us) of `work` on the CPU, the GPU kept busy so that no launch waits for a slot."""
    times = []
    for i in range(repeats):
        if i % 20 == 0:
            torch.cuda.synchronize()
            torch.cuda._sleep(SPIN_CYCLES * 10)
        begin = time.perf_counter()
        work()
        times.append((time.perf_counter() - begin) * 1e6)
    torch.cuda.synchronize()
    return statistics.median(times)


def measure(name, call, parts=()):
    for _ in range(3):  # compile and warm
        call()
    torch.cuda.synchronize()
    idle, behind = event_times(call, spin=False), event_times(call, spin=True)
    gc.disable()
    try:
        idle_no_gc = event_times(call, spin=False)
    finally:
        gc.enable()
    print("{:<28} idle {:9.1f} us   behind a spin {:9.1f} us   host time in the clocks {:7.1f} us   "
          "idle, gc off {:9.1f} us   entry point on the CPU {:7.1f} us".format(
              name, idle, behind, idle - behind, idle_no_gc, host_time(call)), flush=True)
    for part, work in parts:
        print("    {:<44} {:7.1f} us on the CPU".format(part, host_time(work)), flush=True)


def main():
    if not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0):
        print("launch_overhead.py needs a Hopper GPU (compute capability 9.0)")
        return 2
    print("device: {}, torch {}, triton {}".format(torch.cuda.get_device_name(), torch.__version__,
                                                  triton.__version__), flush=True)
    torch.manual_seed(0)
    stream = torch.cuda.current_stream()
    gemm = load(REFERENCE / "gemm_bf16_sm90a.py")
    forward = load(REFERENCE / "attention_forward_sm90a.py")
    backward = load(REFERENCE / "attention_backward_sm90a.py")

    M, N, K = 8192, 4096, 4096  # gemm-bf16-n4096-k4096-sm90a
    A, B, C = bf16(M, K), bf16(N, K), bf16(M, N)
    block_m, block_n, block_k, group_m, warps, stages, split = gemm.LARGE

    def gemm_descriptors():  # as the reference makes them, at its large configuration
        return (TensorDescriptor(A, [M, K], [K, 1], [block_m, block_k]),
                TensorDescriptor(B, [N, K], [K, 1], [block_n, block_k]),
                TensorDescriptor(C, [M, N], [N, 1], [block_m, block_n // 2 if split else block_n]))

    descriptors = gemm_descriptors()
    programs = min(torch.cuda.get_device_properties(A.device).multi_processor_count,
                   triton.cdiv(M, block_m) * triton.cdiv(N, block_n))

    def launch_only():
        gemm._gemm_persistent[(programs,)](*descriptors, M, N, K, BLOCK_M=block_m, BLOCK_N=block_n,
                                           BLOCK_K=block_k, GROUP_M=group_m, SPLIT_EPILOGUE=split,
                                           num_warps=warps, num_stages=stages)

    measure("gemm n4096-k4096", lambda: gemm.ptxbench_gemm_bf16(A, B, C, M, N, K, stream), [
        ("three TensorDescriptors", gemm_descriptors),
        ("device properties", lambda: torch.cuda.get_device_properties(A.device).multi_processor_count),
        ("JIT launch, descriptors made in advance", launch_only)])

    Bt, H, S, D = 4, 16, 4096, 128  # attention-{fwd,bwd}-d128-sm90a
    scale = 1 / math.sqrt(D)
    Q, Kt, V, O, dO = (bf16(Bt, S, H, D) for _ in range(5))
    LSE = torch.zeros((Bt, H, S), device="cuda", dtype=torch.float32)
    args = (Bt, H, H, S, S, D, scale, 0, stream)
    measure("attention fwd d128", lambda: forward.ptxbench_attention_forward_bf16(Q, Kt, V, O, LSE, *args))
    forward.ptxbench_attention_forward_bf16(Q, Kt, V, O, LSE, *args)  # a real LSE for the backward
    dQ, dK, dV = (torch.empty_like(X) for X in (Q, Kt, V))
    workspace = torch.empty((backward.ptxbench_attention_backward_workspace_bytes(Bt, H, H, S, S, D, 0),),
                            device="cuda", dtype=torch.uint8)
    measure("attention bwd d128", lambda: backward.ptxbench_attention_backward_bf16(
        Q, Kt, V, O, LSE, dO, dQ, dK, dV, workspace, *args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
