#!/bin/sh
# Install a released cgp-gate binary: download the archive for this machine from a GitHub
# Release (or any server laid out the same way), check it against the release's SHA-256, and put
# `cgp-gate` in a folder on PATH. No Rust toolchain, no build: seconds on a CI runner.
#
#   curl -fsSLO https://github.com/OWNER/NAME/releases/latest/download/cgp-gate-installer.sh &&
#     sh cgp-gate-installer.sh     # downloaded, then run: a failed download runs nothing
#   sh scripts/install.sh --version v0.2.0 --to /opt/cgp-gate/bin
#
# Options (or the environment variable beside each):
#   --version TAG   the release tag (CGP_GATE_VERSION; default: the latest release)
#   --to DIR        where cgp-gate goes (CGP_GATE_INSTALL_DIR; default: ~/.local/bin; without
#                   HOME, one of them is required)
#   --repository OWNER/NAME
#                   the GitHub repository (CGP_GATE_REPOSITORY; default below, stamped by the
#                   release workflow into the copy attached to each release)
# CGP_GATE_DOWNLOAD_URL replaces the whole base URL the files are fetched from (a mirror, or the
# local server tests/install.rs serves on 127.0.0.1); the files are the release's:
#   cgp-gate-<target>.tar.gz         the binary at the archive's top level
#   cgp-gate-<target>.tar.gz.sha256  `sha256sum` output for it
# with <target> x86_64-unknown-linux-gnu or aarch64-unknown-linux-gnu (glibc 2.28 or newer: the
# floor the wheel chose; .github/workflows/release.yml says why not a static musl binary).
# Each download is bounded: CGP_GATE_DOWNLOAD_TIMEOUT seconds in all (default 300, retries
# included), and abandoned when it moves under 1 KiB/s for 30 seconds (curl; wget under
# `timeout`, where coreutils has it), so a stalled mirror cannot hang a CI job.
#
# Exit codes: 0 installed; 2 a usage error; 3 anything else (download, checksum, unsupported
# machine). Nothing is installed unless the checksum matches; an existing cgp-gate is replaced
# in one rename.
set -eu

repository="${CGP_GATE_REPOSITORY:-your-org/cgp-gate}"
version="${CGP_GATE_VERSION:-latest}"
dest="${CGP_GATE_INSTALL_DIR:-}"
max_time="${CGP_GATE_DOWNLOAD_TIMEOUT:-300}"

say() { printf 'cgp-gate installer: %s\n' "$1" >&2; }
die() { printf 'cgp-gate installer: error: %s\n' "$2" >&2; exit "$1"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --version) [ $# -ge 2 ] || die 2 "--version needs a release tag"; version="$2"; shift 2 ;;
    --to) [ $# -ge 2 ] || die 2 "--to needs a folder"; dest="$2"; shift 2 ;;
    --repository) [ $# -ge 2 ] || die 2 "--repository needs OWNER/NAME"; repository="$2"; shift 2 ;;
    -h | --help) sed -n '2,30p' "$0" 2>/dev/null || true; exit 0 ;;
    *) die 2 "unknown option '$1' (options: --version TAG, --to DIR, --repository OWNER/NAME)" ;;
  esac
done
case "$version" in
  latest | v[0-9]*) ;;
  *) die 2 "--version must be a release tag such as v0.2.0 (or latest), got '$version'" ;;
