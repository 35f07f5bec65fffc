"""Gate Triton kernels on every repetition's time (docs/harnesses.md, "Triton kernels per sample").

`triton.testing.do_bench(fn, return_mode="all")` returns the time of each repetition (ms);
`bench()` calls it and writes the times as PyTorch benchmark rows (the PyTorch OSS benchmark
database's "v3" shape, `metric.benchmark_values`: repeated measurements), which a
`profiler: pytorch-rows` target reads, one process per repetition of the target:

    # bench_softmax.py
    import torch, triton
    from cgp_gate.triton import bench
    x = torch.randn(4096, 4096, device="cuda")
    bench("softmax", lambda: my_softmax(x), backend="triton", state={"n": 4096})
    bench("softmax", lambda: torch.softmax(x, -1), backend="aten", state={"n": 4096})

    # cgp-gate.yaml
    targets:
      - name: softmax
        profiler: pytorch-rows
        command: [python, bench_softmax.py]
        metrics:
          latency: "5%"

The rows go to the path in `CGP_GATE_OUTPUT` (cgp-gate sets it for every live harness run), or to
`output=`; the file is rewritten whole after each `bench()` or `record()` (write then rename), so
it is complete whenever the program stops. Standard library only, beside Triton and PyTorch.
"""

import json
import os
import platform
import tempfile

_ROWS = []
_PATHS = set()


def _device():
    try:
        import torch

        if torch.cuda.is_available():
            return torch.cuda.get_device_name()
    except Exception:  # noqa: BLE001 - no torch, or no GPU: the rows name none
        pass
    return None


def _dependencies():
    deps = {}
    for name, module in (("triton", "triton"), ("pytorch", "torch")):
        try:
            deps[name] = {"version": str(__import__(module).__version__)}
        except Exception:  # noqa: BLE001 - not installed: not a dependency of these rows
            pass
    return deps


def record(name, values, *, metric="latency", unit="ms", backend=None, state=None, output=None):
    """Write `values` (the repetitions of one measurement, e.g. do_bench's times) as a row of
    kernel `name`; `backend` and `state` (a dict, e.g. the shapes) tell apart rows of one name.
    Returns the path written."""
    values = [float(v) for v in values]
    if not values:
        raise ValueError(f"cgp_gate.triton: no values for {name!r}")
    path = output or os.environ.get("CGP_GATE_OUTPUT")
    if not path:
        raise RuntimeError("cgp_gate.triton: set CGP_GATE_OUTPUT (cgp-gate does, in a live run) or pass output=")
    device = _device()
    benchmark = {"name": "cgp_gate.triton", "extra_info": {"device": device} if device else {}}
    model = {"name": name}
    if backend:
        model["backend"] = backend
    if state:
        # The state is part of the row's key: `mode` carries it, `k=v` joined.
        benchmark["mode"] = ",".join(f"{k}={v}" for k, v in state.items())
    row = {
        "benchmark": benchmark,
        "model": model,
        "metric": {"name": metric, "benchmark_values": values, "extra_info": {"unit": unit}},
        "runners": [{"name": platform.node(), "gpu_info": device}] if device else [],
        "dependencies": _dependencies(),
    }
    _ROWS.append((path, row))
    rows = [r for p, r in _ROWS if p == path]
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".cgp_gate-", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(rows, f)
    os.replace(tmp, path)
    return path


def bench(name, fn, *, warmup=25, rep=100, backend=None, state=None, output=None, **do_bench_args):
    """Time `fn` with `triton.testing.do_bench(fn, warmup, rep, return_mode="all")` and record
    every repetition's time (ms) as the `latency` row of `name`. Returns the times."""
    from triton.testing import do_bench

    times = do_bench(fn, warmup=warmup, rep=rep, return_mode="all", **do_bench_args)
    record(name, times, metric="latency", unit="ms", backend=backend, state=state, output=output)
    return times
