#!/usr/bin/env bash
# Tile-configuration A/B of the reference attention forward (solutions/reference/attention_forward_sm90a.cu).
# Each variant is a copy of the solution with rows of its tuning table rewritten, and nothing else; README.md
# beside this script says why each variant is there and what ptxas made of it. None has run on a GPU yet.
#
#   bench/attention-tune/variants.sh [VARIANT...]          GPU host: `ptxbench eval --stages correct,time` of each
#                                                          variant on its tasks, then one table (default: the
#                                                          matrix, default m192 n192, about 7 minutes)
#   bench/attention-tune/variants.sh --ptxas [VARIANT...]  any host with nvcc: compile each variant with the
#                                                          judge's flags; registers, spills, C75xx lines per kernel
#                                                          (default: every variant, the dropped ones too)
#   bench/attention-tune/variants.sh --list                the variants, their rows and tasks
#   bench/attention-tune/variants.sh --model [VARIANT...]  a model of each variant's wasted work and wave balance
#                                                          on its tasks' main shapes (arithmetic, no compiler)
#
# Uses build/ptxbench and build/ptxbench-runner (or $PTXBENCH_BIN). Writes at most four files to $OUT (default
# bench/attention-tune/out; the device tool's $OUT brings them back): variants-table.md, variants-results.json
# (per evaluation: status, times, speedup, the task's kernels' registers and spills, each stage's message),
# variants-verdicts.jsonl (the whole verdicts) and variants-log.txt. Variant sources and the ptxbench store go to
# $WORK (default: a fresh temporary folder). BUDGET_S (default 470) bounds the run: an evaluation whose estimate
# would end past it is skipped and said so, so the table always comes back within one 10-minute device call.
# STAGE_LIMIT (default 100 s) is each GPU stage's limit, so a variant that hangs costs 100 s, not 120 s.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PTXBENCH_ROOT=$PWD
exec python3 - "$@" <<'PY'
import json, os, re, shutil, subprocess, sys, tempfile, time

SOURCE = "solutions/reference/attention_forward_sm90a.cu"
TASK = {"d64": "attention-fwd-d64-sm90a", "d64c": "attention-fwd-d64-causal-sm90a",
        "d96": "attention-fwd-d96-sm90a", "d96c": "attention-fwd-d96-causal-sm90a",
        "d128": "attention-fwd-d128-sm90a", "d128c": "attention-fwd-d128-causal-sm90a",
        "gqa": "attention-fwd-gqa32x4-d128-causal-sm90a"}
# Seconds one `eval --stages correct,time` took on the H200 on 2026-12-01 at 17:45 UTC (9-17 s, with the
# runner's SGEMM reference), plus a margin for the process, the sandbox and a first compile.
ESTIMATE_S = {"d64": 22, "d64c": 18, "d96": 22, "d96c": 18, "d128": 20, "d128c": 18, "gqa": 18}

