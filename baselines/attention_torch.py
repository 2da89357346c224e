#!/usr/bin/env python3
"""The survey of vendor attentions for ptxbench's attention tasks: each one checked and timed on this GPU, the
fastest correct one named.

bench/attention-baselines.sh runs it for every task; it chose cuDNN on every Hopper task, which is why the time
stage's baseline is baselines/attention_cudnn.py (run by the runner beside the solution, alternating with it).

    echo '{"direction": "forward", "dims": {"B": 4, "Hq": 16, "Hkv": 16, "Sq": 4096, "Sk": 4096, "D": 128},
           "causal": true, "scale": 0.08838834764831845, "warmup": 10, "repetitions": 50}' |
        python3 baselines/attention_torch.py

Input, one JSON object on stdin: direction ("forward" | "backward"), dims (B, Hq, Hkv, Sq, Sk, D), causal,
scale (default 1/sqrt(D)), warmup (default 10), repetitions (default 50), l2_flush_bytes (default: sized from
the device's L2 as the runner sizes it) and device (default 0).
Output, one JSON object on stdout (logs go to stderr): the chosen baseline as the runner's Series ("event_us" and
"wall_us" statistics in microseconds, "tflops", "tflops_wall") with its "name", "backend", "method" and "gqa",
the versions of torch and cuDNN, the GPU, and every candidate with its "status" ("ok", "unsupported", "wrong",
"error"), "message", timing and "max_error". Exit status 0 with that; 1 with {"error": ...} when no vendor
attention is usable here (torch not importable, no GPU, no candidate passed); 2 for a bad request.

Candidates: PyTorch SDPA's cuDNN, Flash and memory-efficient attention. Each is called through its aten op
(torch.ops.aten._scaled_dot_product_{cudnn,flash,efficient}_attention and their _backward ops), which does
exactly the task's work and nothing more:
  - forward: O and the LSE (the ops are asked for it, as a solution must write it);
  - backward: dQ, dK, dV from Q, K, V, O, LSE and dO, where O and LSE come from the same backend's forward,
    run once before timing (a solution gets them from the harness: in both cases they are inputs).
Where an op cannot be called (its signature changed between torch versions), the public API is the fallback:
F.scaled_dot_product_attention under sdpa_kernel(backend) on inputs that require grad (so the forward also
writes the LSE), and for the backward torch.autograd.grad of an output computed once before timing; that path
also counts the autograd engine's host overhead. "method" says which path was timed.

Layout: ptxbench's tensors are [B, S, H, D] and SDPA's [B, H, S, D]: the inputs are .transpose(1, 2) views of
[B, S, H, D] tensors, nothing is copied and D stays contiguous. Layout copies an op makes itself are its own
work and are timed with it.

GQA (Hq > Hkv): K and V with Hkv heads where the backend takes them (cuDNN and Flash; "gqa": "native"), else
repeated to Hq heads before timing ("expanded"; for the backward, summing the expanded dK, dV back to Hkv heads is
not timed either, though a solution must do it).

Causal: the ABI aligns the mask to the bottom-right; the ops' is_causal to the top-left. They agree when
Sq == Sk (every main shape); causal with Sq != Sk is refused as unsupported.

Correctness: before a candidate may be timed, it runs on one batch and one KV head (with its group of query
heads) at the main shape's D, causality and sequence lengths (at most CHECK_SEQUENCE), and its outputs are
compared with fp32 attention written out here as include/ptxbench/abi.h defines it (O and LSE; dQ, dK, dV). A candidate that disagrees is "wrong" and
never chosen; a candidate whose timed outputs at the main shape are not finite neither.

Timing mirrors the runner's (src/runner/session.cpp): warmup + 1 untimed calls (the first plans the kernel),
then for each of `repetitions` calls persisting L2 lines are reset to normal (cudaCtxResetPersistingL2Cache of
the CUDA runtime torch loaded, as the runner does before each timed call) and the L2 is flushed by writing
l2_flush_bytes on the stream, the device is
synchronised, CUDA events bracket the call alone and a host clock brackets the call plus a device
synchronisation; statistics over the calls (percentiles interpolate linearly, as numpy's). The GPU is idle when
the start event is recorded, so the call's host overhead (Python and the dispatcher, some microseconds) counts,
as a solution's launch latency does. The fastest correct candidate by event median is chosen. FLOPs: forward
4*B*Hq*Sq*Sk*D, backward 2.5 times that, both halved when causal (the tasks' formulas).
"""

