#!/usr/bin/env bash
# The whole pipeline on recorded data, no GPU needed:
#   spec -> replay of raw ncu output -> samples -> statistics against baselines -> reports.
# The recordings in examples/recordings are SYNTHETIC (see their manifest.json).
set -uo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked --quiet || exit 3
bin=target/release/cgp-gate
out=target/demo
mkdir -p "$out"

echo "== 1. identical code (examples/recordings/pr-same): expect exit 0, no regression"
"$bin" check --spec examples/cgp-gate.yaml --baselines examples/baselines \
  --replay examples/recordings/pr-same --json "$out/same.json"
same=$?

echo
echo "== 2. a pull request that slows matmul n=1024 by 6% (examples/recordings/pr-slowdown): expect exit 1"
"$bin" check --spec examples/cgp-gate.yaml --baselines examples/baselines \
  --replay examples/recordings/pr-slowdown --json "$out/slowdown.json" \
  --junit "$out/junit.xml" --markdown "$out/comment.md" --html "$out/report.html"
slow=$?

echo
echo "identical code: exit $same (expected 0); slowdown: exit $slow (expected 1)"
echo "reports: $out/slowdown.json $out/junit.xml $out/comment.md $out/report.html"
[ "$same" = 0 ] && [ "$slow" = 1 ]
