#!/usr/bin/env python3
"""What bench/multi-gpu/run.sh measured: for each mode's folder, the run's wall time, the evaluations the GPUs
judged, evaluations per minute and each GPU's share (the verdicts' `device`: the CUDA_VISIBLE_DEVICES value an
evaluation ran under, "" for the judge's own default GPU); then whether the modes' verdicts agree, task by task.

    python3 bench/multi-gpu/summary.py OUT/local-1 OUT/local-2 OUT/service

Needs only python3 (the stores are SQLite)."""
import collections
import json
import pathlib
import sqlite3
import sys

GPU_STAGES = ("sanitize", "correct", "instructions", "time")


def load(folder):
    folder = pathlib.Path(folder)
    times = dict(line.split(" ", 1) for line in (folder / "time.txt").read_text().splitlines() if " " in line)
    db = sqlite3.connect(folder / "data" / "ptxbench.db")
    rows = db.execute("SELECT task_id, source_name, verdict FROM evaluations ORDER BY id").fetchall()
    verdicts = [(task, source, json.loads(text)) for task, source, text in rows]
    judged = [v for _, _, v in verdicts
              if any(s["name"] in GPU_STAGES and s["status"] != "skipped" for s in v["stages"])]
    return {"name": folder.name, "wall_s": float(times["wall_s"]), "exit": times.get("exit", "?"),
            "verdicts": verdicts, "judged": judged}


def main(folders):
    modes = [load(f) for f in folders]
    print("| mode | wall s | GPU-judged evaluations | per minute | share per device | run's exit |")
    print("|---|---|---|---|---|---|")
    for m in modes:
        shares = collections.Counter(v.get("device", "") for v in m["judged"])
        share_text = ", ".join(f"{device or 'default'}: {n}" for device, n in sorted(shares.items()))
        print(f"| {m['name']} | {m['wall_s']:.1f} | {len(m['judged'])} | "
              f"{60 * len(m['judged']) / m['wall_s']:.2f} | {share_text} | {m['exit']} |")

    # The service's workers: what each judged, and the jobs judged again after a worker died.
    for m, folder in zip(modes, folders):
        for log in sorted(pathlib.Path(folder).glob("worker*.log")):
            lines = log.read_text(errors="replace").splitlines()
            jobs = [line for line in lines if " attempt " in line]
            again = [line for line in jobs if " attempt 1:" not in line]
            print(f"\n{m['name']} {log.stem}: {len(jobs)} job(s) judged; again after a lease ran out: {len(again)}")
            for line in again:
                print(f"    {line}")
        kill = pathlib.Path(folder) / "kill.txt"
        if kill.exists() and kill.read_text().strip():
            print(f"{m['name']}: {kill.read_text().strip()}")

    # The verdicts of each (task, source) in each mode: the overall status and the speedup.
    print()
    names = [m["name"] for m in modes]
    print("| task | source | " + " | ".join(names) + " |")
    print("|---|---|" + "---|" * len(names))
    keys = sorted({(task, source) for m in modes for task, source, _ in m["verdicts"]})
    differ = 0
    for key in keys:
        cells, statuses = [], set()
        for m in modes:
            found = [v for task, source, v in m["verdicts"] if (task, source) == key]
            if not found:
                cells.append("-")
                continue
            v = found[-1]
            statuses.add(v["status"])
            speedup = f" {v['speedup']:.3f}x" if v.get("speedup") is not None else ""
            cells.append(f"{v['status']}{speedup}")
        differ += len(statuses) > 1
        print(f"| {key[0]} | {key[1]} | " + " | ".join(cells) + " |")
    print(f"\n{len(keys)} (task, source) pairs; {differ} with different statuses across the modes.")
    return 1 if differ else 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1:]))
