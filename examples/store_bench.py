#!/usr/bin/env python3
"""Measure the results store (docs/store.md, figures in docs/scale.md). SYNTHETIC data.

    python3 examples/store_bench.py WORK_DIR [--big | --big-only] [--no-postgres] [--baseline-bin PATH]

Needs the release binary (cargo build --release), python3, and PostgreSQL's server (Debian's
postgresql package: initdb and pg_ctl; run as root, the server runs as the postgres user).

1. 100,000 results (200 runs x 500 rows, made as examples/history_bench_gen.py makes them):
   8 pushers at once, each 25 of the runs, into one PostgreSQL database and into one SQLite
   file: every run stored exactly once (counted in the database), wall time and rows per second.
   A ninth pusher of a 20,000-row run killed with SIGKILL inside its transaction: nothing of it
   stored.
2. `history` and `changes` from the files, from SQLite and from PostgreSQL: wall time and peak
   memory (/usr/bin/time -v), three runs each, and the same page and change points from each.
3. --big: 1,000,000 results (200 runs x 5,000 rows: the change-point search grows with the
   square of a series' length, so the runs stay 200 and the series grow tenfold) pushed into
   both, then `history` and `changes` from each store, timed once. --big-only: this part alone.

--no-postgres: SQLite and the files only (no server started). --baseline-bin PATH: every read of
the 100,000 results is timed with that binary too (another build of cgp-gate, e.g. the commit
before a change), in turn with the release binary (A B A B ...), to compare the two.

Every results file is marked "synthetic": true; nothing here was measured on a GPU.
"""
import hashlib
import json
import math
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BIN = os.path.join(ROOT, "target", "release", "cgp-gate")
WORK = os.path.abspath(sys.argv[1])
BIG = "--big" in sys.argv or "--big-only" in sys.argv
BIG_ONLY = "--big-only" in sys.argv
NO_PG = "--no-postgres" in sys.argv
BASE_BIN = os.path.abspath(sys.argv[sys.argv.index("--baseline-bin") + 1]) if "--baseline-bin" in sys.argv else None


def template():
    t = json.load(open(os.path.join(ROOT, "tests", "fixtures", "results", "mixed.json")))
    proto = next(r for r in t["rows"] if r.get("change") is not None and r.get("baseline"))
    return t, proto


def make_run(i, n_runs, m, rng, t, proto, gpus=2):
    """Run i of n_runs, m rows: history_bench_gen.py's rows (a 5% step in every 25th series)."""
    d = dict(t)
    d["synthetic"] = True
    d["git_commit"] = hashlib.sha1(str(i).encode()).hexdigest()
    d["date"] = f"2026-01-01T00:00:00Z"
    ts = 1767225600 + i * 3600
    d["date"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))
    rows = []
    for k in range(m):
        r = json.loads(json.dumps(proto))
        r["target"] = f"t{k // 4}"
        r["size"] = f"n={1 << (10 + k % 4)}"
        r["gpu"] = f"GPU {k % gpus}"
        base = r["baseline"]["median"]
        r["threshold"] = {"kind": "relative", "fraction": 0.05, "tolerance": 0.05, "limit": base * 1.05}
        f = math.exp(0.01 * rng.gauss(0, 1)) * (1.05 if k % 25 == 0 and i >= 0.6 * n_runs else 1.0)
        r["change"] = f - 1
        r["change_ci"] = [f * 0.99 - 1, f * 1.01 - 1]
        r["candidate"]["median"] = base * f
        r["verdict"] = "regression" if r["change_ci"][0] > 0.05 else "pass"
        rows.append(r)
    d["rows"] = rows
    return d


def write_runs(folder, n_runs, m, first=0, total=None):
    os.makedirs(folder, exist_ok=True)
    t, proto = template()
    rng = random.Random(42 + first)
    paths = []
    for i in range(first, first + n_runs):
        p = os.path.join(folder, f"r{i:05d}.json")
        json.dump(make_run(i, total or n_runs, m, rng, t, proto), open(p, "w"))
        paths.append(p)
    return paths


class Postgres:
    """A server in WORK/pg on a free port (as the tests start theirs)."""

    def __init__(self, folder):
        bins = sorted(d for d in os.listdir("/usr/lib/postgresql") if d.isdigit())
        self.bin = f"/usr/lib/postgresql/{bins[-1]}/bin"
        self.dir = folder
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        self.user = "postgres" if os.getuid() == 0 else None
        if self.user:
            shutil.chown(folder, self.user, self.user)
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        pw = os.path.join(folder, "pw")
        open(pw, "w").write("bench")
        if self.user:
            shutil.chown(pw, self.user, self.user)
        self.run("initdb", "-D", f"{folder}/data", "-U", "cgp", "--auth-local=trust",
                 "--auth-host=scram-sha-256", f"--pwfile={pw}", "-N")
        with open(f"{folder}/data/postgresql.conf", "a") as c:
            c.write(f"\nport = {self.port}\nlisten_addresses = '127.0.0.1'\n"
                    f"unix_socket_directories = '{folder}'\nshared_buffers = 256MB\nmax_connections = 40\n")
        self.run("pg_ctl", "-D", f"{folder}/data", "-l", f"{folder}/log", "-w", "start")
        self.url = f"postgres://cgp:bench@127.0.0.1:{self.port}/postgres"

    def run(self, tool, *args):
        cmd = [f"{self.bin}/{tool}", *args]
        if self.user:
            cmd = ["runuser", "-u", self.user, "--", *cmd]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)

    def sql(self, q):
        return subprocess.run(["psql", "-X", "-A", "-t", "-h", self.dir, "-p", str(self.port), "-U", "cgp",
                               "-d", "postgres", "-c", q], check=True, capture_output=True, text=True).stdout.strip()

    def stop(self):
        self.run("pg_ctl", "-D", f"{self.dir}/data", "-m", "fast", "stop")