import json
import math
import os
import sys
import time

BACKENDS = ("cudnn", "flash", "efficient")
# The backends whose kernels take K and V with fewer heads than Q (FlashAttention-2 checks Hq % Hkv, cuDNN's graph
# validates its shapes). The memory-efficient kernel is only ever given expanded K and V: a head count it does
# not expect could make it read out of bounds, and a CUDA fault would end every later candidate too.
NATIVE_GQA = ("cudnn", "flash")
DIMS = ("B", "Hq", "Hkv", "Sq", "Sk", "D")
# The check runs on one batch and one KV head (with its group of query heads) at the main shape's sequence
# lengths, up to CHECK_SEQUENCE: long enough that the errors are those of the timed shape, small enough for the
# fp32 reference to hold its score matrices.
CHECK_SEQUENCE = 4096
# The check's tolerances, |out - ref| <= atol + rtol * |ref|. It only has to catch a different problem (a wrong
# mask, scale or layout moves outputs by O(0.1..1)), not grade precision: a backward that rounds P and dS to bf16
# before its matmuls, as every fast one does, is off by a few hundredths on dK and dV. The fp32 LSE is off by
# ~1e-6; a wrong base or scale by far more than 2e-3. Each candidate's errors are also reported against the
# task's own tolerances when the request gives them ("tolerance", "tolerances").
BF16_RTOL, BF16_ATOL = 0.05, 0.05
LSE_ATOL = 0.002


def log(message):
    print(f"attention_torch: {message}", file=sys.stderr, flush=True)


def take_stdout():
    """The result channel: a private copy of stdout, with fd 1 pointed at stderr so that whatever torch, cuDNN
    or a library prints cannot mix with the one JSON object."""
    sys.stdout.flush()
    channel = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    return channel


def finite(value):
    """The document with every non-finite float as null: JSON has no NaN or Infinity."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite(v) for v in value]
    return value


def emit(channel, document, status):
    channel.write(json.dumps(finite(document)) + "\n")
    channel.flush()
    sys.exit(status)


# ---- request ---------------------------------------------------------------------------------------------


def read_request(text):
    request = json.loads(text)
    if not isinstance(request, dict):
        raise ValueError("the request must be a JSON object")
    if request.get("direction") not in ("forward", "backward"):
        raise ValueError('"direction" must be "forward" or "backward"')
    dims = request.get("dims")
    if not isinstance(dims, dict):
        raise ValueError('"dims" must be an object with ' + ", ".join(DIMS))
    for name in DIMS:
        value = dims.get(name)
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise ValueError(f'"dims.{name}" must be a positive integer')
    if dims["Hq"] % dims["Hkv"]:
        raise ValueError("Hq must be a multiple of Hkv")
    if not isinstance(request.get("causal"), bool):
        raise ValueError('"causal" must be true or false')
    counts = {"warmup": 10, "repetitions": 50, "device": 0}
    for name, default in counts.items():
        value = request.get(name, default)
        if not isinstance(value, int) or isinstance(value, bool) or value < (1 if name == "repetitions" else 0):
            raise ValueError(f'"{name}" must be a non-negative integer (repetitions: positive)')
        counts[name] = value
    flush = request.get("l2_flush_bytes")
    if flush is not None and (not isinstance(flush, int) or flush < 0):
        raise ValueError('"l2_flush_bytes" must be a non-negative integer or null')
    return {
        "direction": request["direction"],
        "dims": {name: dims[name] for name in DIMS},
        "causal": request["causal"],
        "scale": float(request.get("scale", 1.0 / math.sqrt(dims["D"]))),
        "l2_flush_bytes": flush,
        # optional, for reports: the task's tolerances, {"rtol", "atol"} and per output {"LSE": {...}}
        "tolerance": request.get("tolerance"),
        "tolerances": request.get("tolerances"),
        **counts,
    }


def task_flops(direction, dims, causal):
    flops = 4 * dims["B"] * dims["Hq"] * dims["Sq"] * dims["Sk"] * dims["D"]
    if direction == "backward":
        flops = flops * 5 // 2
    return flops // 2 if causal else flops


def runner_flush_bytes(l2_bytes):
    """The runner's choice (l2_flush_bytes in src/runner/session.cpp): twice the L2, at least 64 MiB."""
    return max(2 * l2_bytes, 64 << 20) // 16 * 16


