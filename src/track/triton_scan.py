"""The Triton track's compile-stage parse and static-stage scan of a solution, by its syntax tree.

Trusted code, built into ptxbench (src/track/triton_track.cpp) and run as
    python3 -I -S -c <this file> parse|scan [NAME:PARAMETERS ...]
with the solution's source on standard input. It never imports or runs the solution: it reads its syntax tree
(the standard library's ast) and prints one JSON document:
    parse: {"python": "3.11.2", "errors": [{"line", "column", "message"}]}
           syntax errors, and each entry point NAME missing or not taking PARAMETERS parameters
    scan:  {"python": "3.11.2", "violations": [{"rule", "evidence", "line", "message"}]}
docs/anti-cheat.md lists the rules and what they cannot see.
"""

import ast
import json
import sys

# Modules a solution may import: Triton's kernel language and the host API that launches kernels, math, and
# torch, for dtypes and the tensors' metadata only (the torch rules below). TensorDescriptor describes a tensor
# (pointer, shape, strides, block) for TMA loads, which Hopper's tasks require.
ALLOWED_MODULES = {"triton", "triton.language", "triton.tools.tensor_descriptor", "math", "torch", "__future__"}
ALLOWED_MESSAGE = "only triton, triton.language, math and torch may be imported"

# Why other modules are forbidden: the rule of each (the first component of its name); any other is "import".
MODULE_RULES = {
    **dict.fromkeys(["os", "posix", "subprocess", "multiprocessing", "signal", "pty", "resource"], "process"),
    **dict.fromkeys(["io", "pathlib", "shutil", "tempfile", "glob", "fileinput", "mmap", "pickle", "shelve",
                     "sqlite3", "zipfile", "tarfile"], "file"),
    **dict.fromkeys(["socket", "ssl", "http", "urllib", "ftplib", "smtplib", "requests", "asyncio", "select",
                     "selectors", "xmlrpc"], "network"),
    **dict.fromkeys(["threading", "_thread", "concurrent"], "thread"),
    **dict.fromkeys(["ctypes", "cffi", "importlib", "imp", "pkgutil", "runpy", "zipimport"], "dynamic-loading"),
    **dict.fromkeys(["code", "codeop"], "dynamic-code"),
    **dict.fromkeys(["sys", "builtins", "inspect", "gc", "operator", "functools"], "introspection"),
}

# Built-in names that reach files, processes or code, whatever they are called with.
BUILTIN_RULES = {
    "open": "file",
    "exec": "dynamic-code", "eval": "dynamic-code", "compile": "dynamic-code",
    "__import__": "dynamic-loading",
    "getattr": "introspection", "setattr": "introspection", "delattr": "introspection",
    "globals": "introspection", "locals": "introspection", "vars": "introspection",
    "exit": "process", "quit": "process", "breakpoint": "process",
}

# Attribute names that are modules a solution must not reach through another module (tl.core.builtins,
# torch.os): the rule of the module.
ESCAPE_ATTRIBUTES = {name: MODULE_RULES[name] for name in [
    "os", "posix", "subprocess", "multiprocessing", "io", "pathlib", "shutil", "socket", "threading", "ctypes",
    "importlib", "sys", "builtins", "inspect"]}

# torch, by what a solution may do with it. Dtypes as values; device queries as calls (a persistent kernel
# sizes its grid by the SM count); types in annotations only (torch.Tensor and torch.cuda.Stream are callable:
# a tensor or a stream made).
TORCH_DTYPES = {"bfloat16", "float16", "half", "float32", "float", "float64", "double", "int8", "int16", "int32",
                "int64", "uint8", "bool", "float8_e4m3fn", "float8_e5m2"}
TORCH_QUERIES = {"cuda.get_device_properties", "cuda.get_device_capability", "cuda.current_device", "finfo",
                 "iinfo", "device"}
