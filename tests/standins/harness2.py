#!/usr/bin/env python3
"""SYNTHETIC stand-in benchmark program for the second batch of harness formats (docs/harnesses.md).

`harness2.py FORMAT [what cgp-gate appends]` writes the file that FORMAT's tool writes, in its real
layout (the shared real files of ../shared/fixtures/harness2/ and SCHEMAS.md there), where a live
run of `profiler: FORMAT` looks for it:

- hyperfine: `--export-json PATH`, 20 `times` per command with `exit_codes`;
- tritonbench: `--output-json PATH`, tritonbench's flat keys, one latency (ms) per input;
- pytorch-rows: the path in CGP_GATE_OUTPUT, PyTorch benchmark rows of 30 samples (ms) each;
- criterion: the `new/` folders under CRITERION_HOME, 30 samples each;
- asv: `run` in the arguments: a results file (with `benchmarks.json`) under the `results_dir` of
  ./asv.conf.json, with 10 samples each under `--record-samples`;
- vllm: `--result-filename PATH`, one run's statistics, with the requests (`--save-detailed`) when
  CGP_STANDIN_DETAILED is set.

The times are made up: a fixed time per benchmark, 1 % noise between samples and 0.5 % between
processes. Knobs (environment): CGP_STANDIN_SLOWDOWN (a factor, 1.10 = 10 % slower),
CGP_STANDIN_GPU (the device the file records, where the format records one), CGP_STANDIN_LOG
(append one line per run to this file, to prove the program ran), CGP_STANDIN_FAIL (hyperfine: one
run exits 1). Standard library only.
"""
import json
import os
import random
import sys

FORMAT, ARGS = sys.argv[1], sys.argv[2:]
SLOW = float(os.environ.get("CGP_STANDIN_SLOWDOWN", "1"))
GPU = os.environ.get("CGP_STANDIN_GPU", "SYNTHETIC stand-in GPU")
rng = random.Random()
PROCESS = 1 + rng.gauss(0, 0.005)
BENCHES = [("small", 1.0e-3), ("large", 4.0e-3)]


def sample(base):
    return base * SLOW * PROCESS * (1 + rng.gauss(0, 0.01))


def after(flag):
    return ARGS[ARGS.index(flag) + 1]


def write(path, doc):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)


def hyperfine():
    results = []
    for name, base in BENCHES:
        times = [sample(base) for _ in range(20)]
        codes = [0] * 20
        if os.environ.get("CGP_STANDIN_FAIL"):
            codes[3] = 1
        mean = sum(times) / len(times)
        results.append({"command": f"./bench {name}", "mean": mean, "stddev": 0.01 * mean, "median": sorted(times)[10],
                        "user": 0.5 * mean, "system": 0.1 * mean, "min": min(times), "max": max(times),
                        "times": times, "exit_codes": codes})
    write(after("--export-json"), {"results": results})


def tritonbench():
    doc = {f"tritonbench_softmax_fwd[x_{name}-triton_softmax]_latency": sample(base) * 1e3 for name, base in BENCHES}
    doc["tritonbench_softmax_fwd-pass"] = 1
    write(after("--output-json"), doc)


def pytorch_rows():
    rows = [{"benchmark": {"name": "cgp_gate.triton", "mode": "fwd", "extra_info": {"device": GPU}},
             "model": {"name": name, "backend": "triton"},
             "metric": {"name": "latency", "benchmark_values": [sample(base) * 1e3 for _ in range(30)],
                        "extra_info": {"unit": "ms"}},
             "runners": [{"name": "standin", "gpu_info": GPU}],
             "dependencies": {"triton": {"version": "3.4.0"}}} for name, base in BENCHES]
    write(os.environ["CGP_GATE_OUTPUT"], rows)