# ---- the candidates' calls -------------------------------------------------------------------------------


def aten_forward(torch, backend, q, k, v, causal, scale):
    """The backend's forward op, asked for the LSE. Its whole result: [0] is O, [1] the LSE."""
    aten = torch.ops.aten
    if backend == "cudnn":  # (q, k, v, attn_bias, compute_log_sumexp, dropout_p, is_causal, return_debug_mask)
        return aten._scaled_dot_product_cudnn_attention(q, k, v, None, True, 0.0, causal, False, scale=scale)
    if backend == "flash":  # (q, k, v, dropout_p, is_causal, return_debug_mask); always writes the LSE
        return aten._scaled_dot_product_flash_attention(q, k, v, 0.0, causal, False, scale=scale)
    # (q, k, v, attn_bias, compute_log_sumexp, dropout_p, is_causal)
    return aten._scaled_dot_product_efficient_attention(q, k, v, None, True, 0.0, causal, scale=scale)


def aten_backward(torch, backend, fwd, q, k, v, do, causal, scale):
    """The backend's backward op from its forward's result `fwd` (O, LSE and what the op needs with them)."""
    aten = torch.ops.aten
    out, lse = fwd[0], fwd[1]
    if backend == "cudnn":
        # fwd: (out, lse, cum_seq_q, cum_seq_k, max_q, max_k, philox_seed, philox_offset, debug_attn_mask)
        return aten._scaled_dot_product_cudnn_attention_backward(
            do, q, k, v, out, lse, fwd[6], fwd[7], None, fwd[2], fwd[3], fwd[4], fwd[5], 0.0, causal, scale=scale)
    if backend == "flash":
        # fwd: (out, lse, cum_seq_q, cum_seq_k, max_q, max_k, rng_state, unused, debug_attn_mask)
        return aten._scaled_dot_product_flash_attention_backward(
            do, q, k, v, out, lse, fwd[2], fwd[3], fwd[4], fwd[5], 0.0, causal, fwd[6], fwd[7], scale=scale)
    # fwd: (out, lse, philox_seed, philox_offset); grad_input_mask: dQ, dK, dV, no bias gradient
    return aten._scaled_dot_product_efficient_attention_backward(
        do, q, k, v, None, out, lse, fwd[2], fwd[3], 0.0, [True, True, True, False], causal, scale=scale)[:3]


def aten_call(torch, backend, direction, q, k, v, do, causal, scale):
    if direction == "forward":
        def forward():
            result = aten_forward(torch, backend, q, k, v, causal, scale)
            return {"O": result[0], "LSE": result[1]}
        return forward
    fwd = aten_forward(torch, backend, q, k, v, causal, scale)  # once, untimed: the backward's O and LSE

    def backward():
        dq, dk, dv = aten_backward(torch, backend, fwd, q, k, v, do, causal, scale)[:3]
        return {"dQ": dq, "dK": dk, "dV": dv}
    return backward


