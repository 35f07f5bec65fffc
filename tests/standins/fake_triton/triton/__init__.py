"""SYNTHETIC stand-in for Triton (no GPU here): only what `cgp_gate.triton` calls, `__version__`
and `testing.do_bench(..., return_mode="all")`, which calls the function and returns made-up
times (ms): 0.125 ms x CGP_STANDIN_SLOWDOWN, 1 % noise per repetition, 0.5 % per process."""

__version__ = "0.0.0-standin"
