#!/usr/bin/env python3
"""Writes every task file under tasks/ as family x shapes x architecture, from the compact spec below.

    python3 tasks/generate.py           rewrites tasks/<arch>/*.json
    python3 tasks/generate.py --check   exits 1, naming the files, when any differs from what it would write

The files are checked in (the task loader reads them, docs/tasks.md says what each field means); a CPU test runs
--check, so an edit to a file that is not made here fails. What a family says (its dimensions, tensors, FLOPs)
is its descriptor's (src/family), never a task file's.
"""
import json
import pathlib
import sys

# ---- the spec

ROOT = pathlib.Path(__file__).resolve().parent.parent
# The architectures: their profiles (arch/*.json, which src/arch/profile.h reads too), each folder of task files
# named after its profile without the underscore ("sm90a").
PROFILES = [json.loads((ROOT / "arch" / f"{name}.json").read_text()) for name in ("sm_90a", "sm_100a")]
COMMON = json.loads((ROOT / "arch" / "common.json").read_text())["families"]
ARCHITECTURES = [{"arch": p["name"], "folder": p["name"].replace("_", ""), "name": p["marketing"],
                  "mode": p["runtime"], "tracks": p["tracks"], "math": p["math"], "runs": p["runs"]}
                 for p in PROFILES]


def family(key):
    """A family every architecture shares (arch/common.json), as a task file's "required" entry."""
    return {k: COMMON[key][k] for k in ("name", "ptx", "sass")}


# Every task but the decodes requires, beside the architecture's MMA (which does the math), TMA tensor loads and
# mbarrier waits; a decode requires bulk copies (tensor or not) and mbarrier waits.
TMA, MBARRIER, BULK_COPY = family("tma"), family("mbarrier"), family("bulk-copy")

# Task groups (run, report and fixit --tasks @name): every GEMM; dense attention; grouped-query attention, which
# serving runs; the generalisation split held out of fine-tuning data (GQA, and the d96 backward).
GROUPS = {
    "gemm": lambda family, t: family == "gemm",
    "gemm-models": lambda family, t: family == "gemm" and (t["N"], t["K"]) in MODEL_WEIGHTS,
    "attention-dense": lambda family, t: family.startswith("attention") and t["Hq"] == t["Hkv"],
    "gqa-serving": lambda family, t: family.startswith("attention") and t["Hq"] != t["Hkv"],
    "held-out": lambda family, t: family in ("attention-forward", "attention-backward") and (
        t["Hq"] != t["Hkv"] or (family == "attention-backward" and t["D"] == 96)),
}

# GEMM: real models' weight shapes, timed at M = 8192, checked at a small and an odd M.
GEMM = {
    "weights": [
        {"N": 28672, "K": 4096, "what": "an MLP up-projection (wide N)"},
        {"N": 4096, "K": 14336, "what": "an MLP down-projection (long K)"},
        {"N": 4096, "K": 4096, "what": "a square layer"},
        {"N": 7168, "K": 5120, "what": "the MLP/attention output projection size of a large model"},
    ],
    "main_m": 8192,
    "checks": [{"label": "small-m", "M": 128}, {"label": "odd-m", "M": 1999}],
    "tolerance": {"rtol": 0.01, "atol": 0.01},
    "coverage_threshold": 0.95,
    "baseline": "cublaslt",
}

# GEMM at the weight shapes of the models serving workloads run (N x K, as PTXBench's GEMM problems list them),
# each timed at three M of those workloads: decode-like (70-93 rows: memory-bound, the weight read once), a
# mid-sized batch (about 900-972) and a large prefill (8192 or 8828). The four weights above at M = 8192 keep
# their ids (gemm-bf16-n*-k*); the others are gemm-m<M>-n<N>-k<K>.
MODEL_GEMM = [  # (N, K, the three M)
    (128, 2048, (93, 952, 8828)), (2048, 4096, (93, 952, 8828)), (2048, 5376, (70, 901, 8828)),
    (21504, 5376, (70, 901, 8828)), (256, 7168, (80, 901, 8192)), (28672, 4096, (70, 972, 8192)),
    (34816, 5120, (70, 972, 8192)), (4096, 14336, (70, 972, 8192)), (4096, 4096, (70, 972, 8192)),
    (4096, 5376, (70, 901, 8828)), (5120, 17408, (70, 972, 8192)), (5120, 2048, (93, 952, 8828)),
    (5120, 5120, (70, 972, 8192)), (5376, 21504, (70, 901, 8828)), (5376, 4096, (70, 901, 8828)),
    (6144, 4096, (70, 972, 8192)), (7168, 5120, (70, 972, 8192)),
]
MODEL_WEIGHTS = {(n, k) for n, k, _ in MODEL_GEMM}

