#!/usr/bin/env python3
"""Data side of scripts/validate-gpu.sh: reads recordings and results, slices pools, runs the
bare ncu measurements and writes the summary. Python 3.8+, standard library only (the GPU
machines and CI both have python3; neither may have jq).

Subcommands (all called by validate-gpu.sh; each prints what it did):
  calibrate DIR                      seconds per ncu run measured in a recording
  pool-reps ...                      how many repetitions fit the remaining budget
  fit ...                            how many A/A and planted checks fit the budget, before any run
  sec-per-run --launches N           the measured cost model: seconds of one ncu run by launches
  replay-checks ...                  A/A or planted checks over disjoint slices of a pool
  bare ...                           the bare ncu runs, the application alone, passes per metric
  summarize ...                      summary.json + summary.md from every part's work folder
  mark-synthetic DIR NOTE            label a stand-in recording's manifest as synthetic

Every command line is an argv list: nothing goes through a shell.
"""

import argparse
import csv
import datetime
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

SUMMARY_VERSION = 1
PASSES_RE = re.compile(r'^==PROF== Profiling "(?P<kernel>.*)" - (?P<id>\d+): .*- (?P<passes>\d+) pass(es)?\s*$')


def die(msg):
    print(f"validate-gpu: error: {msg}", file=sys.stderr)
    sys.exit(1)


def read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        die(f"cannot read {path}: {e}")


