#!/usr/bin/env bash
# Runs the commands of docs/getting-started.md without a GPU, on the SYNTHETIC demo recordings
# (examples/recordings), and prints what each one printed: the outputs on that page come from here.
#
#   scripts/getting-started.sh [path/to/cgp-gate]
#
# Each step that needs a GPU is run with a recording instead: `init --from` a recorded ncu CSV
# instead of `init -- PROGRAM`, and `--replay DIR` instead of running ncu.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${1:-$root/target/debug/cgp-gate}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
# Paths as a project would have them: the recordings stand in for ncu on a GPU.
ln -s "$root/examples/recordings" recordings

step() { # step TITLE COMMAND...: print the command as a user types it, then its output and exit code
  local title="$1"
  shift
  printf '\n### %s\n$ %s\n' "$title" "$*"
  COLUMNS=100 NO_COLOR=1 "$bin" "$@" 2>&1
  printf '[exit %s]\n' "$?"
}

step "1. init (GPU: cgp-gate init -- ./build/matmul --n 1024)" \
  init --from recordings/main/matmul/n=1024/0.csv -- ./build/matmul --n 1024
printf '\n--- cgp-gate.yaml ---\n'
cat cgp-gate.yaml
step "2. validate" validate
step "3. baseline update (GPU: cgp-gate baseline update)" \
  baseline update --replay recordings/main
step "4. check, identical code (GPU: cgp-gate check)" check --replay recordings/pr-same
step "4. check, a 6% slower matmul (GPU: cgp-gate check)" check --replay recordings/pr-slowdown