# Attention, forward and backward: Sq = Sk = 4096 with B and the heads chosen so that the causal forward has
# 2.25e11 FLOPs or more (docs/tasks.md); checked at 1000 (partial tiles) and 512 x 1536 (Sq != Sk).
ATTENTION = {
    "heads": [
        {"D": 64, "B": 4, "Hq": 32, "Hkv": 32, "check_B": 2, "check_H": 4, "causal": [False, True]},
        {"D": 96, "B": 4, "Hq": 24, "Hkv": 24, "check_B": 2, "check_H": 4, "causal": [False, True]},
        {"D": 128, "B": 4, "Hq": 16, "Hkv": 16, "check_B": 2, "check_H": 4, "causal": [False, True]},
        {"D": 128, "B": 2, "Hq": 32, "Hkv": 4, "check_B": 1, "check_H": 32, "causal": [True]},
    ],
    "S": 4096,
    # Long-context prefill: the causal d128 forward and backward at other sequence lengths, B chosen for about the
    # same work as at 4096 (ids end in -s<S>); and the causal forward at D = 256 (Gemma's head dim, 16 heads), the
    # forward only (abi.h), with 2.75e11 FLOPs or more.
    "lengths": [{"D": 128, "B": 16, "Hq": 16, "Hkv": 16, "check_B": 2, "check_H": 4, "causal": [True], "S": 2048},
                {"D": 128, "B": 2, "Hq": 16, "Hkv": 16, "check_B": 2, "check_H": 4, "causal": [True], "S": 8192},
                {"D": 128, "B": 1, "Hq": 16, "Hkv": 16, "check_B": 2, "check_H": 4, "causal": [True], "S": 16384},
                {"D": 256, "B": 8, "Hq": 16, "Hkv": 16, "check_B": 2, "check_H": 4, "causal": [True], "S": 2048,
                 "directions": ["forward"]},
                {"D": 256, "B": 1, "Hq": 16, "Hkv": 16, "check_B": 2, "check_H": 4, "causal": [True], "S": 8192,
                 "directions": ["forward"]},
                {"D": 256, "B": 1, "Hq": 16, "Hkv": 16, "check_B": 2, "check_H": 4, "causal": [True], "S": 16384,
                 "directions": ["forward"]}],
    "checks": [{"label": "seq-1000", "Sq": 1000, "Sk": 1000, "one_batch": False},
               {"label": "sq512-sk1536", "Sq": 512, "Sk": 1536, "one_batch": True}],
    # The reasoning and the measurements behind each: docs/tasks.md.
    "tolerance": {("forward", False): {"rtol": 0.01, "atol": 0.002}, ("forward", True): {"rtol": 0.01, "atol": 0.01},
                  ("backward", False): {"rtol": 0.01, "atol": 0.002},
                  ("backward", True): {"rtol": 0.01, "atol": 0.02}},
    "lse": {"rtol": 0, "atol": 0.001},
    "gqa_backward_dk_dv": {"rtol": 0.01, "atol": 0.04},
    # dQ and dK take dS, rounded once more than dV's P (and P itself before dS, in a kernel short of registers).
    "causal_backward_dq_dk": {"rtol": 0.01, "atol": 0.04},
    "coverage_threshold": 0.9,
    "baseline": "vendor-attention",
}

# Decode over a paged KV cache: a batch of 64 sequences of 1..8192 tokens, 262144 in all (a mean of 4096), in pages
# of 1 token (vLLM's and FlashInfer's page size 1) or 64; the KV cache read is 0.5-1 GiB, far past the L2, so the
# time is bounded by HBM. Checked on ragged batches whose last pages are partial. No MMA is required: a KV head's
# group of 4 or 8 query rows is below wgmma's 64 (docs/tasks.md); the pages arrive by bulk copies (tensor or not).
DECODE = {
    "heads": [(32, 8, 128, 1), (32, 8, 128, 64), (32, 4, 128, 64), (64, 8, 128, 64)],  # Hq, Hkv, D, page
    "main": {"B": 64, "L": 8192, "T": 262144},
    "checks": [{"label": "ragged-1000", "B": 5, "L": 1000, "T": 2100},
               {"label": "short-77", "B": 3, "L": 77, "T": 100}],
    # The causal forward's: a sequence of 2 to 16 tokens is a causal forward's second to 16th row (docs/tasks.md).
    "tolerance": {"rtol": 0.01, "atol": 0.01},
    "lse": {"rtol": 0, "atol": 0.001},
    "baseline": "none",
}

