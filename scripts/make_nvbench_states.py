#!/usr/bin/env python3
"""SYNTHETIC nvbench file of many states, for the reading-speed comparison in docs/harnesses.md:
the first state of a real nvbench 2026 file (the shared fixture
lktr-wq-My-Contribution__...__run1-warmup1.json) with the summaries nvbench wrote from 2022 on
(its first TAGS below), repeated with other `Elements` values and scaled times. Usage:
make_nvbench_states.py REAL.json OUT.json [STATES]   (default 126 states, about 580 KB).
"""
import copy
import json
import sys

TAGS = ["nv/gmem/reads/Size", "nv/cold/sample_size", "nv/cold/time/cpu/mean", "nv/cold/time/cpu/stdev/relative",
        "nv/cold/time/gpu/mean", "nv/cold/time/gpu/stdev/relative", "nv/cold/bw/item_rate",
        "nv/cold/bw/global/bytes_per_second", "nv/cold/bw/global/utilization"]

real, out = sys.argv[1], sys.argv[2]
n = int(sys.argv[3]) if len(sys.argv) > 3 else 126
doc = json.load(open(real))
bench = doc["benchmarks"][0]
first = bench["states"][0]
first["summaries"] = [s for s in first["summaries"] if s["tag"] in TAGS]
states = []
for i in range(n):
    s = copy.deepcopy(first)
    s["name"] = s["name"].replace("Elements{io}=2^16", f"Elements{{io}}=2^{10 + i % 21} Variant={i // 21}")
    for summ in s["summaries"]:
        if summ.get("hint") == "duration":
            d = summ["data"][0]
            d["value"] = repr(float(d["value"]) * (1 + i / 10))
    states.append(s)
bench["states"] = states
doc["benchmarks"] = [bench]
json.dump(doc, open(out, "w"), indent=2)
