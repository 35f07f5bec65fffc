#!/usr/bin/env python3
"""Write a SYNTHETIC N-target spec and recordings made of the real H100 captures, for timing
`check --replay` and `calibrate --replay` (docs/parser.md).

    python3 examples/many_targets_gen.py OUT_DIR N

OUT_DIR/spec.yaml has N targets, copies of examples/recordings/h100/baseline.yaml's three
(vector_add, matmul, reduce) in turn, named t0000_vector_add, ...; OUT_DIR/baseline/ and
OUT_DIR/check/ are recordings whose every target's repetitions are links to the real CSVs of its
program (examples/recordings/h100/baseline/ and aa-live/). The CSVs are real H100 output; the
spec and the reuse of one program's captures for N targets are synthetic: the manifests say so.
"""
import json
import os
import re
import sys

out, n = sys.argv[1], int(sys.argv[2])
here = os.path.dirname(os.path.abspath(__file__))
h100 = os.path.join(here, "recordings", "h100")
spec = open(os.path.join(h100, "baseline.yaml")).read()
head, body = spec.split("targets:\n", 1)
blocks = {}
for block in re.split(r"\n(?=  - name: )", body.strip("\n")):
    name = re.match(r"  - name: (\S+)", block).group(1)
    blocks[name] = block
names = ["vector_add", "matmul", "reduce"]
os.makedirs(out, exist_ok=True)
targets = []
for i in range(n):
    base = names[i % 3]
    targets.append((f"t{i:04d}_{base}", base))
with open(os.path.join(out, "spec.yaml"), "w") as f:
    f.write("# SYNTHETIC: %d copies of the H100 validation targets (examples/many_targets_gen.py)\n" % n)
    f.write(head + "targets:\n")
    for name, base in targets:
        f.write(blocks[base].replace(f"  - name: {base}", f"  - name: {name}", 1) + "\n\n")
for rec in ["baseline", "check"]:
    src_rec = os.path.join(h100, "baseline" if rec == "baseline" else "aa-live")
    for name, base in targets:
        src_t = os.path.join(src_rec, base)
        for size in os.listdir(src_t):
            d = os.path.join(out, rec, name, size)
            os.makedirs(d, exist_ok=True)
            for csv in os.listdir(os.path.join(src_t, size)):
                dst = os.path.join(d, csv)
                if not os.path.lexists(dst):
                    os.symlink(os.path.join(src_t, size, csv), dst)
    with open(os.path.join(out, rec, "manifest.json"), "w") as f:
        json.dump({"schema_version": 1, "synthetic": True,
                   "note": "SYNTHETIC: real H100 CSVs reused for %d targets" % n}, f)
