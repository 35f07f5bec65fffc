#!/usr/bin/env python3
"""Write a SYNTHETIC history for measuring the `cgp-gate history` site (docs/history.md).

    python3 examples/history_bench_gen.py OUT_DIR FILES SERIES [GPUS]

FILES results files OUT_DIR/r0000.json ... of SERIES rows each (FILES x SERIES results), made
from tests/fixtures/results/mixed.json's first compared row: target `t<k>` (k < SERIES), spread
over GPUS GPU names (default 2). Each row's estimate is its baseline times seeded log-normal
noise (CV 1%), with an interval of +-1% and a 5% threshold; every 25th series steps up 5% from
0.6 FILES on (a regression where its interval is above the threshold). Every file is marked
`"synthetic": true`. Not a GPU measurement.
"""
import hashlib
import json
import math
import os
import random
import sys

out, n, m = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
gpus = int(sys.argv[4]) if len(sys.argv) > 4 else 2
here = os.path.dirname(os.path.abspath(__file__))
template = json.load(open(os.path.join(here, "..", "tests", "fixtures", "results", "mixed.json")))
proto = next(r for r in template["rows"] if r.get("change") is not None and r.get("baseline"))
rng = random.Random(42)
os.makedirs(out, exist_ok=True)
for i in range(n):
    d = json.loads(json.dumps(template))
    d["synthetic"] = True
    d["git_commit"] = hashlib.sha1(str(i).encode()).hexdigest()
    d["date"] = f"2026-{1 + i // (28 * 24) % 12:02d}-{1 + i // 24 % 28:02d}T{i % 24:02d}:00:00Z"
    rows = []
    for k in range(m):
        r = json.loads(json.dumps(proto))
        r["target"] = f"t{k // 4}"
        r["size"] = f"n={1 << (10 + k % 4)}"
        r["gpu"] = f"GPU {k % gpus}"
        base = r["baseline"]["median"]
        r["threshold"] = {"kind": "relative", "fraction": 0.05, "tolerance": 0.05, "limit": base * 1.05}
        f = math.exp(0.01 * rng.gauss(0, 1)) * (1.05 if k % 25 == 0 and i >= 0.6 * n else 1.0)
        r["change"] = f - 1
        r["change_ci"] = [f * 0.99 - 1, f * 1.01 - 1]
        r["candidate"]["median"] = base * f
        r["verdict"] = "regression" if r["change_ci"][0] > 0.05 else "pass"
        rows.append(r)
    d["rows"] = rows
    with open(os.path.join(out, f"r{i:04d}.json"), "w") as fh:
        json.dump(d, fh)
