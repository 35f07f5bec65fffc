#!/usr/bin/env bash
# Validates cgp-gate on a real NVIDIA GPU in one command (docs/validation.md, docs/gpu-lease.md).
#
# Needs: nvcc, ncu and nvidia-smi on PATH (or NVCC / CGP_GATE_NCU / NVIDIA_SMI set), python3,
# make, tar, and a cgp-gate binary built for this machine (--cgp-gate, default
# target/release/cgp-gate). It never changes the GPU's clocks, power limit or any other setting:
# the spec it measures (examples/cgp-gate.validate.yaml) has `clocks: none` and
# `clock_control: none`, and the only nvidia-smi calls are queries.
#
# What it does, in order (each step logs into the output folder):
#   1. environment: nvidia-smi, ncu --version, nvcc --version, cgp-gate env --json
#   2. builds examples/cuda with nvcc -arch=sm_90: plain, EXTRA_WORK_PCT=1, 3, 10, BAD_LAUNCH=1,
#      and runs each program once without ncu (each checks its own results)
#   3. baseline: cgp-gate profile --record, then baseline update --replay
#   4. one live `check --record` of the plain build (its wall time against its ncu runs)
#   5. one pool recording per build (`profile --record` with many repetitions)
#   6. A/A and planted checks: `check --replay` over disjoint slices of those pools
#   7. cost: the recorded ncu command lines run directly, the programs alone, passes per metric
#   8. summary.json + summary.md, and one tarball of everything
#
# The GPU time is planned: the number of ncu runs and an estimate are printed before anything
# runs; the estimate is re-made from the measured cost of the baseline recording, and the pools
# are shrunk to fit --budget-s (what was cut is in the summary).
#
# --part splits the work for machines lent for 10 minutes per command: `aa` (baseline, live check,
# A/A) and `planted` (baseline, planted builds) each stand alone on their own machine; the
# summaries of both parts merge with `--merge DIR...`. `cupti` (builds plain, EXTRA_WORK_PCT=3 and
# 10, then scripts/validate_gpu_cupti.py) measures what CUPTI timing costs against the program
# alone and ncu, CUPTI's kernel durations against ncu's, and A/A and planted checks of
# `profiler: cupti` rows at one process per row (docs/cupti.md); it writes work/cupti/.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: scripts/validate-gpu.sh [options] [OUTDIR]

OUTDIR defaults to $OUT, else ./validation-out. Everything measured ends up there:
summary.json, summary.md, validate.log and validation-<part>.tar.gz (the whole work folder).

options:
  --part all|aa|planted|cupti
                          what to measure (default all; aa, planted and cupti each fit one
                          10-minute call; cupti: docs/cupti.md)
  --cupti-checks N        part cupti: live checks per build (plain, extra3, extra10; default 10)
  --cupti-processes N     part cupti: processes per row and mode for the wall times (default 5)
  --dry-run               print the plan (builds, ncu runs, time estimate) and stop; no GPU is used
  --budget-s N            wall seconds for the whole part (default: all 1140, aa/planted 540)
  --aa-checks N           A/A checks replayed from the plain pool (default 20; one live check more;
                          fewer when they do not fit the budget, said in the plan)
  --planted-checks N      checks per planted build (default 3; at least 2 before A/A checks go below 10)
  --baseline-reps N       repetitions of the baseline recording (default 10)
  --sec-per-run S         seconds per ncu run assumed before it is measured (default: the H100's
                          measured cost, 2.0 s per process + 0.014 s per launch beyond 3)
  --spec FILE             the spec (default examples/cgp-gate.validate.yaml)
  --cgp-gate PATH         the cgp-gate binary (default target/release/cgp-gate, else on PATH)
  --work DIR              the work folder (default OUTDIR/work; packed into the tarball)
  --jobs N                parallel nvcc builds (default: number of CPUs)
  --synthetic NOTE        label every output SYNTHETIC with NOTE (stand-in runs without a GPU)
  --merge DIR... OUTDIR   only merge the work folders of earlier parts (extracted tarballs) into
                          one summary in OUTDIR
  -h, --help              this text

environment: NVCC, CGP_GATE_NCU (ncu), NVIDIA_SMI override the tools found on PATH.
EOF
}

die() {
  echo "validate-gpu: error: $*" >&2
  exit 1
}
say() { echo "validate-gpu: $*"; }

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="$ROOT/scripts/validate_gpu.py"

