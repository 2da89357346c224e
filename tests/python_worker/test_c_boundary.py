"""The Triton host script's C boundary (src/runner/triton_worker.py, src/runner/python_worker.h), on the CPU.

The script runs as the runner starts it (python3 -B -c <script> <worker library> <fd>; without -I only so that
PYTHONPATH can put stand-ins for torch, numpy and triton first), but with a stand-in worker library
(fake_worker_library.cpp) that drives the callbacks through their C function pointers, as the worker does,
and writes what came back to the descriptor. So the ctypes structure and signatures are held to the C
header's. Usage: test_c_boundary.py <triton_worker.py> <fake worker library>
"""
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

SCRIPT, LIBRARY = sys.argv.pop(1), sys.argv.pop(1)

FAKE_TORCH = """
import types
bfloat16 = "bfloat16"
__version__ = "0-stand-in"

class _Device:
    type = "cuda"
    index = 0

class _Tensor:
    def __init__(self, memory):
        interface = memory.__cuda_array_interface__
        self.address = interface["data"][0]
        self.shape = tuple(interface["shape"])
        self.device = _Device()

    def view(self, dtype):
        return self

def as_tensor(memory):
    return _Tensor(memory)

class _ExternalStream:
    def __init__(self, handle, device=None):
        self.handle = handle
        self.device = device

cuda = types.SimpleNamespace(ExternalStream=_ExternalStream, current_device=lambda: 0,
                             set_device=lambda device: None, set_stream=lambda stream: None)
"""

GEMM = """
def ptxbench_gemm_bf16(A, B, C, M, N, K, stream):
    assert C.shape == (M, N) and stream.handle == 0xABC0, (C.shape, stream.handle)
    if A.address != 0x10000:
        raise ValueError("A is not where the runner put it")
    return A.shape[0] + B.shape[0] + A.shape[1]
"""

RAISES = """
def ptxbench_gemm_bf16(A, B, C, M, N, K, stream):
    raise ValueError(f"no configuration for M = {M}")
"""

# Says where A was and how many times the host script has made a call's tensors so far (its Host.tensor, in
# the script's own module).
WHERE = """
import __main__
laid_out = 0
_tensor = __main__.Host.tensor
def _counted(self, address, *arguments):
    global laid_out
    if address == 0x10000 or address == 0x40000:
        laid_out += 1
    return _tensor(self, address, *arguments)
__main__.Host.tensor = _counted

def ptxbench_gemm_bf16(A, B, C, M, N, K, stream):
    return (A.address >> 16) * 100 + laid_out
"""

BACKWARD = """
def ptxbench_attention_backward_workspace_bytes(B, Hq, Hkv, Sq, Sk, D, causal):
    return 4 * B * Hq * Sq

def ptxbench_attention_backward_bf16(*arguments):
    return 0
"""


def run(solution, entry, modules=("torch", "numpy", "triton"), calls=1):
    with tempfile.TemporaryDirectory() as folder:
        for module in modules:
            os.makedirs(os.path.join(folder, module))
            with open(os.path.join(folder, module, "__init__.py"), "w") as f:
                f.write(FAKE_TORCH if module == "torch" else "")
        path = os.path.join(folder, "solution.py")
        with open(path, "w") as f:
            f.write(textwrap.dedent(solution))
        read, write = os.pipe()
        with open(SCRIPT) as f:
            script = f.read()
        env = dict(os.environ, PYTHONPATH=folder, FAKE_SOLUTION=path, FAKE_ENTRY=str(entry),
                   FAKE_CALLS=str(calls))
        process = subprocess.run([sys.executable, "-B", "-c", script, LIBRARY, str(write)], env=env,
                                 pass_fds=(write,), capture_output=True, text=True, timeout=60)
        os.close(write)
        with os.fdopen(read) as said:
            return process, said.read().splitlines()


class CBoundaryTest(unittest.TestCase):
    def test_a_gemm_call_goes_through_the_c_callbacks_and_back(self):
        process, lines = run(GEMM, "gemm")
        self.assertEqual(process.returncode, 0, process.stderr)
        self.assertEqual(lines[0], "load 0 ")
        self.assertEqual(lines[1], "prepare 0 ")
        self.assertEqual(lines[2], "call 0 6607 ")  # 1999 + 4096 + 512, from the tensors' shapes

    def test_a_call_with_the_last_calls_buffers_reuses_its_arguments_and_a_moved_one_does_not(self):
        process, lines = run(WHERE, "gemm", calls=3)
        self.assertEqual(process.returncode, 0, process.stderr)
        # Laid out for the first call, not again for the same buffers, again for A moved.
        self.assertEqual(lines[1:], ["prepare 0 ", "call 0 101 ", "prepare 0 ", "call 0 101 ",
                                     "prepare 0 ", "call 0 402 "])

    def test_an_exception_comes_back_as_status_1_with_its_line(self):
        process, lines = run(RAISES, "gemm")
        self.assertEqual(process.returncode, 0, process.stderr)
        self.assertTrue(lines[2].startswith("call 1 -7 ValueError: no configuration for M = 1999"), lines)
        self.assertIn("(solution.py, line 3)", lines[2])

    def test_the_workspace_size_comes_back_through_its_pointer(self):
        process, lines = run(BACKWARD, "backward")
        self.assertEqual(process.returncode, 0, process.stderr)
        self.assertEqual(lines[1], "workspace 0 128000 ")

    def test_a_python_without_numpy_is_reported_as_unavailable(self):
        process, lines = run(GEMM, "gemm", modules=("torch", "triton"))
        self.assertEqual(process.returncode, 3, process.stderr)
        self.assertTrue(lines[0].startswith("unavailable "), lines)
        self.assertIn("cannot run Triton solutions: importing numpy failed", lines[0])


if __name__ == "__main__":
    unittest.main(verbosity=2)
