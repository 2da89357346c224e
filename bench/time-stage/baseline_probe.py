#!/usr/bin/env python3
"""Where the cuDNN attention baseline's time goes, outside the judge: its call timed as the runner times it (a
cold L2, the GPU idle at the start event, events around the call), the same call behind a spin (the launches queue
while the GPU is still busy, so the host's dispatch is outside the events), and its kernels alone (CUPTI through
torch.profiler). One line per way: median, p10-p90, and the host time of the call.

    python3 bench/time-stage/baseline_probe.py [forward|backward] [D] [CALLS] [OFFSET...]

With OFFSETs (bytes, multiples of 256, as the judge places its buffers: src/runner/placement.h), each is
timed in turn: every tensor of the call starts that many bytes into an allocation of its own.

Run it in several processes: the judge's attention speedups moved by 17-28% between processes on 2026-12-05
(bench/harness/h200-2026-12-05d/), all of it in the baseline's times.
"""
import importlib.util
import math
import pathlib
import statistics
import sys
import time

import torch

ROOT = pathlib.Path(__file__).resolve().parents[2]


def main():
    which = sys.argv[1] if len(sys.argv) > 1 else "forward"
    D = int(sys.argv[2]) if len(sys.argv) > 2 else 64
    calls = int(sys.argv[3]) if len(sys.argv) > 3 else 50
    offsets = [int(x) for x in sys.argv[4:]]
    spec = importlib.util.spec_from_file_location("attention_cudnn", ROOT / "baselines" / "attention_cudnn.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    B, S, H = 4, 4096, {64: 32, 96: 24, 128: 16}[D]  # the tasks' main shapes
    def bf16(*shape, offset=0):
        n = math.prod(shape)
        storage = torch.empty(n + offset // 2, device="cuda", dtype=torch.bfloat16)
        storage[offset // 2:] = torch.randn(n, device="cuda").to(torch.bfloat16)
        return storage[offset // 2:].view(*shape)

    Q, K, V, dO = (bf16(B, S, H, D) for _ in range(4))
    O = torch.empty_like(Q)
    LSE = torch.empty((B, H, S), device="cuda", dtype=torch.float32)
    dQ, dK, dV = (torch.empty_like(X) for X in (Q, K, V))
    stream = torch.cuda.current_stream()
    args = (B, H, H, S, S, D, 1 / math.sqrt(D), 0, stream)
    module.ptxbench_attention_forward_bf16(Q, K, V, O, LSE, *args)
    if which == "forward":
        call = lambda: module.ptxbench_attention_forward_bf16(Q, K, V, O, LSE, *args)
    else:
        call = lambda: module.ptxbench_attention_backward_bf16(Q, K, V, O, LSE, dO, dQ, dK, dV, None, *args)
    flush = torch.empty(256 << 20, device="cuda", dtype=torch.uint8)
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def timed(spin):
        events, host = [], []
        for i in range(calls):
            flush.fill_(i & 0xFF)
            torch.cuda.synchronize()
            if spin:
                torch.cuda._sleep(2_000_000)  # about 1 ms at 1.98 GHz: longer than any dispatch
            start.record()
            t0 = time.perf_counter()
            call()
            t1 = time.perf_counter()
            stop.record()
            torch.cuda.synchronize()
            events.append(start.elapsed_time(stop) * 1e3)
            host.append((t1 - t0) * 1e6)
        return events, host

    def line(name, values, host=None):
        q = statistics.quantiles(values, n=10)
        extra = f", host {statistics.median(host):.1f} us" if host else ""
        print(f"  {name:<26} median {statistics.median(values):8.1f} us, p10-p90 {q[0]:.1f}-{q[-1]:.1f}{extra}")

    for _ in range(5):
        call()
    torch.cuda.synchronize()
    print(f"{which} d{D} B{B} H{H} S{S}, GPU {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"cuDNN {torch.backends.cudnn.version()}")
    if offsets:
        for offset in offsets:
            Q, K, V, dO, O, dQ, dK, dV = (bf16(B, S, H, D, offset=offset) for _ in range(8))
            LSE = torch.empty((B * H * S + offset // 4,), device="cuda")[offset // 4:].view(B, H, S)
            module.ptxbench_attention_forward_bf16(Q, K, V, O, LSE, *args)
            for _ in range(5):
                call()
            torch.cuda.synchronize()
            line(f"offset {offset}: judge", *timed(False))
            line(f"offset {offset}: spin", *timed(True))
        return
    line("GPU idle at start (judge)", *timed(False))
    line("behind a spin", *timed(True))
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for i in range(calls):
            flush.fill_(i & 0xFF)
            torch.cuda.synchronize()
            call()
            torch.cuda.synchronize()
    kernels = {}
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CUDA and "fill" not in event.name.lower() \
                and "copy" not in event.name.lower():
            kernels.setdefault(event.name, []).append(event.device_time_total)
    for name, times in sorted(kernels.items(), key=lambda kv: -sum(kv[1])):
        if len(times) >= calls // 2:
            line(f"kernel x{len(times)}", times)
            print(f"    {name[:110]}")


if __name__ == "__main__":
    main()