esac
case "$repository" in
  */*) ;;
  *) die 2 "--repository must be OWNER/NAME, got '$repository'" ;;
esac
case "$max_time" in
  '' | *[!0-9]* | 0) die 2 "CGP_GATE_DOWNLOAD_TIMEOUT must be a whole number of seconds above 0, got '$max_time'" ;;
esac
if [ -z "$dest" ]; then
  # Never `/.local/bin`: without HOME there is no default folder to install into.
  [ -n "${HOME:-}" ] || die 2 "HOME is not set, so there is no default folder (~/.local/bin): give --to DIR (or CGP_GATE_INSTALL_DIR)"
  dest="$HOME/.local/bin"
fi

[ "$(uname -s)" = Linux ] || die 3 "cgp-gate is released for Linux only (NVIDIA's profilers and CUPTI); on $(uname -s), build from source with cargo"
case "$(uname -m)" in
  x86_64 | amd64) target=x86_64-unknown-linux-gnu ;;
  aarch64 | arm64) target=aarch64-unknown-linux-gnu ;;
  *) die 3 "no release binary for $(uname -m); build from source with cargo" ;;
esac

if [ -n "${CGP_GATE_DOWNLOAD_URL:-}" ]; then
  base="${CGP_GATE_DOWNLOAD_URL%/}"
elif [ "$version" = latest ]; then
  base="https://github.com/$repository/releases/latest/download"
else
  base="https://github.com/$repository/releases/download/$version"
fi
archive="cgp-gate-$target.tar.gz"

if command -v curl >/dev/null 2>&1; then
  fetch() {
    curl --proto '=https,http' -fsSL --retry 3 --retry-max-time "$max_time" --max-time "$max_time" \
      --connect-timeout 30 --speed-limit 1024 --speed-time 30 -o "$2" "$1"
  }
elif command -v wget >/dev/null 2>&1; then
  # wget's --timeout bounds each read, not a mirror that trickles a byte at a time: `timeout`
  # bounds the whole download where coreutils has it.
  if command -v timeout >/dev/null 2>&1; then
    fetch() { timeout "$max_time" wget -q --timeout=30 --tries=3 -O "$2" "$1"; }
  else
    fetch() { wget -q --timeout=30 --tries=3 -O "$2" "$1"; }
  fi
else
  die 3 "neither curl nor wget is installed; install one of them"
fi
if command -v sha256sum >/dev/null 2>&1; then
  sha256() { sha256sum "$1" | cut -d' ' -f1; }
elif command -v shasum >/dev/null 2>&1; then
  sha256() { shasum -a 256 "$1" | cut -d' ' -f1; }
else
  die 3 "no sha256sum or shasum to check the download with"
fi

work="$(mktemp -d)"
tmp=""
# What this script made, and only that, goes on every exit; a signal ends the script.
cleanup() { rm -rf "$work"; if [ -n "$tmp" ]; then rm -f "$tmp"; fi; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

say "downloading $base/$archive"
fetch "$base/$archive" "$work/$archive" ||
  die 3 "cannot download $base/$archive (not there, or not done within ${max_time}s: CGP_GATE_DOWNLOAD_TIMEOUT): is $version a release of $repository with a $target binary? (set --version, --repository or CGP_GATE_DOWNLOAD_URL)"
fetch "$base/$archive.sha256" "$work/$archive.sha256" ||
  die 3 "cannot download the checksum $base/$archive.sha256; refusing to install an unchecked binary"
want="$(cut -d' ' -f1 <"$work/$archive.sha256")"
got="$(sha256 "$work/$archive")"
case "$want" in
  *[!0-9a-f]* | "") die 3 "$archive.sha256 holds no SHA-256 ('$want')" ;;
esac
[ "${#want}" -eq 64 ] || die 3 "$archive.sha256 holds no SHA-256 ('$want')"
[ "$want" = "$got" ] || die 3 "checksum mismatch for $archive: expected $want, got $got; nothing was installed"

mkdir "$work/x"
tar -xzf "$work/$archive" -C "$work/x" cgp-gate || die 3 "$archive holds no cgp-gate at its top level"
if [ ! -f "$work/x/cgp-gate" ] || [ -L "$work/x/cgp-gate" ]; then
  die 3 "$archive: cgp-gate is not a regular file"
fi
"$work/x/cgp-gate" --version >/dev/null 2>&1 ||
  die 3 "the downloaded cgp-gate does not run here (glibc older than 2.28?); build from source with cargo"

mkdir -p "$dest" || die 3 "cannot create $dest"
[ ! -L "$dest/cgp-gate" ] || die 3 "$dest/cgp-gate is a symbolic link; cgp-gate does not write through links: remove it first"
# A new file of our own beside the destination (mktemp creates it, refusing any name that
# exists, a planted link included), filled, then renamed over cgp-gate in one step.
tmp="$(mktemp "$dest/.cgp-gate.XXXXXXXX")" || die 3 "cannot create a temporary file in $dest"
cat "$work/x/cgp-gate" >"$tmp" || die 3 "cannot write $tmp"
chmod 755 "$tmp"
mv -f "$tmp" "$dest/cgp-gate" || die 3 "cannot move $tmp to $dest/cgp-gate"
tmp=""
case ":${PATH:-}:" in
  *":$dest:"*) ;;
  *) say "$dest is not on PATH: add it (export PATH=\"$dest:\$PATH\")" ;;
esac
say "installed $("$dest/cgp-gate" --version) ($target, sha256 $got) as $dest/cgp-gate"