part=all
dry_run=0
budget=""
aa_checks=20
planted_checks=3
cupti_checks=10
cupti_processes=5
baseline_reps=10
sec_per_run=""
spec_src="$ROOT/examples/cgp-gate.validate.yaml"
cgp=""
work=""
jobs="$(nproc 2>/dev/null || echo 4)"
synthetic=""
merge=()
outdir="${OUT:-}"

positive_int() { [[ "$2" =~ ^[0-9]+$ ]] && [ "$2" -gt 0 ] || die "$1 needs a positive integer, got '$2'"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --part) part="${2:?--part needs a value}"; shift 2 ;;
    --dry-run) dry_run=1; shift ;;
    --budget-s) positive_int "$1" "${2:-}"; budget="$2"; shift 2 ;;
    --aa-checks) positive_int "$1" "${2:-}"; aa_checks="$2"; shift 2 ;;
    --planted-checks) positive_int "$1" "${2:-}"; planted_checks="$2"; shift 2 ;;
    --cupti-checks) positive_int "$1" "${2:-}"; cupti_checks="$2"; shift 2 ;;
    --cupti-processes) positive_int "$1" "${2:-}"; cupti_processes="$2"; shift 2 ;;
    --baseline-reps) positive_int "$1" "${2:-}"; baseline_reps="$2"; shift 2 ;;
    --sec-per-run) [[ "${2:-}" =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--sec-per-run needs a number"; sec_per_run="$2"; shift 2 ;;
    --spec) spec_src="$(realpath "${2:?--spec needs a file}")"; shift 2 ;;
    --cgp-gate) cgp="${2:?--cgp-gate needs a path}"; shift 2 ;;
    --work) work="${2:?--work needs a folder}"; shift 2 ;;
    --jobs) positive_int "$1" "${2:-}"; jobs="$2"; shift 2 ;;
    --synthetic) synthetic="${2:?--synthetic needs a note}"; shift 2 ;;
    --merge) shift; while [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; do merge+=("$1"); shift; done
      # The last one is the output folder.
      [ ${#merge[@]} -ge 2 ] || die "--merge needs work folders and then the output folder"
      outdir="${merge[-1]}"
      unset 'merge[-1]' ;;
    -h | --help) usage; exit 0 ;;
    --*) die "unknown option $1 (see --help)" ;;
    *) outdir="$1"; shift ;;
  esac
done
case "$part" in all | aa | planted | cupti) ;; *) die "--part must be all, aa, planted or cupti, not '$part'" ;; esac
outdir="${outdir:-$PWD/validation-out}"
mkdir -p "$outdir"
outdir="$(cd "$outdir" && pwd)"

command -v python3 >/dev/null || die "python3 is needed (summary and slicing)"
# Resolved once: a version manager's shim costs a few hundred ms a call.
python="$(python3 -c 'import sys; print(sys.executable)')"
python3() { "$python" "$@"; }

if [ ${#merge[@]} -gt 0 ]; then
  python3 "$PY" summarize --out "$outdir" "${merge[@]}"
  python3 "$PY" digest "$outdir/summary.json"
  say "merged ${#merge[@]} part(s) into $outdir/summary.json and $outdir/summary.md"
  exit 0
fi

[ -n "$budget" ] || { [ "$part" = all ] && budget=1140 || budget=540; }
work="${work:-$outdir/work}"
mkdir -p "$work"
work="$(cd "$work" && pwd)"
log="$outdir/validate.log"
# Everything printed from here on also goes to the log.
exec > >(tee -a "$log") 2>&1
t_start=$(date +%s)
elapsed() { echo $(($(date +%s) - t_start)); }
say "part $part, output $outdir, work $work, budget ${budget}s ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
[ -z "$synthetic" ] || say "SYNTHETIC run: $synthetic"

# ------------------------------------------------------------------ tools
command -v tar >/dev/null || die "tar is needed to pack the results"
if [ -z "$cgp" ]; then
  if [ -x "$ROOT/target/release/cgp-gate" ]; then cgp="$ROOT/target/release/cgp-gate"
  elif command -v cgp-gate >/dev/null; then cgp="$(command -v cgp-gate)"
  else die "no cgp-gate binary: build it with 'cargo build --release --locked' or pass --cgp-gate PATH"; fi
fi
[ -x "$cgp" ] || die "--cgp-gate $cgp is not an executable file"
cgp="$(realpath "$cgp")"
if ! cgp_version="$("$cgp" --version 2>&1)"; then
  die "$cgp does not run here ($cgp_version). Built for another machine? here: uname -m = $(uname -m); file: $(file -b "$cgp" 2>/dev/null || echo '?')"
fi
# A dry run only notes missing GPU tools; a real run stops.
need() { if [ "$dry_run" = 1 ]; then say "note: $*"; else die "$*"; fi; }
nvcc="${NVCC:-$(command -v nvcc || true)}"
if [ -z "$nvcc" ] && [ -x /usr/local/cuda/bin/nvcc ]; then nvcc=/usr/local/cuda/bin/nvcc; fi
[ -n "$nvcc" ] || need "nvcc not found: put the CUDA toolkit on PATH or set NVCC"
ncu="${CGP_GATE_NCU:-$(command -v ncu || true)}"
if [ -z "$ncu" ]; then
  for c in /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu; do if [ -x "$c" ]; then ncu="$c"; break; fi; done
fi
[ -n "$ncu" ] || need "ncu not found: put Nsight Compute on PATH or set CGP_GATE_NCU"
export CGP_GATE_NCU="$ncu" # cgp-gate and this script's own ncu runs use the same ncu
smi="${NVIDIA_SMI:-$(command -v nvidia-smi || true)}"
[ -n "$smi" ] || need "nvidia-smi not found: is there an NVIDIA driver? (set NVIDIA_SMI to override)"

# ------------------------------------------------------------------ plan
variants=()
case "$part" in
  all) variants=(plain extra1 extra3 extra10 badlaunch) ;;
  aa) variants=(plain) ;;
  planted) variants=(plain extra1 extra3 extra10 badlaunch) ;;
  cupti) variants=(plain extra3 extra10) ;;