# Ragged prefill, causal: a batch of 16 prompts packed token after token, 4 of 4096 tokens and 12 of 1000 (28384 in
# all), in an order drawn per call; checked on batches with short sequences and sequences of one token. The
# instructions, coverage and tolerances are the dense causal forward's.
PREFILL = {
    "heads": [(32, 8, 128), (16, 16, 128)],  # Hq, Hkv, D
    "main": {"B": 16, "Bl": 4, "L": 4096, "S": 1000},
    "checks": [{"label": "ragged-300", "B": 5, "Bl": 2, "L": 300, "S": 77},
               {"label": "one-token", "B": 3, "Bl": 1, "L": 130, "S": 1}],
}

# Paged prefill, causal: a batch of 16 sequences, each after a cached prefix of 2048 tokens, 4 of them with 2048 new
# tokens and 12 with 512 (a chunked prefill, or prompts whose prefix is shared), in an order and on pages drawn per
# call; pages of 16 tokens (vLLM's default block) or 64. Checked on batches whose pages end partly filled, with a
# prefix of one token (nearly the ragged prefill over pages; a dimension is never 0) and with one new token after a
# long prefix (a decode row).
PAGED_PREFILL = {
    "heads": [(32, 8, 128, 16), (32, 8, 128, 64)],  # Hq, Hkv, D, page
    "main": {"B": 16, "Bl": 4, "L": 2048, "S": 512, "P": 2048},
    "checks": [{"label": "ragged-300", "B": 5, "Bl": 2, "L": 300, "S": 77, "P": 130},
               {"label": "prefix-1", "B": 3, "Bl": 1, "L": 130, "S": 1, "P": 1},
               {"label": "one-token", "B": 2, "Bl": 1, "L": 64, "S": 1, "P": 1000}],
}

# ---- the files


def required(arch):
    return [dict(name=arch["math"]["name"], ptx=arch["math"]["ptx"], sass=arch["math"]["sass"], does_the_math=True),
            TMA, MBARRIER]


def header(task_id, title, family, arch):
    task = {"id": task_id, "title": f"{title} ({arch['name']})", "family": family, "arch": arch["arch"],
            "dtype": "bf16", "mode": arch["mode"]}
    task["tracks"] = arch["tracks"]
    return task


def math_label(arch):
    return f"{arch['math']['name']} ({arch['math']['sass'][0]})"


def gemm_task(arch, m, n, k, what):
    named = (m == GEMM["main_m"] and any((w["N"], w["K"]) == (n, k) for w in GEMM["weights"]))
    task_id = f"gemm-bf16-n{n}-k{k}-{arch['folder']}" if named else f"gemm-m{m}-n{n}-k{k}-{arch['folder']}"
    title = f"bf16 GEMM C = A * B^T, N={n} K={k}" if named else f"bf16 GEMM C = A * B^T, M={m} N={n} K={k}"
    task = header(task_id, title, "gemm", arch)
    task["description"] = (
        f"y = x W^T for a weight of {n} x {k}, {what}. A is M x {k}, B is {n} x {k}, C is M x {n}, all bf16 "
        f"and row-major; accumulate in fp32. The solution must execute {math_label(arch)}, TMA tensor loads and "
        f"mbarrier waits. {arch['runs']}")
    task["shapes"] = {"main": {"M": m, "N": n, "K": k},
                      "check": [{"label": c["label"], "M": c["M"], "N": n, "K": k} for c in GEMM["checks"]]}
    task["tolerance"] = GEMM["tolerance"]
    task["required"] = required(arch)
    task["coverage_threshold"] = GEMM["coverage_threshold"]
    task["baseline"] = GEMM["baseline"]
    return task


def gemm_tasks(arch):
    for w in GEMM["weights"]:
        yield gemm_task(arch, GEMM["main_m"], w["N"], w["K"], w["what"])
    for n, k, ms in MODEL_GEMM:
        for m in ms:
            if m == GEMM["main_m"] and any((w["N"], w["K"]) == (n, k) for w in GEMM["weights"]):
                continue  # one of the four above
            what = ("at a decode-like M, where reading the weight bounds the time" if m < 128 else
                    "at a mid-sized batch" if m < 2048 else "at a large prefill batch")
            yield gemm_task(arch, m, n, k, f"a layer of a served model, timed {what}")


