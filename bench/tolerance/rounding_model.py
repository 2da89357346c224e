#!/usr/bin/env python3
"""The largest error a correct tensor-core attention backward makes on the causal tasks' dQ, dK and dV.

A float64 model of the one rounding every tensor-core backward does: P and dS are rounded to bf16 before the
GEMMs that make dV = P^T dO, dK = scale dS^T Q and dQ = scale dS K; everything else is exact. Inputs as the runner makes them:
Q, K, V, dO ~ N(0, 1) in bf16, scale 1/sqrt(D), O the bf16 forward. Only the first keys of a causal head
collect large probabilities, so the first `keys` keys and queries of each head stand for the main shape.
Prints, per output, the largest error over every element and head, and its ratio to atol + rtol |ref| for the
tolerance given. docs/tasks.md quotes its figures.

    python3 bench/tolerance/rounding_model.py --heads 64                 # MHA: 64 = B x H of the main shape
    python3 bench/tolerance/rounding_model.py --heads 8 --group 8        # GQA 32x4 with B = 2: 8 KV heads
"""
import argparse

import numpy as np


def bf16(x):
    """Round to the nearest bf16, ties to even."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--heads", type=int, default=64, help="KV heads (B x Hkv)")
    ap.add_argument("--group", type=int, default=1, help="query heads per KV head")
    ap.add_argument("--keys", type=int, default=512)
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--atol", type=float, default=0.02)
    ap.add_argument("--rtol", type=float, default=0.01)
    ap.add_argument("--non-causal", action="store_true")
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    n, d, scale = a.keys, a.d, 1 / np.sqrt(a.d)
    worst = {"dV": [0.0, 0.0], "dK": [0.0, 0.0], "dQ": [0.0, 0.0]}
    for _ in range(a.heads):
        k, v = bf16(rng.standard_normal((n, d))), bf16(rng.standard_normal((n, d)))
        ref = {"dV": np.zeros((n, d)), "dK": np.zeros((n, d)), "dQ": np.zeros((a.group * n, d))}
        got = {"dV": np.zeros((n, d)), "dK": np.zeros((n, d)), "dQ": np.zeros((a.group * n, d))}
        for head in range(a.group):
            q, do = bf16(rng.standard_normal((n, d))), bf16(rng.standard_normal((n, d)))
            s = scale * (q @ k.T)
            if not a.non_causal:
                s[np.triu_indices(n, 1)] = -np.inf
            m = s.max(1, keepdims=True)
            p = np.exp(s - m) / np.exp(s - m).sum(1, keepdims=True)
            o = bf16(p @ v)
            ds = p * (do @ v.T - (o * do).sum(1, keepdims=True))
            ref["dV"] += p.T @ do
            got["dV"] += bf16(p).T @ do
            ref["dK"] += scale * (ds.T @ q)
            got["dK"] += scale * (bf16(ds).T @ q)
            rows = slice(head * n, (head + 1) * n)  # each query head's own dQ: no head sums them
            ref["dQ"][rows] = scale * (ds @ k)
            got["dQ"][rows] = scale * (bf16(ds) @ k)
        for name in worst:
            err = np.abs(got[name] - ref[name])
            worst[name][0] = max(worst[name][0], err.max())
            worst[name][1] = max(worst[name][1], (err / (a.atol + a.rtol * np.abs(ref[name]))).max())
    for name, (err, ratio) in worst.items():
        print(f"{name}: largest error {err:.4f}, {ratio:.2f} of atol {a.atol} + rtol {a.rtol} |ref|")


if __name__ == "__main__":
    main()