esac
planted_variants=()
[ "$part" = cupti ] || for v in "${variants[@]}"; do [ "$v" = plain ] || planted_variants+=("$v"); done
make_args() {
  case "$1" in
    plain) echo "" ;;
    extra1) echo "EXTRA_WORK_PCT=1" ;;
    extra3) echo "EXTRA_WORK_PCT=3" ;;
    extra10) echo "EXTRA_WORK_PCT=10" ;;
    badlaunch) echo "BAD_LAUNCH=1" ;;
  esac
}
reps_line="$(grep -E '^  repetitions: [0-9]+' "$spec_src" | head -1 || true)"
max_line="$(grep -E '^  max_repetitions: [0-9]+' "$spec_src" | head -1 || true)"
[ -n "$reps_line" ] && [ -n "$max_line" ] ||
  die "$spec_src must set '  repetitions: N' and '  max_repetitions: N' under defaults (the script rewrites them)"
reps="${reps_line##*: }"
max_reps="${max_line##*: }"
"$cgp" validate --spec "$spec_src" >/dev/null || die "the spec $spec_src is invalid (see above)"
# The card's settings are never changed: every `clocks:` must be `none`, and every ncu command line
# must say `--clock-control none`.
if grep -E '^\s*clocks:' "$spec_src" | grep -vqE '^\s*clocks:\s*none\s*(#.*)?$'; then
  die "$spec_src sets clocks other than 'none': this script never changes the GPU's clocks (use clocks: none and clock_control: none)"
fi
grep -qE '^\s*clocks:\s*none' "$spec_src" || die "$spec_src must set 'clocks: none' (under defaults): this script never changes the GPU's clocks"
if "$cgp" profile --dry-run --spec "$spec_src" 2>/dev/null | grep -E '^[^ ]+\[[^]]*\] x[0-9]+: ' | grep -vq -- ' --clock-control none '; then
  die "$spec_src makes ncu control the clocks: set clock_control: none (this script never changes the GPU's clocks)"
fi
# Rows = target x size pairs, from the dry run of the spec.
rows="$("$cgp" profile --dry-run --spec "$spec_src" 2>/dev/null | grep -cE '^[^ ]+\[[^]]*\] x[0-9]+: ' || true)"
[ "$rows" -gt 0 ] || die "could not count the rows of $spec_src with 'cgp-gate profile --dry-run'"