def criterion():
    home = os.environ["CRITERION_HOME"]
    for name, base in BENCHES:
        new = os.path.join(home, "reduce", name, "new")
        iters = [float(10 * (i + 1)) for i in range(30)]
        times = [n * sample(base) * 1e9 for n in iters]
        per = sorted(t / n for t, n in zip(times, iters))
        est = lambda v: {"confidence_interval": {"confidence_level": 0.95, "lower_bound": 0.99 * v, "upper_bound": 1.01 * v},
                         "point_estimate": v, "standard_error": 0.005 * v}
        write(os.path.join(new, "benchmark.json"),
              {"group_id": "reduce", "function_id": name, "value_str": None, "throughput": None,
               "full_id": f"reduce/{name}", "directory_name": f"reduce/{name}", "title": f"reduce/{name}"})
        write(os.path.join(new, "sample.json"), {"sampling_mode": "Linear", "iters": iters, "times": times})
        write(os.path.join(new, "estimates.json"), {"mean": est(sum(per) / len(per)), "median": est(per[15]),
                                                    "median_abs_dev": est(0.01 * per[15]), "slope": est(per[15]),
                                                    "std_dev": est(0.01 * per[15])})


def asv():
    conf = {}
    if os.path.exists("asv.conf.json"):
        with open("asv.conf.json") as f:
            conf = json.loads("\n".join(l for l in f if not l.lstrip().startswith("//")))
    results = conf.get("results_dir", "results")
    columns = ["result", "params", "version", "started_at", "duration", "stats_ci_99_a", "stats_ci_99_b",
               "stats_q_25", "stats_q_75", "stats_number", "stats_repeat", "samples", "profile"]
    rows, defs = {}, {"version": 2}
    for name, base in BENCHES:
        key = f"benchmarks.Suite.time_{name}"
        samples = [sample(base) for _ in range(10)]
        med = sorted(samples)[5]
        row = [[med], [], "0" * 64, 0, 1.0, [0.98 * med], [1.02 * med], [0.99 * med], [1.01 * med], [1], [10]]
        if "--record-samples" in ARGS:
            row.append([samples])
        rows[key] = row
        defs[key] = {"name": key, "type": "time", "unit": "seconds", "param_names": [], "params": [], "version": "0" * 64}
    write(os.path.join(results, "benchmarks.json"), defs)
    write(os.path.join(results, "standin", f"{rng.getrandbits(32):08x}-virtualenv-py3.11.json"),
          {"commit_hash": "0" * 40, "env_name": "virtualenv-py3.11", "date": 0,
           "params": {"machine": "standin", "python": "3.11"}, "python": "3.11", "requirements": {}, "env_vars": {},
           "result_columns": columns, "results": rows, "durations": {}, "version": 2})


def vllm():
    n = 400
    ttfts = [sample(0.1) * rng.lognormvariate(0, 0.25) for _ in range(n)]
    itls = [[sample(0.01) for _ in range(7)] for _ in range(n)]
    srt = sorted(ttfts)

    def pct(q):
        h = (len(srt) - 1) * q
        i = int(h)
        return srt[i] + (h - i) * (srt[min(i + 1, len(srt) - 1)] - srt[i])

    doc = {"date": "20260101-000000", "endpoint_type": "vllm", "backend": "vllm", "label": None, "model_id": "standin/model",
           "tokenizer_id": "standin/model", "num_prompts": n, "request_rate": "inf", "burstiness": 1.0,
           "max_concurrency": 16, "duration": sample(10.0), "completed": n, "failed": 0,
           "request_throughput": n / sample(10.0), "request_goodput": None, "output_throughput": 8 * n / sample(10.0),
           "mean_ttft_ms": 1e3 * sum(ttfts) / n, "median_ttft_ms": 1e3 * pct(0.5), "std_ttft_ms": 1e3 * 0.1 * pct(0.5),
           "p99_ttft_ms": 1e3 * pct(0.99)}
    if os.environ.get("CGP_STANDIN_DETAILED"):
        doc.update({"input_lens": [128] * n, "output_lens": [8] * n, "ttfts": ttfts, "itls": itls,
                    "generated_texts": [""] * n, "errors": [""] * n})
    write(after("--result-filename"), doc)


if os.environ.get("CGP_STANDIN_LOG"):
    with open(os.environ["CGP_STANDIN_LOG"], "a") as f:
        f.write(FORMAT + "\n")
{"hyperfine": hyperfine, "tritonbench": tritonbench, "pytorch-rows": pytorch_rows, "criterion": criterion,
 "asv": asv, "vllm": vllm}[FORMAT]()
