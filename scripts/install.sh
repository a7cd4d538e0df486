#!/usr/bin/env bash
# Builds a release binary of roost (Swift's runtime linked in statically; libevent, SQLite and
# libsodium stay Debian's shared libraries) and installs it as PREFIX/bin/roost (default
# /usr/local/bin/roost). Safe to run again: it rebuilds what changed and replaces the binary.
# --systemd also sets up the service: a 'roost' system user, /etc/systemd/system/roost.service
# and /etc/roost/roost.env (kept if it exists). See docs/running.md, "Installing".
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
    cat <<'USAGE'
usage: scripts/install.sh [--prefix DIR] [--systemd] [--no-deps]

  --prefix DIR   install DIR/bin/roost (default /usr/local)
  --systemd      also create the 'roost' user, install deploy/roost.service as
                 /etc/systemd/system/roost.service and /etc/roost/roost.env (kept if present)
  --no-deps      do not install missing Debian packages
  -h, --help     show this help

The binary reports the commit it was built from ('roost version'): the ROOST_COMMIT
environment variable, else 'git describe --always --dirty' of this checkout.
USAGE
}

prefix=/usr/local
systemd=false
deps=true
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) [ $# -ge 2 ] || { echo "install: --prefix needs a folder" >&2; exit 64; }; prefix="$2"; shift ;;
        --prefix=*) prefix="${1#--prefix=}" ;;
        --systemd) systemd=true ;;
        --no-deps) deps=false ;;
        -h|--help) usage; exit 0 ;;
        *) echo "install: unknown option '$1'" >&2; usage >&2; exit 64 ;;
    esac
    shift
done
case "$prefix" in /*) ;; *) prefix="$(pwd)/$prefix" ;; esac

# The runtime libraries come with the -dev packages the build needs; named so it is plain.
if $deps; then
    scripts/install-deps.sh libevent-2.1-7 libevent-core-2.1-7 libevent-extra-2.1-7 libevent-pthreads-2.1-7 libevent-openssl-2.1-7 libssl3 libsqlite3-0 libsodium23 libpq5 libduktape207 libcurl4
fi

# The commit goes into a gitignored source file for this build only (see Sources/roost/BuildInfo.swift);
# deleted afterwards, so a later plain 'swift build' says "unknown" rather than an old commit.
commit="${ROOST_COMMIT:-$(git describe --always --dirty --abbrev=12 2>/dev/null || true)}"
stamp=Sources/roost/BuildCommit.swift
trap 'rm -f "$stamp"' EXIT
if [ -n "$commit" ]; then
    case "$commit" in *[!A-Za-z0-9._/+-]*) echo "install: odd commit name '$commit'" >&2; exit 65 ;; esac
    printf '// Written by scripts/install.sh for one build; git ignores it.\nextension BuildInfo {\n    static var commit: String? { "%s" }\n}\n' "$commit" >"$stamp"
fi

# Its own build folder, so the flags of this build never force a rebuild of 'swift build's.
scratch=.build/install
echo "install: building roost ${commit:+($commit) }in release mode (the first build takes a few minutes)"
swift build -c release --product roost --static-swift-stdlib --scratch-path "$scratch"
binary="$scratch/release/roost"
rm -f "$stamp"

# It must start here, and need no Swift runtime beside it.
"$binary" version >/dev/null
if ldd "$binary" | grep -q 'libswift'; then
    echo "install: $binary links the Swift runtime dynamically; it would not run without a toolchain" >&2
    exit 1
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
    mkdir -p "$prefix/bin" 2>/dev/null || true
    if [ ! -w "$prefix/bin" ] || $systemd; then
        command -v sudo >/dev/null || { echo "install: run as root or install sudo to write $prefix/bin" >&2; exit 1; }
        sudo="sudo"
    fi
fi
target="$prefix/bin/roost"
if [ -f "$target" ] && cmp -s "$binary" "$target"; then
    echo "install: $target is already this build"
else
    $sudo install -d -m 0755 "$prefix/bin"
    # Written beside the old one and renamed over it: a service starting meanwhile finds one whole
    # binary or the other, and a running server keeps its old one (no "Text file busy").
    $sudo install -m 0755 "$binary" "$target.new"
    $sudo mv -f "$target.new" "$target"
    echo "install: installed $target"
fi
"$target" version

if $systemd; then
    if ! id roost >/dev/null 2>&1; then
        group=--user-group
        getent group roost >/dev/null && group="--gid roost"
        $sudo useradd --system $group --home-dir /var/lib/roost --no-create-home \
            --shell /usr/sbin/nologin --comment "Roost server" roost
        echo "install: created the system user 'roost'"
    fi
    unit=/etc/systemd/system/roost.service
    sed "s|/usr/local/bin/roost|$target|g" deploy/roost.service | $sudo tee "$unit.new" >/dev/null
    $sudo mv "$unit.new" "$unit"
    $sudo install -d -m 0755 /etc/roost
    if [ ! -e /etc/roost/roost.env ]; then
        $sudo install -m 0640 -g roost deploy/roost.env /etc/roost/roost.env
        echo "install: wrote /etc/roost/roost.env"
    fi
    if [ -d /run/systemd/system ]; then
        $sudo systemctl daemon-reload
    fi
    echo "install: installed $unit; start it with: sudo systemctl enable --now roost"
fi