def public_call(torch, backend, direction, q, k, v, do, causal, scale, gqa):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import torch.nn.functional as F
    kind = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION,
            "efficient": SDPBackend.EFFICIENT_ATTENTION}[backend]
    extra = {"enable_gqa": True} if gqa == "native" else {}
    q, k, v = (t.detach().requires_grad_() for t in (q, k, v))  # so that the forward writes the LSE too

    def forward():
        with sdpa_kernel(kind):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale, **extra)
    if direction == "forward":
        return lambda: {"O": forward()}  # the LSE is written but not returned: O alone is checked
    out = forward()  # once, untimed

    def backward():
        dq, dk, dv = torch.autograd.grad(out, (q, k, v), do, retain_graph=True)
        return {"dQ": dq, "dK": dk, "dV": dv}
    return backward


METHODS = {
    "aten": lambda backend, direction: f"torch.ops.aten._scaled_dot_product_{backend}_attention"
                                       + ("_backward" if direction == "backward" else ""),
    "sdpa": lambda backend, direction: "F.scaled_dot_product_attention"
                                       + (" + torch.autograd.grad" if direction == "backward" else ""),
}


def prepare(torch, backend, method, direction, x, causal, scale, gqa):
    """The candidate's call on the inputs `x`, made once: (call, its outputs). The call does exactly the timed
    work; what it needs first (K and V expanded, the forward the backward starts from) is done here, untimed."""
    q, k, v, do = (t.transpose(1, 2) for t in (x["Q"], x["K"], x["V"], x["dO"]))
    if gqa == "expanded":
        group = x["Q"].shape[2] // x["K"].shape[2]
        k, v = (t.repeat_interleave(group, dim=2).transpose(1, 2) for t in (x["K"], x["V"]))
    if method == "aten":
        call = aten_call(torch, backend, direction, q, k, v, do, causal, scale)
    else:
        call = public_call(torch, backend, direction, q, k, v, do, causal, scale, gqa)
    outputs = call()
    torch.cuda.synchronize()  # a failed launch surfaces here, in the caller's try
    return call, outputs


# ---- correctness -----------------------------------------------------------------------------------------


def make_inputs(torch, dims, direction, device, seed):
    """Q, K, V, dO ~ N(0, 1) in ptxbench's [B, S, H, D] layout, as the runner draws them."""
    generator = torch.Generator(device=device).manual_seed(seed)

    def normal(s, h):
        return torch.randn(dims["B"], s, h, dims["D"], generator=generator, device=device, dtype=torch.bfloat16)
    x = {"Q": normal(dims["Sq"], dims["Hq"]), "K": normal(dims["Sk"], dims["Hkv"]),
         "V": normal(dims["Sk"], dims["Hkv"])}
    x["dO"] = normal(dims["Sq"], dims["Hq"]) if direction == "backward" else x["Q"]  # the forward has no dO
    return x


def reference(torch, x, causal, scale, direction):
    """Attention in fp32 written out as include/ptxbench/abi.h defines it (no SDPA backend), [B, H, S, D]."""
    q, k, v, do = (t.float().transpose(1, 2) for t in (x["Q"], x["K"], x["V"], x["dO"]))
    group = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)  # query head h: KV head h/group
    s = scale * (q @ k.transpose(-1, -2))
    sq, sk = s.shape[-2:]
    if causal:  # bottom-right: key j visible to query i iff j <= i + (Sk - Sq)
        visible = torch.ones(sq, sk, dtype=torch.bool, device=s.device).tril(sk - sq)
        s = s.masked_fill(~visible, float("-inf"))
    row_max = s.amax(-1, keepdim=True)
    lse = row_max + torch.log(torch.exp(s - row_max).sum(-1, keepdim=True))
    p = torch.exp(s - lse)
    o = p @ v
    if direction == "forward":
        return {"O": o, "LSE": lse.squeeze(-1)}
    ds = p * (do @ v.transpose(-1, -2) - (do * o).sum(-1, keepdim=True))
    fold = lambda t: t.unflatten(1, (-1, group)).sum(2)  # summed over the query heads of each KV head
    return {"dQ": scale * (ds @ k), "dK": fold(scale * (ds.transpose(-1, -2) @ q)),
            "dV": fold(p.transpose(-1, -2) @ do)}


