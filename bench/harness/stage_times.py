#!/usr/bin/env python3
"""Each stored verdict's stage times, from a ptxbench store: one line per evaluation (task, source, verdict,
each stage's seconds; the sanitize stage's tools in brackets; the GPU stages' seconds together, `gpu`, where a
stage that started with another (`started_with`) counts only what it ran beyond it; the runner's steps of the
correct and time stages, `phases_s`, where the verdict has them), then each stage's total and mean, and the GPU
stages' together.

    bench/harness/stage_times.py DATA/ptxbench.db [--run N] [--json OUT]
"""
import argparse
import json
import sqlite3
import statistics
import sys


def time_checks(verdict):
    """The time stage's figures that its checks compare: the solution's medians (events, wall, the request's
    round trip and its p90) and the calibrated round trip at that call length; and where its timed calls'
    loop spent its seconds (`loop_s`) and the steps before it (`setup_s`), with the calls checked, where the
    verdict has them."""
    for s in verdict.get("stages", []):
        d = s.get("details")
        if s.get("name") != "time" or not isinstance(d, dict) or not isinstance(d.get("solution"), dict):
            continue
        sol, cal = d["solution"], d.get("calibration") or {}
        get = lambda series, key: (sol.get(series) or {}).get(key)
        out = {"event_us": get("event_us", "median"), "wall_us": get("wall_us", "median"),
               "round_trip_us": get("round_trip_us", "median"), "round_trip_p90": get("round_trip_us", "p90"),
               "calibrated_round_trip_us": cal.get("round_trip_us"), "calibrated_gap_us": cal.get("gap_us"),
               "times_verified": d.get("times_verified"), "checked_calls": d.get("checked_calls")}
        for steps in ("setup", "loop"):
            if isinstance(d.get(f"{steps}_s"), dict):
                out.update({f"{steps}_{k}_s": w for k, w in d[f"{steps}_s"].items()})
        return {k: round(v, 2 if k.startswith(("loop_", "setup_")) else 1) if isinstance(v, float) else v
                for k, v in out.items()}
    return {}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("db")
    parser.add_argument("--run", type=int, help="only this run's evaluations")
    parser.add_argument("--json", help="also write the rows here")
    args = parser.parse_args()
    db = sqlite3.connect(f"file:{args.db}?mode=ro", uri=True)
    query = "SELECT id, run_id, task_id, source_name, status, speedup, verdict FROM evaluations"
    rows = db.execute(query + (" WHERE run_id = ?" if args.run else "") + " ORDER BY id",
                      (args.run,) if args.run else ()).fetchall()
    table, per_stage, gpu_totals = [], {}, []
    for eid, run, task, source, status, speedup, verdict in rows:
        v = json.loads(verdict)
        stages = {}
        for s in v.get("stages", []):
            if s.get("status") in ("skipped", None):
                continue
            entry = {"status": s["status"], "wall_s": round(s.get("wall_s", 0.0), 2)}
            details = s.get("details") if isinstance(s.get("details"), dict) else {}
            tools = {t: round(d["wall_s"], 2) for t, d in details.items()
                     if isinstance(d, dict) and isinstance(d.get("wall_s"), (int, float))}
            if tools:
                entry["tools"] = tools
            if isinstance(details.get("phases_s"), dict):
                entry["phases"] = {k: round(w, 2) for k, w in details["phases_s"].items()}
            if isinstance(details.get("started_with"), str):
                entry["started_with"] = details["started_with"]
            stages[s["name"]] = entry
            per_stage.setdefault(s["name"], []).append(entry["wall_s"])
        timing = time_checks(v)
        gpu = 0.0
        for name, e in stages.items():
            if name in ("compile", "static"):
                continue
            beside = stages.get(e.get("started_with"), {}).get("wall_s", 0.0)
            gpu += max(0.0, e["wall_s"] - beside)
        gpu = round(gpu, 2)
        gpu_totals.append(gpu)
        table.append({"id": eid, "run": run, "task": task, "source": source, "status": status,
                      "speedup": speedup, "stages": stages, "gpu_s": gpu, "timing": timing})
        cells = []
        for name, e in stages.items():
            tools = " [" + " ".join(f"{t} {w:.1f}" for t, w in e["tools"].items()) + "]" if "tools" in e else ""
            cells.append(f"{name} {e['wall_s']:.1f}{tools}")
        print(f"{eid:4} {task:40} {source:40} {status:8} gpu {gpu:.1f}: " + ", ".join(cells))
        # The correct and time stages share one runner process, whose steps both report: printed once.
        seen = []
        for name, e in stages.items():
            if "phases" in e and e["phases"] not in seen:
                seen.append(e["phases"])
                shared = [other for other, o in stages.items() if o.get("phases") == e["phases"]]
                print(f"     {'+'.join(shared)} steps: " + ", ".join(f"{k} {w:.2f}" for k, w in e["phases"].items()))
        if timing:
            print("     time: " + ", ".join(f"{k} {v}" for k, v in timing.items()))
    for name, walls in per_stage.items():
        print(f"{name:13} n={len(walls):3} total {sum(walls):8.1f} s  mean {statistics.mean(walls):6.2f} s  "
              f"max {max(walls):6.1f} s")
    if gpu_totals:
        print(f"{'gpu stages':13} n={len(gpu_totals):3} total {sum(gpu_totals):8.1f} s  "
              f"mean {statistics.mean(gpu_totals):6.2f} s  max {max(gpu_totals):6.1f} s")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(table, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
