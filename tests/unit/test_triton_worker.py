"""The Triton solution process's host script (src/runner/triton_worker.py), on the CPU.

A stand-in for torch records what the script makes of each request: the tensors it wraps over the runner's
buffers (address, shape, type), the stream it makes current, and the arguments the solution's entry point is
called with. The callbacks are driven through ctypes as the worker library calls them, so the C side of each
(pointers in, message buffers out) is exercised too. Usage: test_triton_worker.py <triton_worker.py>
"""
import ctypes
import math
import importlib.util
import os
import sys
import tempfile
import textwrap
import types
import unittest

SCRIPT = sys.argv.pop(1) if len(sys.argv) > 1 else "src/runner/triton_worker.py"


class FakeTensor:
    def __init__(self, memory, dtype="from-cai"):
        interface = memory.__cuda_array_interface__
        self.address = interface["data"][0]
        self.shape = tuple(interface["shape"])
        self.typestr = interface["typestr"]
        self.dtype = dtype
        self.device = FakeDevice(0)
        self.interface = interface

    def view(self, dtype):
        viewed = FakeTensor.__new__(FakeTensor)
        viewed.__dict__.update(self.__dict__)
        viewed.dtype = dtype
        return viewed


class FakeDevice:
    def __init__(self, index):
        self.index = index
        self.type = "cuda"


def fake_torch():
    torch = types.ModuleType("torch")
    torch.bfloat16 = "bfloat16"
    torch.made = []
    torch.current_stream = None

    def as_tensor(memory):
        tensor = FakeTensor(memory)
        torch.made.append(tensor)
        return tensor

    class ExternalStream:
        def __init__(self, handle, device=None):
            self.handle = handle
            self.device = device

    cuda = types.SimpleNamespace(
        ExternalStream=ExternalStream,
        current_device=lambda: 0,
        set_device=lambda device: None,
        set_stream=lambda stream: setattr(torch, "current_stream", stream),
    )
    torch.as_tensor = as_tensor
    torch.cuda = cuda
    return torch


