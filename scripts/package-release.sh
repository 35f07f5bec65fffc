#!/usr/bin/env bash
# The release's files, made the same way by .github/workflows/release.yml and by the tests that
# check them without publishing (tests/install.rs):
#
#   scripts/package-release.sh archive BINARY TARGET OUTDIR
#       OUTDIR/cgp-gate-TARGET.tar.gz (the binary at the top level) and its .sha256
#       (`sha256sum` output). Refuses a binary that needs a glibc above the floor (2.28, the
#       wheel's: pyproject.toml); GLIBC_FLOOR=none skips that check, for an archive of a
#       build of this machine that is not a release (a local mirror, tests/install.rs; README,
#       "Install").
#   scripts/package-release.sh installer REPOSITORY VERSION OUTDIR
#       OUTDIR/cgp-gate-installer.sh: scripts/install.sh with REPOSITORY and VERSION as its
#       defaults, so `curl -fsSLO .../cgp-gate-installer.sh && sh cgp-gate-installer.sh`
#       installs that release.
#   scripts/package-release.sh sums OUTDIR
#       OUTDIR/SHA256SUMS over every other file in OUTDIR.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
die() { printf 'package-release: error: %s\n' "$1" >&2; exit 2; }

# glibc_ok BINARY FLOOR: the highest GLIBC_x.y symbol version BINARY needs is at most FLOOR.
glibc_ok() {
  local need
  need="$(objdump -T "$1" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n 1)"
  [ -n "$need" ] || { echo "$1: no GLIBC_ symbol versions found (objdump -T)" >&2; return 1; }
  if [ "$(printf '%s\n%s\n' "$need" "$2" | sort -V | tail -n 1)" != "$2" ]; then
    echo "$1 needs GLIBC_$need, above the floor $2" >&2
    return 1
  fi
}

case "${1:-}" in
  archive)
    [ $# -eq 4 ] || die "usage: $0 archive BINARY TARGET OUTDIR"
    bin="$2" target="$3" out="$4"
    [[ "$target" =~ ^(x86_64|aarch64)-unknown-linux-gnu$ ]] || die "target must be x86_64-unknown-linux-gnu or aarch64-unknown-linux-gnu, got '$target'"
    if [ ! -f "$bin" ] || [ ! -x "$bin" ]; then die "$bin is not an executable file"; fi
    floor="${GLIBC_FLOOR:-2.28}"
    if [ "$floor" != none ]; then
      glibc_ok "$bin" "$floor" || die "refusing to release $bin: build it with cargo zigbuild --target $target.$floor; or, for an archive of a build that runs on this machine only (a local mirror, a test), not a release, set GLIBC_FLOOR=none"
    fi
    mkdir -p "$out"
    stage="$(mktemp -d)"
    trap 'rm -rf "$stage"' EXIT
    install -m 755 "$bin" "$stage/cgp-gate"
    name="cgp-gate-$target.tar.gz"
    # Reproducible: fixed owner, order and times, so the same binary gives the same checksum.
    tar --owner=0 --group=0 --numeric-owner --mtime=@0 --sort=name -C "$stage" -cf - cgp-gate |
      gzip -n -9 >"$out/$name.tmp"
    mv -f "$out/$name.tmp" "$out/$name"
    (cd "$out" && sha256sum "$name" >"$name.sha256")
    echo "packaged $out/$name ($(cut -d' ' -f1 <"$out/$name.sha256"))"
    ;;
  installer)
    [ $# -eq 4 ] || die "usage: $0 installer REPOSITORY VERSION OUTDIR"
    repo="$2" version="$3" out="$4"
    [[ "$repo" =~ ^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$ ]] || die "REPOSITORY must be OWNER/NAME, got '$repo'"
    [[ "$version" =~ ^v[0-9][A-Za-z0-9._-]*$ ]] || die "VERSION must be a release tag such as v0.2.0, got '$version'"
    mkdir -p "$out"
    sed -e "s|^repository=\"\${CGP_GATE_REPOSITORY:-[^}]*}\"\$|repository=\"\${CGP_GATE_REPOSITORY:-$repo}\"|" \
      -e "s|^version=\"\${CGP_GATE_VERSION:-latest}\"\$|version=\"\${CGP_GATE_VERSION:-$version}\"|" \
      "$here/install.sh" >"$out/cgp-gate-installer.sh"
    if ! grep -q "CGP_GATE_REPOSITORY:-$repo}" "$out/cgp-gate-installer.sh" ||
      ! grep -q "CGP_GATE_VERSION:-$version}" "$out/cgp-gate-installer.sh"; then
      die "could not stamp $repo and $version into the installer (scripts/install.sh changed its defaults' lines?)"
    fi
    chmod 755 "$out/cgp-gate-installer.sh"
    echo "wrote $out/cgp-gate-installer.sh ($repo $version)"
    ;;
  sums)
    [ $# -eq 2 ] || die "usage: $0 sums OUTDIR"
    (cd "$2" && find . -maxdepth 1 -type f ! -name 'SHA256SUMS*' ! -name '*.sha256' -printf '%f\n' |
      LC_ALL=C sort | xargs -r sha256sum >SHA256SUMS.tmp && mv -f SHA256SUMS.tmp SHA256SUMS)
    echo "wrote $2/SHA256SUMS"
    ;;
  *) die "usage: $0 archive|installer|sums ..." ;;
esac
