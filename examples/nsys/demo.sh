#!/usr/bin/env bash
# profiler: nsys targets on recorded data, no GPU needed. The recordings are SYNTHETIC repetitions
# of real captures (see their manifest.json and make_recordings.py).
set -uo pipefail
cd "$(dirname "$0")/../.."
cargo build --release --locked --quiet || exit 3
bin=target/release/cgp-gate
out=target/demo-nsys
mkdir -p "$out"
spec=examples/nsys/cgp-gate.yaml

echo "== 1. breakdown of the real captures"
"$bin" breakdown tests/fixtures/nsys-wild/01_l20vllm_cuda_gpu_kern_sum_2025.csv \
  tests/fixtures/nsys-wild/13_b200_export_2025.5.2.sqlite \
  --categories examples/nsys/categories.yaml --html "$out/breakdown.html" --csv "$out/kernels.csv"

echo
echo "== 2. the main branch against its baselines: expect exit 0"
"$bin" check --spec "$spec" --baselines examples/nsys/baselines --replay examples/nsys/recordings/main
same=$?

echo
echo "== 3. a pull request whose GEMMs are 12% slower: expect exit 1"
"$bin" check --spec "$spec" --baselines examples/nsys/baselines --replay examples/nsys/recordings/pr-slowdown \
  --markdown "$out/comment.md" --html "$out/report.html"
slow=$?
echo
echo "main: exit $same (expected 0); slowdown: exit $slow (expected 1); reports in $out"
[ "$same" = 0 ] && [ "$slow" = 1 ]