def load_host_script():
    sys.modules["torch"] = fake_torch()
    for prerequisite in ("numpy", "triton"):  # stand-ins: the host script only checks that they import
        sys.modules.setdefault(prerequisite, types.ModuleType(prerequisite))
    spec = importlib.util.spec_from_file_location("triton_worker", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # not __main__: defines, loads no library, serves nothing
    return module


def solution_file(body):
    handle, path = tempfile.mkstemp(suffix=".py")
    with os.fdopen(handle, "w") as f:
        f.write(textwrap.dedent(body))
    return path


SOLUTION = """
    calls = []

    def ptxbench_gemm_bf16(A, B, C, M, N, K, stream):
        calls.append(("gemm", A, B, C, M, N, K, stream))
        return RETURN

    def ptxbench_attention_forward_bf16(Q, K, V, O, LSE, B, Hq, Hkv, Sq, Sk, D, scale, causal, stream):
        calls.append(("forward", Q, K, V, O, LSE, B, Hq, Hkv, Sq, Sk, D, scale, causal, stream))

    def ptxbench_attention_backward_workspace_bytes(B, Hq, Hkv, Sq, Sk, D, causal):
        return B * Hq * Sq * D * 4

    def ptxbench_attention_backward_bf16(Q, K, V, O, LSE, dO, dQ, dK, dV, workspace, B, Hq, Hkv, Sq, Sk, D,
                                         scale, causal, stream):
        calls.append(("backward", Q, K, V, O, LSE, dO, dQ, dK, dV, workspace, B, Hq, Hkv, Sq, Sk, D, scale,
                      causal, stream))
        raise_here()

    def raise_here():
        if RAISE:
            raise ValueError("block size too large")

    RETURN = 0
    RAISE = False
"""


BF16, F32, BYTES = 1, 2, 4  # family.h's DType

# The entry points as the runner loads them: symbol, workspace function, argument kinds (family.h).
GEMM = ("ptxbench_gemm_bf16", "", "tttiii")
FORWARD = ("ptxbench_attention_forward_bf16", "", "tttttiiiiiifi")
BACKWARD = ("ptxbench_attention_backward_bf16", "ptxbench_attention_backward_workspace_bytes",
            "ttttttttttiiiiiifi")


class Buffers:
    """The C arguments of a prepare callback: (address, bytes, dtype, shape) of each tensor, the ints, the
    floats."""

    def __init__(self, tensors, ints, floats=()):
        self.addresses = (ctypes.c_uint64 * 12)(*[t[0] for t in tensors])
        self.sizes = (ctypes.c_uint64 * 12)(*[t[1] for t in tensors])
        self.dtypes = (ctypes.c_uint8 * 12)(*[t[2] for t in tensors])
        self.ranks = (ctypes.c_uint8 * 12)(*[len(t[3]) for t in tensors])
        extents = []
        for t in tensors:
            extents += list(t[3]) + [0] * (5 - len(t[3]))
        self.extents = (ctypes.c_int64 * 60)(*extents)
        self.ints = (ctypes.c_int64 * 8)(*ints)
        self.floats = (ctypes.c_float * 4)(*floats)
        self.count = len(tensors)
        self.int_count = len(ints)
        self.float_count = len(floats)


def gemm_buffers(addresses, m, n, k, sizes=None):
    sizes = sizes or [m * k * 2, n * k * 2, m * n * 2]
    shapes = [(m, k), (n, k), (m, n)]
    return Buffers([(a, s, BF16, shape) for a, s, shape in zip(addresses, sizes, shapes)], [m, n, k])


def backward_buffers(workspace_bytes):
    b, hq, hkv, sq, sk, d = 1, 8, 8, 256, 256, 64
    q, kv, lse = (b, sq, hq, d), (b, sk, hkv, d), (b, hq, sq)
    shapes = [q, kv, kv, q, lse, q, q, kv, kv]
    tensors = [(k + 1, 4 * math.prod(shape), F32 if shape == lse else BF16, shape) for k, shape in enumerate(shapes)]
    tensors.append((11 if workspace_bytes else 0, workspace_bytes, BYTES, (workspace_bytes,)))
    return Buffers(tensors, [b, hq, hkv, sq, sk, d, 0], [0.125])


class HostScriptTest(unittest.TestCase):
    def setUp(self):
        self.w = load_host_script()
        self.torch = sys.modules["torch"]
        self.path = solution_file(SOLUTION)
        self.message = ctypes.create_string_buffer(480)

    def tearDown(self):
        os.unlink(self.path)

    def load(self, entry):
        status = self.w.on_load(self.path.encode(), entry[0].encode(), entry[1].encode(), entry[2].encode(),
                                ctypes.addressof(self.message), 480)
        self.assertEqual(status, 0, self.message.value)
        return sys.modules["solution"]

    def prepare(self, buffers, stream=0xABC0):
        return self.w.on_prepare(buffers.addresses, buffers.sizes, buffers.dtypes, buffers.ranks, buffers.extents,
                                 buffers.count, buffers.ints, buffers.int_count, buffers.floats,
                                 buffers.float_count, stream, ctypes.addressof(self.message), 480)

    def call(self):
        returned = ctypes.c_int64(-7)
        status = self.w.on_call(ctypes.pointer(returned), ctypes.addressof(self.message), 480)
        return status, returned.value

    def test_gemm_gets_its_matrices_in_the_abi_layouts_then_the_sizes_and_the_stream(self):
        solution = self.load(GEMM)
        m, n, k = 1999, 4096, 512
        buffers = gemm_buffers([0x1000, 0x2000, 0x3000], m, n, k)
        self.assertEqual(self.prepare(buffers), 0, self.message.value)
        self.assertEqual(self.call(), (0, 0))
        name, a, b, c, *rest = solution.calls[0]
        self.assertEqual((a.address, a.shape, a.dtype), (0x1000, (m, k), "bfloat16"))
        self.assertEqual((b.address, b.shape), (0x2000, (n, k)))
        self.assertEqual((c.address, c.shape), (0x3000, (m, n)))
        self.assertEqual(a.typestr, "<i2")  # bf16 travels as int16, viewed as bfloat16
        self.assertIsNone(a.interface["stream"])  # no synchronisation asked of torch
        self.assertEqual(rest[:3], [m, n, k])
        self.assertEqual(rest[3].handle, 0xABC0)
        self.assertIs(self.torch.current_stream, rest[3])  # Triton launches on the current stream

    def test_the_forward_gets_q_k_v_o_lse_then_sizes_scale_causal_and_the_stream(self):
        solution = self.load(FORWARD)
        b, hq, hkv, sq, sk, d = 2, 32, 4, 1000, 1500, 128
        q, kv = (b, sq, hq, d), (b, sk, hkv, d)
        tensors = [(1, q, BF16), (2, kv, BF16), (3, kv, BF16), (4, q, BF16), (5, (b, hq, sq), F32)]
        buffers = Buffers([(a, 4 * math.prod(shape), dtype, shape) for a, shape, dtype in tensors],
                          [b, hq, hkv, sq, sk, d, 1], [0.088388])
        self.assertEqual(self.prepare(buffers), 0, self.message.value)
        self.assertEqual(self.call(), (0, 0))  # None returned is 0
        call = solution.calls[0]
        shapes = [t.shape for t in call[1:6]]
        self.assertEqual(shapes, [(b, sq, hq, d), (b, sk, hkv, d), (b, sk, hkv, d), (b, sq, hq, d), (b, hq, sq)])
        self.assertEqual(call[5].typestr, "<f4")
        self.assertEqual(call[6:12], (b, hq, hkv, sq, sk, d))
        self.assertAlmostEqual(call[12], 0.088388, places=6)
        self.assertEqual(call[13], 1)

    def test_the_backward_gets_its_workspace_as_bytes_or_none(self):
        solution = self.load(BACKWARD)
        buffers = backward_buffers(4096)
        self.assertEqual(self.prepare(buffers), 0, self.message.value)
        self.assertEqual(self.call(), (0, 0))
        workspace = solution.calls[0][10]
        self.assertEqual((workspace.shape, workspace.typestr), ((4096,), "|u1"))
        buffers = backward_buffers(0)
        self.assertEqual(self.prepare(buffers), 0, self.message.value)
        self.call()
        self.assertIsNone(solution.calls[1][10])

    def test_the_workspace_size_comes_from_the_solution_and_must_be_a_size(self):
        self.load(BACKWARD)
        ints = (ctypes.c_int64 * 8)(2, 16, 16, 4096, 4096, 128, 1)
        size = ctypes.c_uint64(0)
        status = self.w.on_workspace(ints, 7, ctypes.pointer(size), ctypes.addressof(self.message), 480)
        self.assertEqual((status, size.value), (0, 2 * 16 * 4096 * 128 * 4))
        sys.modules["solution"].__dict__["ptxbench_attention_backward_workspace_bytes"] = lambda *a: -1
        self.w.host.workspace_function = sys.modules["solution"].ptxbench_attention_backward_workspace_bytes
        status = self.w.on_workspace(ints, 7, ctypes.pointer(size), ctypes.addressof(self.message), 480)
        self.assertEqual(status, 1)
        self.assertIn(b"not a size in bytes", self.message.value)

    def test_tensors_are_made_once_per_buffer_and_shape(self):
        self.load(GEMM)
        buffers = gemm_buffers([0x1000, 0x2000, 0x3000], 64, 64, 64)
        for _ in range(5):
            self.assertEqual(self.prepare(buffers), 0)
        self.assertEqual(len(self.torch.made), 3)
        other = gemm_buffers([0x1000, 0x2000, 0x3000], 32, 64, 64, [2 * 64 * 64] * 3)  # another M: other views
        self.assertEqual(self.prepare(other), 0)
        self.assertEqual(len(self.torch.made), 5)

    def test_a_buffer_too_small_for_its_tensor_fails_the_preparation(self):
        self.load(GEMM)
        buffers = gemm_buffers([0x1000, 0x2000, 0x3000], 64, 64, 64, [100, 2 * 64 * 64, 2 * 64 * 64])
        self.assertEqual(self.prepare(buffers), 1)
        self.assertIn(b"cannot hold", self.message.value)

    def test_a_return_value_is_passed_on_and_must_be_an_int(self):
        solution = self.load(GEMM)
        buffers = gemm_buffers([1, 2, 3], 64, 64, 64)
        self.prepare(buffers)
        solution.RETURN = 3
        self.assertEqual(self.call(), (0, 3))
        solution.RETURN = "done"
        status, _ = self.call()
        self.assertEqual(status, 1)
        self.assertIn(b"returned a str, not an int", self.message.value)

    def test_an_exception_is_reported_with_the_solutions_line(self):
        solution = self.load(BACKWARD)
        solution.RAISE = True
        self.prepare(backward_buffers(0))
        status, _ = self.call()
        self.assertEqual(status, 1)
        text = self.message.value.decode()
        self.assertIn("ValueError: block size too large", text)
        line = SOLUTION.splitlines().index('            raise ValueError("block size too large")') + 1
        self.assertIn(f"(solution.py, line {line})", text)

    def test_a_file_that_cannot_be_imported_or_lacks_the_entry_point_fails_to_load(self):
        broken = solution_file("import nonexistent_module_of_no_one\n")
        try:
            status = self.w.on_load(broken.encode(), *(x.encode() for x in GEMM), ctypes.addressof(self.message),
                                    480)
            self.assertEqual(status, 1)
            self.assertIn(b"could not import the solution: ModuleNotFoundError", self.message.value)
        finally:
            os.unlink(broken)
        missing = solution_file("def other(): pass\n")
        try:
            status = self.w.on_load(missing.encode(), *(x.encode() for x in GEMM), ctypes.addressof(self.message),
                                    480)
            self.assertEqual(status, 1)
            self.assertIn(b"defines no function ptxbench_gemm_bf16", self.message.value)
        finally:
            os.unlink(missing)

    def test_arguments_not_of_the_entry_points_kinds_fail_the_preparation(self):
        self.load(GEMM)
        buffers = Buffers([(1, 8192, BF16, (64, 64))] * 3, [64, 64, 64], [0.5])  # a float GEMM does not take
        self.assertEqual(self.prepare(buffers), 1)
        self.assertIn(b"for an entry point of arguments tttiii", self.message.value)
        self.assertEqual(self.w.on_load(self.path.encode(), b"ptxbench_gemm_bf16", b"", b"ttx",
                                        ctypes.addressof(self.message), 480), 1)

    def test_a_long_message_is_cut_to_the_buffer_and_ends_in_nul(self):
        buffer = ctypes.create_string_buffer(b"\xff" * 16)
        self.w.write_message(ctypes.addressof(buffer), 8, "x" * 100)
        self.assertEqual(buffer.raw[:8], b"xxxxxxx\0")
        self.assertEqual(buffer.raw[8:16], b"\xff" * 8)

    def test_a_python_without_torch_numpy_or_triton_is_the_hosts_failure(self):
        self.assertIsNone(self.w.UNAVAILABLE)
        saved = sys.modules.pop("numpy")
        sys.modules["numpy"] = None  # an import of it fails
        try:
            problem = self.w.missing_prerequisite()
        finally:
            sys.modules["numpy"] = saved
        self.assertIn("cannot run Triton solutions: importing numpy failed", problem)

    def test_a_tensor_torch_put_on_the_host_fails_the_preparation(self):
        self.load(GEMM)
        real = self.torch.as_tensor

        def on_the_host(memory):
            tensor = real(memory)
            tensor.device = types.SimpleNamespace(type="cpu", index=None)
            return tensor

        self.torch.as_tensor = on_the_host
        self.torch.__version__ = "2.4.0"
        buffers = gemm_buffers([0x1000, 0x2000, 0x3000], 64, 64, 64)
        self.assertEqual(self.prepare(buffers), 1)
        self.assertIn(b"made a", self.message.value)

    def test_the_callbacks_have_the_c_types_of_python_worker_h(self):
        fields = dict(self.w.Callbacks._fields_)
        self.assertEqual(set(fields), {"load", "prepare", "call", "workspace_bytes"})
        self.assertEqual(fields["prepare"]._argtypes_[8], ctypes.POINTER(ctypes.c_float))  # the floats
        self.assertEqual(fields["prepare"]._argtypes_[10], ctypes.c_uint64)  # the stream
        self.assertEqual(fields["load"]._argtypes_[1:4], (ctypes.c_char_p,) * 3)
        self.assertEqual(fields["call"]._restype_, ctypes.c_int)


if __name__ == "__main__":
    unittest.main(verbosity=2)
