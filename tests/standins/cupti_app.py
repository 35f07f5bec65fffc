#!/usr/bin/env python3
"""SYNTHETIC stand-in for a CUDA program run by cgp-gate's `profiler: cupti` backend on a machine
without a GPU (tests/confirm_gpu_paths.rs). It measures nothing.

The backend starts it as it starts a real program: with CUDA_INJECTION64_PATH (cgp-gate's
injection library), CGP_GATE_CUPTI_OUT (where the trace goes) and CGP_GATE_CUPTI_NONCE (this run's
nonce) in its environment. A real program's CUDA driver would load the library, which writes the
trace; here the stand-in writes what the library writes (docs/cupti.md, "Trace file format",
format 2, with the run's nonce: the documented limit, "What the program under test can forge"):
30 `vector_add` launches, the first a 5 % slower warm-up, of 50 us times the factor in `built.txt`
(the commit's build, in the working directory) times CGP_STANDIN_JOB (this CI job's offset), with
0.3 % noise between processes and 0.5 % between launches. Standard library only.
"""
import json
import os
import random
import sys

out = os.environ.get("CGP_GATE_CUPTI_OUT")
if not out or not os.environ.get("CUDA_INJECTION64_PATH"):
    sys.exit("stand-in: not started by cgp-gate's cupti backend (no CGP_GATE_CUPTI_OUT / CUDA_INJECTION64_PATH)")
factor = float(open("built.txt").read().strip()) if os.path.exists("built.txt") else 1.0
factor *= float(os.environ.get("CGP_STANDIN_JOB", "1"))
rng = random.Random()
process = 1 + rng.gauss(0, 0.003)
lines = [json.dumps({"cgp_gate_cupti": 2, "cupti_version": 18, "kernel_record": 8, "pid": os.getpid(),
                     "nonce": os.environ.get("CGP_GATE_CUPTI_NONCE", "")})]
t = 1_000_000
for i in range(30):
    ns = round(50_000 * factor * process * (1.05 if i == 0 else 1.0) * (1 + rng.gauss(0, 0.005)))
    lines.append(json.dumps({"k": "vector_add(const float*, const float*, float*, int)", "m": "_Z10vector_addPKfS0_Pfi",
                             "grid": [65536, 1, 1], "block": [256, 1, 1], "regs": 16, "smem_static": 0,
                             "smem_dynamic": 0, "start": t, "end": t + ns, "device": 0, "context": 1, "stream": 7,
                             "corr": i + 1, "graph": 0}))
    t += ns + 5_000
lines.append(json.dumps({"end": 1, "records": 30, "dropped": 0}))
with open(out, "w") as f:
    f.write("\n".join(lines) + "\n")
