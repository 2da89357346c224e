#!/usr/bin/env python3
"""The largest error a correct tensor-core attention makes on the causal tasks' outputs: dQ, dK and dV, or O.

A float64 model of the one rounding every tensor-core backward does: P and dS are rounded to bf16 before the
GEMMs that make dV = P^T dO, dK = scale dS^T Q and dQ = scale dS K; the bf16 outputs are rounded once; everything
else is exact. `--p-rounded-ds` also makes dS from P as rounded for dV, as a kernel short of registers does (the
reference backward at D = 64). `--forward` models the forward's O instead: P as the kernel holds it before the
division by the row sum, exp(s - max), rounded to bf16 for the P V GEMM, the row sum in fp32 from the unrounded P.
Inputs as the runner makes them: Q, K, V, dO ~ N(0, 1) in bf16, scale 1/sqrt(D), O the bf16 forward. Only the
first keys of a causal head collect large probabilities, so the first `keys` keys and queries of each head stand
for the main shape.
Prints, per output, the largest error over every element and head, and its ratio to atol + rtol |ref| for the
tolerance given, in each of `--trials` trials (fresh inputs each, as the time stage checks every timed call), and
the largest over them. docs/tasks.md quotes its figures.

    python3 bench/tolerance/rounding_model.py --heads 64                 # MHA: 64 = B x H of the main shape
    python3 bench/tolerance/rounding_model.py --heads 8 --group 8        # GQA 32x4 with B = 2: 8 KV heads
    python3 bench/tolerance/rounding_model.py --heads 128 --d 64 --p-rounded-ds --trials 53  # the d64 time stage
    python3 bench/tolerance/rounding_model.py --forward --atol 0.01 --heads 128 --d 256 --trials 53
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
    ap.add_argument("--p-rounded-ds", action="store_true", help="dS = bf16(P) (dP - Delta)")
    ap.add_argument("--forward", action="store_true", help="the forward's O, not the backward's outputs")
    ap.add_argument("--trials", type=int, default=1)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    overall = {}
    for trial in range(a.trials):
        worst = one_trial(rng, a)
        print(f"trial {trial}: " + ", ".join(f"{k} {e:.4f} ({r:.2f})" for k, (e, r) in worst.items()), flush=True)
        for name, (err, ratio) in worst.items():
            best = overall.get(name, (0.0, 0.0))
            overall[name] = (max(best[0], err), max(best[1], ratio))
    for name, (err, ratio) in overall.items():
        print(f"{name}: largest error {err:.4f}, {ratio:.2f} of atol {a.atol} + rtol {a.rtol} |ref|")


def one_trial(rng, a):
    """The largest error and ratio to the tolerance of each output over `a.heads` heads of fresh inputs."""
    n, d, scale = a.keys, a.d, 1 / np.sqrt(a.d)
    worst = {"O": [0.0, 0.0]} if a.forward else {"dV": [0.0, 0.0], "dK": [0.0, 0.0], "dQ": [0.0, 0.0]}
    for _ in range(a.heads):
        k, v = bf16(rng.standard_normal((n, d))), bf16(rng.standard_normal((n, d)))
        ref = {"dV": np.zeros((n, d)), "dK": np.zeros((n, d)), "dQ": np.zeros((a.group * n, d)),
               "O": np.zeros((a.group * n, d))}
        got = {name: np.zeros_like(value) for name, value in ref.items()}
        for head in range(a.group):
            q, do = bf16(rng.standard_normal((n, d))), bf16(rng.standard_normal((n, d)))
            s = scale * (q @ k.T)
            if not a.non_causal:
                s[np.triu_indices(n, 1)] = -np.inf
            m = s.max(1, keepdims=True)
            p = np.exp(s - m) / np.exp(s - m).sum(1, keepdims=True)
            rows = slice(head * n, (head + 1) * n)  # each query head's own dQ and O: no head sums them
            if a.forward:
                held = np.exp(s - m)
                ref["O"][rows] = p @ v
                got["O"][rows] = (bf16(held) @ v) / held.sum(1, keepdims=True)
                continue
            o = bf16(p @ v)
            dp_delta = do @ v.T - (o * do).sum(1, keepdims=True)
            ds = p * dp_delta
            ds_kernel = bf16((bf16(p) if a.p_rounded_ds else p) * dp_delta)
            ref["dV"] += p.T @ do
            got["dV"] += bf16(p).T @ do
            ref["dK"] += scale * (ds.T @ q)
            got["dK"] += scale * (ds_kernel.T @ q)
            ref["dQ"][rows] = scale * (ds @ k)
            got["dQ"][rows] = scale * (ds_kernel @ k)
        for name in worst:
            err = np.abs(bf16(got[name]) - ref[name])  # the outputs are bf16
            worst[name][0] = max(worst[name][0], err.max())
            worst[name][1] = max(worst[name][1], (err / (a.atol + a.rtol * np.abs(ref[name]))).max())
    return worst


if __name__ == "__main__":
    main()