def attention_tasks(arch):
    for direction in ("forward", "backward"):
        for h in ATTENTION["heads"] + ATTENTION["lengths"]:
            if direction not in h.get("directions", ("forward", "backward")):
                continue
            s = h.get("S", ATTENTION["S"])
            length = f"-s{s}" if "S" in h else ""
            for causal in h["causal"]:
                d, gqa = h["D"], h["Hq"] != h["Hkv"]
                name = f"gqa{h['Hq']}x{h['Hkv']}-d{d}" if gqa else f"d{d}"
                short = "fwd" if direction == "forward" else "bwd"
                task_id = f"attention-{short}-{name}{'-causal' if causal else ''}{length}-{arch['folder']}"
                what = "Attention forward with LSE" if direction == "forward" else "Attention backward"
                heads = f"GQA {h['Hq']}/{h['Hkv']} D={d}" if gqa else f"D={d}"
                task = header(task_id, f"{what}, {heads}{', causal' if causal else ''}{f', S={s}' if length else ''}",
                              f"attention-{direction}", arch)
                computes = ("Attention forward: O = softmax(scale * Q K^T) V and the log-sum-exp LSE of each row"
                            if direction == "forward" else
                            "Attention backward: dQ, dK, dV from Q, K, V, O, LSE and dO, with a workspace the "
                            "solution sizes")
                grouping = (f"grouped-query attention, {h['Hq']} query heads over {h['Hkv']} KV heads (query head h "
                            f"uses KV head h / {h['Hq'] // h['Hkv']})" if gqa else "multi-head attention (Hq = Hkv)")
                mask = ("causal, aligned to the bottom-right when Sq != Sk (query i sees key j iff j <= i + Sk - Sq)"
                        if causal else "no mask")
                checks = ATTENTION["checks"]
                task["description"] = (
                    f"{computes}; {grouping}; head dim {d}; {mask}; scale = 1/sqrt({d}). Q is [B,Sq,Hq,D], K and V "
                    f"[B,Sk,Hkv,D], O like Q, all bf16 and row-major; LSE is [B,Hq,Sq] fp32 (natural log). "
                    f"Accumulate in fp32. The main shape has Sq = Sk = {s}; check shapes have Sq = Sk = "
                    f"{checks[0]['Sq']} (not a multiple of 128) and Sq = {checks[1]['Sq']}, Sk = {checks[1]['Sk']}. "
                    f"The solution must execute {math_label(arch)} for the matmuls, TMA tensor loads and mbarrier "
                    f"waits. {arch['runs']}")
                task["parameters"] = {"causal": causal}
                hq, hkv = (h["Hq"], h["Hkv"]) if gqa else (h["check_H"], h["check_H"])
                task["shapes"] = {
                    "main": {"B": h["B"], "Hq": h["Hq"], "Hkv": h["Hkv"], "Sq": s, "Sk": s, "D": d},
                    "check": [{"label": c["label"], "B": 1 if c["one_batch"] else h["check_B"], "Hq": hq,
                               "Hkv": hkv, "Sq": c["Sq"], "Sk": c["Sk"], "D": d} for c in checks]}
                task["tolerance"] = ATTENTION["tolerance"][(direction, causal)]
                if direction == "forward":
                    task["tolerances"] = {"LSE": ATTENTION["lse"]}
                else:
                    overrides = {k: ATTENTION["causal_backward_dq_dk"] for k in ("dQ", "dK") if causal}
                    overrides.update({k: ATTENTION["gqa_backward_dk_dv"] for k in ("dK", "dV") if gqa})
                    if overrides:
                        task["tolerances"] = overrides
                task["required"] = required(arch)
                task["coverage_threshold"] = ATTENTION["coverage_threshold"]
                task["baseline"] = ATTENTION["baseline"]
                yield task