def counts(url, pg):
    """(runs, rows) stored; (0, 0) before the store has its tables."""
    q = "SELECT (SELECT count(*) FROM cgp_gate_runs), (SELECT count(*) FROM cgp_gate_rows)"
    try:
        if url.startswith("sqlite:"):
            import sqlite3
            return tuple(sqlite3.connect(url[len("sqlite:"):]).execute(q).fetchone())
        return tuple(int(x) for x in pg.sql(q.replace("), (", ") || ' ' || (")).split())
    except Exception:
        return (0, 0)


def timed(args, log, binary=BIN):
    """Wall and CPU seconds and peak RSS (MiB) of one run of the binary, via /usr/bin/time -v."""
    start = time.monotonic()
    p = subprocess.run(["/usr/bin/time", "-v", binary, *args], capture_output=True, text=True)
    wall = time.monotonic() - start
    if p.returncode not in (0, 1):
        sys.exit(f"{args}: exit {p.returncode}\n{p.stderr[-2000:]}")
    field = lambda name: float(re.search(name + r": ([0-9.]+)", p.stderr).group(1))
    rss = field(r"Maximum resident set size \(kbytes\)") / 1024
    cpu = field(r"User time \(seconds\)") + field(r"System time \(seconds\)")
    shown = re.sub(r"://([^:/@]+):[^@]*@", r"://\1:***@", " ".join(args))
    who = "" if binary == BIN else f"[{os.path.basename(binary)}] "
    log.write(f"  {who}{shown[:150]}: {wall:.2f} s wall, {cpu:.2f} s CPU, {rss:.0f} MiB\n")
    return wall, cpu, rss


def eight_pushers(url, files, pg, out):
    before = counts(url, pg)
    parts = [files[k::8] for k in range(8)]
    import resource
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    procs = [subprocess.Popen([BIN, "store", "push", "--store", url, "--branch", "main", *p],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for p in parts]
    outs = [p.communicate()[0] for p in procs]
    wall = time.monotonic() - start
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu1.ru_utime + cpu1.ru_stime) - (cpu0.ru_utime + cpu0.ru_stime)
    assert all(p.returncode == 0 for p in procs), outs
    runs, rows = counts(url, pg)
    stored = sum(o.count(": stored run ") for o in outs)
    out.write(f"{url.split(':')[0]}: 8 pushers at once, {len(files)} runs: {wall:.2f} s wall "
              f"({(rows - before[1]) / wall:,.0f} rows/s), {cpu:.2f} s CPU of the pushers "
              f"({(rows - before[1]) / cpu:,.0f} rows per CPU second); stored {stored} runs, the database "
              f"holds {runs - before[0]} runs and {rows - before[1]:,} rows\n")
    assert stored == len(files) and runs - before[0] == len(files)
    # Again: every run already there.
    again = subprocess.run([BIN, "store", "push", "--store", url, *files[:20]], capture_output=True, text=True)
    assert "0 run(s) stored, 20 already there" in again.stdout, again.stdout