def as_reference_shape(name, out, ref):
    """A candidate's output in the reference's shape, or None: the LSE without padding or a trailing unit
    dimension, dK and dV of expanded K and V summed back to the KV heads."""
    out = out.float()
    if name == "LSE":
        while out.dim() > 3 and out.shape[-1] == 1:
            out = out.squeeze(-1)
        b, h, s = ref.shape
        if out.dim() == 3 and out.shape[:2] == (b, h) and out.shape[2] >= s:
            return out[:, :, :s]
        return None
    if name in ("dK", "dV") and out.dim() == 4 and out.shape[1] != ref.shape[1]:
        out = out.unflatten(1, (ref.shape[1], -1)).sum(2)
    return out if out.shape == ref.shape else None


def task_error_ratio(torch, outputs, ref, tolerance, tolerances):
    """The worst |out - ref| / (atol + rtol |ref|) per output under the task's tolerances (at most 1 passes)."""
    ratios = {}
    for name, expected in ref.items():
        actual = as_reference_shape(name, outputs[name], expected) if name in outputs else None
        if actual is None:
            continue
        t = tolerances.get(name, tolerance)
        bound = t["atol"] + t["rtol"] * expected.abs()
        ratios[name] = ((actual - expected).abs() / bound).max().item()
    return ratios


def compare(torch, outputs, ref):
    """(max abs error per output, worst error ratio (at most 1 passes), notes)."""
    errors, worst, notes = {}, 0.0, []
    for name, expected in ref.items():
        if name not in outputs:
            notes.append(f"{name} not returned by this path, not checked")
            continue
        actual = as_reference_shape(name, outputs[name], expected)
        if actual is None:
            shape = tuple(outputs[name].shape)
            if name == "LSE":
                notes.append(f"LSE of shape {shape} not compared")
                continue
            errors[name] = None
            worst = math.inf
            notes.append(f"{name} has shape {shape}, expected {tuple(expected.shape)}")
            continue
        rtol, atol = (0.0, LSE_ATOL) if name == "LSE" else (BF16_RTOL, BF16_ATOL)
        if not bool(torch.isfinite(actual).all()):
            errors[name], worst = None, math.inf
            notes.append(f"{name} has NaN or Inf")
            continue
        difference = (actual - expected).abs()
        errors[name] = difference.max().item()
        worst = max(worst, (difference / (atol + rtol * expected.abs())).max().item())
    return errors, worst, notes


def all_finite(torch, outputs):
    return all(bool(torch.isfinite(t.float()).all()) for name, t in outputs.items() if name != "LSE")


# ---- timing ----------------------------------------------------------------------------------------------


def percentile(ordered, fraction):
    position = fraction * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (position - below) * (ordered[above] - ordered[below])


def summarize(values):
    ordered = sorted(values)
    return {"median": percentile(ordered, 0.5), "min": ordered[0], "max": ordered[-1],
            "p10": percentile(ordered, 0.1), "p90": percentile(ordered, 0.9), "mean": sum(ordered) / len(ordered)}


def persisting_l2_reset():
    """cudaCtxResetPersistingL2Cache of the CUDA runtime this process loaded (torch's), or None."""
    import ctypes

    with open("/proc/self/maps") as maps:
        runtimes = sorted({line.split()[-1] for line in maps if "/libcudart.so" in line})
    for path in runtimes:
        reset = getattr(ctypes.CDLL(path), "cudaCtxResetPersistingL2Cache", None)
        if reset is not None:
            reset.restype = ctypes.c_int
            return reset
    return None