# Rows are (D, causal): (consumers, bn, stages, producer_regs, consumer_regs, bottom), as in the tuning table.
# "tasks" are run in this order; "matrix" variants run when none is named; "dropped" ones only compile
# (--ptxas), with the reason they cannot run well.
M192 = (3, 128, 4, 32, 160, False)  # FlashAttention-3's D = 64 tile: 192 query rows x 128 keys, 32/160 registers
M192_BOTTOM = M192[:5] + (True,)
VARIANTS = {
    "default": dict(rows={}, tasks=["d64", "d128", "d64c"], matrix=True,
                    why="the shipped table, measured in the same session as the others"),
    "previous": dict(rows={(64, False): (2, 128, 4, 40, 232, False), (64, True): (2, 128, 4, 40, 232, False),
                           (128, False): (2, 128, 2, 40, 232, False)}, tasks=["d64", "d128", "d64c"],
                     why="the table before 2026-12-01's measurement (2 consumers, bn 128 on every row), which "
                         "that run calls default"),
    "m192": dict(rows={(64, False): M192, (64, True): M192_BOTTOM, (128, False): (2, 128, 2, 24, 240, False)},
                 tasks=["d64", "d128", "d64c"], matrix=True,
                 why="D = 64: FlashAttention-3's 192 x 128 tile (3 consumers, round robin, 32/160 registers), "
                     "causal with bottom-aligned tiles; D = 128 non-causal: the shipped tile at FlashAttention-3's "
                     "24/240 registers (registers alone, no change of shape)"),
    "n192": dict(rows={(64, False): (2, 192, 4, 40, 232, False), (128, False): (2, 160, 2, 40, 232, False)},
                 tasks=["d64", "d128"], matrix=True,
                 why="D = 64 non-causal: FlashAttention-3's bn 192 with the shipped 2 consumers (3 cannot hold a "
                     "192-wide S and P in 160 registers); D = 128 non-causal: bn 160 at the shipped 40/232, the "
                     "widest block that fits beside separate O staging (width alone)"),
    "m192top": dict(rows={(64, True): M192}, tasks=["d64c"],
                    why="m192 at D = 64 causal with top-aligned tiles: what bottom alignment is worth"),
    "m192s5": dict(rows={(64, False): (3, 128, 5, 32, 160, False), (64, True): (3, 128, 5, 32, 160, True)},
                   tasks=["d64", "d64c"], why="m192 at D = 64 with a fifth K/V stage (208 KB)"),
    "m192n112": dict(rows={(64, False): (3, 112, 4, 32, 160, False), (64, True): (3, 112, 4, 32, 160, True)},
                     tasks=["d64", "d64c"],
                     why="3 consumers with bn 112: the register margin m192 lacks (no spill down to 152)"),
    "n192r240": dict(rows={(64, False): (2, 192, 4, 24, 240, False)}, tasks=["d64"],
                     why="n192 at D = 64 with FlashAttention-3's 24/240 registers"),
    "d128n144": dict(rows={(128, False): (2, 144, 2, 40, 232, False)}, tasks=["d128"],
                     why="D = 128 non-causal between the shipped 128 and 160"),
    "d128n160r240": dict(rows={(128, False): (2, 160, 2, 24, 240, False)}, tasks=["d128"],
                         why="D = 128 non-causal with both of the matrix's changes: bn 160 and 24/240 registers"),
    "m192n192": dict(rows={(64, False): (3, 192, 3, 32, 160, False)}, tasks=["d64"],
                     dropped="spills: at 160 registers S (96) + P (48) + O (32) do not fit; FlashAttention-3 "
                             "runs 192 x 192 with P through shared memory (SS wgmma), which this kernel lacks"),
    "n256": dict(rows={(64, False): (2, 256, 3, 24, 240, False)}, tasks=["d64"],
                 dropped="spills: S (128) + P (64) + O (32) registers exceed 240"),
    "d128n176": dict(rows={(128, False): (2, 176, 2, 24, 240, False)}, tasks=["d128"],
                     dropped="does not fit: Q 32 KB + 2 stages of K and V (176 KB) + O staging 32 KB = 240 KB > "
                             "227 KB; FlashAttention-3 fits 128 x 176 by staging O over V, which this kernel "
                             "does not do"),
}

TABLE_BEGIN = "// ====================================================================================== the tuning table"
TABLE_END = "// ================================================================================= end of the tuning table"
ROW = re.compile(r"^(\s*)\{(\d+), (false|true), \{(\d+), (\d+), (\d+), (\d+), (\d+), (false|true)\}\},", re.M)


def table_rows(text):
    """The tuning table's rows in order: [((D, causal), config)]."""
    begin, end = text.index(TABLE_BEGIN), text.index(TABLE_END)
    rows = [((int(m[2]), m[3] == "true"), tuple(int(x) for x in m.groups()[3:8]) + (m[9] == "true",))
            for m in ROW.finditer(text[begin:end])]
    if len(rows) != len(re.findall(r"^\s*\{\d+,", text[begin:end], re.M)):
        sys.exit(f"a row of the tuning table in {SOURCE} is not in the form this script reads: {ROW.pattern}")
    return rows


def make_variant(text, rows):
    """The solution with the given rows of its tuning table rewritten; every other byte unchanged."""
    begin, end = text.index(TABLE_BEGIN), text.index(TABLE_END)
    table, left = text[begin:end], dict(rows)

    def rewrite(m):
        key = (int(m[2]), m[3] == "true")
        if key not in left:
            return m[0]
        config = left.pop(key)
        return f"{m[1]}{{{key[0]}, {'true' if key[1] else 'false'}, {spell(config)}}},"
    table = ROW.sub(rewrite, table)
    if left:
        sys.exit(f"no row for {sorted(left)} in the tuning table of {SOURCE}")
    return text[:begin] + table + text[end:]


def kernel_rows(rows):
    """Mirrors the solution's kernel_row(): per kernel (D, row index), the (D, causal) keys it serves."""
    kernels = {}
    for i, (key, config) in enumerate(rows):
        first = next(j for j, (k, c) in enumerate(rows) if k[0] == key[0] and c == config)
        kernels.setdefault((key[0], first), []).append(key)
    return kernels


