"""SYNTHETIC `triton.testing.do_bench`: see the package's docstring."""

import os
import random

_rng = random.Random()
_PROCESS = 1 + _rng.gauss(0, 0.005)


def do_bench(fn, warmup=25, rep=100, grad_to_none=None, quantiles=None, return_mode="mean"):
    fn()
    slow = float(os.environ.get("CGP_STANDIN_SLOWDOWN", "1"))
    times = [0.125 * slow * _PROCESS * (1 + _rng.gauss(0, 0.01)) for _ in range(rep)]
    if return_mode == "all":
        return times
    return sum(times) / len(times)