TORCH_TYPES = {"Tensor", "dtype", "device", "cuda.Stream"}
TORCH_ALLOCATION = {"empty", "zeros", "ones", "full", "rand", "randn", "randint", "tensor", "as_tensor",
                    "arange", "linspace", "empty_strided", "Tensor", "from_numpy", "frombuffer"}
TORCH_STREAMS = {"cuda.synchronize", "cuda.Stream", "cuda.Event", "cuda.stream", "cuda.set_stream",
                 "cuda.current_stream", "cuda.default_stream", "cuda.ExternalStream", "cuda.graph",
                 "cuda.CUDAGraph", "cuda.empty_cache", "synchronize", "Stream", "Event"}

# triton, by its host API: what launches and configures kernels. Its compiler, runtime, driver, backends and
# settings (triton.runtime, triton.knobs, ...) can load binaries or start processes, and are not a solution's.
TRITON_API = ["jit", "autotune", "heuristics", "Config", "cdiv", "next_power_of_2", "language",
              "tools.tensor_descriptor.TensorDescriptor"]

# What host code (outside @triton.jit kernels) may read of the values it handles, tensors first: their
# metadata, never their data. Also a device's properties, a Triton Config's and a TensorDescriptor's fields,
# and the methods of Python's containers.
HOST_ATTRIBUTES = {
    "shape", "dtype", "device", "ndim", "is_cuda", "T", "mT", "stride", "size", "dim", "numel", "element_size",
    "data_ptr", "storage_offset", "is_contiguous", "get_device", "nbytes", "itemsize",
    "view",  # another dtype or shape over the same memory: never a copy (reshape may copy, so it is not here)
    "multi_processor_count", "name", "major", "minor", "total_memory", "L2_cache_size", "warp_size",
    "max_threads_per_multi_processor", "regs_per_multiprocessor", "shared_memory_per_block_optin",
    "kwargs", "num_warps", "num_stages", "num_ctas", "block_shape", "base", "strides",
    "append", "extend", "insert", "get", "items", "keys", "values", "format", "join", "index", "count",
}

WHAT = {
    "import": ALLOWED_MESSAGE,
    "file": "file access is not allowed",
    "process": "creating, replacing or ending processes is not allowed",
    "network": "network access is not allowed",
    "thread": "threads are not allowed: all work goes on the given stream",
    "dynamic-loading": "loading code at run time (ctypes, importlib, __import__) is not allowed",
    "dynamic-code": "running code from strings (exec, eval, compile) is not allowed",
    "introspection": "reaching objects through introspection (getattr, globals, dunder attributes, sys) is "
                     "not allowed",
    "triton-internals": "Triton's compiler, runtime, driver and settings are not a solution's to use: only "
                        "triton.jit, autotune, heuristics, Config, cdiv, next_power_of_2, triton.language "
                        "and TensorDescriptor",
}
TORCH_COMPUTE = ("torch computes here (matmul, attention, math on tensors): the solution's own Triton kernels "
                 "must do the work; torch is for dtypes and tensors' shapes, strides and pointers only")
TORCH_ALLOCATES = "allocating memory is not allowed (the ABI): write into the outputs given"
TORCH_SYNCS = "synchronising, or streams and events other than `stream`, are not allowed (the ABI)"


def dotted(path, prefix):
    """The rest of `path` below the module `prefix` ("torch.cuda.Stream", "torch" -> "cuda.Stream"), or None."""
    if path == prefix:
        return ""
    return path[len(prefix) + 1:] if path.startswith(prefix + ".") else None


def module_rule(module):
    top = module.split(".")[0]
    if top == "torch":
        return "torch"
    if top == "triton":
        return "triton-internals"
    return MODULE_RULES.get(top, "import")


def allowed_module(module):
    return module in ALLOWED_MODULES or module.startswith("triton.language.")


