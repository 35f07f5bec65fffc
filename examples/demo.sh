#!/usr/bin/env bash
# The whole pipeline on real H100 data, no GPU needed:
#   spec -> replay of raw ncu output -> samples -> statistics against baselines -> reports.
# The recordings in examples/recordings/h100 were measured on an NVIDIA H100 80GB HBM3 with
# Nsight Compute 2025.3.1 on 2026-11-24 by scripts/validate-gpu.sh (see their PROVENANCE.md);
# examples/baselines-h100 was made from the real baseline recording with `baseline update --replay`.
set -uo pipefail
cd "$(dirname "$0")/.."
# A cold release build takes a few minutes (about 5 on 2 cores): cargo's own progress shows.
if [[ ! -x target/release/cgp-gate ]]; then
  echo "== building cgp-gate (release; a cold build takes a few minutes, cargo shows its progress)"
fi
cargo build --release --locked || exit 3
bin=target/release/cgp-gate
out=target/demo
rec=examples/recordings/h100
mkdir -p "$out"

echo "== 1. unchanged code (the live A/A check, $rec/aa-live): expect exit 0, no regression"
"$bin" check --spec "$rec/check.yaml" --baselines examples/baselines-h100 \
  --replay "$rec/aa-live" --json "$out/same.json"
same=$?

echo
echo "== 2. a pull request that makes every kernel thread do 3% more work (make EXTRA_WORK_PCT=3, $rec/extra3): expect exit 1"
"$bin" check --spec "$rec/check.yaml" --baselines examples/baselines-h100 \
  --replay "$rec/extra3" --json "$out/slowdown.json" \
  --junit "$out/junit.xml" --markdown "$out/comment.md" --html "$out/report.html"
slow=$?

echo
echo "unchanged code: exit $same (expected 0); EXTRA_WORK_PCT=3: exit $slow (expected 1)"
echo "reports (H100, real capture): $out/slowdown.json $out/junit.xml $out/comment.md $out/report.html"
[ "$same" = 0 ] && [ "$slow" = 1 ]
