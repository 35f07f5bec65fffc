#!/usr/bin/env python3
"""Python's `json` plus the extraction `cgp-gate parse --json` does on nvbench files, for the
speed comparison in docs/harnesses.md: for each FILE, json.load, then per benchmark x state the
normalised state key, every numeric summary under its tag in cgp-gate's units (durations in ns,
percentages x 100) and the skipped states, written as one JSON line per file. Standard library
only; nvbench files of 2022 and later (states and summaries as lists).
"""
import json
import sys

UNITS = {"duration": ("ns", 1e9), "byte_rate": ("byte/second", 1.0), "item_rate": ("1/second", 1.0),
         "frequency": ("Hz", 1.0), "bytes": ("byte", 1.0), "percentage": ("%", 100.0)}


def state_key(name):
    parts = []
    for p in name.split():
        if p.startswith("Device="):
            continue
        axis, _, value = p.partition("=")
        parts.append(axis.split("{", 1)[0] + "=" + value)
    return ",".join(parts)


def extract(doc):
    devices = {d["id"]: d["name"] for d in doc.get("devices", [])}
    several = len(devices) > 1
    entries = []
    for b in doc["benchmarks"]:
        for s in b["states"]:
            key = state_key(s["name"])
            dev = devices.get(s.get("device"))
            if several and dev:
                key += "@" + dev
            e = {"benchmark": b["name"], "state": key, "device": dev, "metrics": []}
            if s.get("is_skipped"):
                e["status"] = {"status": "skipped", "reason": s.get("skip_reason", "")}
                entries.append(e)
                continue
            e["status"] = {"status": "measured"}
            for summ in s.get("summaries") or []:
                value = next((d.get("value") for d in summ.get("data", []) if d.get("name") == "value"), None)
                if value is None:
                    continue
                try:
                    v = float(value)
                except ValueError:
                    continue
                unit, factor = UNITS.get(summ.get("hint", ""), ("", 1.0))
                e["metrics"].append({"name": summ["tag"], "unit": unit, "values": [v * factor], "per_sample": False})
            mean = next((m for m in e["metrics"] if m["name"] == "nv/cold/time/gpu/mean"), None)
            if mean:
                e["metrics"].append(dict(mean, name="nv/cold/time/gpu"))
            entries.append(e)
    return {"format": "nvbench", "devices": list(devices.values()), "entries": entries}


for path in sys.argv[1:]:
    with open(path) as f:
        doc = json.load(f)
    json.dump(extract(doc), sys.stdout)
    sys.stdout.write("\n")
