"""The vendor baseline of the attention tasks as the time stage times it: cuDNN's fused attention, called through
PyTorch's aten ops, in a process of its own beside the solution's.

The runner starts this module as it starts a Triton solution (src/runner/triton_worker.py hosts it, with the
entry points of docs/triton-abi.md), maps the same buffers into it and alternates its calls with the solution's
in one measurement window: each timed call of the solution is followed by one of the baseline on the same
inputs, with the same cold L2, the same events on the same kind of stream (src/runner/session.cpp, run_time).
Before the timed calls the runner checks one call's outputs against its reference: a baseline that computes
something else is the harness's error, never a speed.

cuDNN is the fastest vendor attention on the H100 and H200 for every task here, by 1.5-2x over FlashAttention-2
and more over the memory-efficient kernel (bench/attention-baselines.md, where baselines/attention_torch.py
compares all three).

What is timed is the op's GPU work. Its Python and aten dispatch (270-830 us a call in the judge's sandbox,
different in each process, against a few microseconds for a C++ caller of cuDNN) is kept out of the events:
the runner asks for each timed call queued behind a 2 ms spin of the worker's (solution_protocol.h,
kBehindSpin), so the op's launches are waiting when the start event fires. The op writes its outputs into
tensors of its own; copying them into the harness's buffers is not the op's work, so the copies run on a stream
of their own after the op, outside the events the worker records on the call's stream (they are done before
the worker answers: it synchronises the device). The backward takes O and LSE from the harness, as a solution
does.

Layout: the ABI's tensors are [B, S, H, D] and the ops' [B, H, S, D]: the ops get .transpose(1, 2) views, and
D stays contiguous. GQA: K and V keep their Hkv heads (cuDNN takes them). Causal: the ABI aligns the mask to the
bottom-right, the op's to the top-left; they agree when Sq == Sk, as on every main shape, the only one timed.

The ragged prefill's baseline is FlashAttention-2's variable-length causal forward, through the same aten op
family: the packed layout ([total, H, D] with cumulative offsets, indptr) is FlashAttention's varlen one, which
PyTorch's flash backend takes as it is (its nested-tensor attention calls it), where the cuDNN op takes padded
batches. It is hosted and timed the same way; its LSE comes as [Hq, total] and is copied out transposed.
"""
import torch

aten = torch.ops.aten

# The side stream of each device, for the copies out of the op's own tensors.
_copy_streams = {}
# What the backward op needs beside the tensors, learnt from one forward per shape (the cuDNN graph's extra
# results: sequence bounds and the dropout generator's state, unused without dropout) and the LSE's shape.
_backward_extras = {}


def _copy_out(pairs):
    """dst.copy_(src) for each pair, on this device's side stream, after the work on the current stream."""
    current = torch.cuda.current_stream()
    side = _copy_streams.get(current.device)
    if side is None:
        side = _copy_streams[current.device] = torch.cuda.Stream(device=current.device)
    side.wait_stream(current)
    with torch.cuda.stream(side):
        for dst, src in pairs:
            dst.copy_(src)
            src.record_stream(side)  # the op's tensor stays allocated until its copy is done


def _forward(q, k, v, causal, scale):
    # (q, k, v, attn_bias, compute_log_sumexp, dropout_p, is_causal, return_debug_mask)
    return aten._scaled_dot_product_cudnn_attention(q, k, v, None, True, 0.0, causal, False, scale=scale)


def ptxbench_attention_forward_bf16(Q, K, V, O, LSE, B, Hq, Hkv, Sq, Sk, D, scale, causal, stream):
    q, k, v = (t.transpose(1, 2) for t in (Q, K, V))
    result = _forward(q, k, v, bool(causal), scale)
    _copy_out([(O.transpose(1, 2), result[0]), (LSE, result[1].reshape(LSE.shape))])
    return 0


def ptxbench_attention_backward_workspace_bytes(B, Hq, Hkv, Sq, Sk, D, causal):
    return 0


def ptxbench_attention_backward_bf16(Q, K, V, O, LSE, dO, dQ, dK, dV, workspace, B, Hq, Hkv, Sq, Sk, D, scale,
                                     causal, stream):
    q, k, v, o, do = (t.transpose(1, 2) for t in (Q, K, V, O, dO))
    causal = bool(causal)
    key = (B, Hq, Hkv, Sq, Sk, D, causal, q.device)
    extras = _backward_extras.get(key)
    if extras is None:  # the first call of a shape, never a timed one (the runner warms up first)
        forward = _forward(q, k, v, causal, scale)
        # forward: (out, lse, cum_seq_q, cum_seq_k, max_q, max_k, philox_seed, philox_offset, debug_attn_mask)
        extras = _backward_extras[key] = (tuple(forward[1].shape), forward[2], forward[3], forward[4],
                                          forward[5], forward[6], forward[7])
        torch.cuda.current_stream().synchronize()
    lse_shape, cum_q, cum_k, max_q, max_k, philox_seed, philox_offset = extras
    dq, dk, dv = aten._scaled_dot_product_cudnn_attention_backward(
        do, q, k, v, o, LSE.reshape(lse_shape), philox_seed, philox_offset, None, cum_q, cum_k, max_q, max_k,
        0.0, causal, scale=scale)[:3]
    _copy_out([(dQ.transpose(1, 2), dq), (dK.transpose(1, 2), dk), (dV.transpose(1, 2), dv)])
    return 0


def ptxbench_attention_prefill_ragged_bf16(Q, K, V, indptr, O, LSE, B, Hq, Hkv, D, max_len, total, scale, stream):
    # (query, key, value, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal, return_debug_mask); the
    # causal mask is aligned to the bottom right, which with Sq = Sk per sequence is every alignment
    result = aten._flash_attention_forward(Q, K, V, indptr, indptr, max_len, max_len, 0.0, True, False,
                                           scale=scale)
    out, lse = result[0], result[1]
    if tuple(lse.shape) == (Hq, total):
        lse = lse.transpose(0, 1)
    elif tuple(lse.shape) != (total, Hq):
        raise RuntimeError(f"the varlen op's LSE has shape {tuple(lse.shape)}, neither [Hq, total] nor [total, Hq]")
    _copy_out([(O, out), (LSE, lse)])
    return 0
