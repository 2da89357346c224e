# The Triton track's solution process: the trusted host of a Python solution (src/runner/python_worker.h).
#
# Started by the runner as `python3 -I -B -c <this script> <worker library> <socket>`, with TRITON_CACHE_DIR
# in the sandbox's private /tmp. It loads the worker library first and confines the process's writes while it
# has one thread; then it imports torch and hands the worker its socket and four callbacks. The worker keeps
# the protocol, the IPC buffers, the stream, the events, the clocks and the CUPTI recorders, exactly as for a
# CUDA solution; this script turns a request's buffers into torch tensors in the ABI's layouts (outside the
# clocks, cached by buffer and shape) and calls the solution's entry point (docs/triton-abi.md).
import ctypes
import sys

if __name__ == "__main__":  # (imported, by the CPU tests, it only defines what follows)
    worker = ctypes.CDLL(sys.argv[1])
    worker.ptxbench_worker_confine.restype = ctypes.c_uint32
    worker.ptxbench_worker_confine()

import importlib.util  # noqa: E402  (after the confinement, as everything below)
import math  # noqa: E402
import os  # noqa: E402
import traceback  # noqa: E402


def missing_prerequisite():
    """Why this python cannot run Triton solutions (the host's failure, not a solution's), or None. torch reads
    __cuda_array_interface__ with numpy."""
    for module in ("torch", "numpy", "triton"):
        try:
            importlib.import_module(module)
        except Exception as error:  # an ImportError, or a broken installation
            return f"{sys.executable} cannot run Triton solutions: importing {module} failed ({error})"
    return None


UNAVAILABLE = missing_prerequisite()
if UNAVAILABLE is None:
    import torch  # noqa: E402

# family.h's DType: each tensor's element type as __cuda_array_interface__ names it (bf16 travels as int16 and is
# viewed as bfloat16) and its size.
BF16, F32, I32, BYTES = 1, 2, 3, 4
TYPESTR = {BF16: "<i2", F32: "<f4", I32: "<i4", BYTES: "|u1"}
ITEM_SIZE = {BF16: 2, F32: 4, I32: 4, BYTES: 1}
MAX_RANK = 5  # solution::kMaxRank: the extents of each pointer argument, padded to it


class DeviceMemory:
    """A buffer of the runner's, mapped in this process, as __cuda_array_interface__ describes it."""

    def __init__(self, address, shape, typestr):
        self.__cuda_array_interface__ = {
            "shape": shape,
            "typestr": typestr,
            "data": (address, False),
            "strides": None,
            "stream": None,  # no synchronisation: the worker orders the call on its stream
            "version": 3,
        }


class Host:
    def __init__(self):
        self.codes = None  # the entry point's argument kinds: 't' a tensor, 'i' an int, 'f' a float
        self.function = None
        self.workspace_function = None
        self.solution_file = None
        self.tensors = {}  # (address, shape, type) -> tensor
        self.streams = {}  # cudaStream_t -> torch.cuda.ExternalStream
        self.arguments = None
        self.prepared = None  # what the arguments were made from: a request with the same is served by them

    def load(self, path, entry, workspace, codes):
        if not entry or set(codes) - set("tif"):
            raise ValueError(f"no entry point {entry!r} with arguments {codes!r}")
        spec = importlib.util.spec_from_file_location("solution", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules["solution"] = module
        spec.loader.exec_module(module)  # the solution's module-level code runs now
        self.solution_file = path
        self.codes = codes
        self.prepared = None
        self.function = self.entry_point(module, entry)
        self.workspace_function = self.entry_point(module, workspace) if workspace else None

    @staticmethod
    def entry_point(module, name):
        function = module.__dict__.get(name)
        if not callable(function):
            raise LookupError(f"the solution defines no function {name} at module level")
        return function

    def tensor(self, address, available_bytes, shape, dtype):
        if address == 0:
            return None
        if dtype not in TYPESTR:
            raise ValueError(f"no element type {dtype}")
        typestr = TYPESTR[dtype]
        key = (address, shape, typestr)
        tensor = self.tensors.get(key)
        if tensor is None:
            needed = math.prod(shape) * ITEM_SIZE[dtype]
            if needed > available_bytes:
                raise ValueError(f"a buffer of {available_bytes} bytes cannot hold a {shape} tensor ({needed} bytes)")
            if len(self.tensors) > 256:
                self.tensors.clear()
            tensor = torch.as_tensor(DeviceMemory(address, shape, typestr))
            if tensor.device.type != "cuda":  # an older torch copies the buffer to the host instead
                raise RuntimeError(f"torch {torch.__version__} made a {tensor.device} tensor of a GPU buffer")
            if dtype == BF16:
                tensor = tensor.view(torch.bfloat16)
            self.tensors[key] = tensor
        return tensor

    def stream(self, handle, device):
        stream = self.streams.get(handle)
        if stream is None:
            if len(self.streams) > 64:
                self.streams.clear()
            stream = torch.cuda.ExternalStream(handle, device=device)
            self.streams[handle] = stream
        return stream

    def prepare(self, tensors, ints, floats, stream_handle):
        """`tensors`: (address, bytes, dtype, shape) of each pointer argument, in order; then the int and the
        float arguments, each in order; the arguments are laid out as the entry point's `codes` say."""
        # The time stage's calls keep their buffers where its first call found them: their arguments are the
        # last call's, and this request's overhead (outside the clocks, held to the calibrated one) is a
        # comparison, whatever the number of tensors.
        request = (tuple(tensors), tuple(ints), tuple(floats), stream_handle)
        if request == self.prepared:
            self.activate(self.arguments[-1])
            return
        self.prepared = None
        counts = (len(tensors), len(ints), len(floats))
        if counts != tuple(self.codes.count(code) for code in "tif"):
            raise ValueError(f"{counts} tensors, ints and floats for an entry point of arguments {self.codes}")
        made = [self.tensor(address, size, shape, dtype) for address, size, dtype, shape in tensors]
        device = next(t.device for t in made if t is not None)
        stream = self.stream(stream_handle, device)
        self.activate(stream)
        sources = {"t": iter(made), "i": iter(ints), "f": iter(floats)}
        self.arguments = [next(sources[code]) for code in self.codes] + [stream]
        self.prepared = request

    @staticmethod
    def activate(stream):
        """The call's device and stream made current: Triton launches on the current stream."""
        if torch.cuda.current_device() != stream.device.index:
            torch.cuda.set_device(stream.device)
        torch.cuda.set_stream(stream)

    def call(self):
        returned = self.function(*self.arguments)
        return checked_return(returned, self.function.__name__)

    def workspace(self, ints):
        if self.workspace_function is None:
            raise LookupError("the entry point has no workspace function")
        returned = self.workspace_function(*ints)
        if isinstance(returned, bool) or not isinstance(returned, int) or returned < 0:
            raise TypeError(f"{self.workspace_function.__name__} returned {returned!r}, not a size in bytes")
        return returned

    def describe(self, error):
        """The exception in one line, with the solution's line that raised it."""
        text = f"{type(error).__name__}: {error}".strip()
        frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == self.solution_file]
        if frames:
            text += f" (solution.py, line {frames[-1].lineno})"
        return text


