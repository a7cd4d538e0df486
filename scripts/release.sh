#!/usr/bin/env bash
# Packs a release: a binary built as scripts/install.sh builds it (Swift's runtime linked in
# statically), the systemd unit and environment file, the docs and the licence, in
# DIR/roost-VERSION-linux-ARCH.tar.gz with a SHA256SUMS file beside it. See docs/running.md,
# "Releases".
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
    cat <<'USAGE'
usage: scripts/release.sh [--snapshot] [--output DIR] [--binary PATH]

  --snapshot     a build between releases: VERSION-dev.COMMIT, from any checkout
  --output DIR   where the archive and SHA256SUMS go (default: dist)
  --binary PATH  pack this roost binary instead of building one (it must report VERSION)
  -h, --help     show this help

VERSION is the one the code declares (RoostRelease.version, which 'roost version' prints).
Without --snapshot the checkout must be exactly at the tag vVERSION, with no changes: tag the
commit first (git tag v0.1.0). The archive is the same bytes for the same commit and binary.
USAGE
}

snapshot=false
output=dist
binary=""
while [ $# -gt 0 ]; do
    case "$1" in
        --snapshot) snapshot=true ;;
        --output) [ $# -ge 2 ] || { echo "release: --output needs a folder" >&2; exit 64; }; output="$2"; shift ;;
        --output=*) output="${1#--output=}" ;;
        --binary) [ $# -ge 2 ] || { echo "release: --binary needs a path" >&2; exit 64; }; binary="$2"; shift ;;
        --binary=*) binary="${1#--binary=}" ;;
        -h|--help) usage; exit 0 ;;
        *) echo "release: unknown option '$1'" >&2; usage >&2; exit 64 ;;
    esac
    shift
done

version="$(sed -n 's/.*public static let version = "\(.*\)".*/\1/p' Sources/RoostStore/Migration.swift)"
[ -n "$version" ] || { echo "release: cannot read RoostRelease.version in Sources/RoostStore/Migration.swift" >&2; exit 70; }
commit="$(git rev-parse --short=12 HEAD 2>/dev/null)" || { echo "release: not a git checkout" >&2; exit 65; }
if $snapshot; then
    name="roost-$version-dev.$commit"
else
    if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
        echo "release: the checkout has uncommitted changes; commit them, or use --snapshot" >&2
        exit 65
    fi
    if [ "$(git describe --exact-match --tags HEAD 2>/dev/null)" != "v$version" ]; then
        echo "release: HEAD is not at the tag v$version (the version the code declares); tag it (git tag v$version) or use --snapshot" >&2
        exit 65
    fi
    name="roost-$version"
fi
arch="$(uname -m)"
archive="$name-linux-$arch.tar.gz"

work="$(mktemp -d "${TMPDIR:-/tmp}/roost-release.XXXXXX")"
trap 'rm -rf "$work"' EXIT
if [ -z "$binary" ]; then
    echo "release: building $name"
    ROOST_COMMIT="$commit" scripts/install.sh --no-deps --prefix "$work/prefix"
    binary="$work/prefix/bin/roost"
fi
[ -x "$binary" ] || { echo "release: $binary is not an executable" >&2; exit 66; }
reported="$("$binary" version)"
case "$reported" in
    "roost $version "*) ;;
    *) echo "release: $binary reports '$reported', not version $version" >&2; exit 65 ;;
esac

stage="$work/$name"
mkdir -p "$stage/bin" "$stage/deploy"
install -m 0755 "$binary" "$stage/bin/roost"
# The files as the commit has them: nothing untracked or edited in the checkout comes along.
git archive --format=tar HEAD deploy/roost.service deploy/roost.env README.md LICENSE CHANGELOG.md docs \
    | tar -x -C "$stage"
chmod -R u=rwX,go=rX "$stage"

mkdir -p "$output"
# Same commit, same binary, same bytes: names sorted, owners and times fixed (the commit's time),
# gzip without a name or time stamp.
stamp="$(git log -1 --format=%ct HEAD)"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$stamp" -C "$work" -cf - "$name" \
    | gzip -n >"$output/$archive"
(cd "$output" && sha256sum "$archive" >SHA256SUMS)
echo "release: $output/$archive ($(du -h "$output/$archive" | cut -f1)), checksum in $output/SHA256SUMS"
