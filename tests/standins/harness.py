#!/usr/bin/env python3
"""SYNTHETIC stand-in benchmark program for the harness backends (docs/harnesses.md).

It is run as a team's own benchmark binary would be, with the harness's output flags that
cgp-gate appends, and writes the file that harness writes, in its real format (the field layout
of the shared real files in ../shared/fixtures/harness/):

- `--json PATH [--jsonbin]`: nvbench 2026 (Gen-1'), with per-sample float32 sidecars
  `PATH-bin/<n>.bin` and `PATH-freqs-bin/<n>.bin` under --jsonbin;
- `--benchmark_out=PATH --benchmark_out_format=json [--benchmark_repetitions=N]`: Google
  Benchmark, N `run_type: iteration` entries per benchmark;
- `--benchmark-json=PATH`: pytest-benchmark, with `stats.data`.

The times are made up: a fixed time per benchmark and state, with 1 % noise between samples and
0.5 % between processes. Knobs (environment): CGP_STANDIN_SLOWDOWN (a factor, 1.10 = 10 % slower),
CGP_STANDIN_JOB (a factor: the offset of this CI job, shared by every process the job runs, base
and head alike: 1.008 = this job runs 0.8 % slow),
CGP_STANDIN_CLOCK (a factor on the SM clock of nvbench's frequencies sidecar; the times are divided
by it, the cycles stay: 0.91 = a clock 9 % lower, times 10 % longer, the same code),
CGP_STANDIN_GPU (the device name the file records), CGP_STANDIN_DROP_STATE (leave out the state of
this many elements, e.g. 16777216), CGP_STANDIN_LOG (append one line per run to this file, to prove
the program ran), CGP_STANDIN_EXIT (exit with this status, after writing), CGP_STANDIN_NO_FILE
(write nothing). Standard library only.
"""
import json
import os
import random
import struct
import sys

SLOW = float(os.environ.get("CGP_STANDIN_SLOWDOWN", "1")) * float(os.environ.get("CGP_STANDIN_JOB", "1"))
CLOCK = float(os.environ.get("CGP_STANDIN_CLOCK", "1"))
GPU = os.environ.get("CGP_STANDIN_GPU", "SYNTHETIC stand-in GPU")
rng = random.Random()
PROCESS = 1 + rng.gauss(0, 0.005)

STATES = [("I32", 16, 2.0e-5), ("I32", 24, 1.2e-3)]
if os.environ.get("CGP_STANDIN_DROP_STATE"):
    STATES = [s for s in STATES if str(2 ** s[1]) != os.environ["CGP_STANDIN_DROP_STATE"]]


def sample(base):
    return base * SLOW / CLOCK * PROCESS * (1 + rng.gauss(0, 0.01))


def summary(tag, name, hint, value, kind="float64"):
    return {"tag": tag, "name": name, "hint": hint, "data": [{"name": "value", "type": kind, "value": str(value)}]}


def nvbench(path, jsonbin):
    states = []
    for n, (t, p, base) in enumerate(STATES):
        times = [sample(base) for _ in range(200)]
        freqs = [2.25e9 * CLOCK * (1 + rng.gauss(0, 0.001)) for _ in times]
        mean = sum(times) / len(times)
        summaries = [
            summary("nv/cold/sample_size", "Samples", "sample_size", len(times), "int64"),
            summary("nv/cold/time/gpu/mean", "GPU Time", "duration", mean),
            summary("nv/cold/time/gpu/min", "Min GPU Time", "duration", min(times)),
            summary("nv/cold/time/gpu/max", "Max GPU Time", "duration", max(times)),
            summary("nv/cold/bw/global/bytes_per_second", "GlobalMem BW", "byte_rate", 4 * 2**p / mean),
            summary("nv/cold/sm_clock_rate/mean", "Clock Rate", "frequency", sum(freqs) / len(freqs)),
        ]
        if jsonbin:
            for suffix, tag, values in (("-bin", "nv/json/bin:nv/cold/sample_times", times),
                                        ("-freqs-bin", "nv/json/freqs-bin:nv/cold/sample_freqs", freqs)):
                folder = path + suffix
                os.makedirs(folder, exist_ok=True)
                with open(os.path.join(folder, f"{n}.bin"), "wb") as f:
                    f.write(struct.pack(f"<{len(values)}f", *values))
                rel = os.path.basename(path) + suffix + f"/{n}.bin"
                summaries.append({"tag": tag, "name": "Samples", "hint": "file/sample_times", "data": [
                    {"name": "filename", "type": "string", "value": rel},
                    {"name": "size", "type": "int64", "value": str(len(values))}]})
        states.append({
            "name": f"Device=0 T{{ct}}={t} Elements{{io}}=2^{p}", "min_samples": 10, "cold_warmup_runs": 1,
            "device": 0, "type_config_index": 0,
            "axis_values": [{"name": "T{ct}", "type": "string", "value": t},
                            {"name": "Elements{io}", "type": "int64", "value": str(2**p)}],
            "summaries": summaries, "is_skipped": False})
    doc = {
        "meta": {"argv": sys.argv, "version": {"json": {"major": 1, "minor": 0, "patch": 0, "string": "1.0.0"},
                                               "nvbench": {"string": "0.1.0", "git_version": "standin"}}},
        "devices": [{"id": 0, "name": GPU, "sm_version": 890, "number_of_sms": 24}],
        "benchmarks": [{"name": "reduce", "index": 0, "devices": [0], "axes": [], "states": states}],
    }
    with open(path, "w") as f:
        json.dump(doc, f)


