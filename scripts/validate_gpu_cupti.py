#!/usr/bin/env python3
"""The `cupti` part of scripts/validate-gpu.sh (docs/cupti.md, docs/gpu-lease.md): what CUPTI
timing costs and how it agrees with ncu, on a real GPU.

validate-gpu.sh builds examples/cuda (plain, EXTRA_WORK_PCT=3, EXTRA_WORK_PCT=10) and calls
`run`, which writes everything under WORK/cupti/:

  1. wall time per process, PROCESSES each, interleaved: the program alone, under CUPTI (the
     environment `cgp-gate profile --dry-run` prints for examples/cgp-gate.cupti.yaml) and under
     ncu (the command line it prints for examples/cgp-gate.validate.yaml, as a timing gate runs
     today); the same for the PyTorch workload (examples/pytorch/torch_work.py, 30 iterations:
     60 launches) when torch sees a GPU. Raw: wall.json, traces/*.cupti, ncu/*.csv, logs/.
  2. each kernel's duration from CUPTI (end - start) against ncu's gpu__time_duration.sum, the
     first launch of each process left out: durations.json.
  3. A/A and planted checks with cupti rows at one process per row: a baseline of
     `baseline_repetitions` processes (recorded, then `baseline update --replay`), then CHECKS
     live checks of each build (each recorded): checks/*.json, rec/.
  4. summary.json, summary.md and a digest on stdout.

`plan` prints the plan and an estimate (labelled as such) without running anything.
"""

import argparse
import csv
import io
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import time

VARIANTS = ["plain", "extra3", "extra10"]
PYTORCH_ARGV = ["python3", "torch_work.py", "--n", "4096", "--iters", "30"]
# Seconds per process assumed for the plan (ESTIMATES, from the H100 run of 2026-11-24 for ncu
# and the programs alone, launch-scaling.csv; CUPTI's assumed at 1.2x the program alone).
EST = {"cuda": {"alone": 0.5, "cupti": 0.6, "ncu": 2.4}, "pytorch": {"alone": 5.0, "cupti": 6.0, "ncu": 10.9}}


def die(msg):
    print(f"validate-gpu cupti: error: {msg}", file=sys.stderr)
    sys.exit(1)