def decode_tasks(arch):
    main = DECODE["main"]
    for hq, hkv, d, page in DECODE["heads"]:
        task = header(f"attention-decode-gqa{hq}x{hkv}-d{d}-p{page}-{arch['folder']}",
                      f"Paged decode attention, GQA {hq}/{hkv} D={d}, pages of {page}", "attention-decode-paged", arch)
        checks = DECODE["checks"]
        task["description"] = (
            f"Decode attention over a paged KV cache: one query token per sequence attends to every token of its "
            f"sequence, O = softmax(scale * q K^T) V and LSE; grouped-query attention, {hq} query heads over {hkv} "
            f"KV heads (query head h uses KV head h / {hq // hkv}); head dim {d}; scale = 1/sqrt({d}). Q and O are "
            f"[B,Hq,D] bf16, LSE [B,Hq] fp32 (natural log); K_cache and V_cache are [num_pages,{page},Hkv,D] bf16, "
            f"a pool of pages of {page} token{'s' if page > 1 else ''}; sequence b has seq_lens[b] tokens, token t "
            f"in page page_table[b][t/{page}] (page_table [B,max_pages] int32, -1 past a sequence's last page). "
            f"The lengths and the pages differ in every call. The main shape has {main['B']} sequences of 1 to "
            f"{main['L']} tokens, {main['T']} in all; check shapes are ragged batches of {checks[0]['B']} and "
            f"{checks[1]['B']} sequences (at most {checks[0]['L']} and {checks[1]['L']} tokens). Accumulate in "
            f"fp32. The solution must load the cache with bulk copies (cp.async.bulk, tensor or not) completing on "
            f"mbarriers. {arch['runs']}"
            + (" Its speed is the share of the HBM bandwidth reached: no vendor kernel of it is timed."
               if arch["mode"] == "full" else ""))
        task["shapes"] = {"main": {"B": main["B"], "Hq": hq, "Hkv": hkv, "D": d, "page": page, "L": main["L"],
                                   "T": main["T"]},
                          "check": [{"label": c["label"], "B": c["B"], "Hq": hq, "Hkv": hkv, "D": d, "page": page,
                                     "L": c["L"], "T": c["T"]} for c in checks]}
        task["tolerance"] = DECODE["tolerance"]
        task["tolerances"] = {"LSE": DECODE["lse"]}
        task["required"] = [BULK_COPY, MBARRIER]
        task["baseline"] = DECODE["baseline"]
        yield task


def prefill_tasks(arch):
    main = PREFILL["main"]
    for hq, hkv, d in PREFILL["heads"]:
        gqa = hq != hkv
        name = f"gqa{hq}x{hkv}-d{d}" if gqa else f"d{d}"
        task = header(f"attention-prefill-ragged-{name}-{arch['folder']}",
                      f"Ragged causal prefill, {f'GQA {hq}/{hkv} ' if gqa else ''}D={d}", "attention-prefill-ragged",
                      arch)
        checks = PREFILL["checks"]
        grouping = (f"grouped-query attention, {hq} query heads over {hkv} KV heads (query head h uses KV head "
                    f"h / {hq // hkv})" if gqa else "multi-head attention (Hq = Hkv)")
        task["description"] = (
            f"Ragged prefill: causal self-attention of each sequence of a batch packed token after token, O and the "
            f"log-sum-exp LSE of each row; {grouping}; head dim {d}; scale = 1/sqrt({d}). Q and O are [T,Hq,D], K "
            f"and V [T,Hkv,D], bf16; LSE is [T,Hq] fp32 (natural log); sequence b is tokens indptr[b] .. "
            f"indptr[b+1]-1 (indptr [B+1] int32), and its token i sees its tokens 0..i. The order of the sequences "
            f"differs in every call. The main shape has {main['B']} sequences, {main['Bl']} of {main['L']} tokens "
            f"and the others of {main['S']}; check shapes have sequences of {checks[0]['L']} and {checks[0]['S']} "
            f"tokens, and of {checks[1]['L']} and {checks[1]['S']}. Accumulate in fp32. The solution must execute "
            f"{math_label(arch)} for the matmuls, TMA tensor loads and mbarrier waits. {arch['runs']}")
        task["shapes"] = {"main": {"B": main["B"], "Hq": hq, "Hkv": hkv, "D": d, "L": main["L"], "S": main["S"],
                                   "Bl": main["Bl"]},
                          "check": [{"label": c["label"], "B": c["B"], "Hq": hq, "Hkv": hkv, "D": d, "L": c["L"],
                                     "S": c["S"], "Bl": c["Bl"]} for c in checks]}
        task["tolerance"] = ATTENTION["tolerance"][("forward", True)]
        task["tolerances"] = {"LSE": ATTENTION["lse"]}
        task["required"] = required(arch)
        task["coverage_threshold"] = ATTENTION["coverage_threshold"]
        task["baseline"] = ATTENTION["baseline"]  # FlashAttention-2's varlen forward (the family's descriptor)
        yield task


