#!/usr/bin/env bash
# The logic of the cgp-gate GitHub Action (action.yml), kept here so it can be run and tested
# without GitHub (tests/action_e2e.rs).
#
#   scripts/action.sh prepare   where the binary comes from; cache key and install directory
#   scripts/action.sh install   the release binary of the action's ref (scripts/install.sh,
#                               checksum verified) when that ref is a release tag; otherwise, or
#                               when the release has no binary, cargo install from the action's
#                               own checkout (or, for the 'version' input, that ref of its
#                               repository); says which it did
#   scripts/action.sh run       run `cgp-gate check`, `cgp-gate ab` or `cgp-gate baseline update`
#
# Inputs arrive as INPUT_* environment variables (action.yml maps them through `env:`; they are
# never pasted into a script, so a crafted input cannot run code). Exit codes are cgp-gate's:
# 0 pass, 1 regression, 2 invalid input, 3 profiler or environment failure.
set -euo pipefail

# clean TEXT: one printable line of text that holds inputs (cgp-gate's sanitiser,
# foundation/sanitize.rs, is not built yet when these errors come): newline, CR, tab and ESC
# written as \n \r \t \e, the other control characters and the bidirectional and zero-width
# characters (U+202A-U+202E, U+2066-U+2069, U+200B-U+200F, U+FEFF) as `?`, so that no input
# starts a line of its own (a workflow command such as `::add-mask::`) or hides text.
clean() {
  local s=$1 c i
  s=${s//$'\n'/\\n}
  s=${s//$'\r'/\\r}
  s=${s//$'\t'/\\t}
  s=${s//$'\e'/\\e}
  for i in 1 2 3 4 5 6 7 8 11 12 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 127; do
    # shellcheck disable=SC2059 # the format is the octal escape that makes the character
    printf -v c "\\$(printf '%03o' "$i")"
    s=${s//"$c"/?}
  done
  for c in $'\xe2\x80\xaa' $'\xe2\x80\xab' $'\xe2\x80\xac' $'\xe2\x80\xad' $'\xe2\x80\xae' \
    $'\xe2\x81\xa6' $'\xe2\x81\xa7' $'\xe2\x81\xa8' $'\xe2\x81\xa9' $'\xe2\x80\x8b' $'\xe2\x80\x8c' \
    $'\xe2\x80\x8d' $'\xe2\x80\x8e' $'\xe2\x80\x8f' $'\xef\xbb\xbf' $'\xe2\x80\xa8' $'\xe2\x80\xa9'; do
    s=${s//"$c"/?}
  done
  printf '%s' "$s"
}

die() { # die CODE MESSAGE: an annotation under Actions, a plain error elsewhere
  local msg
  msg="$(clean "$2")"
  if [[ "${GITHUB_ACTIONS:-}" == true ]]; then
    # The annotation's data: `%` is its escape character.
    printf '::error title=cgp-gate action::%s\n' "${msg//%/%25}"
  fi
  printf 'error: %s\n' "$msg" >&2
  exit "$1"
}

# set_output NAME VALUE: the multi-line-safe form, with a delimiter that is not in the value.
set_output() {
  [[ -n "${GITHUB_OUTPUT:-}" ]] || return 0
  local delim
  delim="ghadelimiter_$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
  if [[ "$2" == *"$delim"* ]]; then
    die 3 "could not pick an output delimiter"
  fi
  printf '%s<<%s\n%s\n%s\n' "$1" "$delim" "$2" "$delim" >>"$GITHUB_OUTPUT"
}

lower() { printf '%s' "$1" | tr '[:upper:]' '[:lower:]'; }

# The directory the action lives in: $GITHUB_ACTION_PATH under Actions, this repository otherwise.
action_path() {
  if [[ -n "${GITHUB_ACTION_PATH:-}" ]]; then
    printf '%s' "$GITHUB_ACTION_PATH"
  else
    cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd
  fi
}

# The ref cgp-gate comes from: the 'version' input, else the ref the workflow named the action
# by (the `@v0.2.0` of its `uses:` line: github.action_ref).
wanted_ref() {
  if [[ -n "${INPUT_VERSION:-}" ]]; then
    printf '%s' "$INPUT_VERSION"
  else
    printf '%s' "${ACTION_REF:-}"
  fi
}

# A ref that names a release: v<digit>..., e.g. v0.2.0 (a moving major tag such as v1 is one
# too when its release exists; a branch or a commit is not).
is_release_ref() { [[ "$1" =~ ^v[0-9][A-Za-z0-9._-]*$ ]]; }

prepare() {
  local src version key hash
  if [[ -n "${INPUT_PATH:-}" ]]; then
    set_output install false
    return 0
  fi
  src="$(action_path)"
  version="${INPUT_VERSION:-}"
  if [[ -n "$version" ]]; then
    [[ "$version" =~ ^[A-Za-z0-9._/-]+$ ]] || die 2 "input 'version' must be a tag, branch or commit of the action's repository, got '$version'"
    hash="$version"
  elif is_release_ref "${ACTION_REF:-}"; then
    # A release tag: its binary is downloaded; the cache is keyed on the tag and the tree, so a
    # moved tag with new code gets a new binary.
    hash="${ACTION_REF}-$(cd "$src" && find Cargo.toml Cargo.lock src crates -type f -print0 | LC_ALL=C sort -z \
      | xargs -0 sha256sum | sha256sum | cut -c1-16)"
  else
    # A content hash of what `cargo install --path` builds: a moving tag like @v1 gets a new
    # binary when its code changes, and an unchanged tree reuses the cache.
    hash="$(cd "$src" && find Cargo.toml Cargo.lock src crates -type f -print0 | LC_ALL=C sort -z \
      | xargs -0 sha256sum | sha256sum | cut -c1-16)"
  fi
  key="cgp-gate-${RUNNER_OS:-$(uname -s)}-${RUNNER_ARCH:-$(uname -m)}-${hash//\//_}"
  set_output install true
  set_output key "$key"
  set_output dir "${RUNNER_TOOL_CACHE:-${RUNNER_TEMP:-/tmp}}/cgp-gate/$key"
}

# notice TEXT: what the install did, as a notice under Actions and a line on stderr.
notice() {
  local msg
  msg="$(clean "$1")"
  [[ "${GITHUB_ACTIONS:-}" != true ]] || printf '::notice title=cgp-gate action::%s\n' "${msg//%/%25}"
  printf 'cgp-gate action: %s\n' "$msg" >&2
}

install() {
  local root="${CGP_GATE_ROOT:?CGP_GATE_ROOT (the install directory) is not set}"
  local ref why url
  ref="$(wanted_ref)"
  # The release's files (CGP_GATE_DOWNLOAD_URL: a mirror, or the tests' local server).
  url="${CGP_GATE_DOWNLOAD_URL:-}"
  [[ -n "$url" || -z "${ACTION_REPOSITORY:-}" ]] ||
    url="${GITHUB_SERVER_URL:-https://github.com}/$ACTION_REPOSITORY/releases/download/$ref"
  if is_release_ref "$ref" && [[ -n "$url" ]]; then
    if why="$(CGP_GATE_DOWNLOAD_URL="$url" sh "$(action_path)/scripts/install.sh" --version "$ref" \
      --to "$root/bin" 2>&1)"; then
      notice "installed the release binary of $ref (SHA-256 checked): $(tail -n 1 <<<"$why")"
      set_output source release
      return 0
    fi
    notice "no release binary for $ref ($(tail -n 1 <<<"$why")); building from source instead"
  fi
  command -v cargo >/dev/null || die 3 "cargo is not on PATH and there is no release binary for '${ref:-this checkout}': name the action by a release tag (the @vX.Y.Z of its uses: line), install a Rust toolchain on the runner (e.g. dtolnay/rust-toolchain), or give the action a binary with the 'path' input"
  set_output source built
  if [[ -n "${INPUT_VERSION:-}" ]]; then
    [[ -n "${ACTION_REPOSITORY:-}" ]] || die 2 "input 'version' needs the action's repository (github.action_repository)"
    cargo install --locked --root "$root" --git "${GITHUB_SERVER_URL:-https://github.com}/$ACTION_REPOSITORY" \
      --rev "$INPUT_VERSION" cgp-gate
    notice "built cgp-gate $INPUT_VERSION from $ACTION_REPOSITORY with cargo"
  else
    cargo install --locked --root "$root" --path "$(action_path)"
    notice "built cgp-gate from the action's checkout ($(action_path)) with cargo"
  fi
}

# base_not_here MODE: `base` and its companions belong to `check`; `auto` (the default) is quiet.
base_not_here() {
  local b
  b="$(lower "${INPUT_BASE-auto}")"
  [[ "$b" == auto || -z "$b" ]] || die 2 "input 'base' applies to mode 'check' only, not '$1'"
  [[ -z "${INPUT_BUILD:-}" ]] || die 2 "input 'build' applies to mode 'check' only, not '$1'"
}

# base_args: `check --base` (docs/confirm.md). `base: auto` is the pull request's base commit
# (github.event.pull_request.base.sha) when `build` is given, else off; `''` is off. The commit
# is fetched when a shallow checkout lacks it.
base_args() {
  local base
  base="${INPUT_BASE-auto}"
  if [[ "$(lower "$base")" == auto ]]; then
    base=""
    if [[ -n "${INPUT_BUILD:-}" && -n "${INPUT_PR_BASE_SHA:-}" && -z "${INPUT_REPLAY:-}" ]]; then
      base="$INPUT_PR_BASE_SHA"
    fi
  fi
  if [[ -z "$base" ]]; then
    [[ -z "${INPUT_CONFIRM:-}" ]] || notice "input 'confirm' is ignored: no base commit to confirm against (set 'build', or 'base')"
    return 0
  fi
  [[ "$base" =~ ^[A-Za-z0-9][A-Za-z0-9._/@^~-]*$ ]] || die 2 "input 'base' must be a commit, branch or tag of the repository, 'auto' or '', got '$base'"
  [[ -z "${INPUT_REPLAY:-}" ]] || die 2 "input 'base' does not apply to a replay; set base: ''"
  if ! git cat-file -e "$base^{commit}" 2>/dev/null; then
    # actions/checkout fetches one commit by default: bring the base's in.
    git fetch --quiet --no-tags --depth=1 origin "$base" >/dev/null 2>&1 ||
      die 3 "the base commit '$base' is not in this checkout and could not be fetched from origin; check out with fetch-depth: 0, or set base: ''"
  fi
  args+=(--base "$base")
  [[ -z "${INPUT_BUILD:-}" ]] || args+=(--build "$INPUT_BUILD")
  [[ -z "${INPUT_BUILD_TIMEOUT:-}" ]] || args+=(--build-timeout "$INPUT_BUILD_TIMEOUT")
  case "$(lower "${INPUT_CONFIRM:-}")" in
    "") ;;
    doubtful | all) args+=(--confirm "$(lower "$INPUT_CONFIRM")") ;;
    *) die 2 "input 'confirm' must be doubtful or all, got '${INPUT_CONFIRM}'" ;;
  esac
}

run() {
  local bin mode spec baselines fail_on comment results rc
  # The binary path is taken relative to where the step starts (the workspace), before the cd.
  if [[ -n "${INPUT_PATH:-}" ]]; then
    bin="$INPUT_PATH"
    [[ "$bin" == /* || ! -e "$bin" ]] || bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"
  fi
  if [[ -n "${INPUT_WORKING_DIRECTORY:-}" ]]; then
    cd "$INPUT_WORKING_DIRECTORY" 2>/dev/null || die 2 "input 'working-directory' '$INPUT_WORKING_DIRECTORY' is not a directory"
  fi
  if [[ -n "${INPUT_PATH:-}" ]]; then
    :
  elif [[ -n "${CGP_GATE_ROOT:-}" ]]; then
    bin="$CGP_GATE_ROOT/bin/cgp-gate"
  else
    bin="$(command -v cgp-gate || true)"
  fi
  [[ -n "$bin" && -x "$bin" ]] || die 2 "no cgp-gate binary at '${bin:-<none>}': set the 'path' input to an executable, or leave it empty to build one"

  mode="$(lower "${INPUT_MODE:-check}")"
  spec="${INPUT_SPEC:-cgp-gate.yaml}"
  baselines="${INPUT_BASELINES:-baselines}"
  fail_on="$(lower "${INPUT_FAIL_ON:-regression}")"
  comment="$(lower "${INPUT_COMMENT:-false}")"
  results="${INPUT_RESULTS:-cgp-gate-results.json}"
  case "$comment" in true | false) ;; *) die 2 "input 'comment' must be true or false, got '$comment'" ;; esac
  case "$fail_on" in regression | inconclusive) ;; *) die 2 "input 'fail-on' must be regression or inconclusive, got '$fail_on'" ;; esac

  local -a args
  case "$mode" in
    check)
      args=(check --spec "$spec" --baselines "$baselines" --json "$results" --fail-on "$fail_on")
      [[ -z "${INPUT_JUNIT:-}" ]] || args+=(--junit "$INPUT_JUNIT")
      [[ "$comment" == false ]] || args+=(--github-comment)
      [[ -z "${INPUT_HTML:-}" ]] || args+=(--html "$INPUT_HTML")
      case "$(lower "${INPUT_ALLOW_NO_BASELINES:-false}")" in
        true) args+=(--allow-no-baselines) ;;
        false) ;;
        *) die 2 "input 'allow-no-baselines' must be true or false, got '${INPUT_ALLOW_NO_BASELINES}'" ;;
      esac
      base_args
      ;;
    ab)
      base_not_here ab
      # Base and head measured in alternation on this runner: no baselines, no shards.
      [[ -z "${INPUT_SHARD:-}" ]] || die 2 "input 'shard' does not apply to mode 'ab' (one runner measures both trees)"
      args=(ab --spec "$spec" --json "$results" --fail-on "$fail_on")
      if [[ -z "${INPUT_REPLAY:-}" ]]; then
        [[ -n "${INPUT_BASE_DIR:-}" ]] || die 2 "mode 'ab' needs the input 'base-dir': a built checkout of the base commit (see examples/workflows/perf-ab.yml)"
        args+=(--base-dir "$INPUT_BASE_DIR" --head-dir "${INPUT_HEAD_DIR:-.}")
      fi
      [[ -z "${INPUT_JUNIT:-}" ]] || args+=(--junit "$INPUT_JUNIT")
      [[ -z "${INPUT_HTML:-}" ]] || args+=(--html "$INPUT_HTML")
      [[ "$comment" == false ]] || args+=(--github-comment)
      ;;
    update-baselines)
      base_not_here update-baselines
      args=(baseline update --spec "$spec" --baselines "$baselines")
      [[ -z "${INPUT_FROM:-}" ]] || args+=(--from "$INPUT_FROM")
      case "$(lower "${INPUT_ACCEPT_REGRESSIONS:-false}")" in
        true) [[ -z "${INPUT_FROM:-}" ]] || args+=(--accept-regressions) ;;
        false | "") ;;
        *) die 2 "input 'accept-regressions' must be true or false, got '${INPUT_ACCEPT_REGRESSIONS}'" ;;
      esac
      ;;
    *) die 2 "input 'mode' must be check, ab or update-baselines, got '$mode'" ;;
  esac
  [[ -z "${INPUT_SHARD:-}" ]] || args+=(--shard "$INPUT_SHARD")
  [[ -z "${INPUT_REPLAY:-}" ]] || args+=(--replay "$INPUT_REPLAY")

  rc=0
  if [[ "$comment" == true && -n "${INPUT_GITHUB_TOKEN:-}" ]]; then
    # A prefix assignment: the token reaches cgp-gate's environment, never an argv.
    GITHUB_TOKEN="$INPUT_GITHUB_TOKEN" "$bin" "${args[@]}" || rc=$?
  else
    "$bin" "${args[@]}" || rc=$?
  fi

  if [[ "$mode" == check || "$mode" == ab ]]; then
    if [[ -f "$results" ]]; then
      # cgp-gate itself wrote verdict, regressions, inconclusive and the report paths.
      set_output results "$(cd "$(dirname "$results")" && pwd)/$(basename "$results")"
    else
      # It stopped before judging (invalid input, ncu missing before the run): say so.
      set_output verdict error
      set_output regressions 0
    fi
  fi
  exit "$rc"
}

case "${1:-}" in
  prepare) prepare ;;
  install) install ;;
  run) run ;;
  *) die 2 "usage: $0 prepare|install|run" ;;
esac
