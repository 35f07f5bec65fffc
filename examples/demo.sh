#!/usr/bin/env bash
# The whole pipeline on real H100 data, no GPU needed:
#   spec -> replay of raw ncu output -> samples -> statistics against baselines -> reports.
# The recordings in examples/recordings/h100 were measured on an NVIDIA H100 80GB HBM3 with
# Nsight Compute 2025.3.1 on 2026-11-24 by scripts/validate-gpu.sh (see their PROVENANCE.md);
# examples/baselines-h100 was made from the real baseline recording with `baseline update --replay`.
#
# Which cgp-gate runs, said on the first line: CGP_GATE=PATH if set, else `cgp-gate` on PATH (an
# installed one), else this checkout's release build if there is one (target/release/cgp-gate, or
# under CARGO_TARGET_DIR), else it is built
# here first with `cargo build --release --locked` (a cold build is 8 CPU-minutes: 5 to 9 minutes
# on 2 cores, more on a busy machine; README "Install"), with cargo's progress.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 3
out=target/demo
rec=examples/recordings/h100
built="${CARGO_TARGET_DIR:-target}/release/cgp-gate"

if [[ -n "${CGP_GATE:-}" ]]; then
  bin="$CGP_GATE"
  from="CGP_GATE"
elif bin="$(command -v cgp-gate)"; then
  from="on PATH; CGP_GATE=PATH runs another"
elif [[ -x "$built" ]]; then
  bin="$built"
  from="this checkout's release build, as built $(date -r "$bin" '+%Y-%m-%d %H:%M'); CGP_GATE=PATH runs another"
else
  bin=""
fi
if [[ -n "$bin" ]]; then
  version="$("$bin" --version 2>/dev/null)" || {
    echo "== cgp-gate: $bin ($from) does not run; set CGP_GATE to a cgp-gate that does" >&2
    exit 3
  }
  echo "== cgp-gate: $bin ($version; $from)"
else
  echo "== cgp-gate: none installed (no CGP_GATE, none on PATH, no $built): building it first"
fi
echo "== the demo: two checks replaying real H100 ncu recordings ($rec) against examples/baselines-h100:"
echo "   1. unchanged code, expected exit 0; 2. every kernel thread doing 3% more work, expected exit 1;"
echo "   reports in $out/"
if [[ -z "$bin" ]]; then
  if ! command -v cargo >/dev/null 2>&1; then
    echo "== cargo is not installed: install Rust (https://rustup.rs), or set CGP_GATE to a cgp-gate binary" >&2
    exit 3
  fi
  echo "== building: cargo build --release --locked (a cold build is 8 CPU-minutes: 5 to 9 minutes on"
  echo "   2 cores, more on a busy machine; cargo prints each crate it compiles, a bar on a terminal)"
  started=$SECONDS
  cargo build --release --locked || exit 3
  bin="$built"
  echo "== built $bin ($("$bin" --version)) in $(((SECONDS - started) / 60)) min $(((SECONDS - started) % 60)) s"
fi
mkdir -p "$out"

echo
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