# Launches per process: the largest `--launches N` of the spec's command lines, else the example
# programs' default (30).
launches="$("$cgp" profile --dry-run --spec "$spec_src" 2>/dev/null | grep -oE -- '--launches [0-9]+' | awk '$2 > m {m = $2} END {print m + 0}')"
[ "$launches" -gt 0 ] || launches=30
# Seconds per ncu run before one is measured: the cost measured on the H100 (about 2.0 s per
# process, 14 ms per launch beyond 3; docs/validation.md), unless --sec-per-run says otherwise.
[ -n "$sec_per_run" ] || sec_per_run="$(python3 "$PY" sec-per-run --launches "$launches")"
PYC="$ROOT/scripts/validate_gpu_cupti.py"
if [ "$part" = cupti ]; then
  cupti_spec="$ROOT/examples/cgp-gate.cupti.yaml"
  "$cgp" validate --spec "$cupti_spec" >/dev/null || die "the spec $cupti_spec is invalid (see above)"
  python3 "$PYC" plan --rows "$rows" --checks "$cupti_checks" --processes "$cupti_processes" --pytorch "$ROOT/examples/pytorch"
  # The ncu parts' plan (part.json's fields): none of it runs in this part.
  planned=0 estimate=0 aa_checks_wanted=0 planted_checks_wanted=0
  if [ "$dry_run" = 1 ]; then
    say "dry run: nothing was built or measured"
    exit 0
  fi
fi
if [ "$part" != cupti ]; then
n_metrics="$("$cgp" profile --dry-run --spec "$spec_src" 2>/dev/null | grep -oE -- '--metrics [^ ]+' | awk '{n += split($2, a, ",")} END {print n + 0}')"
runs_bare=$((rows + n_metrics)) # each row's command line once, and each metric alone once
# Fit the checks to the budget before anything runs, at that cost: the pools are then recorded
# whole, and only a run dearer than assumed cuts them (the H100 run of 2026-11-24 planned 20 A/A
# and 3 planted checks into 500 s, and its pools were cut to 15 and 2).
aa_checks_wanted=$aa_checks
planted_checks_wanted=$planted_checks
read -r aa_fit planted_fit _ < <(python3 "$PY" fit --part "$part" --budget-s "$budget" --sec-per-run "$sec_per_run" \
  --rows "$rows" --reps "$reps" --max-reps "$max_reps" --baseline-reps "$baseline_reps" --runs-bare "$runs_bare" \
  --planted-variants "${#planted_variants[@]}" --aa-checks "$aa_checks" --planted-checks "$planted_checks")