def smem_bytes(d, config):
    """Mirrors Config::kSmemBytes: Q, the K and V ring, one O staging buffer per consumer, barriers, slack."""
    consumers, bn, stages = config[:3]
    blocks = (d + 63) // 64
    return (blocks * 64 * consumers * 128 + 2 * stages * blocks * bn * 128 + consumers * blocks * 64 * 128
            + (2 + 4 * stages) * 8 + 1024)


def spell(config):
    """A row's configuration as the table writes it: {3, 128, 4, 32, 160, true}."""
    return "{" + ", ".join(str(x).lower() for x in config) + "}"


def describe(rows):
    return "; ".join(f"D={d}{' causal' if c else ''}: {spell(cfg)}" for (d, c), cfg in sorted(rows.items())) \
        or "(none)"


args = sys.argv[1:]
mode = "run"
if args and args[0] in ("--ptxas", "--list", "--model"):
    mode, args = args[0][2:], args[1:]
unknown = [a for a in args if a not in VARIANTS]
if unknown:
    sys.exit(f"unknown variant(s) {unknown}; known: {', '.join(VARIANTS)}")
source = open(SOURCE).read()
shipped = dict(table_rows(source))

if mode == "list":
    for name, v in VARIANTS.items():
        state = "dropped: " + v["dropped"] if "dropped" in v else ("in the matrix" if v.get("matrix") else "extra")
        print(f"{name}: {describe(v['rows'])}\n  tasks {', '.join(v['tasks'])}; {state}\n  {v['why'] if 'why' in v else ''}")
    sys.exit(0)

if mode == "model":
    # The kernel's persistent schedule (tile_index, tile_at) replayed on the main shape, with a tile's time taken
    # as proportional to the scores it computes (its rows x its key blocks' keys): "computed / visible" is the work
    # on masked, padded or missing scores; "efficiency" is the visible scores over the busiest CTA's x 132, the
    # share of the GPU's time the schedule can spend on useful scores. It ignores per-tile and per-block overheads
    # (prologue, epilogue, barriers), which is what larger tiles buy back.
    import math
    print("| variant | task | tile | computed / visible | efficiency |")
    print("|---|---|---|---|---|")
    for name in args or [n for n, v in VARIANTS.items() if "dropped" not in v]:
        for task in VARIANTS[name]["tasks"]:
            spec = json.load(open(f"tasks/sm90a/{TASK[task]}.json"))
            dims, causal = spec["shapes"]["main"], spec["parameters"]["causal"]
            B, H, Sq, Sk, d = dims["B"], dims["Hq"], dims["Sq"], dims["Sk"], dims["D"]
            config = {**shipped, **VARIANTS[name]["rows"]}[(d, causal)]
            bm, bn, bottom = 64 * config[0], config[1], config[5]
            m_blocks = math.ceil(Sq / bm)
            tiles, grid = m_blocks * B * H, min(m_blocks * B * H, 132)
            shift = (m_blocks * bm - Sq) & ~63 if bottom else 0
            load = [0] * grid
            for t in range(tiles):
                wave, c = divmod(t, grid)
                cta = grid - 1 - c if causal and wave % 2 else c
                m_block = m_blocks - 1 - t // (B * H) if causal else t % m_blocks
                m0 = m_block * bm - shift
                n_end = min(Sk, m0 + bm + Sk - Sq) if causal else Sk
                load[cta] += bm * math.ceil(max(n_end, 0) / bn) * bn
            visible = B * H * sum(max(0, min(Sk, i + 1 + Sk - Sq)) if causal else Sk for i in range(Sq))
            print(f"| {name} | {TASK[task]} | {bm} x {bn}{', bottom' if bottom else ''} | "
                  f"{sum(load) / visible:.3f} | {visible / (max(load) * grid):.3f} |")
    sys.exit(0)

work = os.environ.get("WORK") or tempfile.mkdtemp(prefix="attention-tune-")
os.makedirs(f"{work}/src", exist_ok=True)


def write_variant(name):
    path = f"{work}/src/{name}.cu"
    open(path, "w").write(make_variant(source, VARIANTS[name]["rows"]))
    return path


