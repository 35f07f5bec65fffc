#!/usr/bin/env python3
"""Write a SYNTHETIC history for timing `cgp-gate changes` (docs/ab-and-changes.md).

    python3 examples/changes_bench_gen.py OUT_DIR N [STEP_AT] [STEP]

N results files OUT_DIR/r0000.json ... made from tests/fixtures/results/mixed.json (9 rows, 8 with
a candidate median): every candidate median gets seeded log-normal noise (CV 1%), and the
`gpu__time_duration.sum` rows step up by STEP (default 0.05) from result STEP_AT (default
0.6 N) on. Every file is marked `"synthetic": true`. Not a GPU measurement.
"""
import json
import math
import os
import random
import sys

out, n = sys.argv[1], int(sys.argv[2])
step_at = int(sys.argv[3]) if len(sys.argv) > 3 else int(0.6 * n)
step = float(sys.argv[4]) if len(sys.argv) > 4 else 0.05
here = os.path.dirname(os.path.abspath(__file__))
template = json.load(open(os.path.join(here, "..", "tests", "fixtures", "results", "mixed.json")))
rng = random.Random(42)
os.makedirs(out, exist_ok=True)
for i in range(n):
    d = json.loads(json.dumps(template))
    d["synthetic"] = True
    d["git_commit"] = f"{i:040x}"
    d["date"] = f"2026-{1 + i // (28 * 24) % 12:02d}-{1 + i // 24 % 28:02d}T{i % 24:02d}:00:00Z"
    for r in d["rows"]:
        c = r.get("candidate")
        if not c:
            continue
        level = 1.0 + (step if i >= step_at and r["metric"] == "gpu__time_duration.sum" else 0.0)
        v = c["median"] * level * math.exp(0.01 * rng.gauss(0, 1))
        c.update(median=v, min=v, max=v, samples=[v], n=1)
    with open(os.path.join(out, f"r{i:04d}.json"), "w") as f:
        json.dump(d, f)