def paged_prefill_tasks(arch):
    main = PAGED_PREFILL["main"]
    for hq, hkv, d, page in PAGED_PREFILL["heads"]:
        gqa = hq != hkv
        name = f"gqa{hq}x{hkv}-d{d}" if gqa else f"d{d}"
        task = header(f"attention-prefill-paged-{name}-p{page}-{arch['folder']}",
                      f"Paged causal prefill, {f'GQA {hq}/{hkv} ' if gqa else ''}D={d}, pages of {page}",
                      "attention-prefill-paged", arch)
        checks = PAGED_PREFILL["checks"]
        grouping = (f"grouped-query attention, {hq} query heads over {hkv} KV heads (query head h uses KV head "
                    f"h / {hq // hkv})" if gqa else "multi-head attention (Hq = Hkv)")
        task["description"] = (
            f"Paged prefill: the new tokens of each sequence of a batch attend, causally, to the sequence's tokens in "
            f"a paged KV cache (its cached prefix, then the new tokens themselves), O and the log-sum-exp LSE of each "
            f"row; {grouping}; head dim {d}; scale = 1/sqrt({d}). Q and O are [total_q,Hq,D] bf16, the new tokens "
            f"packed by qo_indptr [B+1]; LSE is [total_q,Hq] fp32 (natural log); K_cache and V_cache are "
            f"[num_pages,{page},Hkv,D] bf16, sequence b's token t in page page_table[b][t/{page}] (page_table "
            f"[B,max_pages] int32, -1 past its last page), kv_lens[b] tokens in all. New token i of n sees the "
            f"tokens j <= kv_lens[b] - n + i. The order of the sequences and their pages differ in every call. The "
            f"main shape has {main['B']} sequences after prefixes of {main['P']} tokens, {main['Bl']} with "
            f"{main['L']} new tokens and the others with {main['S']}; check shapes have partly filled last pages, "
            f"a prefix of one token, and one new token after a prefix of {checks[2]['P']}. Accumulate in fp32. The solution must "
            f"execute {math_label(arch)} for the matmuls, TMA tensor loads and mbarrier waits. {arch['runs']}")
        task["shapes"] = {"main": {"B": main["B"], "Hq": hq, "Hkv": hkv, "D": d, "page": page, "L": main["L"],
                                   "S": main["S"], "Bl": main["Bl"], "P": main["P"]},
                          "check": [{"label": c["label"], "B": c["B"], "Hq": hq, "Hkv": hkv, "D": d, "page": page,
                                     "L": c["L"], "S": c["S"], "Bl": c["Bl"], "P": c["P"]} for c in checks]}
        task["tolerance"] = ATTENTION["tolerance"][("forward", True)]
        task["tolerances"] = {"LSE": ATTENTION["lse"]}
        task["required"] = required(arch)
        task["coverage_threshold"] = ATTENTION["coverage_threshold"]
        task["baseline"] = "none"
        yield task


def with_groups(task):
    main = task["shapes"]["main"]
    task["groups"] = [name for name, member in GROUPS.items() if member(task["family"], main)]
    return task


def all_files(root):
    files = {}
    for arch in ARCHITECTURES:
        for task in map(with_groups, [*gemm_tasks(arch), *attention_tasks(arch), *decode_tasks(arch), *prefill_tasks(arch),
                                       *paged_prefill_tasks(arch)]):
            files[root / arch["folder"] / f"{task['id']}.json"] = json.dumps(task, indent=2) + "\n"
    return files


def main():
    root = pathlib.Path(__file__).resolve().parent
    check = sys.argv[1:] == ["--check"]
    if sys.argv[1:] not in ([], ["--check"]):
        sys.exit("usage: generate.py [--check]")
    files = all_files(root)
    existing = set(root.glob("*/*.json"))
    stale = sorted(str(p.relative_to(root)) for p in existing - files.keys())
    differ = sorted(str(p.relative_to(root)) for p, text in files.items()
                    if not p.exists() or p.read_text() != text)
    if check:
        if stale or differ:
            print("tasks/generate.py --check: the task files are not what tasks/generate.py writes "
                  f"(run it): differ {differ}, not generated {stale}", file=sys.stderr)
            sys.exit(1)
        print(f"tasks/generate.py --check: {len(files)} task files as generated")
        return
    for path in stale:
        (root / path).unlink()
    for path, text in files.items():
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    print(f"wrote {len(files)} task files ({len(differ)} changed, {len(stale)} removed)")


if __name__ == "__main__":
    main()