if mode == "ptxas":
    # The judge's nvcc flags (src/compile/compile.cpp, nvcc_flags) with the include folders it adds.
    flags = ["-gencode", "arch=compute_90a,code=sm_90a", "-std=c++20", "-O3", "-lineinfo", "-shared", "-Xcompiler",
             "-fPIC", "-cudart", "shared", "-Xptxas", "-v", "-Iinclude", "-Ikits/common/ptx", "-Ikits/hopper/ptx"]
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    print("| variant | kernel <D, row> | serves | consumers, bn, stages, regs | shared bytes | registers at launch "
          "| stack | spill stores / loads | ptxas C75xx lines |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in args or list(VARIANTS):
        path = write_variant(name)
        rows = table_rows(open(path).read())
        done = subprocess.run([nvcc, *flags, path, "-o", f"{work}/src/{name}.so"], capture_output=True, text=True)
        out = done.stdout + done.stderr
        open(f"{work}/src/{name}.log", "w").write(out)
        if done.returncode != 0:
            errors = [l.split("error: ", 1)[1] for l in out.splitlines() if "error: " in l]
            print(f"| {name} | - | - | {describe(VARIANTS[name]['rows'])} | - | - | - | - | "
                  f"compile failed: {errors[0] if errors else 'see ' + name + '.log'} |")
            continue
        warnings = [re.search(r"\((C75\d\d)\)", l)[1] for l in out.splitlines() if re.search(r"\(C75\d\d\)", l)]
        entries = re.split(r"Compiling entry function '", out)[1:]
        kernels = kernel_rows(rows)
        for entry in entries:
            m = re.search(r"attention_forward_kernelILi(\d+)ELi(\d+)E", entry)
            d, row = int(m[1]), int(m[2])
            regs = re.search(r"Used (\d+) registers", entry)[1]
            stack, stores, loads = re.search(
                r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", entry).groups()
            config = rows[row][1]
            serves = ", ".join(("causal" if c else "non-causal") for _, c in kernels[(d, row)])
            own = [w for w in warnings if w in entry]
            print(f"| {name} | <{d}, {row}> | {serves} | {spell(config)} | {smem_bytes(d, config)} | {regs} | {stack} | "
                  f"{stores} / {loads} | {', '.join(own) or 'none'} |")
    sys.exit(0)

# ------------------------------------------------------------------------------------------------ run (GPU host)
names = args or [n for n, v in VARIANTS.items() if v.get("matrix")]
bin_dir = os.environ.get("PTXBENCH_BIN", "build")
ptxbench = f"{bin_dir}/ptxbench"
os.environ.setdefault("PTXBENCH_RUNNER", f"{bin_dir}/ptxbench-runner")
os.environ.setdefault("PTXBENCH_DATA", f"{work}/data")
out = os.environ.get("OUT") or "bench/attention-tune/out"
os.makedirs(out, exist_ok=True)
budget, stage_limit = float(os.environ.get("BUDGET_S", 470)), os.environ.get("STAGE_LIMIT", "100")
log = open(f"{out}/variants-log.txt", "a")


def say(line):
    print(line, flush=True)
    log.write(line + "\n")
    log.flush()


# Task-major order: one task's variants run back to back (less drift between the numbers compared), the tasks
# furthest from 1.0x first (d64 0.915x, d128 0.957x, d64 causal 0.956x).
order = []
for task in ["d64", "d128", "d64c", "d96", "d96c", "d128c", "gqa"]:
    order += [(name, task) for name in names if task in VARIANTS[name]["tasks"]]
expected = sum(ESTIMATE_S[t] for _, t in order)
say(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} variants {', '.join(names)}: {len(order)} evaluations, "
    f"about {expected} s by the 2026-12-01 figures; budget {budget:.0f} s; work folder {work}")
for name in names:
    say(f"  {name}: {describe(VARIANTS[name]['rows'])}" + (f" (dropped: {VARIANTS[name]['dropped']})"
                                                          if "dropped" in VARIANTS[name] else ""))
sources = {name: write_variant(name) for name in names}

results, start = [], time.monotonic()
verdicts = open(f"{out}/variants-verdicts.jsonl", "a")
for name, task in order:
    elapsed = time.monotonic() - start
    entry = {"variant": name, "task": TASK[task], "rows": describe(VARIANTS[name]["rows"])}
    if elapsed + ESTIMATE_S[task] > budget:
        entry.update(status="skipped", summary=f"budget: {elapsed:.0f} s spent, about {ESTIMATE_S[task]} s more")
        results.append(entry)
        say(f"{name} {task}: skipped (budget)")
        continue
    began = time.monotonic()
    done = subprocess.run(["timeout", "-k", "10", "300", ptxbench, "eval", sources[name], "--task", TASK[task],
                           "--stages", "correct,time", "--stage-time-limit", stage_limit, "--json"],
                          capture_output=True, text=True)
    entry["eval_s"] = round(time.monotonic() - began, 1)
    try:
        verdict = json.loads(done.stdout)
    except ValueError:
        entry.update(status="no verdict", summary=f"exit {done.returncode}: {done.stderr.strip()[-300:]}")
        results.append(entry)
        say(f"{name} {task}: no verdict (exit {done.returncode})")
        continue
    verdicts.write(json.dumps({"variant": name, **verdict}) + "\n")
    verdicts.flush()
    stages = {s["name"]: s for s in verdict["stages"]}
    # The kernel this task runs: the one compiled from the row kernel_row() picks for its (D, causal).
    d, causal = int(re.search(r"-d(\d+)", TASK[task])[1]), "causal" in TASK[task]
    rows = table_rows(open(sources[name]).read())
    row = next(r for (kd, r), keys in kernel_rows(rows).items() if (d, causal) in keys)
    kernels = [k for k in stages["compile"].get("details", {}).get("kernels", [])
               if f"attention_forward_kernel<{d}, {row}>" in k.get("name", "")]
    timing = stages.get("time", {}).get("details") or {}
    solution, baseline = timing.get("solution") or {}, timing.get("baseline") or {}
    entry.update(
        status=verdict["status"], summary=verdict["summary"], speedup=verdict.get("speedup"),
        solution_us=(solution.get("event_us") or {}).get("median"), tflops=solution.get("tflops"),
        baseline_us=(baseline.get("event_us") or {}).get("median"), baseline=baseline.get("name"),
        kernels=[{k: kern.get(k) for k in ("name", "registers", "stack_bytes", "spill_store_bytes",
                                           "spill_load_bytes")} for kern in kernels],
        ptxas_warnings=stages["compile"].get("details", {}).get("ptxas_warnings", []),
        stages={s: {"status": v["status"], "wall_s": v.get("wall_s"), "message": v.get("message", "")[:400]}
                for s, v in stages.items()})
    results.append(entry)
    say(f"{name} {task}: " + (f"{verdict['status']}, {entry['solution_us']:.1f} us vs {entry['baseline_us']:.1f} us, "
        f"{entry['speedup']:.3f}x" if entry.get("speedup") else verdict["summary"]) + f" ({entry['eval_s']} s)")
json.dump(results, open(f"{out}/variants-results.json", "w"), indent=1)


def fmt(x, spec):
    return format(x, spec) if isinstance(x, (int, float)) else "-"


default_speedup = {r["task"]: r.get("speedup") for r in results if r["variant"] == "default"}
lines = [f"Variants of {SOURCE} (the tuning table's rows rewritten), `ptxbench eval --stages correct,time`; "
         f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {time.monotonic() - start:.0f} s.", "",
         "| variant | task | status | solution us | TFLOP/s | baseline us | speedup | vs default | regs / spills "
         "| C75xx | eval s |", "|---|---|---|---|---|---|---|---|---|---|---|"]
for r in results:
    base = default_speedup.get(r["task"])
    ratio = r["speedup"] / base if r.get("speedup") and base else None
    spills = ", ".join(f"{k['registers']} / {k['spill_store_bytes']}" for k in r.get("kernels", [])) or "-"
    lines.append(f"| {r['variant']} | {r['task']} | {r['status']} | {fmt(r.get('solution_us'), '.1f')} | "
                 f"{fmt(r.get('tflops'), '.0f')} | {fmt(r.get('baseline_us'), '.1f')} | "
                 f"{fmt(r.get('speedup'), '.3f')} | {fmt(ratio, '.3f')} | {spills} | "
                 f"{len(r.get('ptxas_warnings', [])) if 'ptxas_warnings' in r else '-'} | {r.get('eval_s', '-')} |")
lines += ["", "Rows per variant:"] + [f"- {n}: {describe(VARIANTS[n]['rows'])}" for n in names]
failed = [r for r in results if r["status"] not in ("passed", "skipped")]
lines += [""] + [f"- {r['variant']} on {r['task']}: {r['status']}: {r['summary']}" for r in failed]
open(f"{out}/variants-table.md", "w").write("\n".join(lines) + "\n")
say("\n".join(lines))
sys.exit(1 if failed else 0)
PY
