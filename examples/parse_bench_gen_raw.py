#!/usr/bin/env python3
# Reference from the project's shared bench (/work/shared/bench/gen_raw.py), unchanged: SYNTHETIC data.
"""Writes a large ncu raw-page CSV (deterministic) to the path given: LAUNCHES rows x METRICS metric columns."""
import random, sys
path, launches, metrics = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(7)
names = [f"sm__metric_{i:03d}.sum" for i in range(metrics - 1)] + ["gpu__time_duration.sum"]
units = ["byte" if i % 3 == 0 else ("cycle" if i % 3 == 1 else "") for i in range(metrics - 1)] + ["ns"]
with open(path, "w") as f:
    f.write("==PROF== Connected to process 1 (/bench)\n==PROF== Disconnected from process 1\n")
    head = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size", "Grid Size", "Device", "CC"]
    f.write(",".join(f'"{h}"' for h in head + names) + "\n")
    f.write(",".join('""' for _ in head) + "," + ",".join(f'"{u}"' for u in units) + "\n")
    for i in range(launches):
        k = f"void kernel_{i % 17}<float, {i % 5}>(const float *, float *, int)"
        row = [str(i), "1", "bench", "127.0.0.1", k, "1", "7", "(256, 1, 1)", "(1024, 1, 1)", "0", "9.0"]
        vals = [f"{rng.randint(1, 10**9):,}" for _ in names]
        f.write(",".join(f'"{v}"' for v in row + vals) + "\n")