def write_json(path, value):
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(value, f, indent=2, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


def rows_of(rec_dir):
    """(target, size) pairs of a recording, from its directory tree."""
    rows = []
    for t in sorted(os.listdir(rec_dir)):
        tdir = os.path.join(rec_dir, t)
        if not os.path.isdir(tdir):
            continue
        for s in sorted(os.listdir(tdir)):
            if os.path.isdir(os.path.join(tdir, s)):
                rows.append((t, s))
    return rows


def reps_of(rec_dir, target, size):
    d = os.path.join(rec_dir, target, size)
    reps = []
    for name in os.listdir(d):
        if name.endswith(".csv") and name[:-4].isdigit():
            reps.append(int(name[:-4]))
    return sorted(reps)


def manifest_runs(rec_dir):
    m = read_json(os.path.join(rec_dir, "manifest.json")) or {}
    return m, m.get("runs", [])


# ---------------------------------------------------------------------------------------------
# calibrate / pool-reps


def cmd_calibrate(a):
    _, runs = manifest_runs(a.recording)
    walls = [r["wall_seconds"] for r in runs if isinstance(r.get("wall_seconds"), (int, float))]
    if not walls:
        print(f"{a.fallback:.3f}")
        return
    per_run = statistics.median(walls)
    if a.total_wall and runs:
        # The command's own wall time over its runs includes cgp-gate's overhead: use the larger.
        per_run = max(per_run, a.total_wall / len(runs))
    print(f"{per_run:.3f}")


def cmd_pool_reps(a):
    """Repetitions per row for a pool: as many as wanted, fewer if the budget says so."""
    left = a.remaining_s - a.reserve_runs * a.sec_per_run
    affordable = int(left / max(a.sec_per_run * a.rows * a.pools, 1e-9))
    reps = max(0, min(a.want, affordable))
    print(reps)


def sec_per_run_model(launches, per_process=2.0, per_launch=0.014, base_launches=3):
    """Seconds of one ncu run of the example programs, by launches per process, as measured on
    the H100 on 2026-11-24 (docs/validation.md): about 2.0 s per process with 3 launches, and
    about 14 ms per launch beyond those (vector_add n=16M: 2.4 s with 30 launches, 6.3 s with 300)."""
    return per_process + per_launch * max(0, launches - base_launches)


def plan_runs(a, aa_checks, planted_checks):
    """ncu runs of a part with these numbers of checks (the plan validate-gpu.sh prints)."""
    aa_pool = (aa_checks * a.reps * 5 + 3) // 4 if a.part != "planted" else 0
    planted_pool = planted_checks * a.max_reps
    live = a.rows * a.reps if a.part != "planted" else 0
    return (a.rows * a.baseline_reps + live + a.rows * aa_pool
            + a.rows * planted_pool * a.planted_variants + a.runs_bare)


def cmd_fit(a):
    """The most A/A and planted checks, up to those wanted, whose ncu runs fit the budget at
    `sec_per_run` (plus 60 s for builds, replays and the summary), so that no pool is cut later
    at the cost that was assumed. Planted checks go down to 2 before A/A checks go below 10; then
    both go down together. Prints `AA PLANTED SECONDS`."""
    aa = a.aa_checks if a.part != "planted" else 0
    pl = a.planted_checks if a.planted_variants else 0

    def seconds(x, y):
        return round(a.sec_per_run * plan_runs(a, x, y) + 60)

    while seconds(aa, pl) > a.budget_s:
        if aa > 10:
            aa -= 1
        elif pl > 2:
            pl -= 1
        elif aa > 1:
            aa -= 1
        elif pl > 1:
            pl -= 1
        else:
            break
    print(aa, pl, seconds(aa, pl))


def cmd_sec_per_run(a):
    print(f"{sec_per_run_model(a.launches):.3f}")


# ---------------------------------------------------------------------------------------------
# replay-checks: disjoint slices of a pool


def make_slice(pool, manifest, pointers, rows, max_reps, dest, label):
    """Copy each row's next `max_reps` unused repetitions into `dest`, numbered from 0."""
    if os.path.exists(dest):
        shutil.rmtree(dest)
    runs = []
    taken = {}
    for (t, s) in rows:
        avail = [r for r in reps_of(pool, t, s) if r >= pointers[(t, s)]]
        chosen = avail[:max_reps]
        taken[(t, s)] = chosen
        os.makedirs(os.path.join(dest, t, s))
        for i, rep in enumerate(chosen):
            shutil.copyfile(os.path.join(pool, t, s, f"{rep}.csv"), os.path.join(dest, t, s, f"{i}.csv"))
            orig = next((r for r in manifest.get("runs", []) if r["target"] == t and r["size"] == s and r["rep"] == rep), None)
            run = dict(orig) if orig else {"target": t, "size": s}
            run["rep"] = i
            runs.append(run)
    m = dict(manifest)
    m["runs"] = runs
    note = m.get("note") or ""
    m["note"] = (note + " " if note else "") + f"[slice {label} of {os.path.basename(pool)}: " + ", ".join(
        f"{t}/{s} pool reps {v[0]}..{v[-1]}" if v else f"{t}/{s} none" for (t, s), v in taken.items()
    ) + "]"
    write_json(os.path.join(dest, "manifest.json"), m)
    return taken


def reps_used(results, t, s, first_pass):
    rows = [r for r in results.get("rows", []) if r.get("target") == t and r.get("size") == s]
    used = [max(r["candidate_reps"]) + 1 for r in rows if r.get("candidate_reps")]
    return max(used) if used else first_pass


def cmd_replay_checks(a):
    pool = a.pool
    if not os.path.isdir(pool):
        die(f"pool recording {pool} not found")
    manifest = read_json(os.path.join(pool, "manifest.json")) or {}
    rows = rows_of(pool)
    if not rows:
        die(f"pool recording {pool} holds no repetitions")
    pointers = {r: 0 for r in rows}
    os.makedirs(a.out, exist_ok=True)
    log = []
    k = 0
    while k < a.checks:
        short = [f"{t}/{s}" for (t, s) in rows if len([r for r in reps_of(pool, t, s) if r >= pointers[(t, s)]]) < a.reps]
        if short:
            print(f"  {a.label}: pool exhausted after {k} check(s): fewer than {a.reps} unused repetitions for {', '.join(short)}")
            break
        label = f"{a.label}-{k + 1:02d}"
        sdir = os.path.join(a.slices, label)
        taken = make_slice(pool, manifest, pointers, rows, a.max_reps, sdir, label)
        res_path = os.path.join(a.out, f"{label}.json")
        # --no-skip: planted host-side changes (BAD_LAUNCH) keep the kernels' machine code, so the
        # SASS cache (docs/sass-cache.md) would skip them; validation measures every build.
        argv = [a.cgp_gate, "check", "--no-skip", "--replay", sdir, "--spec", a.spec, "--baselines", a.baselines, "--json", res_path]
        t0 = time.monotonic()
        with open(os.path.join(a.out, f"{label}.log"), "w", encoding="utf-8") as logf:
            logf.write("$ " + " ".join(argv) + "\n")
            logf.flush()
            rc = subprocess.run(argv, stdout=logf, stderr=subprocess.STDOUT, check=False).returncode
        wall = time.monotonic() - t0
        results = read_json(res_path)
        if results is None:
            die(f"check {label} wrote no results (exit {rc}); see {os.path.join(a.out, label + '.log')}")
        used = {}
        for (t, s), chosen in taken.items():
            n = reps_used(results, t, s, a.reps)
            used[f"{t}/{s}"] = [chosen[i] for i in range(min(n, len(chosen)))]
            pointers[(t, s)] = chosen[min(n, len(chosen)) - 1] + 1 if chosen else pointers[(t, s)]
        # What the repetitions this check used cost when ncu ran them (the pool's manifest): the
        # time a live check would have spent in ncu.
        walls = {(r["target"], r["size"], r["rep"]): r.get("wall_seconds") for r in manifest.get("runs", [])}
        ncu_s = [walls.get((t, s, rep)) for (t, s), chosen in taken.items() for rep in used[f"{t}/{s}"]]
        ncu_total = round(sum(x for x in ncu_s if isinstance(x, (int, float))), 3) if ncu_s and all(
            isinstance(x, (int, float)) for x in ncu_s) else None
        log.append({"check": label, "exit_code": rc, "verdict": results.get("verdict"), "wall_seconds": round(wall, 3),
                    "ncu_runs": len(ncu_s), "ncu_seconds": ncu_total,
                    "pool_reps_used": used, "results": os.path.relpath(res_path, a.work)})
        print(f"  {label}: exit {rc} ({results.get('verdict')}), pool repetitions used: "
              + ", ".join(f"{key} {v[0]}..{v[-1]}" if v else f"{key} none" for key, v in used.items()))
        k += 1
    write_json(os.path.join(a.out, f"{a.label}-checks.json"), {"pool": os.path.relpath(pool, a.work), "planned": a.checks,
                                                               "done": len(log), "reps": a.reps, "max_reps": a.max_reps,
                                                               "checks": log})
    if len(log) < a.checks:
        print(f"  {a.label}: {len(log)} of {a.checks} planned checks (the pool ran out; see the summary)")


# ---------------------------------------------------------------------------------------------
# bare: the ncu command lines of a recording, run directly; the application alone; passes


def passes_in(text):
    """Passes per profiled kernel launch, as (kernel, passes) pairs.

    Older ncu prints `==PROF== Profiling "k" - i: 0%....100% - N passes` (also into --log-file).
    ncu 2025.3 with `--csv` prints no such line (the H100 run of 2026-11-24 had none), but its raw
    page carries the column `profiler__replayer_passes` for every launch: read that when there
    are no such lines. The kernel is the `Kernel Name` without its argument list.
    """
    out = []
    for line in text.splitlines():
        m = PASSES_RE.match(line.strip())
        if m:
            out.append((m.group("kernel"), int(m.group("passes"))))
    if out:
        return out
    table = list(csv.reader(line for line in text.splitlines() if line.startswith('"')))
    if not table or "profiler__replayer_passes" not in table[0] or "Kernel Name" not in table[0]:
        return out
    head = table[0]
    pi, ki, ii = head.index("profiler__replayer_passes"), head.index("Kernel Name"), head.index("ID") if "ID" in head else None
    for row in table[1:]:
        if len(row) != len(head) or (ii is not None and not row[ii].strip().isdigit()):
            continue  # the units row, or a damaged line
        try:
            n = int(float(row[pi].replace(",", "")))
        except ValueError:
            continue
        out.append((row[ki].split("(")[0], n))
    return out


def cost_stem(t, s):
    """The file name stem of a row's bare runs in cost/."""
    return f"{t}-{s}".replace("=", "").replace(",", "-")


def file_passes(path):
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8", errors="replace") as f:
        return passes_in(f.read())


def app_argv_of(argv):
    """The application part of a recorded ncu argv: everything after `--log-file FILE`."""
    if "--log-file" not in argv:
        return None
    i = len(argv) - 1 - argv[::-1].index("--log-file")
    return argv[i + 2:]


def replace_opt(argv, opt, value):
    out = list(argv)
    i = out.index(opt)
    out[i + 1] = value
    return out


def timed(argv, cwd, logpath, timeout):
    t0 = time.monotonic()
    with open(logpath, "w", encoding="utf-8") as logf:
        logf.write("$ " + " ".join(argv) + f"\n(cwd {cwd})\n")
        logf.flush()
        try:
            rc = subprocess.run(argv, cwd=cwd, stdout=logf, stderr=subprocess.STDOUT, timeout=timeout, check=False).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
        except OSError as e:
            logf.write(f"could not start: {e}\n")
            rc = "not-started"
    return rc, round(time.monotonic() - t0, 4)


def cmd_bare(a):
    _, runs = manifest_runs(a.recording)
    os.makedirs(a.out, exist_ok=True)
    result = {"recording": os.path.relpath(a.recording, a.work), "ncu": a.ncu, "rows": []}
    for (t, s) in rows_of(a.recording):
        run = next((r for r in runs if r["target"] == t and r["size"] == s and r["rep"] == 0 and r.get("argv")), None)
        if run is None:
            print(f"  {t}/{s}: no recorded argv in the manifest; skipped")
            continue
        argv = [a.ncu] + list(run["argv"][1:])
        app = app_argv_of(argv)
        row = {"target": t, "size": s, "argv": argv, "cgp_gate_run_seconds": [
            r["wall_seconds"] for r in runs if r["target"] == t and r["size"] == s and isinstance(r.get("wall_seconds"), (int, float))]}
        stem = cost_stem(t, s)
        # The application alone, without ncu.
        if app:
            rc, wall = timed(app, a.cwd, os.path.join(a.out, f"{stem}-app.log"), a.timeout)
            row["app_alone"] = {"exit_code": rc, "seconds": wall}
        # The same ncu command line, run directly.
        log_file = os.path.abspath(os.path.join(a.out, f"{stem}-bare.csv"))
        bare = replace_opt(argv, "--log-file", log_file)
        rc, wall = timed(bare, a.cwd, os.path.join(a.out, f"{stem}-bare.log"), a.timeout)
        passes = file_passes(log_file)
        row["bare_ncu"] = {"exit_code": rc, "seconds": wall, "passes": passes}
        # Each requested metric alone: the passes it needs. The fewest passes all of them need
        # together is at least the largest of these.
        metrics = bare[bare.index("--metrics") + 1].split(",")
        row["metrics"] = {}
        for m in metrics:
            lf = os.path.abspath(os.path.join(a.out, f"{stem}-only-{m}.csv"))
            one = replace_opt(replace_opt(bare, "--metrics", m), "--log-file", lf)
            rc, wall = timed(one, a.cwd, os.path.join(a.out, f"{stem}-only-{m}.log"), a.timeout)
            p = file_passes(lf)
            row["metrics"][m] = {"exit_code": rc, "seconds": wall, "passes": sorted({n for _, n in p})}
        result["rows"].append(row)
        print(f"  {t}/{s}: bare ncu {row['bare_ncu']['seconds']} s (exit {row['bare_ncu']['exit_code']}), "
              f"application alone {row.get('app_alone', {}).get('seconds')} s, {len(metrics)} single-metric runs")
    write_json(os.path.join(a.out, "bare.json"), result)


# ---------------------------------------------------------------------------------------------
# summarize


def planted_in_order(p):
    """(build, data) in the order the script ran them (JSON keys are sorted)."""
    planted = p.get("planted") or {}
    order = [v for v in p["info"].get("planted_variants", []) if v in planted]
    return [(v, planted[v]) for v in order + sorted(set(planted) - set(order))]


def dash(x):
    return "-" if x is None else x


def pct(x):
    return "-" if x is None else f"{x * 100:+.2f}%"


def ci_text(ci):
    return "-" if not ci else f"[{ci[0] * 100:+.2f}%, {ci[1] * 100:+.2f}%]"


def load_checks(work, label):
    meta = read_json(os.path.join(work, "checks", f"{label}-checks.json"))
    checks = []
    if meta:
        for c in meta["checks"]:
            c = dict(c)
            c["source"] = "replay"
            c["data"] = read_json(os.path.join(work, c["results"]))
            checks.append(c)
    return meta, checks


def load_live(work, label):
    res = read_json(os.path.join(work, "checks", f"{label}.json"))
    info = read_json(os.path.join(work, "checks", f"{label}.time.json")) or {}
    if res is None:
        return None
    rec = os.path.join(work, "rec", label)
    _, runs = manifest_runs(rec) if os.path.isdir(rec) else ({}, [])
    walls = [r.get("wall_seconds") for r in runs]
    return {"check": label, "source": "live", "exit_code": info.get("exit_code"), "verdict": res.get("verdict"),
            "wall_seconds": info.get("wall_seconds"), "ncu_runs": len(runs),
            "ncu_seconds": round(sum(w for w in walls if isinstance(w, (int, float))), 3) if runs else None,
            "data": res, "results": f"checks/{label}.json"}


def verdict_counts(checks):
    counts = {}
    for c in checks:
        for r in (c["data"] or {}).get("rows", []):
            counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    return counts


def recorded_passes(rec_dir):
    """Passes per kernel that ncu reported, over every repetition of a recording."""
    out = {}
    if not rec_dir or not os.path.isdir(rec_dir):
        return out
    for (t, s) in rows_of(rec_dir):
        seen = {}
        for rep in reps_of(rec_dir, t, s):
            with open(os.path.join(rec_dir, t, s, f"{rep}.csv"), encoding="utf-8", errors="replace") as f:
                for k, n in passes_in(f.read()):
                    seen.setdefault(k, []).append(n)
        out[f"{t}/{s}"] = {k: {"min": min(v), "max": max(v), "launches": len(v)} for k, v in seen.items()}
    return out


def part_summary(work):
    info = read_json(os.path.join(work, "part.json")) or {}
    part = {"part": info.get("part"), "info": info}
    env = {}
    for name in ("nvidia-smi-query.csv", "ncu-version.txt", "nvcc-version.txt", "cgp-gate-version.txt", "uname.txt"):
        p = os.path.join(work, "env", name)
        if os.path.exists(p):
            env[name] = open(p, encoding="utf-8", errors="replace").read().strip()
    env["cgp_gate_env"] = read_json(os.path.join(work, "env", "cgp-gate-env.json"))
    part["environment"] = env

    # A/A: the live check and the replayed slices of the plain pool.
    aa_meta, aa = load_checks(work, "aa")
    live = load_live(work, "live-plain")
    if live:
        aa = [live] + aa
    if aa:
        counts = verdict_counts(aa)
        total = sum(counts.values())
        false_alarm_checks = [c["check"] for c in aa if c.get("verdict") == "regression"]
        part["aa"] = {
            "checks": len(aa), "planned_replays": (aa_meta or {}).get("planned"),
            "metric_verdicts": total, "verdicts": counts,
            "false_alarms": counts.get("regression", 0), "false_improvements": counts.get("improvement", 0),
            "checks_failing_the_gate": false_alarm_checks,
            "per_check": [{"check": c["check"], "source": c["source"], "exit_code": c.get("exit_code"), "verdict": c.get("verdict"),
                           "wall_seconds": c.get("wall_seconds"), "ncu_runs": c.get("ncu_runs"), "ncu_seconds": c.get("ncu_seconds"),
                           "remeasured_rows": sum(1 for r in c["data"].get("rows", []) if r.get("remeasured")),
                           "alarms": [f"{r['target']}/{r['size']}/{r['metric']} {r['verdict']} {pct(r.get('change'))} {ci_text(r.get('change_ci'))}"
                                      for r in c["data"].get("rows", []) if r["verdict"] in ("regression", "improvement", "error")]}
                          for c in aa],
        }
    # The A/A pool replayed with other repetitions.
    sweep = {}
    for r in info.get("aa_sweep_reps", []):
        if r == info.get("reps"):
            checks = [c for c in aa if c["source"] == "replay"]
        else:
            checks = load_checks(work, f"aa-r{r}")[1]
        if checks:
            counts = verdict_counts(checks)
            sweep[str(r)] = {"repetitions": r, "max_repetitions": 2 * r if r != info.get("reps") else info.get("max_reps"),
                             "checks": len(checks), "metric_verdicts": sum(counts.values()), "verdicts": counts,
                             "checks_failing_the_gate": sum(1 for c in checks if c.get("verdict") == "regression")}
    if sweep and "aa" in part:
        part["aa"]["by_repetitions"] = sweep
    # Planted builds.
    planted = {}
    for variant in info.get("planted_variants", []):
        meta, checks = load_checks(work, variant)
        if not checks:
            continue
        per_metric = {}
        for c in checks:
            for r in c["data"].get("rows", []):
                key = f"{r['target']}/{r['size']}/{r['metric']}"
                per_metric.setdefault(key, []).append({"check": c["check"], "verdict": r["verdict"], "change": r.get("change"),
                                                       "change_ci": r.get("change_ci"), "remeasured": r.get("remeasured", 0)})
        planted[variant] = {"checks": len(checks), "planned": (meta or {}).get("planned"),
                            "run_verdicts": [c.get("verdict") for c in checks],
                            "per_check": [{"check": c["check"], "exit_code": c.get("exit_code"), "verdict": c.get("verdict"),
                                           "wall_seconds": c.get("wall_seconds"), "ncu_runs": c.get("ncu_runs"),
                                           "ncu_seconds": c.get("ncu_seconds")} for c in checks],
                            "metrics": per_metric}
    if planted:
        part["planted"] = planted

    # Cost.
    cost = {}
    if live:
        rec = os.path.join(work, "rec", "live-plain")
        _, runs = manifest_runs(rec) if os.path.isdir(rec) else ({}, [])
        ncu_total = sum(r.get("wall_seconds") or 0 for r in runs)
        cost["live_check"] = {"wall_seconds": live.get("wall_seconds"), "ncu_runs": len(runs),
                              "ncu_seconds": round(ncu_total, 3),
                              "overhead_seconds": None if live.get("wall_seconds") is None else round(live["wall_seconds"] - ncu_total, 3)}
    for name, rec in (info.get("recordings") or {}).items():
        d = os.path.join(work, rec["dir"])
        _, runs = manifest_runs(d) if os.path.isdir(d) else ({}, [])
        walls = [r["wall_seconds"] for r in runs if isinstance(r.get("wall_seconds"), (int, float))]
        cost.setdefault("recordings", {})[name] = {
            "command_wall_seconds": rec.get("wall_seconds"), "exit_code": rec.get("exit_code"), "ncu_runs": len(runs),
            "ncu_seconds_median": round(statistics.median(walls), 4) if walls else None,
            "ncu_seconds_total": round(sum(walls), 3) if walls else None}
    bare = read_json(os.path.join(work, "cost", "bare.json"))
    if bare:
        passes = recorded_passes(os.path.join(work, "rec", "plain-pool")) or recorded_passes(os.path.join(work, "rec", "baseline"))
        rows = []
        for r in bare["rows"]:
            key = f"{r['target']}/{r['size']}"
            # Read again from the single-metric CSVs the bare runs left in cost/ (a work folder
            # summarised by an older kit stored no passes for ncu 2025.3).
            stem = cost_stem(r["target"], r["size"])
            single = {m: (sorted({n for _, n in file_passes(os.path.join(work, "cost", f"{stem}-only-{m}.csv"))}) or v["passes"])
                      for m, v in r["metrics"].items()}
            fewest = max((max(p) for p in single.values() if p), default=None)
            cg = r.get("cgp_gate_run_seconds") or []
            rows.append({"row": key, "bare_ncu_seconds": r["bare_ncu"]["seconds"], "bare_ncu_exit": r["bare_ncu"]["exit_code"],
                         "app_alone_seconds": (r.get("app_alone") or {}).get("seconds"),
                         "cgp_gate_ncu_run_seconds_median": round(statistics.median(cg), 4) if cg else None,
                         "passes_reported": passes.get(key, {}), "passes_per_metric_alone": single,
                         "fewest_passes_lower_bound": fewest})
        cost["rows"] = rows
    part["cost"] = cost
    return part


def gpu_line(csv_text):
    """`name: value` pairs of nvidia-smi's --query-gpu CSV (header, then one line per GPU)."""
    lines = [l for l in csv_text.splitlines() if l.strip()]
    if len(lines) < 2:
        return csv_text.strip() or "-"
    keys = [k.strip() for k in lines[0].split(",")]
    gpus = []
    for l in lines[1:]:
        vals = [v.strip() for v in l.split(",")]
        gpus.append(", ".join(f"{k}: {v}" for k, v in zip(keys, vals)))
    return " / ".join(gpus)


def md_escape(s):
    return str(s).replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def render_md(summary):
    L = []
    syn = summary["synthetic"]
    L.append("# cgp-gate validation summary" + (" (SYNTHETIC: stand-in run, no GPU)" if syn else ""))
    L.append("")
    if syn:
        L.append("**" + md_escape(summary.get("synthetic_note", "SYNTHETIC").rstrip(".")) + ".** No number below was measured on a GPU.")
        L.append("")
    L.append(f"Written {summary['written']} by scripts/validate-gpu.sh (summary schema {summary['schema_version']}).")
    L.append("")
    for p in summary["parts"]:
        info = p["info"]
        env = p["environment"]
        L.append(f"## Part `{md_escape(p.get('part'))}`")
        L.append("")
        L.append(f"- GPU (nvidia-smi): {md_escape(gpu_line(env.get('nvidia-smi-query.csv', '')))}")
        L.append(f"- ncu: {md_escape((env.get('ncu-version.txt') or '-').splitlines()[-1])}")
        L.append(f"- nvcc: {md_escape((env.get('nvcc-version.txt') or '-').splitlines()[-1])}")
        L.append(f"- cgp-gate: {md_escape(env.get('cgp-gate-version.txt', '-'))}; host: {md_escape(env.get('uname.txt', '-'))}")
        L.append(f"- spec: `{md_escape(info.get('spec'))}`, repetitions {info.get('reps')}, max {info.get('max_reps')}, "
                 f"baseline repetitions {info.get('baseline_reps')}")
        L.append(f"- planned ncu runs {info.get('planned_runs')}, estimated {info.get('estimated_seconds')} s; "
                 f"took {info.get('elapsed_seconds')} s")
        L.append("")
        aa = p.get("aa")
        if aa:
            L.append("### A/A (unchanged build against its own baseline)")
            L.append("")
            L.append(f"{aa['checks']} checks (1 live, the rest replayed from disjoint slices), {aa['metric_verdicts']} metric verdicts: "
                     f"**{aa['false_alarms']} false regressions**, {aa['false_improvements']} false improvements, "
                     f"{aa['verdicts'].get('inconclusive', 0)} inconclusive, {aa['verdicts'].get('pass', 0)} pass, "
                     f"{aa['verdicts'].get('error', 0)} errors. Checks failing the gate: {len(aa['checks_failing_the_gate'])}.")
            L.append("")
            if aa.get("by_repetitions"):
                L.append("The same pool replayed with other repetitions (each line's checks use disjoint slices):")
                L.append("")
                L.append("| repetitions (max) | checks | metric verdicts | regression | improvement | inconclusive | pass | checks failing the gate |")
                L.append("|---|---|---|---|---|---|---|---|")
                for _, w in sorted(aa["by_repetitions"].items(), key=lambda kv: int(kv[0])):
                    v = w["verdicts"]
                    L.append(f"| {w['repetitions']} ({w['max_repetitions']}) | {w['checks']} | {w['metric_verdicts']} | {v.get('regression', 0)} | "
                             f"{v.get('improvement', 0)} | {v.get('inconclusive', 0)} | {v.get('pass', 0)} | {w['checks_failing_the_gate']} |")
                L.append("")
            L.append("A replayed check's wall time is the replay's; its ncu runs and their seconds are those of the pool "
                     "repetitions it used, as ncu ran them (what the same check would have cost live).")
            L.append("")
            L.append("| check | source | exit | verdict | re-measured rows | wall s | ncu runs | ncu s | alarms |")
            L.append("|---|---|---|---|---|---|---|---|---|")
            for c in aa["per_check"]:
                L.append(f"| {md_escape(c['check'])} | {c['source']} | {dash(c['exit_code'])} | {c['verdict']} | {c['remeasured_rows']} | "
                         f"{dash(c.get('wall_seconds'))} | {dash(c.get('ncu_runs'))} | {dash(c.get('ncu_seconds'))} | {md_escape('; '.join(c['alarms']) or '-')} |")
            L.append("")
        planted = p.get("planted")
        if planted:
            L.append("### Planted regressions")
            L.append("")
            L.append("| build | check | exit | verdict | ncu runs | ncu s |")
            L.append("|---|---|---|---|---|---|")
            for v, d in planted_in_order(p):
                for c in d["per_check"]:
                    L.append(f"| {md_escape(v)} | {md_escape(c['check'])} | {dash(c['exit_code'])} | {c['verdict']} | {dash(c['ncu_runs'])} | {dash(c['ncu_seconds'])} |")
            L.append("")
            L.append("| build | metric | verdicts (per check) | change (per check) | interval (first check) |")
            L.append("|---|---|---|---|---|")
            for v, d in planted_in_order(p):
                for key, rs in sorted(d["metrics"].items()):
                    L.append(f"| {md_escape(v)} | {md_escape(key)} | {', '.join(r['verdict'] for r in rs)} | "
                             f"{', '.join(pct(r['change']) for r in rs)} | {ci_text(rs[0].get('change_ci'))} |")
            L.append("")
        cost = p.get("cost") or {}
        if cost:
            L.append("### Cost")
            L.append("")
            lc = cost.get("live_check")
            if lc:
                L.append(f"Live `check --record`: {lc['wall_seconds']} s wall, {lc['ncu_runs']} ncu runs taking {lc['ncu_seconds']} s "
                         f"(cgp-gate's own time: {lc['overhead_seconds']} s).")
                L.append("")
            if cost.get("recordings"):
                L.append("| recording | command s | ncu runs | ncu s (median per run) | ncu s (total) |")
                L.append("|---|---|---|---|---|")
                for n, r in cost["recordings"].items():
                    L.append(f"| {md_escape(n)} | {dash(r['command_wall_seconds'])} | {r['ncu_runs']} | {dash(r['ncu_seconds_median'])} | {dash(r['ncu_seconds_total'])} |")
                L.append("")
            if cost.get("rows"):
                L.append("| row | app alone s | bare ncu s | ncu run in cgp-gate s (median) | passes reported per kernel | each metric alone | fewest passes (lower bound) |")
                L.append("|---|---|---|---|---|---|---|")
                for r in cost["rows"]:
                    rep = "; ".join(f"{k}: {v['min']}" + (f"-{v['max']}" if v["max"] != v["min"] else "") for k, v in r["passes_reported"].items()) or "-"
                    single = "; ".join(f"{m}: {'/'.join(map(str, p)) or '-'}" for m, p in r["passes_per_metric_alone"].items())
                    L.append(f"| {md_escape(r['row'])} | {dash(r['app_alone_seconds'])} | {dash(r['bare_ncu_seconds'])} | {dash(r['cgp_gate_ncu_run_seconds_median'])} | "
                             f"{md_escape(rep)} | {md_escape(single)} | {dash(r['fewest_passes_lower_bound'])} |")
                L.append("")
    return "\n".join(L) + "\n"


def cmd_summarize(a):
    parts = []
    synthetic = False
    notes = []
    for w in a.work:
        if not os.path.isdir(w):
            die(f"work folder {w} not found")
        p = part_summary(w)
        parts.append(p)
        if p["info"].get("synthetic"):
            synthetic = True
            notes.append(p["info"].get("synthetic_note", ""))
    summary = {"schema_version": SUMMARY_VERSION, "synthetic": synthetic,
               "written": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "parts": parts}
    if synthetic:
        summary["synthetic_note"] = " ".join(sorted(set(n for n in notes if n)))
    os.makedirs(a.out, exist_ok=True)
    write_json(os.path.join(a.out, "summary.json"), summary)
    md = render_md(summary)
    with open(os.path.join(a.out, "summary.md"), "w", encoding="utf-8") as f:
        f.write(md)
    print(md)


def cmd_digest(a):
    """A few lines to print last: what a device call's output tail must show."""
    s = read_json(a.summary)
    if s is None:
        die(f"{a.summary} not found")
    tag = " SYNTHETIC" if s.get("synthetic") else ""
    print(f"== validate-gpu digest{tag} ==")
    for p in s["parts"]:
        info = p["info"]
        print(f"part {p.get('part')}: {info.get('elapsed_seconds')} s, {info.get('sec_per_run_measured')} s per ncu run "
              f"(planned {info.get('planned_runs')} runs, estimated {info.get('estimated_seconds')} s)")
        aa = p.get("aa")
        if aa:
            print(f"  A/A: {aa['checks']} checks, {aa['metric_verdicts']} verdicts: {aa['false_alarms']} false regressions, "
                  f"{aa['false_improvements']} false improvements, {aa['verdicts'].get('inconclusive', 0)} inconclusive, "
                  f"{aa['verdicts'].get('error', 0)} errors")
        for v, d in planted_in_order(p):
            found = []
            for key, rs in sorted(d["metrics"].items()):
                if key.endswith("/gpu__time_duration.sum"):
                    target = key.split("/")[0]
                    found.append(f"{target} {'/'.join(r['verdict'][:4] for r in rs)} {pct(rs[0].get('change'))}")
            print(f"  {v}: {', '.join(found)}")
        lc = (p.get("cost") or {}).get("live_check")
        if lc:
            print(f"  live check: {lc['wall_seconds']} s wall, {lc['ncu_runs']} ncu runs taking {lc['ncu_seconds']} s")


def cmd_mark_synthetic(a):
    path = os.path.join(a.recording, "manifest.json")
    m = read_json(path)
    if m is None:
        die(f"{path} not found")
    m["synthetic"] = True
    m["note"] = ("SYNTHETIC: " + a.note + (" " + m["note"] if m.get("note") else ""))
    write_json(path, m)


def cmd_part_info(a):
    """Merge KEY=VALUE pairs (JSON values where they parse) into part.json."""
    path = os.path.join(a.work, "part.json")
    info = read_json(path) or {}
    for kv in a.set:
        k, _, v = kv.partition("=")
        try:
            val = json.loads(v)
        except ValueError:
            val = v
        cur = info
        keys = k.split(".")
        for key in keys[:-1]:
            cur = cur.setdefault(key, {})
        cur[keys[-1]] = val
    write_json(path, info)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("calibrate")
    c.add_argument("recording")
    c.add_argument("--fallback", type=float, default=2.0)
    c.add_argument("--total-wall", type=float, default=0.0)
    c.set_defaults(fn=cmd_calibrate)
    c = sub.add_parser("pool-reps")
    c.add_argument("--want", type=int, required=True)
    c.add_argument("--remaining-s", type=float, required=True)
    c.add_argument("--sec-per-run", type=float, required=True)
    c.add_argument("--rows", type=int, required=True)
    c.add_argument("--pools", type=int, default=1)
    c.add_argument("--reserve-runs", type=int, default=0)
    c.set_defaults(fn=cmd_pool_reps)
    c = sub.add_parser("fit")
    c.add_argument("--part", required=True)
    c.add_argument("--budget-s", type=float, required=True)
    c.add_argument("--sec-per-run", type=float, required=True)
    for k in ("rows", "reps", "max_reps", "baseline_reps", "runs_bare", "planted_variants", "aa_checks", "planted_checks"):
        c.add_argument("--" + k.replace("_", "-"), type=int, required=True)
    c.set_defaults(fn=cmd_fit)
    c = sub.add_parser("sec-per-run")
    c.add_argument("--launches", type=int, required=True)
    c.set_defaults(fn=cmd_sec_per_run)
    c = sub.add_parser("replay-checks")
    for k in ("pool", "spec", "baselines", "out", "slices", "label", "cgp_gate", "work"):
        c.add_argument("--" + k.replace("_", "-"), required=True)
    for k in ("checks", "reps", "max_reps"):
        c.add_argument("--" + k.replace("_", "-"), type=int, required=True)
    c.set_defaults(fn=cmd_replay_checks)
    c = sub.add_parser("bare")
    for k in ("recording", "ncu", "out", "cwd", "work"):
        c.add_argument("--" + k, required=True)
    c.add_argument("--timeout", type=float, default=120)
    c.set_defaults(fn=cmd_bare)
    c = sub.add_parser("summarize")
    c.add_argument("--out", required=True)
    c.add_argument("work", nargs="+")
    c.set_defaults(fn=cmd_summarize)
    c = sub.add_parser("digest")
    c.add_argument("summary")
    c.set_defaults(fn=cmd_digest)
    c = sub.add_parser("mark-synthetic")
    c.add_argument("recording")
    c.add_argument("note")
    c.set_defaults(fn=cmd_mark_synthetic)
    c = sub.add_parser("part-info")
    c.add_argument("work")
    c.add_argument("set", nargs="*")
    c.set_defaults(fn=cmd_part_info)
    a = ap.parse_args()
    a.fn(a)


if __name__ == "__main__":
    main()