def time_calls(torch, call, warmup, repetitions, flush):
    """As the runner's time_one: persisting lines reset, flush, synchronise, then the events around the call
    alone."""
    for _ in range(warmup + 1):
        call()
    torch.cuda.synchronize()
    reset = persisting_l2_reset()
    if reset is None:
        log("no CUDA runtime with cudaCtxResetPersistingL2Cache found in this process: persisting L2 lines are "
            "not reset (the flush alone)")
    event_us, wall_us = [], []
    for i in range(repetitions):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        if reset is not None and reset() != 0:
            raise RuntimeError("cudaCtxResetPersistingL2Cache failed")
        flush.fill_(i)  # writes every byte of a buffer twice the L2: none of the call's data stays cached
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        start.record()
        call()
        stop.record()
        torch.cuda.synchronize()
        wall_us.append((time.perf_counter() - t0) * 1e6)
        event_us.append(start.elapsed_time(stop) * 1e3)
    return summarize(event_us), summarize(wall_us)


# ---- one candidate ---------------------------------------------------------------------------------------


def check_candidate(torch, backend, r, small, ref):
    """Finds a way to call the backend that passes the check: (method, gqa, entry fields) or (None, None, entry
    fields saying why not)."""
    if r["dims"]["Hq"] == r["dims"]["Hkv"]:
        gqa_modes = ("none",)
    else:
        gqa_modes = ("native", "expanded") if backend in NATIVE_GQA else ("expanded",)
    failures, wrong = [], []
    for gqa in gqa_modes:
        for method in METHODS:
            attempt = f"{method}, gqa {gqa}"
            try:
                _, outputs = prepare(torch, backend, method, r["direction"], small, r["causal"], r["scale"], gqa)
            except (TypeError, AttributeError, NameError, ImportError) as e:  # not this path (torch's API)
                failures.append(f"{attempt}: {type(e).__name__}: {e}")
                continue
            except Exception as e:  # the backend refused the shape here (RuntimeError, NotImplementedError)
                failures.append(f"{attempt}: unsupported: {type(e).__name__}: {first_line(e)}")
                continue
            errors, worst, notes = compare(torch, outputs, ref)
            fields = {"method": METHODS[method](backend, r["direction"]), "gqa": gqa, "max_error": errors,
                      "error_ratio": worst}
            if r.get("tolerance"):
                fields["task_error_ratio"] = task_error_ratio(torch, outputs, ref, r["tolerance"],
                                                              r.get("tolerances") or {})
            if worst <= 1:
                small_dims = " ".join(f"{n}={small['dims'][n]}" for n in DIMS)
                fields["message"] = f"checked against fp32 on {small_dims}" + "".join(f"; {n}" for n in notes)
                return method, gqa, fields
            wrong.append((fields, f"{attempt}: error ratio {worst:.3g} > 1" + "".join(f"; {n}" for n in notes)))
    if wrong:
        fields = dict(wrong[0][0], status="wrong")
        fields["message"] = "disagrees with the fp32 reference: " + " | ".join([w[1] for w in wrong] + failures)
        return None, None, fields
    # The backend's own refusal says more than a fallback path missing from this torch.
    refused = any(": unsupported: " in f for f in failures)
    return None, None, {"status": "unsupported" if refused else "error", "message": " | ".join(failures)}


def first_line(error):
    text = str(error).strip()
    return text.splitlines()[0][:300] if text else ""


def run_candidate(torch, backend, r, small, ref, main_inputs, flush, flops):
    entry = {"backend": backend}
    method, gqa, fields = check_candidate(torch, backend, r, small, ref)
    entry.update(fields)
    if method is None:
        log(f"{backend}: {entry['status']}: {entry['message']}")
        return entry
    try:
        call, outputs = prepare(torch, backend, method, r["direction"], main_inputs, r["causal"], r["scale"], gqa)
        if not all_finite(torch, outputs):
            entry.update(status="wrong", message="NaN or Inf in its outputs at the main shape")
            return entry
        del outputs
        event_us, wall_us = time_calls(torch, call, r["warmup"], r["repetitions"], flush)
    except Exception as e:
        entry.update(status="error", message=f"at the main shape: {type(e).__name__}: {first_line(e)}")
        log(f"{backend}: {entry['message']}")
        return entry
    finally:
        try:
            torch.cuda.empty_cache()  # the next candidate starts with the memory this one held
        except Exception:
            pass  # after a CUDA fault: the entry already says what happened
    entry.update(status="ok", event_us=event_us, wall_us=wall_us,
                 tflops=flops / (event_us["median"] * 1e-6) / 1e12,
                 tflops_wall=flops / (wall_us["median"] * 1e-6) / 1e12)
    log(f"{backend}: {event_us['median']:.1f} us ({entry['tflops']:.0f} TFLOP/s) via {entry['method']}, "
        f"gqa {gqa}")
    return entry


