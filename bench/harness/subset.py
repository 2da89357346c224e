#!/usr/bin/env python3
"""Rewrites a solutions manifest to keep, or to skip, the entries whose file's name (without its extension) is
one of NAMES: on a GPU host's copy of the repository, to resume a manifest run that a device call's time limit
cut short (--skip), or to run a few entries of it (--keep).

    bench/harness/subset.py tests/adversarial --skip NAME...
    bench/harness/subset.py tests/adversarial --keep NAME...
"""
import json
import os
import sys

folder, mode, names = sys.argv[1], sys.argv[2], set(sys.argv[3:])
if mode not in ("--keep", "--skip"):
    sys.exit("subset.py: the second argument is --keep or --skip")
path = os.path.join(folder, "solutions.json")
entries = json.load(open(path))
kept = [e for e in entries if (os.path.splitext(os.path.basename(e["path"]))[0] in names) == (mode == "--keep")]
json.dump(kept, open(path, "w"), indent=2)
print(f"{path}: {len(kept)} of {len(entries)} entries kept")