[ "$part" = planted ] || aa_checks=$aa_fit
[ ${#planted_variants[@]} -eq 0 ] || planted_checks=$planted_fit
aa_pool_want=0
if [ "$part" != planted ]; then
  # Each A/A check reads `reps` repetitions per row and sometimes re-measures: 25% to spare.
  aa_pool_want=$(((aa_checks * reps * 5 + 3) / 4))
fi
planted_pool_want=$((planted_checks * max_reps)) # a regression is re-measured up to max_repetitions
runs_baseline=$((rows * baseline_reps))
runs_live=$((rows * reps))
runs_aa=$((rows * aa_pool_want))
runs_planted=$((rows * planted_pool_want * ${#planted_variants[@]}))
[ "$part" != planted ] || runs_live=0
planned=$((runs_baseline + runs_live + runs_aa + runs_planted + runs_bare))
estimate="$(python3 -c "import sys; print(round(float(sys.argv[1]) * int(sys.argv[2]) + 60))" "$sec_per_run" "$planned")"
cat <<EOF
validate-gpu: plan (part $part; spec $spec_src: $rows rows, repetitions $reps, max $max_reps)
  builds:               ${variants[*]}  (nvcc -arch=sm_90, $jobs in parallel)
  baseline recording:   $baseline_reps reps x $rows rows = $runs_baseline ncu runs
  live check --record:  $([ "$part" = planted ] && echo "not in this part" || echo "about $runs_live ncu runs (more if rows are re-measured)")
  A/A pool (plain):     $([ "$part" = planted ] && echo "not in this part" || echo "$aa_pool_want reps x $rows rows = $runs_aa ncu runs -> $aa_checks replayed checks")
  planted pools:        $([ "$part" = aa ] && echo "not in this part" || echo "${#planted_variants[@]} builds x $planted_pool_want reps x $rows rows = $runs_planted ncu runs -> $planted_checks checks each")
  cost (bare runs):     $runs_bare ncu runs, plus each program once alone
  launches per process: $launches (a run costs about ${sec_per_run}s)
  total:                $planned ncu runs; at ${sec_per_run}s a run about ${estimate}s (budget ${budget}s)
EOF
if [ "$part" != planted ] && [ "$aa_checks" -lt "$aa_checks_wanted" ]; then
  say "note: $aa_checks A/A checks fit the budget (wanted $aa_checks_wanted); raise --budget-s for more"
fi
if [ ${#planted_variants[@]} -gt 0 ] && [ "$planted_checks" -lt "$planted_checks_wanted" ]; then
  say "note: $planted_checks checks per planted build fit the budget (wanted $planted_checks_wanted); raise --budget-s for more"
fi
if [ "$estimate" -gt "$budget" ]; then
  say "note: the estimate is over the budget: the pools will be shrunk to fit once the cost of a run is measured"
fi
fi
if [ "$dry_run" = 1 ]; then
  say "dry run: nothing was built or measured"
  exit 0
fi

# From here on the work folder holds logs worth having: a failure still packs them, so that they
# come back from a device call (OUTDIR keeps only a few files; the deep work tree may not).
pack() {
  local rc=$?
  if [ "$rc" != 0 ] && [ -d "$work" ]; then
    cp "$log" "$work/validate.log" 2>/dev/null || true
    tar -czf "$outdir/validation-$part.tar.gz" --exclude='./builds/*/build' --exclude='./slices' -C "$work" . 2>/dev/null &&
      echo "validate-gpu: failed (exit $rc); the logs so far are in $outdir/validation-$part.tar.gz and $log" >&2
  fi
}
trap pack EXIT
py_info() { python3 "$PY" part-info "$work" "$@"; }
rm -f "$work/part.json"
planted_json="$(printf '%s\n' "${planted_variants[@]}" | python3 -c 'import json,sys; print(json.dumps([l.strip() for l in sys.stdin if l.strip()]))')"
py_info "part=$part" "spec=$(basename "$spec_src")" "reps=$reps" "max_reps=$max_reps" "baseline_reps=$baseline_reps" \
  "planned_runs=$planned" "estimated_seconds=$estimate" "budget_seconds=$budget" "sec_per_run_assumed=$sec_per_run" \
  "planted_variants=$planted_json" "aa_checks_planned=$aa_checks" "planted_checks_planned=$planted_checks" \
  "aa_checks_wanted=$aa_checks_wanted" "planted_checks_wanted=$planted_checks_wanted" "launches_per_process=$launches"
if [ -n "$synthetic" ]; then py_info "synthetic=true" "synthetic_note=SYNTHETIC: $synthetic"; fi

# ------------------------------------------------------------------ 1. environment
say "1/8 environment"
mkdir -p "$work/env"
uname -srm >"$work/env/uname.txt"
echo "$cgp_version" >"$work/env/cgp-gate-version.txt"
"$smi" >"$work/env/nvidia-smi.txt" 2>&1 || die "nvidia-smi failed: $(tail -3 "$work/env/nvidia-smi.txt")"
"$smi" --query-gpu=name,uuid,pci.bus_id,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu,persistence_mode,mig.mode.current --format=csv \
  >"$work/env/nvidia-smi-query.csv" 2>&1 || say "note: nvidia-smi --query-gpu failed (see env/nvidia-smi-query.csv)"
"$smi" -q >"$work/env/nvidia-smi-q.txt" 2>&1 || true
"$ncu" --version >"$work/env/ncu-version.txt" 2>&1 || die "$ncu --version failed: $(cat "$work/env/ncu-version.txt")"
"$nvcc" --version >"$work/env/nvcc-version.txt" 2>&1 || die "$nvcc --version failed"
# Informational: exits 0 without a GPU too. Its JSON is what cgp-gate's NVML path saw.
"$cgp" env --json >"$work/env/cgp-gate-env.json" 2>"$work/env/cgp-gate-env.stderr" ||
  say "note: cgp-gate env --json exited $? (see env/cgp-gate-env.stderr)"
cat "$work/env/nvidia-smi.txt"
tail -n 2 "$work/env/ncu-version.txt"
tail -n 2 "$work/env/nvcc-version.txt"
echo "cgp-gate: $cgp_version; $(cat "$work/env/uname.txt")"
cp "$work/env/nvidia-smi-query.csv" "$work/env/nvidia-smi-query.start.csv" 2>/dev/null || true

# ------------------------------------------------------------------ 2. builds
# make when there is one; else the same nvcc lines (NVCC_FLAGS must stay the Makefile's FLAGS:
# tests/gpu_kit/mod.rs compares them).
NVCC_FLAGS=(-O3 -arch=sm_90 -lineinfo)
build_variant() { # variant outdir
  local extra=0 bad=0 a
  for a in $(make_args "$1"); do
    case "$a" in EXTRA_WORK_PCT=*) extra="${a#*=}" ;; BAD_LAUNCH=*) bad="${a#*=}" ;; esac
  done
  if command -v make >/dev/null; then
    make -C "$ROOT/examples/cuda" --no-print-directory "NVCC=$nvcc" "OUT=$2" "EXTRA_WORK_PCT=$extra" "BAD_LAUNCH=$bad"
  else
    echo "(no make here: nvcc directly, with the Makefile's flags)"
    mkdir -p "$2"
    for prog in vector_add matmul reduce; do
      (set -x; "$nvcc" "${NVCC_FLAGS[@]}" "-DCGP_EXTRA_WORK_PCT=$extra" "-DCGP_BAD_LAUNCH=$bad" -o "$2/$prog" "$ROOT/examples/cuda/$prog.cu") || return 1
    done
  fi
}
say "2/8 builds: ${variants[*]}"
mkdir -p "$work/builds"
pids=()
for v in "${variants[@]}"; do
  vdir="$work/builds/$v"
  rm -rf "$vdir"
  mkdir -p "$vdir"
  build_variant "$v" "$vdir/build" >"$vdir/build.log" 2>&1 &
  pids+=("$!")
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do sleep 0.2; done
done
failed=()
for i in "${!pids[@]}"; do wait "${pids[$i]}" || failed+=("${variants[$i]}"); done
for v in "${failed[@]}"; do
  echo "--- build log of $v:"
  cat "$work/builds/$v/build.log"
done
[ ${#failed[@]} -eq 0 ] || die "nvcc failed for: ${failed[*]} (logs above and in work/builds/*/build.log)"
# Each build gets its spec copies: check.yaml (the spec as is), baseline.yaml and pool.yaml
# (only the repetitions changed).
spec_copy() { # variant name reps
  sed -E "s/^  repetitions: [0-9]+/  repetitions: $3/; s/^  max_repetitions: [0-9]+/  max_repetitions: $3/" "$spec_src" >"$work/builds/$1/$2.yaml"
  local got
  got="$("$cgp" profile --dry-run --spec "$work/builds/$1/$2.yaml" 2>/dev/null | grep -oE '\] x[0-9]+:' | sort -u)"
  [ "$got" = "] x$3:" ] || die "could not set repetitions $3 in $work/builds/$1/$2.yaml (dry run shows: $got)"
}
for v in "${variants[@]}"; do
  cp "$spec_src" "$work/builds/$v/check.yaml"
done
# Each program once without ncu: a build that does not run costs no profiling time.
say "   each program once without ncu (they check their own results)"
for v in "${variants[@]}"; do
  while read -r line; do
    mapfile -t app < <(python3 -c 'import shlex,sys; print("\n".join(shlex.split(sys.argv[1])))' "$line")
    name="$(basename "${app[0]}")"
    if ! (cd "$work/builds/$v" && "${app[@]}") >"$work/builds/$v/smoke-$name.log" 2>&1; then
      if [ -n "$synthetic" ] && grep -q "no CUDA-capable device is detected" "$work/builds/$v/smoke-$name.log"; then
        echo "   $v/$name: started and failed at its first CUDA call, as it must without a GPU (stand-in run)"
        continue
      fi
      die "$v/$name failed without ncu: $(tail -3 "$work/builds/$v/smoke-$name.log") (argv: ${app[*]}; cwd $work/builds/$v)"
    fi
  done < <("$cgp" profile --dry-run --spec "$work/builds/$v/check.yaml" 2>/dev/null | sed -nE "s/^[^ ]+\\[[^]]*\\] x[0-9]+: .* --log-file '?<log>'? (.*)\$/\\1/p")
  echo "   $v: $(cat "$work/builds/$v"/smoke-*.log | grep -c ' ok$' || true) programs ran and checked their results"
done

# ------------------------------------------------------------------ part cupti
if [ "$part" = cupti ]; then
  py_info "cupti_checks=$cupti_checks" "cupti_processes=$cupti_processes"
  synth=()
  [ -z "$synthetic" ] || synth=(--synthetic "$synthetic")
  python3 "$PYC" run --work "$work" --cgp-gate "$cgp" --ncu "$ncu" --spec "$cupti_spec" --checks "$cupti_checks" \
    --processes "$cupti_processes" --pytorch "$ROOT/examples/pytorch" "${synth[@]}"
  cp "$log" "$work/validate.log"
  tarball="$outdir/validation-cupti.tar.gz"
  cp "$work/cupti/summary.json" "$outdir/summary-cupti.json"
  cp "$work/cupti/summary.md" "$outdir/summary-cupti.md"
  tar -czf "$tarball" --exclude='./builds/*/build' -C "$work" .
  say "wrote $outdir/summary-cupti.json, $outdir/summary-cupti.md and $tarball ($(du -h "$tarball" | cut -f1)) in $(elapsed)s"
  exit 0
fi

# ------------------------------------------------------------------ recordings
# record NAME VARIANT REPS: profile --record into work/rec/NAME, timed; the exit code is kept.
mkdir -p "$work/rec" "$work/checks" "$work/slices" "$work/baselines" "$work/cost"
record() {
  local name="$1" v="$2" n="$3" rc=0 t0 t1
  spec_copy "$v" "$name" "$n"
  rm -rf "$work/rec/$name"
  t0=$(date +%s.%N)
  "$cgp" profile --record "$work/rec/$name" --spec "$work/builds/$v/$name.yaml" >"$work/rec/$name.log" 2>&1 || rc=$?
  t1=$(date +%s.%N)
  local wall
  wall="$(python3 -c 'import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 3))' "$t0" "$t1")"
  py_info "recordings.$name.dir=rec/$name" "recordings.$name.variant=$v" "recordings.$name.reps=$n" \
    "recordings.$name.wall_seconds=$wall" "recordings.$name.exit_code=$rc"
  [ -z "$synthetic" ] || [ ! -f "$work/rec/$name/manifest.json" ] || python3 "$PY" mark-synthetic "$work/rec/$name" "$synthetic"
  echo "   $name: $n reps of $v in ${wall}s, exit $rc"
  if [ "$rc" != 0 ]; then
    tail -n 20 "$work/rec/$name.log"
    die "cgp-gate profile --record failed for $name (exit $rc; log work/rec/$name.log). Nothing after it can be trusted."
  fi
  LAST_WALL="$wall"
}
remaining() { echo $((budget - $(elapsed) - 45)); } # 45 s for replays, summary and the tarball

say "3/8 baseline: $baseline_reps repetitions of the plain build"
record baseline plain "$baseline_reps"
spr="$(python3 "$PY" calibrate "$work/rec/baseline" --fallback "$sec_per_run" --total-wall "$LAST_WALL")"
py_info "sec_per_run_measured=$spr"
"$cgp" baseline update --replay "$work/rec/baseline" --spec "$work/builds/plain/check.yaml" --baselines "$work/baselines" \
  >"$work/rec/baseline-update.log" 2>&1 || { cat "$work/rec/baseline-update.log"; die "baseline update --replay failed"; }
left=$(remaining)
say "   measured ${spr}s per ncu run; $((left > 0 ? left : 0))s of the budget left; re-estimated rest: $(python3 -c "import sys; print(round(float(sys.argv[1]) * int(sys.argv[2])))" "$spr" $((planned - runs_baseline)))s"

if [ "$part" != planted ]; then
  say "4/8 live check --record of the plain build (cost)"
  rc=0
  t0=$(date +%s.%N)
  # --no-skip: this run measures the cost of profiling; the SASS cache (docs/sass-cache.md) would
  # skip every kernel of the plain build, whose machine code is the baseline's.
  "$cgp" check --no-skip --record "$work/rec/live-plain" --spec "$work/builds/plain/check.yaml" --baselines "$work/baselines" \
    --json "$work/checks/live-plain.json" >"$work/checks/live-plain.log" 2>&1 || rc=$?
  t1=$(date +%s.%N)
  python3 -c 'import json,sys; json.dump({"exit_code": int(sys.argv[1]), "wall_seconds": round(float(sys.argv[3]) - float(sys.argv[2]), 3)}, open(sys.argv[4], "w"))' \
    "$rc" "$t0" "$t1" "$work/checks/live-plain.time.json"
  [ -z "$synthetic" ] || python3 "$PY" mark-synthetic "$work/rec/live-plain" "$synthetic"
  echo "   exit $rc; $(tail -n 1 "$work/checks/live-plain.log")"
  [ -f "$work/checks/live-plain.json" ] || { tail -n 20 "$work/checks/live-plain.log"; die "the live check wrote no results (exit $rc)"; }
else
  say "4/8 live check: only in parts all and aa"
fi

say "5/8 pools"
# Planted pools first (small and fixed), then the A/A pool gets what is left.
pools_left=${#planted_variants[@]}
for v in "${planted_variants[@]}"; do
  left=$(remaining)
  # This pool's share of what is left, after the cost runs (and, in part all, a minimal A/A pool).
  reserve=$runs_bare
  [ "$part" != all ] || reserve=$((runs_bare + rows * reps * 2))
  n="$(python3 "$PY" pool-reps --want "$planted_pool_want" --remaining-s "$left" --sec-per-run "$spr" --rows "$rows" \
    --pools "$pools_left" --reserve-runs "$reserve")"
  pools_left=$((pools_left - 1))
  [ "$n" -ge "$reps" ] || die "no budget left for the $v pool (${left}s left, ${spr}s a run): raise --budget-s or split with --part"
  [ "$n" -ge "$planted_pool_want" ] || say "   note: $v pool cut to $n repetitions (wanted $planted_pool_want) to fit the budget"
  record "$v-pool" "$v" "$n"
done
if [ "$part" != planted ]; then
  left=$(remaining)
  n="$(python3 "$PY" pool-reps --want "$aa_pool_want" --remaining-s "$left" --reserve-runs "$runs_bare" \
    --sec-per-run "$spr" --rows "$rows")"
  [ "$n" -ge "$reps" ] || die "no budget left for the A/A pool (${left}s left, ${spr}s a run): raise --budget-s or split with --part"
  [ "$n" -ge "$aa_pool_want" ] || say "   note: the A/A pool is cut to $n repetitions (wanted $aa_pool_want): fewer than $aa_checks A/A checks"
  record plain-pool plain "$n"
fi

say "6/8 checks over disjoint slices of the pools"
replay_checks() { # label pool variant checks
  python3 "$PY" replay-checks --label "$1" --pool "$work/rec/$2" --spec "$work/builds/$3/check.yaml" \
    --baselines "$work/baselines" --out "$work/checks" --slices "$work/slices" --cgp-gate "$cgp" --work "$work" \
    --checks "$4" --reps "$reps" --max-reps "$max_reps"
}
if [ "$part" != planted ]; then replay_checks aa plain-pool plain "$aa_checks"; fi
for v in "${planted_variants[@]}"; do replay_checks "$v" "$v-pool" "$v" "$planted_checks"; done
if [ "$part" != planted ]; then
  # The same A/A pool again with other repetitions (CPU only): how the false-alarm and
  # inconclusive counts move with the number of repetitions. As many checks as the pool allows.
  for r in 2 5; do
    [ "$r" != "$reps" ] || continue
    sed -E "s/^  repetitions: [0-9]+/  repetitions: $r/; s/^  max_repetitions: [0-9]+/  max_repetitions: $((2 * r))/" \
      "$spec_src" >"$work/builds/plain/check-r$r.yaml"
    python3 "$PY" replay-checks --label "aa-r$r" --pool "$work/rec/plain-pool" --spec "$work/builds/plain/check-r$r.yaml" \
      --baselines "$work/baselines" --out "$work/checks" --slices "$work/slices" --cgp-gate "$cgp" --work "$work" \
      --checks 1000 --reps "$r" --max-reps $((2 * r)) | tail -n 1
  done
  py_info "aa_sweep_reps=[2, $reps, 5]"
fi

# The first slice of each pool stays in the tarball: one A/A run and one run of each planted build,
# small enough to commit as a recording (docs/gpu-lease.md).
mkdir -p "$work/keep"
for d in "$work"/slices/*-01; do if [ -d "$d" ]; then cp -r "$d" "$work/keep/"; fi; done

say "7/8 cost: bare ncu runs, the programs alone, passes per metric"
cost_rec="$work/rec/baseline"
python3 "$PY" bare --recording "$cost_rec" --ncu "$ncu" --out "$work/cost" --cwd "$work/builds/plain" --work "$work"
"$smi" --query-gpu=name,uuid,pci.bus_id,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu,persistence_mode,mig.mode.current --format=csv \
  >"$work/env/nvidia-smi-query.end.csv" 2>&1 || true

say "8/8 summary"
py_info "elapsed_seconds=$(elapsed)" "finished=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
python3 "$PY" summarize --out "$outdir" "$work" >/dev/null
cp "$outdir/summary.json" "$work/summary.json"
cp "$outdir/summary.md" "$work/summary.md"
cp "$log" "$work/validate.log"
tarball="$outdir/validation-$part.tar.gz"
# Not packed: the binaries (rebuilt from the commit in seconds) and the slices (copies of pool
# repetitions; each check's JSON names the pool repetitions it used).
tar -czf "$tarball" --exclude='./builds/*/build' --exclude='./slices' -C "$work" .
say "wrote $outdir/summary.json, $outdir/summary.md, $log and $tarball ($(du -h "$tarball" | cut -f1)) in $(elapsed)s"
cat "$outdir/summary.md"
python3 "$PY" digest "$outdir/summary.json"