# ---- main ------------------------------------------------------------------------------------------------


def measure(torch, r):
    device = torch.device("cuda", r["device"])
    torch.cuda.set_device(device)
    torch.backends.cuda.matmul.allow_tf32 = False  # the reference is fp32, not TF32
    properties = torch.cuda.get_device_properties(device)
    dims, causal, direction = r["dims"], r["causal"], r["direction"]
    flush_bytes = r["l2_flush_bytes"]
    if flush_bytes is None:
        flush_bytes = runner_flush_bytes(getattr(properties, "L2_cache_size", 128 << 20))
    flops = task_flops(direction, dims, causal)
    about = {"torch": torch.__version__, "cudnn": torch.backends.cudnn.version(), "gpu": properties.name,
             "direction": direction, "dims": dims, "causal": causal, "scale": r["scale"], "warmup": r["warmup"],
             "repetitions": r["repetitions"], "l2_flush_bytes": flush_bytes, "flops": flops}
    if causal and dims["Sq"] != dims["Sk"]:
        reason = ("causal with Sq != Sk: the ABI's mask is aligned bottom-right, the SDPA ops' is_causal "
                  "top-left")
        candidates = [{"backend": b, "status": "unsupported", "message": reason} for b in BACKENDS]
        return dict(about, error="no vendor attention for this shape: " + reason, candidates=candidates)

    group = dims["Hq"] // dims["Hkv"]
    small_dims = dict(dims, B=1, Hkv=1, Sq=min(dims["Sq"], CHECK_SEQUENCE), Sk=min(dims["Sk"], CHECK_SEQUENCE))
    small_dims["Hq"] = small_dims["Hkv"] * group
    small = make_inputs(torch, small_dims, direction, device, seed=1)
    small["dims"] = small_dims
    ref = reference(torch, small, causal, r["scale"], direction)
    main_inputs = make_inputs(torch, dims, direction, device, seed=2)
    flush = torch.empty(flush_bytes // 4, dtype=torch.int32, device=device)
    candidates = [run_candidate(torch, b, r, small, ref, main_inputs, flush, flops) for b in BACKENDS]

    passed = [c for c in candidates if c["status"] == "ok"]
    if not passed:
        summary = "; ".join(f"{c['backend']} {c['status']}" for c in candidates)
        return dict(about, error=f"no vendor attention passed its check and ran here ({summary})",
                    candidates=candidates)
    best = min(passed, key=lambda c: c["event_us"]["median"])
    chosen = {k: best[k] for k in ("backend", "method", "gqa", "event_us", "wall_us", "tflops", "tflops_wall")}
    return dict(name=f"torch-sdpa-{best['backend']}", **chosen, **about, candidates=candidates)


def main():
    channel = take_stdout()
    try:
        request = read_request(sys.stdin.read())
    except (ValueError, TypeError) as e:
        emit(channel, {"error": f"bad request: {e}"}, 2)
    try:
        import torch
    except Exception as e:  # ImportError, or a broken installation
        emit(channel, {"error": f"torch not importable ({type(e).__name__}: {e})"}, 1)
    if not torch.cuda.is_available():
        emit(channel, {"error": f"torch {torch.__version__} sees no CUDA GPU"}, 1)
    try:
        result = measure(torch, request)
    except Exception as e:
        emit(channel, {"error": f"the baseline could not be measured: {type(e).__name__}: {first_line(e)}"}, 1)
    emit(channel, result, 1 if "error" in result else 0)


if __name__ == "__main__":
    main()
