#!/usr/bin/env bash
# Runs the commands of docs/getting-started.md without a GPU, on the SYNTHETIC demo recordings
# (examples/recordings), and prints what each one printed: the outputs on that page come from here.
#
#   scripts/getting-started.sh [path/to/cgp-gate]
#
# Each step that needs a GPU is run with a recording instead: `init --from` a recorded ncu CSV
# instead of `init -- PROGRAM`, and `--replay DIR` instead of running ncu. Every step has the exit
# code the page shows (the slowed-down check exits 1, the rest 0); a step that exits otherwise,
# or a missing binary, fails the script (exit 1) after the steps have run, naming each such step.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# The demo's release build when there is one (no second, debug build needed), else the debug one.
default="$root/target/release/cgp-gate"
[[ -x "$default" ]] || default="$root/target/debug/cgp-gate"
bin="${1:-$default}"
if [[ ! -x "$bin" ]]; then
  echo "error: no cgp-gate binary at $bin: build it first (cargo build --release), or give its path" >&2
  exit 1
fi
# A relative path names a file from the folder it was typed in; the steps run in another.
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
# Paths as a project would have them: the recordings stand in for ncu on a GPU.
ln -s "$root/examples/recordings" recordings

failed=()
step() { # step EXPECTED_EXIT TITLE COMMAND...: print the command as a user types it, its output and exit code
  local want="$1" title="$2" code
  shift 2
  printf '\n### %s\n$ %s\n' "$title" "$*"
  COLUMNS=100 NO_COLOR=1 "$bin" "$@" 2>&1
  code=$?
  printf '[exit %s]\n' "$code"
  if [[ "$code" != "$want" ]]; then
    failed+=("$title: exit $code, expected $want")
  fi
}

step 0 "1. init (GPU: cgp-gate init -- ./build/matmul --n 1024)" \
  init --from recordings/main/matmul/n=1024/0.csv -- ./build/matmul --n 1024
printf '\n--- cgp-gate.yaml ---\n'
cat cgp-gate.yaml || failed+=("init wrote no cgp-gate.yaml")
step 0 "2. validate" validate
step 0 "3. baseline update (GPU: cgp-gate baseline update)" \
  baseline update --replay recordings/main
step 0 "4. check, identical code (GPU: cgp-gate check)" check --replay recordings/pr-same
step 1 "4. check, a 6% slower matmul (GPU: cgp-gate check)" check --replay recordings/pr-slowdown

if ((${#failed[@]} > 0)); then
  printf '\nerror: %s step(s) did not do what docs/getting-started.md shows:\n' "${#failed[@]}" >&2
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
fi
printf '\nall 5 steps as docs/getting-started.md shows them\n'
