#!/usr/bin/env python3
"""Every JSON document ptxbench gives other programs, as a user gets it from the command line, checked against
its schema (schemas/<kind>.schema.json, src/util/documents.h):

- each schema is a valid JSON Schema (draft 2020-12) that fixes its document's `kind` and `schema` version and
  describes every property it names;
- the commands of a CPU host's whole flow (tasks, compile, eval, the reference agent's run, a manifest run,
  results, the export, report, cache, fixit's mine, repair, reason, show, export and build) print documents that
  validate against the schema their `kind` names, with the version it fixes;
- every schema was met at least once, so none describes a document that no command prints.

    check_documents.py PTXBENCH_BINARY PROJECT_ROOT [KEEP_DIR]   (KEEP_DIR: where to keep every document)
"""

import json
import pathlib
import subprocess
import sys
import tempfile

import jsonschema

BINARY, ROOT = sys.argv[1], pathlib.Path(sys.argv[2])
KEEP = pathlib.Path(sys.argv[3]) if len(sys.argv) > 3 else None
SCHEMAS = ROOT / "schemas"
GEMM = "gemm-bf16-n4096-k4096-sm90a"
ATTENTION = "attention-fwd-d64-sm90a"
failures = []


def fail(message):
    failures.append(message)
    print("FAIL:", message)


def undescribed(schema, where):
    """The properties, at any depth, that a schema names without a description."""
    missing = []
    if isinstance(schema, dict):
        for name, sub in schema.get("properties", {}).items():
            if not isinstance(sub, dict) or "description" not in sub:
                missing.append(f"{where}.{name}")
        for key, sub in schema.items():
            missing += undescribed(sub, f"{where}.{key}" if key != "properties" else where)
    elif isinstance(schema, list):
        for i, sub in enumerate(schema):
            missing += undescribed(sub, f"{where}[{i}]")
    return missing


schemas = {}
for path in sorted(SCHEMAS.glob("*.schema.json")):
    schema = json.loads(path.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    kind = schema["properties"]["kind"].get("const")
    version = schema["properties"]["schema"].get("const")
    if path.name != f"{kind}.schema.json":
        fail(f"{path.name} fixes kind {kind!r}")
    if not isinstance(version, int):
        fail(f"{path.name} fixes no schema version")
    if set(schema.get("required", [])) < {"kind", "schema"}:
        fail(f"{path.name} does not require kind and schema")
    if schema.get("additionalProperties") is not False:
        fail(f"{path.name} allows properties it does not describe")
    for name in undescribed(schema, path.name):
        fail(f"{name} has no description")
    schemas[kind] = (version, jsonschema.Draft202012Validator(schema))
if len(schemas) < 10:
    fail(f"only {len(schemas)} schemas in {SCHEMAS}")

met = set()
data = pathlib.Path(tempfile.mkdtemp(prefix="ptxbench-documents-"))


def check(document, origin):
    kind = document.get("kind") if isinstance(document, dict) else None
    if KEEP:
        KEEP.mkdir(parents=True, exist_ok=True)
        name = f"{len(list(KEEP.iterdir())):02d}-{kind}.json"
        (KEEP / name).write_text(json.dumps({"origin": origin, "document": document}, indent=2))
    if kind not in schemas:
        fail(f"{origin}: a document of kind {kind!r}, which no schema describes")
        return document
    version, validator = schemas[kind]
    if document.get("schema") != version:
        fail(f"{origin}: {kind} version {document.get('schema')!r}, the schema's is {version}")
    for error in sorted(validator.iter_errors(document), key=lambda e: list(e.path))[:5]:
        fail(f"{origin}: {kind} at {'/'.join(map(str, error.path)) or '(top)'}: {error.message[:300]}")
    met.add(kind)
    return document


def ptxbench(*args, codes=(0,)):
    """The document a command prints with --json (its exit code one of `codes`)."""
    argv = [BINARY, "--root", str(ROOT), "--data", str(data), *args, "--json"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    origin = "ptxbench " + " ".join(args)
    if done.returncode not in codes:
        fail(f"{origin}: exit {done.returncode}: {done.stderr[-2000:]}")
        return {}
    try:
        return check(json.loads(done.stdout), origin)
    except json.JSONDecodeError as e:
        fail(f"{origin}: not one JSON document ({e}): {done.stdout[:300]!r}")
        return {}


ptxbench("tasks")
ptxbench("tasks", GEMM)
ptxbench("compile", str(ROOT / "solutions/reference/gemm_bf16_sm90a.cu"), "--task", GEMM)
ptxbench("compile", str(ROOT / "solutions/reference/gemm_bf16_sm90a.py"), "--task", GEMM, "--track", "triton")
ptxbench("compile", str(ROOT / "solutions/examples/gemm_does_not_compile.cu"), "--task", GEMM, codes=(1,))
ptxbench("eval", str(ROOT / "solutions/examples/gemm_simt.cu"), "--task", GEMM, codes=(1, 3))
agent = ptxbench("run", "--tasks", f"{GEMM},{ATTENTION}", "--turns", "2")
manifest = ptxbench("run", "--solutions", str(ROOT / "solutions"), "--tasks", GEMM, codes=(0, 3))
ptxbench("results")
ptxbench("results", "--runs")
ptxbench("results", "--id", "1")
if agent:
    ptxbench("results", "--run", str(agent["run_id"]))
    export = data / "trajectories.json"
    done = subprocess.run([BINARY, "--root", str(ROOT), "--data", str(data), "results", "--run",
                           str(agent["run_id"]), "--export", str(export)], capture_output=True, text=True)
    if done.returncode != 0:
        fail(f"results --export: exit {done.returncode}: {done.stderr[-2000:]}")
    else:
        check(json.loads(export.read_text()), "results --export")
if manifest:
    ptxbench("results", "--run", str(manifest["run_id"]))
written = ptxbench("report", "--out", str(data / "report"))
if written:
    check(json.loads((data / "report" / "report.json").read_text()), "report's report.json")
ptxbench("cache")

if agent:
    mined = ptxbench("fixit", "mine", "--runs", str(agent["run_id"]))
    if mined:
        ptxbench("fixit", "show", str(mined["run_id"]))
        repaired = ptxbench("fixit", "repair", "--mined", str(mined["run_id"]), "--teacher", "reference",
                            "--turns", "1", "--cpu-only")
        if repaired:
            ptxbench("fixit", "show", str(repaired["run_id"]))
            reasoned = ptxbench("fixit", "reason", "--repair-run", str(repaired["run_id"]), "--reasoner",
                                "reference")
            if reasoned:
                ptxbench("fixit", "show", str(reasoned["run_id"]))
            # Nothing is verified on a CPU host, so nothing is exported: exit 3, and still the document.
            ptxbench("fixit", "export", "--repair-run", str(repaired["run_id"]), "--out", str(data / "export"),
                     codes=(3,))
    ptxbench("fixit", "build", str(ROOT / "fixit/s3.json"), "--out", str(data / "s3"), "--runs",
             str(agent["run_id"]), "--tasks", GEMM, "--teacher", "reference", "--reasoner", "reference",
             "--cpu-only", codes=(3,))

for kind in sorted(set(schemas) - met):
    fail(f"no command printed a {kind} document")
subprocess.run(["rm", "-rf", str(data)])
print(f"{len(schemas)} schemas, {len(met)} kinds met, {len(failures)} failures")
sys.exit(1 if failures else 0)