def torch_what(sub):
    name = sub.split(".")[-1]
    if sub in TORCH_STREAMS:
        return TORCH_SYNCS
    if name in TORCH_ALLOCATION or name.endswith("_like"):
        return TORCH_ALLOCATES
    return TORCH_COMPUTE


def evidence_of(node):
    text = ast.unparse(node)
    return text if len(text) <= 80 else text[:77] + "..."


class Scanner(ast.NodeVisitor):
    def __init__(self):
        self.aliases = {}  # a name bound to a module or a module's member -> its dotted path ("tl": "triton.language")
        self.found = []
        self.seen = set()
        self.device = False  # inside a @triton.jit kernel's body: Triton's language, compiled by Triton
        self.annotation = False
        self.called = set()  # ids of the nodes that are the callee of a call

    # --- aliases -------------------------------------------------------------------------------------------

    def resolve(self, node):
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            return base + "." + node.attr if base else None
        return None

    def collect_aliases(self, tree):
        """Imports and plain assignments of module paths, anywhere: a name is taken for its module wherever it
        is used (shadowing is not followed, which can only flag more)."""
        for _ in range(2):  # an assignment may use an alias bound later in the file
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    for alias in node.names:
                        if alias.asname:
                            self.aliases[alias.asname] = alias.name
                        else:
                            top = alias.name.split(".")[0]
                            self.aliases[top] = top
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    for alias in node.names:
                        if alias.name != "*":
                            self.aliases[alias.asname or alias.name] = node.module + "." + alias.name
                elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                    path = self.resolve(node.value)
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for target in targets:
                        if path and isinstance(target, ast.Name):
                            self.aliases[target.id] = path

    # --- reporting -----------------------------------------------------------------------------------------

    def report(self, rule, node, what=None, evidence=None):
        evidence = evidence or evidence_of(node)
        key = (rule, evidence, node.lineno)
        if key in self.seen:
            return
        self.seen.add(key)
        self.found.append({"rule": rule, "evidence": evidence, "line": node.lineno,
                           "message": "line {}: {}: {}".format(node.lineno, evidence, what or WHAT[rule])})

    # --- module paths --------------------------------------------------------------------------------------

    def check_path(self, path, node, written):
        """A use of a module's member by its resolved dotted path."""
        shown = written if written == path else "{} ({})".format(written, path)
        for part in path.split(".")[1:]:
            if part in ESCAPE_ATTRIBUTES:
                return self.report(ESCAPE_ATTRIBUTES[part], node, evidence=shown)
            if part.startswith("_"):
                return self.report(module_rule(path), node, "private internals are not a solution's to use",
                                   shown)
        torch = dotted(path, "torch")
        if torch is not None:
            if torch == "":
                return self.report("torch", node, "the torch module may be used only through the names it is "
                                   "allowed for (dtypes, device queries)", shown)
            if id(node) in self.called:
                if torch not in TORCH_QUERIES:
                    self.report("torch", node, torch_what(torch), shown)
            elif not (torch in TORCH_DTYPES or torch in TORCH_QUERIES or
                      (self.annotation and torch in TORCH_TYPES)):
                self.report("torch", node, torch_what(torch), shown)
            return
        triton = dotted(path, "triton")
        if triton is not None and not any(triton == api or triton.startswith(api + ".") for api in TRITON_API):
            self.report("triton-internals", node, evidence=shown)

    # --- visitors ------------------------------------------------------------------------------------------

    def visit_Import(self, node):
        for alias in node.names:
            if not allowed_module(alias.name):
                self.report(module_rule(alias.name), node, "imports {}: {}".format(alias.name, ALLOWED_MESSAGE),
                            "import " + alias.name)

    def visit_ImportFrom(self, node):
        module = node.module or ""
        if node.level or not allowed_module(module):
            written = "from {}{} import ...".format("." * node.level, module)
            return self.report(module_rule(module) if module and not node.level else "import", node,
                               "imports {}: {}".format(module or "a relative module", ALLOWED_MESSAGE), written)
        for alias in node.names:
            if alias.name == "*":
                if module in ("torch", "triton"):
                    self.report(module_rule(module), node, "a star import hides which of its names are used",
                                "from {} import *".format(module))
                continue
            path = module + "." + alias.name
            torch = dotted(path, "torch")
            if torch is not None:
                # Names are checked where they are used; a torch name is bound only when some use of it can be
                # allowed (a dtype, a query, a type, or a module on the way to one).
                usable = TORCH_DTYPES | TORCH_QUERIES | TORCH_TYPES
                if not any(torch == u or u.startswith(torch + ".") for u in usable):
                    self.report("torch", node, torch_what(torch), "from {} import {}".format(module, alias.name))
            else:
                self.check_path(path, node, "from {} import {}".format(module, alias.name))

    def visit_FunctionDef(self, node):
        for decorator in node.decorator_list:
            self.visit(decorator)
        self.visit(node.args)
        if node.returns:
            self.visit_annotation(node.returns)
        device = self.device
        self.device = device or any(self.is_jit(d) for d in node.decorator_list)
        for statement in node.body:
            self.visit(statement)
        self.device = device

    visit_AsyncFunctionDef = visit_FunctionDef

    def is_jit(self, decorator):
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        return self.resolve(target) == "triton.jit"

    def visit_arg(self, node):
        if node.annotation:
            self.visit_annotation(node.annotation)

    def visit_AnnAssign(self, node):
        self.visit_annotation(node.annotation)
        self.check_store(node.target)
        self.visit(node.target)
        if node.value:
            self.visit(node.value)

    def visit_annotation(self, node):
        annotation = self.annotation
        self.annotation = True
        self.visit(node)
        self.annotation = annotation

    def visit_Call(self, node):
        self.called.add(id(node.func))
        self.generic_visit(node)

    def visit_Name(self, node):
        if node.id in BUILTIN_RULES:
            return self.report(BUILTIN_RULES[node.id], node)
        if node.id.startswith("__") and node.id.endswith("__") and node.id != "__name__":
            return self.report("introspection", node)
        path = self.aliases.get(node.id)
        if path and isinstance(node.ctx, ast.Load):  # binding a name is not using it
            self.check_path(path, node, node.id)

    def visit_Attribute(self, node):
        if node.attr.startswith("__") and node.attr.endswith("__"):
            return self.report("introspection", node)
        if node.attr in ESCAPE_ATTRIBUTES:
            return self.report(ESCAPE_ATTRIBUTES[node.attr], node)
        path = self.resolve(node)
        if path:
            if not isinstance(node.ctx, ast.Load):
                return self.report(module_rule(path) if module_rule(path) != "import" else "introspection",
                                   node, "a module's attributes are not a solution's to change")
            return self.check_path(path, node, evidence_of(node))
        if not self.device and isinstance(node.ctx, ast.Load) and node.attr not in HOST_ATTRIBUTES:
            self.report("torch", node,
                        "host code (outside @triton.jit kernels) may read only tensors' metadata (shape, dtype, "
                        "stride(), data_ptr(), ...) and launch kernels: .{} is not among them".format(node.attr))
        self.visit(node.value)

    def visit_BinOp(self, node):
        if not self.device and isinstance(node.op, ast.MatMult):
            self.report("torch", node, "the @ operator multiplies tensors with torch: the solution's own "
                        "kernels must do the work")
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        if not self.device and isinstance(node.op, ast.MatMult):
            self.report("torch", node, "the @ operator multiplies tensors with torch: the solution's own "
                        "kernels must do the work")
        self.check_store(node.target)
        self.generic_visit(node)

    def visit_Assign(self, node):
        for target in node.targets:
            self.check_store(target)
        self.generic_visit(node)

    def check_store(self, target):
        """Host code that writes into a subscript writes a tensor with a torch kernel."""
        if self.device:
            return
        for node in ast.walk(target):
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
                self.report("torch", node, "writing into a tensor from host code runs a torch kernel: the "
                            "outputs must be written by the solution's own kernels")


