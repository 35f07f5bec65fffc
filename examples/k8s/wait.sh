#!/usr/bin/env bash
# Wait until the merge Job of indexed-job.yaml ends, whichever way, and exit with the gate's exit
# code: the merge container's (0 pass, 1 regression, 2 invalid input, 3 profiler or environment
# failure). `kubectl wait --for=condition=Complete` alone would never return on a failed Job (a
# regression fails it) and would hold CI until its timeout.
#
#   bash examples/k8s/wait.sh [JOB [TIMEOUT_SECONDS]]     # defaults: cgp-gate-merge, 10800 (3 h)
#
# A timeout, or a failed Job without a container exit code (never scheduled, deleted), is exit 3.
set -euo pipefail

job="${1:-cgp-gate-merge}"
timeout="${2:-10800}"
poll="${CGP_GATE_POLL_SECONDS:-10}"
deadline=$((SECONDS + timeout))

while :; do
  # The Job's conditions that hold, one per line: Complete or Failed once it has ended.
  state="$(kubectl get "job/$job" -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type}{"\n"}{end}')"
  if grep -qx Complete <<<"$state"; then
    echo "cgp-gate: job/$job complete: pass"
    exit 0
  fi
  if grep -qx Failed <<<"$state"; then
    codes="$(kubectl get pods -l "job-name=$job" \
      -o jsonpath='{range .items[*]}{.status.containerStatuses[?(@.name=="merge")].state.terminated.exitCode}{"\n"}{end}')"
    code="$(grep -E '^[0-9]+$' <<<"$codes" | tail -n 1 || true)"
    if [[ -z "$code" || "$code" == 0 ]]; then
      echo "cgp-gate: job/$job failed without a merge exit code (see kubectl describe job/$job)" >&2
      exit 3
    fi
    echo "cgp-gate: job/$job failed: the merge exited $code" >&2
    exit "$code"
  fi
  if ((SECONDS >= deadline)); then
    echo "cgp-gate: job/$job has not ended after ${timeout}s" >&2
    exit 3
  fi
  sleep "$poll"
done