def killed_push(url, pg, folder, out):
    before = counts(url, pg)
    big = write_runs(os.path.join(folder, "kill"), 1, 20000, first=9000, total=9001)[0]
    p = subprocess.Popen([BIN, "store", "push", "--store", url, big], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    # Inside its transaction: PostgreSQL shows its xid; SQLite's WAL grows before the commit.
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if url.startswith("sqlite:"):
            wal = url[len("sqlite:"):] + "-wal"
            inside = os.path.exists(wal) and os.path.getsize(wal) > (4 << 20)
        else:
            inside = pg.sql("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'cgp-gate' "
                            "AND backend_xid IS NOT NULL") == "1"
        if inside or p.poll() is not None:
            break
        time.sleep(0.002)
    assert p.poll() is None, "the push ended before it was killed"
    p.send_signal(signal.SIGKILL)
    p.wait()
    time.sleep(1)
    after = counts(url, pg)
    out.write(f"{url.split(':')[0]}: a 20,000-row push killed with SIGKILL inside its transaction: "
              f"runs/rows before {before}, after {after}\n")
    assert before == after


def same(a_dir, b_dir, a_json, b_json):
    pa = open(os.path.join(a_dir, "index.html")).read()
    pb = open(os.path.join(b_dir, "index.html")).read()
    ca, cb = json.load(open(a_json)), json.load(open(b_json))
    return pa == pb and ca["rows"] == cb["rows"] and ca["series"] == cb["series"], len(ca["rows"])


def read_side(name, read_args, out, runs=3, binaries=None):
    """Medians of `runs` reads per command and binary (the binaries in turn); keyed by command, or
    by (command, binary) when several binaries are given."""
    binaries = binaries or [BIN]
    res = {}
    for cmd in ("history", "changes"):
        got = {b: ([], [], []) for b in binaries}
        for r in range(runs):
            for b in binaries:
                tag = name if b == BIN else f"{name}-{os.path.basename(b)}"
                site = os.path.join(WORK, f"site-{tag}")
                args = ["history", "--out", site] if cmd == "history" else \
                    ["changes", "--no-fail", "--json", os.path.join(WORK, f"changes-{tag}.json")]
                for k, v in zip(got[b], timed(args + read_args, out, b)):
                    k.append(v)
        for b, (walls, cpus, rss) in got.items():
            res[cmd if len(binaries) == 1 else (cmd, b)] = \
                (statistics.median(walls), statistics.median(cpus), max(rss))
    return res


def main():
    os.makedirs(WORK, exist_ok=True)
    log = open(os.path.join(WORK, "store_bench.txt"), "a")
    out = Tee(log)
    out.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} {os.uname().nodename}, {os.cpu_count()} CPUs ---\n")
    pg = None if NO_PG else Postgres(os.path.join(WORK, "pg"))
    try:
        db = os.path.join(WORK, "s.db")
        for f in [db, db + "-wal", db + "-shm"]:
            if os.path.exists(f):
                os.remove(f)
        sqlite = f"sqlite:{db}"
        if BIG_ONLY:
            big(sqlite, pg, out)
            return
        files = sorted(write_runs(os.path.join(WORK, "h100k"), 200, 500))
        stores = [("sqlite", sqlite)] + ([] if NO_PG else [("postgres", pg.url)])
        for _, url in stores:
            eight_pushers(url, files, pg, out)
            killed_push(url, pg, WORK, out)
        binaries = [BIN] + ([BASE_BIN] if BASE_BIN else [])
        res = {"files": read_side("files", files, out, binaries=binaries)}
        for k, url in stores:
            res[k] = read_side(k, ["--store", url, "--branch", "main"], out, binaries=binaries)
        for k, v in res.items():
            for b in binaries:
                h, c = (v["history"], v["changes"]) if len(binaries) == 1 else (v[("history", b)], v[("changes", b)])
                who = "" if b == BIN else f" [{os.path.basename(b)}]"
                out.write(f"100,000 results, {k}{who}: history {h[0]:.2f} s wall, {h[1]:.2f} s CPU "
                          f"(peak {h[2]:.0f} MiB); changes {c[0]:.2f} s wall, "
                          f"{c[1]:.2f} s CPU (peak {c[2]:.0f} MiB) [medians of 3]\n")
        for k, _ in stores:
            ok, n = same(os.path.join(WORK, "site-files"), os.path.join(WORK, f"site-{k}"),
                         os.path.join(WORK, "changes-files.json"), os.path.join(WORK, f"changes-{k}.json"))
            out.write(f"the same page and the same {n} change points from {k} as from the files: {ok}\n")
            assert ok
        if BIG:
            big(sqlite, pg, out)
    finally:
        if pg:
            pg.stop()


def big(sqlite, pg, out):
    """1,000,000 results: 200 runs of 5,000 rows, written and pushed 20 at a time."""
    folder = os.path.join(WORK, "h1m")
    pushed = {sqlite: 0.0} if pg is None else {sqlite: 0.0, pg.url: 0.0}
    for first in range(0, 200, 20):
        shutil.rmtree(folder, ignore_errors=True)
        files = write_runs(folder, 20, 5000, first=first, total=200)
        for url in pushed:
            start = time.monotonic()
            subprocess.run([BIN, "store", "push", "--store", url, "--branch", "big", *files], check=True,
                           stdout=subprocess.DEVNULL)
            pushed[url] += time.monotonic() - start
    shutil.rmtree(folder, ignore_errors=True)
    for url, secs in pushed.items():
        out.write(f"{url.split(':')[0]}: 1,000,000 rows pushed (10 pushes of 20 runs of 5,000 rows): {secs:.1f} s, "
                  f"{1e6 / secs:,.0f} rows/s\n")
    for name, url in [("sqlite", sqlite)] + ([] if pg is None else [("postgres", pg.url)]):
        r = read_side(f"big-{name}", ["--store", url, "--branch", "big"], out, runs=1)
        out.write(f"1,000,000 results, {name}: history {r['history'][0]:.1f} s wall, {r['history'][1]:.1f} s CPU "
                  f"(peak {r['history'][2]:.0f} MiB); changes {r['changes'][0]:.1f} s wall, "
                  f"{r['changes'][1]:.1f} s CPU (peak {r['changes'][2]:.0f} MiB)\n")


class Tee:
    def __init__(self, f):
        self.f = f

    def write(self, s):
        sys.stdout.write(s)
        sys.stdout.flush()
        self.f.write(s)
        self.f.flush()


if __name__ == "__main__":
    main()