def parse_errors(tree, entry_points):
    """The entry points: module-level plain functions taking the ABI's parameters (docs/triton-abi.md)."""
    errors = []
    scanner = Scanner()
    scanner.collect_aliases(tree)
    defined = {node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for entry in entry_points:
        name, count = entry.rsplit(":", 1)
        count = int(count)
        node = defined.get(name)
        if node is None:
            errors.append({"line": 0, "column": 0, "message": "the file defines no function {} at module level: "
                           "it is the task's entry point (docs/triton-abi.md)".format(name)})
            continue
        if isinstance(node, ast.AsyncFunctionDef):
            errors.append({"line": node.lineno, "column": node.col_offset + 1,
                           "message": "{} must be a plain function, not async".format(name)})
        positional = len(node.args.posonlyargs) + len(node.args.args)
        if positional != count and not (node.args.vararg and positional < count):
            errors.append({"line": node.lineno, "column": node.col_offset + 1,
                           "message": "{} takes {} parameters; the entry point is called with {} "
                           "(docs/triton-abi.md)".format(name, positional, count)})
        if any(scanner.is_jit(d) for d in node.decorator_list):
            errors.append({"line": node.lineno, "column": node.col_offset + 1,
                           "message": "{} must be a plain Python function that launches the kernels, not a "
                           "@triton.jit kernel".format(name)})
    return errors


# How deep the syntax tree may nest: far beyond written code, and within what the recursive scan can walk
# (Python's recursion limit is 1000 frames, and a visit takes two a level).
MAX_DEPTH = 200


def deepest(tree):
    """The depth of the syntax tree, walked without recursion."""
    depth, stack = 0, [(tree, 1)]
    while stack:
        node, level = stack.pop()
        depth = max(depth, level)
        stack.extend((child, level + 1) for child in ast.iter_child_nodes(node))
    return depth


def main():
    mode, entry_points = sys.argv[1], sys.argv[2:]
    version = "{}.{}.{}".format(*sys.version_info[:3])
    data = sys.stdin.buffer.read()
    too_deep = "the file nests its code more than {} levels deep, too deep to be judged".format(MAX_DEPTH)
    try:
        tree = ast.parse(data.decode("utf-8"), filename="solution.py")
    except (RecursionError, MemoryError):  # the parser's own limits: the source's doing, not the host's
        if mode != "parse":
            raise
        print(json.dumps({"python": version, "errors": [{"line": 0, "column": 0, "message": too_deep}]}))
        return
    except UnicodeDecodeError as e:
        if mode != "parse":
            raise
        print(json.dumps({"python": version, "errors": [
            {"line": data[:e.start].count(b"\n") + 1, "column": 0, "message": "the file is not UTF-8 text"}]}))
        return
    except (SyntaxError, ValueError) as e:
        if mode != "parse":
            raise
        line = getattr(e, "lineno", 0) or 0
        column = getattr(e, "offset", 0) or 0
        message = getattr(e, "msg", None) or str(e)
        print(json.dumps({"python": version, "errors": [{"line": line, "column": column, "message": message}]}))
        return
    if deepest(tree) > MAX_DEPTH:
        if mode != "parse":
            raise RecursionError(too_deep)  # the parse refused it: a scan never gets such a tree
        print(json.dumps({"python": version, "errors": [{"line": 0, "column": 0, "message": too_deep}]}))
        return
    if mode == "parse":
        print(json.dumps({"python": version, "errors": parse_errors(tree, entry_points)}))
        return
    scanner = Scanner()
    scanner.collect_aliases(tree)
    scanner.visit(tree)
    scanner.found.sort(key=lambda v: v["line"])
    print(json.dumps({"python": version, "violations": scanner.found}))


main()