def gbench(path, reps):
    entries = []
    for fam, (t, p, base) in enumerate(STATES):
        name = f"BM_reduce<{t}>/{2**p}/manual_time"
        for r in range(reps):
            real = sample(base) * 1e9
            entries.append({"name": name, "family_index": 0, "per_family_instance_index": fam, "run_name": name,
                            "run_type": "iteration", "repetitions": reps, "repetition_index": r, "threads": 1,
                            "iterations": 100, "real_time": real, "cpu_time": real * 1.02, "time_unit": "ns",
                            "bytes_per_second": 4 * 2**p / (real * 1e-9)})
    doc = {"context": {"date": "2026-11-28T00:00:00+00:00", "host_name": "standin", "executable": sys.argv[0],
                       "num_cpus": 2, "mhz_per_cpu": 2000, "cpu_scaling_enabled": False,
                       "library_version": "v1.9.5", "library_build_type": "release", "json_schema_version": 1,
                       "gpu": GPU},
           "benchmarks": entries}
    with open(path, "w") as f:
        json.dump(doc, f)


def pytest_benchmark(path):
    benches = []
    for t, p, base in STATES:
        data = [sample(base) for _ in range(50)]
        mean = sum(data) / len(data)
        benches.append({"group": None, "name": f"test_reduce[{t}-{2**p}]", "fullname": f"bench.py::test_reduce[{t}-{2**p}]",
                        "params": {"t": t, "n": 2**p}, "param": f"{t}-{2**p}", "extra_info": {"gpu": GPU},
                        "options": {"timer": "perf_counter", "min_rounds": 5, "max_time": 1.0, "warmup": False},
                        "stats": {"min": min(data), "max": max(data), "mean": mean, "rounds": len(data), "ops": 1 / mean,
                                  "iterations": 1, "data": data}})
    doc = {"machine_info": {"node": "standin", "machine": "x86_64", "python_version": sys.version.split()[0]},
           "commit_info": {}, "benchmarks": benches, "datetime": "2026-11-28T00:00:00", "version": "5.1.0"}
    with open(path, "w") as f:
        json.dump(doc, f)


def main(argv):
    out = None
    if os.environ.get("CGP_STANDIN_LOG"):
        with open(os.environ["CGP_STANDIN_LOG"], "a") as f:
            f.write(" ".join(argv) + "\n")
    if os.environ.get("CGP_STANDIN_NO_FILE"):
        print("stand-in: told to write no file")
    elif "--json" in argv:
        out = argv[argv.index("--json") + 1]
        nvbench(out, "--jsonbin" in argv)
    elif any(a.startswith("--benchmark_out=") for a in argv):
        out = next(a.split("=", 1)[1] for a in argv if a.startswith("--benchmark_out="))
        reps = next((int(a.split("=", 1)[1]) for a in argv if a.startswith("--benchmark_repetitions=")), 1)
        gbench(out, reps)
    elif any(a.startswith("--benchmark-json=") for a in argv):
        out = next(a.split("=", 1)[1] for a in argv if a.startswith("--benchmark-json="))
        pytest_benchmark(out)
    else:
        print("stand-in: no harness output flag given", file=sys.stderr)
        return 2
    return int(os.environ.get("CGP_STANDIN_EXIT", "0"))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
