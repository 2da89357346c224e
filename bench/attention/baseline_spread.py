#!/usr/bin/env python3
"""Where the vendor baseline's spread between processes comes from: cuDNN's attention forward (PyTorch SDPA,
B=4 H=16 S=4096 D=128, non-causal) timed as baselines/attention_torch.py times it (L2 flushed before each call,
CUDA events, median of 50 after 10 warm-ups), over several sets of input buffers allocated at different addresses
in one process, each set timed twice.

If the medians of one set agree and those of different sets do not, the spread comes from where the inputs lie in
memory, not from the clock or from which kernel cuDNN chose.

    python3 bench/attention/baseline_spread.py [sets]
"""
import statistics
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


def median_us(q, k, v, flush, warmup=10, repetitions=50):
    for _ in range(warmup):
        F.scaled_dot_product_attention(q, k, v)
    times = []
    for _ in range(repetitions):
        flush.zero_()
        torch.cuda.synchronize()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        F.scaled_dot_product_attention(q, k, v)
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1000)
    return statistics.median(times)


def main():
    sets = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    b, h, s, d = 4, 16, 4096, 128
    flush = torch.empty(2 * torch.cuda.get_device_properties(0).L2_cache_size, dtype=torch.uint8, device="cuda")
    keep = []
    print(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}")
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        for i in range(sets):
            # A gap of a different size before each set moves its buffers to other physical pages.
            keep.append(torch.empty((i + 1) * 37 << 20, dtype=torch.uint8, device="cuda"))
            q, k, v = (torch.randn(b, s, h, d, dtype=torch.bfloat16, device="cuda").transpose(1, 2)
                       for _ in range(3))
            keep.append((q, k, v))
            first, second = median_us(q, k, v, flush), median_us(q, k, v, flush)
            print(f"set {i}: q at {q.data_ptr():#x}: {first:.1f} us, again {second:.1f} us")


if __name__ == "__main__":
    main()
