#!/usr/bin/env python3
"""The seed tool's approach (vLLM's gputrc2graph: pandas over the cuda_gpu_trace CSV, kernels put
into categories by regex, first match wins), timed on the same file as cgp-gate's reader.

Usage: nsys_bench_pandas.py TRACE.csv RULES.json RUNS
RULES.json is [[regex, category], ...] in order (cgp-gate's default rules). Prints one line of JSON:
the import time, and the best and median times of read_csv + classify + group.
"""
import json
import re
import sys
import time

t0 = time.perf_counter()
import pandas as pd  # noqa: E402

import_s = time.perf_counter() - t0
path, rules_path, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
rules = [(re.compile(p), c) for p, c in json.load(open(rules_path))]


def classify(name):
    for rx, cat in rules:
        if rx.search(name):
            return cat
    return "misc"


times = []
result = None
for _ in range(runs):
    t = time.perf_counter()
    df = pd.read_csv(path)
    # gputrc2graph classifies every row; names repeat, which is why it is slow on big traces.
    df["category"] = df["Name"].apply(classify)
    per_cat = df.groupby("category")["Duration (ns)"].agg(["sum", "count"])
    per_kernel = df.groupby(["Name", "category"])["Duration (ns)"].agg(["sum", "count"])
    times.append(time.perf_counter() - t)
    result = (per_cat, per_kernel)
times.sort()
per_cat = result[0]
print(json.dumps({
    "pandas": pd.__version__,
    "import_s": import_s,
    "best_s": times[0],
    "median_s": times[len(times) // 2],
    "rows": int(per_cat["count"].sum()),
    "categories": {k: int(v) for k, v in per_cat["sum"].items()},
}))
