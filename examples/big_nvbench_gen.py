#!/usr/bin/env python3
"""Write a SYNTHETIC large nvbench `--json` file, for measuring the memory `cgp-gate import` and
`check --replay` take on it (docs/harnesses.md, "Memory"; docs/reliability.md, round 5).

    python3 examples/big_nvbench_gen.py OUT.json STATES [SEED]

The file is the real 2026 nvbench file of ../shared/fixtures/harness/nvbench (lktr-wq, an RTX
4060 Laptop GPU: its device, meta and the summaries of its first state) with its one benchmark's
states repeated STATES times, each named by a made-up axis `Run{io}=<i>` and with its mean GPU
time scaled by a made-up factor in [0.95, 1.05). Nothing in it was measured as such: its
`meta.argv` says SYNTHETIC. 20,000 states make about 200 MB.
"""
import copy
import json
import os
import random
import sys

out, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
here = os.path.dirname(os.path.abspath(__file__))
real = None
for up in ("../../shared", "../../../shared"):
    d = os.path.join(here, up, "fixtures/harness/nvbench")
    if os.path.isdir(d):
        real = [os.path.join(d, f) for f in sorted(os.listdir(d)) if f.startswith("lktr-wq")][0]
        break
if real is None:
    sys.exit("no ../shared/fixtures/harness/nvbench beside the checkout")
doc = json.load(open(real))
doc.setdefault("meta", {})["argv"] = ["SYNTHETIC", "examples/big_nvbench_gen.py", str(n)]
bench = doc["benchmarks"][0]
first = bench["states"][0]
states = []
for i in range(n):
    s = copy.deepcopy(first)
    s["name"] = f"Device=0 Run{{io}}={i}"
    s["axis_values"] = [{"name": "Run{io}", "type": "int64", "value": str(i)}]
    f = 0.95 + 0.1 * rng.random()
    for summ in s["summaries"]:
        if summ["tag"] == "nv/cold/time/gpu/mean":
            v = float(summ["data"][0]["value"])
            summ["data"][0]["value"] = repr(v * f)
    states.append(s)
bench["states"] = states
bench["axes"] = [{"name": "Run", "type": "int64", "flags": "", "values": [{"input_string": str(i), "description": "", "value": i} for i in range(n)]}]
with open(out, "w") as fh:
    json.dump(doc, fh, indent=2)
print(f"{out}: {os.path.getsize(out)} bytes, {n} states (SYNTHETIC)")
