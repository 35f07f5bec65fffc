"""cgp-gate's Python helpers. The gate itself is the `cgp-gate` binary this wheel carries.

- `cgp_gate.triton`: time Triton (or any CUDA) kernels with `triton.testing.do_bench` and write every
  repetition's time as PyTorch benchmark rows, for `profiler: pytorch-rows` (docs/harnesses.md).
"""
