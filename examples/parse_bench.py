#!/usr/bin/env python3
# Reference from the project's shared bench (/work/shared/bench/py_parse.py), unchanged: the Python baseline.
"""Reference: Python's csv and json modules doing what `cgp-gate parse --json` does on an ncu raw page: read it,
strip thousands separators, turn every cell into a float, and write the launches as JSON."""
import csv, json, sys
with open(sys.argv[1], newline="") as f:
    lines = (l for l in f if not l.startswith("=="))
    r = csv.reader(lines)
    head = next(r); units = next(r)
    out = []
    for row in r:
        metrics = {h: {"value": float(v.replace(",", "")), "unit": u} for h, u, v in zip(head[11:], units[11:], row[11:])}
        out.append({"id": int(row[0]), "kernel": row[4], "metrics": metrics})
sys.stdout.write(json.dumps({"launches": out}))
