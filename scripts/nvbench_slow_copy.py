#!/usr/bin/env python3
"""Write a SYNTHETIC "slow" copy of an nvbench JSON file (docs/harnesses.md, "Side by side").

    python3 scripts/nvbench_slow_copy.py IN.json OUT.json [FACTOR]

Every cold GPU time summary is multiplied by FACTOR (default 1.10): in the 2022-and-later form
the `nv/cold/time/gpu/` summaries min, max, mean, median, q1, q3 and the absolute spreads
(stdev/absolute, iqr/absolute; the relative ones stay), in the 2021 object-keyed form
"Average GPU Time (Cold)" and "Average GPU Time (Batch)". Nothing else changes. Standard library.
"""
import json
import sys

TIMES = {f"nv/cold/time/gpu/{s}" for s in ("min", "max", "mean", "median", "q1", "q3", "stdev/absolute", "iqr/absolute")}
OLD = {"Average GPU Time (Cold)", "Average GPU Time (Batch)"}


def scale(datum, factor):
    datum["value"] = repr(float(datum["value"]) * factor)


def main(src, dst, factor):
    with open(src) as f:
        doc = json.load(f)
    for bench in doc["benchmarks"]:
        states = bench["states"]
        for state in (states.values() if isinstance(states, dict) else states):
            sums = state.get("summaries") or {}
            if isinstance(sums, dict):
                for name, s in sums.items():
                    if name in OLD:
                        scale(s["value"], factor)
            else:
                for s in sums:
                    if s.get("tag") in TIMES:
                        for d in s.get("data", []):
                            if d.get("name") == "value" and d.get("value") is not None:
                                scale(d, factor)
    with open(dst, "w") as f:
        json.dump(doc, f, indent=2)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]) if len(sys.argv) > 3 else 1.10)
