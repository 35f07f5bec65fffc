#!/usr/bin/env bash
# The SYNTHETIC benchmark of `check --base` (issue 56; docs/statistics.md 6.7), through the binary:
# `check` alone, `check --base` and `ab` at +0, +3, +4, +5 and +10 %, job offsets uniform in
# +-0.9 %, on the gbench stand-in of examples/confirm_bench.rs. Builds the release binary and the
# example, then runs it; the Markdown table goes to stdout, progress to stderr.
#
#   scripts/confirm-bench.sh [--runs N (100)] [--parallel P (2)] [--shifts 0,3,4,5,10]
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
cargo build --release --locked --bin cgp-gate --example confirm_bench >&2
exec "$target/release/examples/confirm_bench" --bin "$target/release/cgp-gate" "$@"
