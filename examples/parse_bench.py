#!/usr/bin/env python3
"""Reference for examples/parse_bench.rs: the same job as `cgp-gate parse --json`, with Python's
csv and json modules.

Reads an ncu raw page (header row, units row, one row per launch), keeps metric columns (names
containing "__"), drops n/a and empty cells, strips thousands separators, splits "; " instance
lists, scales values to base units and writes {"shape": "raw", "launches": [...]} as JSON.

Usage: parse_bench.py IN.csv OUT.json   (prints "<launches> <metric values>" on stdout)
"""

import csv
import json
import sys

# Factor and base unit for the units the benchmark's synthetic page uses.
UNITS = {
    "": (1.0, ""),
    "byte": (1.0, "byte"),
    "Kbyte": (1e3, "byte"),
    "ns": (1.0, "ns"),
    "usecond": (1e3, "ns"),
    "%": (1.0, "%"),
    "hz": (1.0, "Hz"),
    "byte/second": (1.0, "byte/second"),
    "inst": (1.0, "inst"),
    "cycle": (1.0, "cycle"),
    "register/thread": (1.0, "register/thread"),
    "warp/cycle": (1.0, "warp/cycle"),
}


def number(text):
    return float(text.replace(",", ""))


def main(src, dst):
    with open(src, newline="") as f:
        rows = csv.reader(f)
        header = next(rows)
        units = next(rows)
        id_col = header.index("ID")
        kernel_col = header.index("Kernel Name")
        metric_cols = [(i, h, UNITS[units[i]]) for i, h in enumerate(header) if "__" in h]
        attr_cols = [
            (i, h)
            for i, h in enumerate(header)
            if "__" not in h and i not in (id_col, kernel_col)
        ]
        launches = []
        values = 0
        for row in rows:
            metrics = {}
            for i, name, (factor, base) in metric_cols:
                cell = row[i] if i < len(row) else ""
                if cell == "" or cell == "n/a":
                    continue
                if "; " in cell:
                    value = [number(x) * factor for x in cell.split("; ")]
                else:
                    try:
                        value = number(cell) * factor
                    except ValueError:
                        value = cell
                metrics[name] = {"value": value, "unit": base}
            values += len(metrics)
            launches.append(
                {
                    "id": int(row[id_col]),
                    "kernel": row[kernel_col],
                    "attributes": {h: row[i] for i, h in attr_cols if row[i]},
                    "metrics": dict(sorted(metrics.items())),
                }
            )
    with open(dst, "w") as out:
        json.dump({"shape": "raw", "launches": launches}, out, separators=(",", ":"))
    print(len(launches), values)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