def checked_return(returned, name):
    if returned is None:
        return 0
    if isinstance(returned, bool) or not isinstance(returned, int):
        raise TypeError(f"{name} returned a {type(returned).__name__}, not an int")
    return returned


def write_message(buffer, capacity, text):
    data = text.encode("utf-8", "replace")[: max(capacity - 1, 0)] + b"\0"
    ctypes.memmove(buffer, data, len(data))


host = Host()

# The callbacks (python_worker.h): 0 on success, else a message in the buffer.
MESSAGE = (ctypes.c_void_p, ctypes.c_size_t)
LOAD = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                        *MESSAGE)
PREPARE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint64),
                           ctypes.POINTER(ctypes.c_uint8), ctypes.POINTER(ctypes.c_uint8),
                           ctypes.POINTER(ctypes.c_int64), ctypes.c_uint32, ctypes.POINTER(ctypes.c_int64),
                           ctypes.c_uint32, ctypes.POINTER(ctypes.c_float), ctypes.c_uint32, ctypes.c_uint64,
                           *MESSAGE)
CALL = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int64), *MESSAGE)
WORKSPACE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int64), ctypes.c_uint32,
                             ctypes.POINTER(ctypes.c_uint64), *MESSAGE)


def on_load(path, entry, workspace, codes, message, capacity):
    try:
        host.load(path.decode(), entry.decode(), workspace.decode(), codes.decode())
        return 0
    except BaseException as error:  # the solution's import may raise anything, SystemExit included
        write_message(message, capacity, "could not import the solution: " + host.describe(error))
        return 1


def on_prepare(addresses, sizes, dtypes, ranks, extents, pointer_count, ints, int_count, floats, float_count,
               stream, message, capacity):
    try:
        tensors = [(addresses[k], sizes[k], dtypes[k], tuple(extents[k * MAX_RANK:k * MAX_RANK + ranks[k]]))
                   for k in range(pointer_count)]
        host.prepare(tensors, ints[:int_count], floats[:float_count], stream)
        return 0
    except BaseException as error:
        write_message(message, capacity, f"{type(error).__name__}: {error}")
        return 1


def on_call(returned, message, capacity):
    try:
        returned[0] = host.call()
        return 0
    except BaseException as error:  # Triton's compile errors included: the solution's kernels are wrong
        write_message(message, capacity, host.describe(error))
        return 1


def on_workspace(ints, count, size, message, capacity):
    try:
        size[0] = host.workspace(ints[:count])
        return 0
    except BaseException as error:
        name = getattr(host.workspace_function, "__name__", "the workspace function")
        write_message(message, capacity, f"{name} raised " + host.describe(error))
        return 1


class Callbacks(ctypes.Structure):
    _fields_ = [("load", LOAD), ("prepare", PREPARE), ("call", CALL), ("workspace_bytes", WORKSPACE)]


if __name__ == "__main__":
    callbacks = Callbacks(LOAD(on_load), PREPARE(on_prepare), CALL(on_call), WORKSPACE(on_workspace))
    worker.ptxbench_worker_serve.argtypes = [ctypes.c_int, ctypes.POINTER(Callbacks), ctypes.c_char_p]
    unavailable = UNAVAILABLE.encode("utf-8", "replace") if UNAVAILABLE else None
    status = worker.ptxbench_worker_serve(int(sys.argv[2]), ctypes.byref(callbacks), unavailable)
    sys.stdout.flush()
    sys.stderr.flush()
    # As the CUDA worker: the solution's atexit handlers and finalizers get no turn after its last call.
    os._exit(status)
