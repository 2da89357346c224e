#!/usr/bin/env python3
"""Rewrites a solutions manifest without the entries whose file's name (without its extension) is one of NAMES:
to resume, on a GPU host's copy of the repository, a manifest run that a device call's time limit cut short.

    bench/harness/skip_entries.py tests/adversarial NAME...
"""
import json
import os
import sys

folder, names = sys.argv[1], set(sys.argv[2:])
path = os.path.join(folder, "solutions.json")
entries = json.load(open(path))
kept = [e for e in entries if os.path.splitext(os.path.basename(e["path"]))[0] not in names]
json.dump(kept, open(path, "w"), indent=2)
print(f"{path}: {len(kept)} of {len(entries)} entries kept")
