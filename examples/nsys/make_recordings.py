#!/usr/bin/env python3
"""Build the example recordings of examples/nsys from the real nsys outputs in
tests/fixtures/nsys-wild (see its PROVENANCE.md). Run from the repository root:

    python3 examples/nsys/make_recordings.py

SYNTHETIC, in two ways, and every manifest says so:
- every repetition is a copy of ONE real capture, so there is no run-to-run noise;
- recordings/pr-slowdown scales the Total Time of the GEMM kernels of vllm-qwen3 by 1.12
  (a made-up 12% GEMM slowdown). Nothing else is changed.
The int8-gemm SQLite is the real export with the tables cgp-gate does not read dropped (VACUUMed to
keep the repository small); its rows are unchanged.
"""
import csv
import io
import json
import os
import shutil
import sqlite3

ROOT = os.path.dirname(os.path.abspath(__file__))
WILD = os.path.join(ROOT, "..", "..", "tests", "fixtures", "nsys-wild")
KERN_SUM = os.path.join(WILD, "01_l20vllm_cuda_gpu_kern_sum_2025.csv")
EXPORT = os.path.join(WILD, "13_b200_export_2025.5.2.sqlite")
KEEP = {"StringIds", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
        "ENUM_CUDA_MEMCPY_OPER", "ANALYSIS_DETAILS", "META_DATA_EXPORT"}
REPS = 3


def slim_export(dst):
    shutil.copyfile(EXPORT, dst)
    con = sqlite3.connect(dst)
    tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    for t in tables:
        if t not in KEEP:
            con.execute(f"DROP TABLE {t}")
    # Only the names the kept rows use.
    con.execute("DELETE FROM StringIds WHERE id NOT IN (SELECT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL "
                "UNION SELECT shortName FROM CUPTI_ACTIVITY_KIND_KERNEL UNION SELECT mangledName FROM CUPTI_ACTIVITY_KIND_KERNEL)")
    con.commit()
    con.execute("VACUUM")
    con.close()


def scaled_kern_sum(factor):
    with open(KERN_SUM, newline="") as f:
        rows = list(csv.reader(f))
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(rows[0])
    total = rows[0].index("Total Time (ns)")
    for r in rows[1:]:
        name = r[-1]
        if any(k in name for k in ("gemm", "nvjet", "cutlass")):
            r[total] = str(round(int(r[total]) * factor))
        w.writerow(r)
    return out.getvalue()


def write(rec, gemm_factor, note):
    d = os.path.join(ROOT, "recordings", rec)
    shutil.rmtree(d, ignore_errors=True)
    runs = []
    for rep in range(REPS):
        p = os.path.join(d, "vllm-qwen3", "default")
        os.makedirs(p, exist_ok=True)
        if gemm_factor == 1.0:
            shutil.copyfile(KERN_SUM, os.path.join(p, f"{rep}.csv"))
        else:
            with open(os.path.join(p, f"{rep}.csv"), "w") as f:
                f.write(scaled_kern_sum(gemm_factor))
        runs.append({"target": "vllm-qwen3", "size": "default", "rep": rep, "exit_code": 0})
        p = os.path.join(d, "int8-gemm", "default")
        os.makedirs(p, exist_ok=True)
        slim_export(os.path.join(p, f"{rep}.sqlite"))
        runs.append({"target": "int8-gemm", "size": "default", "rep": rep, "exit_code": 0})
    manifest = {"schema_version": 1, "synthetic": True, "note": note, "nsys_version": "2025.x (published captures)",
                "runs": runs}
    with open(os.path.join(d, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")


base = ("SYNTHETIC repetitions of real captures: made by examples/nsys/make_recordings.py from "
        "tests/fixtures/nsys-wild (01: vLLM on an L20, nsys 2025; 13: int8 GEMM on a B200, nsys 2025.5.2); "
        "every repetition is a copy of one capture (no run-to-run noise)")
write("main", 1.0, base)
write("pr-slowdown", 1.12, base + "; vllm-qwen3's GEMM kernel times are scaled by 1.12 (a made-up slowdown)")