def write_json(path, value):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(value, f, indent=2, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


def dry_run(cgp, spec):
    """`cgp-gate profile --dry-run` of `spec`: {row: words} (the shell line split by shlex)."""
    out = subprocess.run([cgp, "profile", "--dry-run", "--spec", spec], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        die(f"cgp-gate profile --dry-run --spec {spec} failed: {out.stderr.strip()[-400:]}")
    rows = {}
    for line in out.stdout.splitlines():
        m = re.match(r"^([^ \[]+)\[[^]]*\] x[0-9]+: (.*)$", line)
        if m:
            rows[m.group(1)] = shlex.split(m.group(2))
    return rows


def split_env(words):
    """Leading NAME=value words -> (env dict, argv)."""
    env = {}
    i = 0
    while i < len(words) and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[i]):
        k, v = words[i].split("=", 1)
        env[k] = v
        i += 1
    return env, words[i:]


def app_of_ncu(words):
    i = words.index("--log-file")
    return words[i + 2:]


def set_opt(words, opt, value):
    out = list(words)
    out[out.index(opt) + 1] = value
    return out


def drop_opts(words, opts):
    out, i = [], 0
    while i < len(words):
        if words[i] in opts:
            i += 2
            continue
        out.append(words[i])
        i += 1
    return out


def timed(argv, cwd, log, timeout, env=None):
    t0 = time.monotonic()
    with open(log, "w", encoding="utf-8") as f:
        f.write("$ " + shlex.join(argv) + f"\n(cwd {cwd})\n")
        if env:
            f.write("env: " + " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(env.items())) + "\n")
        f.flush()
        full = dict(os.environ)
        full.update(env or {})
        try:
            rc = subprocess.run(argv, cwd=cwd, env=full, stdout=f, stderr=subprocess.STDOUT, timeout=timeout, check=False).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
        except OSError as e:
            f.write(f"could not start: {e}\n")
            rc = "not-started"
    return rc, round(time.monotonic() - t0, 4)


def kernel_key(name):
    """A kernel's name as both tools can agree on: no return type, no parameters, no spaces."""
    base = name.split("(")[0]
    base = re.sub(r"^void ", "", base)
    return base.replace(" ", "")


def cupti_durations(path):
    """[(kernel key, ns)] of a trace, in launch order (correlation ID)."""
    out = []
    if not os.path.exists(path):
        return out
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if isinstance(r, dict) and ("k" in r or "m" in r) and "start" in r and "end" in r:
                out.append((r.get("corr", 0), kernel_key(r.get("k") or r.get("m")), r["end"] - r["start"]))
    return [(k, ns) for _, k, ns in sorted(out)]


def ncu_durations(path):
    """[(kernel key, ns)] of ncu's raw-page CSV (gpu__time_duration.sum, `--print-units base`)."""
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8", errors="replace") as f:
        text = "".join(l for l in f if not l.startswith("=="))
    rows = list(csv.reader(io.StringIO(text)))
    if len(rows) < 3 or "gpu__time_duration.sum" not in rows[0]:
        return []
    head = rows[0]
    k, d = head.index("Kernel Name"), head.index("gpu__time_duration.sum")
    out = []
    for r in rows[2:]:
        try:
            out.append((kernel_key(r[k]), float(r[d].replace(",", ""))))
        except (IndexError, ValueError):
            continue
    return out


def after_warmup(durs):
    """Each kernel's launches of one process with its first (warm-up) launch left out."""
    seen, out = set(), []
    for k, ns in durs:
        if k in seen:
            out.append((k, ns))
        seen.add(k)
    return out


def rows_of(a):
    """{row: {cwd, alone, cupti_env, ncu}} for the CUDA programs and, when torch sees a GPU, PyTorch."""
    plain = os.path.join(a.work, "builds", "plain")
    cupti = dry_run(a.cgp_gate, os.path.join(plain, "cupti.yaml"))
    ncu = dry_run(a.cgp_gate, os.path.join(plain, "check.yaml"))
    rows = {}
    for name, words in cupti.items():
        env, argv = split_env(words)
        if name not in ncu:
            die(f"row {name} of the cupti spec is not in the ncu spec")
        nc = list(ncu[name])
        nc[0] = a.ncu
        rows[name] = {"cwd": plain, "alone": argv, "cupti_env": env, "ncu": nc, "kind": "cuda"}
    if a.pytorch and rows:
        probe = subprocess.run(["python3", "-c", "import torch; assert torch.cuda.is_available()"],
                               capture_output=True, text=True, check=False)
        if probe.returncode == 0:
            any_row = next(iter(rows.values()))
            opts = any_row["ncu"][: any_row["ncu"].index("--log-file") + 2]
            opts = drop_opts(opts, {"--kernel-name", "--kernel-name-base", "--launch-skip", "--launch-count"})
            opts = set_opt(opts, "--metrics", "gpu__time_duration.sum")
            rows["pytorch"] = {"cwd": a.pytorch, "alone": PYTORCH_ARGV, "cupti_env": dict(any_row["cupti_env"]),
                               "ncu": opts + PYTORCH_ARGV, "kind": "pytorch"}
        else:
            print(f"  pytorch: skipped (torch does not see a GPU here: {probe.stderr.strip()[-200:]})")
    return rows


def measure_wall(a, rows, out):
    wall = {}
    for name, r in rows.items():
        w = wall.setdefault(name, {"alone": [], "cupti": [], "ncu": [], "exit_codes": {"alone": [], "cupti": [], "ncu": []}})
        for i in range(a.processes):
            # Interleaved, so drift of the machine spreads over the three.
            rc, s = timed(r["alone"], r["cwd"], os.path.join(out, "logs", f"{name}-alone-{i}.log"), a.timeout)
            w["alone"].append(s)
            w["exit_codes"]["alone"].append(rc)
            env = dict(r["cupti_env"])
            env["CGP_GATE_CUPTI_OUT"] = os.path.join(out, "traces", f"{name}-{i}.cupti")
            rc, s = timed(r["alone"], r["cwd"], os.path.join(out, "logs", f"{name}-cupti-{i}.log"), a.timeout, env)
            w["cupti"].append(s)
            w["exit_codes"]["cupti"].append(rc)
            argv = set_opt(r["ncu"], "--log-file", os.path.join(out, "ncu", f"{name}-{i}.csv"))
            rc, s = timed(argv, r["cwd"], os.path.join(out, "logs", f"{name}-ncu-{i}.log"), a.timeout)
            w["ncu"].append(s)
            w["exit_codes"]["ncu"].append(rc)
        med = {m: statistics.median(w[m]) for m in ("alone", "cupti", "ncu")}
        w["median_seconds"] = med
        w["cupti_over_alone"] = round(med["cupti"] / med["alone"], 3) if med["alone"] else None
        w["ncu_over_alone"] = round(med["ncu"] / med["alone"], 3) if med["alone"] else None
        print(f"  {name}: alone {med['alone']:.3f} s, cupti {med['cupti']:.3f} s ({w['cupti_over_alone']}x), "
              f"ncu {med['ncu']:.3f} s ({w['ncu_over_alone']}x), {a.processes} processes each")
    write_json(os.path.join(out, "wall.json"), wall)
    return wall


def compare_durations(a, rows, out):
    result = {}
    for name in rows:
        by_tool = {"cupti": {}, "ncu": {}}
        for i in range(a.processes):
            for k, ns in after_warmup(cupti_durations(os.path.join(out, "traces", f"{name}-{i}.cupti"))):
                by_tool["cupti"].setdefault(k, []).append(ns)
            for k, ns in after_warmup(ncu_durations(os.path.join(out, "ncu", f"{name}-{i}.csv"))):
                by_tool["ncu"].setdefault(k, []).append(ns)
        for k in sorted(set(by_tool["cupti"]) & set(by_tool["ncu"])):
            c, n = statistics.median(by_tool["cupti"][k]), statistics.median(by_tool["ncu"][k])
            result[f"{name}/{k}"] = {"cupti_median_ns": c, "ncu_median_ns": n, "cupti_n": len(by_tool["cupti"][k]),
                                     "ncu_n": len(by_tool["ncu"][k]), "cupti_vs_ncu": round(c / n - 1, 4) if n else None}
            print(f"  {name}/{k}: cupti {c:.0f} ns, ncu {n:.0f} ns ({result[f'{name}/{k}']['cupti_vs_ncu']:+.2%})")
        only = sorted(set(by_tool["cupti"]) ^ set(by_tool["ncu"]))
        if only:
            result[f"{name}/(one tool only)"] = only
    write_json(os.path.join(out, "durations.json"), result)
    return result


def cgp(a, args, log, cwd):
    t0 = time.monotonic()
    with open(log, "w", encoding="utf-8") as f:
        f.write("$ " + shlex.join([a.cgp_gate] + args) + "\n")
        f.flush()
        rc = subprocess.run([a.cgp_gate] + args, cwd=cwd, stdout=f, stderr=subprocess.STDOUT, check=False).returncode
    return rc, round(time.monotonic() - t0, 3)


def checks(a, out):
    builds = os.path.join(a.work, "builds")
    spec = os.path.join(builds, "plain", "cupti.yaml")
    with open(spec, encoding="utf-8") as f:
        text = f.read()
    base_spec = os.path.join(builds, "plain", "cupti-baseline.yaml")
    with open(base_spec, "w", encoding="utf-8") as f:
        f.write(re.sub(r"(?m)^  repetitions: [0-9]+", f"  repetitions: {a.baseline_processes}",
                       re.sub(r"(?m)^  max_repetitions: [0-9]+", f"  max_repetitions: {a.baseline_processes}", text)))
    rec = os.path.join(out, "rec")
    rc, s = cgp(a, ["profile", "--record", os.path.join(rec, "baseline"), "--spec", base_spec],
                os.path.join(out, "logs", "baseline-record.log"), builds)
    print(f"  baseline: {a.baseline_processes} processes per row recorded in {s} s, exit {rc}")
    if rc != 0:
        die(f"the cupti baseline recording failed (exit {rc}; log cupti/logs/baseline-record.log)")
    rc, _ = cgp(a, ["baseline", "update", "--replay", os.path.join(rec, "baseline"), "--spec", spec,
                    "--baselines", os.path.join(out, "baselines")], os.path.join(out, "logs", "baseline-update.log"), builds)
    if rc != 0:
        die(f"baseline update --replay failed (exit {rc}; log cupti/logs/baseline-update.log)")
    results = {}
    for i in range(a.checks):
        for v in VARIANTS:
            label = f"{v}-{i:02d}"
            vspec = os.path.join(builds, v, "cupti.yaml")
            rc, s = cgp(a, ["check", "--no-skip", "--spec", vspec, "--baselines", os.path.join(out, "baselines"),
                            "--record", os.path.join(rec, label), "--json", os.path.join(out, "checks", f"{label}.json")],
                        os.path.join(out, "logs", f"check-{label}.log"), os.path.join(builds, v))
            results[label] = {"variant": v, "exit_code": rc, "wall_seconds": s}
    summary = {}
    for v in VARIANTS:
        per_row = {}
        for label, r in results.items():
            if r["variant"] != v:
                continue
            try:
                with open(os.path.join(out, "checks", f"{label}.json"), encoding="utf-8") as f:
                    res = json.load(f)
            except (OSError, ValueError):
                per_row.setdefault("(no results)", []).append(label)
                continue
            for row in res.get("rows", []):
                if row.get("metric") != "gpu__time_duration.sum":
                    continue
                d = per_row.setdefault(row["target"], {"verdicts": {}, "changes": []})
                d["verdicts"][row["verdict"]] = d["verdicts"].get(row["verdict"], 0) + 1
                if row.get("change") is not None:
                    d["changes"].append(row["change"])
        summary[v] = per_row
        print(f"  {v}: " + "; ".join(
            f"{t} {dict(sorted(d['verdicts'].items()))}" for t, d in sorted(per_row.items()) if isinstance(d, dict)))
    write_json(os.path.join(out, "checks.json"), {"runs": results, "by_variant": summary})
    return summary


def render_md(s):
    lines = ["# validate-gpu --part cupti" + (" (SYNTHETIC)" if s.get("synthetic") else ""), ""]
    if s.get("synthetic"):
        lines += [f"**{s['synthetic']}**", ""]
    lines += ["| row | alone (s) | cupti (s) | ncu (s) | cupti / alone | ncu / alone |", "|---|---|---|---|---|---|"]
    for name, w in sorted(s["wall"].items()):
        m = w["median_seconds"]
        lines.append(f"| {name} | {m['alone']:.3f} | {m['cupti']:.3f} | {m['ncu']:.3f} | {w['cupti_over_alone']} | {w['ncu_over_alone']} |")
    lines += ["", "| kernel | cupti median (ns) | ncu median (ns) | cupti vs ncu |", "|---|---|---|---|"]
    for k, d in sorted(s["durations"].items()):
        if isinstance(d, dict):
            lines.append(f"| {k} | {d['cupti_median_ns']:.0f} | {d['ncu_median_ns']:.0f} | {d['cupti_vs_ncu']:+.2%} |")
    lines += ["", "| build | row | time verdicts |", "|---|---|---|"]
    for v, rows in s["checks"].items():
        for t, d in sorted(rows.items()):
            if isinstance(d, dict):
                lines.append(f"| {v} | {t} | {dict(sorted(d['verdicts'].items()))} |")
    return "\n".join(lines) + "\n"


def cmd_run(a):
    out = os.path.join(a.work, "cupti")
    for d in ("logs", "traces", "ncu", "checks", "rec"):
        os.makedirs(os.path.join(out, d), exist_ok=True)
    for v in VARIANTS:
        dst = os.path.join(a.work, "builds", v, "cupti.yaml")
        with open(a.spec, encoding="utf-8") as f, open(dst, "w", encoding="utf-8") as g:
            g.write(f.read())
    rows = rows_of(a)
    print(f"cupti 1/3 wall time: {len(rows)} rows x {a.processes} processes x (alone, cupti, ncu)")
    wall = measure_wall(a, rows, out)
    print("cupti 2/3 kernel durations: cupti against ncu (median per kernel, warm-up launches left out)")
    durations = compare_durations(a, rows, out)
    print(f"cupti 3/3 A/A and planted checks: {a.checks} per build, one process per row")
    by_variant = checks(a, out)
    summary = {"wall": wall, "durations": durations, "checks": by_variant, "processes": a.processes,
               "checks_per_build": a.checks}
    if a.synthetic:
        summary["synthetic"] = f"SYNTHETIC: {a.synthetic}"
    write_json(os.path.join(out, "summary.json"), summary)
    with open(os.path.join(out, "summary.md"), "w", encoding="utf-8") as f:
        f.write(render_md(summary))
    print("== validate-gpu cupti digest" + (" SYNTHETIC" if a.synthetic else "") + " ==")
    print(render_md(summary))


def cmd_plan(a):
    cuda = a.rows * a.processes * sum(EST["cuda"].values())
    torch = a.processes * sum(EST["pytorch"].values()) if a.pytorch else 0
    base = a.rows * a.baseline_processes * EST["cuda"]["cupti"]
    chk = a.checks * len(VARIANTS) * (a.rows * EST["cuda"]["cupti"] + 1.0)
    total = round(cuda + torch + base + chk + a.build_seconds)
    print(f"validate-gpu: plan (part cupti; {a.rows} rows{', PyTorch' if a.pytorch else ''})")
    print(f"  builds:               {' '.join(VARIANTS)} (about {a.build_seconds}s, an ESTIMATE)")
    print(f"  wall time:            {a.processes} processes each alone, under cupti, under ncu")
    print(f"  baseline:             {a.baseline_processes} cupti processes per row")
    print(f"  checks:               {a.checks} per build ({', '.join(VARIANTS)}), one process per row")
    print(f"  ESTIMATE:             about {total}s (assumed seconds per process: {json.dumps(EST)})")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("run", "plan"):
        c = sub.add_parser(name)
        c.add_argument("--processes", type=int, default=5)
        c.add_argument("--checks", type=int, default=10)
        c.add_argument("--baseline-processes", type=int, default=5)
        c.add_argument("--pytorch", default="")
        if name == "run":
            c.add_argument("--work", required=True)
            c.add_argument("--cgp-gate", required=True)
            c.add_argument("--ncu", required=True)
            c.add_argument("--spec", required=True)
            c.add_argument("--timeout", type=int, default=300)
            c.add_argument("--synthetic", default="")
        else:
            c.add_argument("--rows", type=int, default=3)
            c.add_argument("--build-seconds", type=int, default=90)
    a = p.parse_args()
    {"run": cmd_run, "plan": cmd_plan}[a.cmd](a)


if __name__ == "__main__":
    main()
