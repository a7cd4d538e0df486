#!/usr/bin/env bash
# A private PostgreSQL cluster for tests and CI, in a folder of its own, reachable only through a
# Unix socket in that folder (no TCP port), trust authentication, fsync off.
#
#   scripts/postgres-test-cluster.sh start [DIR]   initdb (first time) and start; prints the URL
#   scripts/postgres-test-cluster.sh url DIR       prints the URL
#   scripts/postgres-test-cluster.sh halt DIR      stops the server, keeps the data (start resumes it)
#   scripts/postgres-test-cluster.sh stop DIR      stops the server and removes DIR
#
# DIR defaults to $ROOST_PG_CLUSTER_DIR, and for start to a new folder under ${TMPDIR:-/tmp}.
# Run as root, the server runs as the system user roost-test (created if missing; PostgreSQL
# refuses to run as root). The database superuser is "roost".
set -euo pipefail

usage() {
    echo "usage: $0 start [DIR] | url DIR | halt DIR | stop DIR" >&2
    exit 2
}

action="${1:-}"
dir="${2:-${ROOST_PG_CLUSTER_DIR:-}}"
bin="${POSTGRES_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)}"
if [ -z "$bin" ] || [ ! -x "$bin/pg_ctl" ]; then
    echo "postgres-test-cluster: PostgreSQL's server binaries are missing; run scripts/install-deps.sh" >&2
    exit 1
fi

owner=""
if [ "$(id -u)" -eq 0 ]; then
    owner=roost-test
    if ! id -u "$owner" >/dev/null 2>&1; then
        useradd --system --no-create-home --shell /usr/sbin/nologin "$owner" 2>/dev/null || owner=nobody
    fi
fi

# Runs a PostgreSQL binary as the cluster's owner, from inside DIR (the owner may not read the caller's folder).
as_owner() {
    if [ -n "$owner" ]; then
        (cd "$dir" && runuser -u "$owner" -- "$@")
    else
        (cd "$dir" && "$@")
    fi
}

# A generous connect timeout: on a machine busy with the whole parallel suite (hundreds of
# connections, backends forking) a connection can take seconds; the server default is 3 s.
url() { echo "postgresql:///postgres?host=$dir&user=roost&connect_timeout=30"; }

running() { [ -f "$dir/data/postmaster.pid" ] && as_owner "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; }

case "$action" in
start)
    if [ -z "$dir" ]; then dir="$(mktemp -d "${TMPDIR:-/tmp}/roost-pg.XXXXXX")"; fi
    mkdir -p "$dir"
    dir="$(cd "$dir" && pwd)"
    [ -z "$owner" ] || chown "$owner" "$dir"
    if [ ! -f "$dir/data/PG_VERSION" ]; then
        as_owner "$bin/initdb" -D "$dir/data" -U roost -E UTF8 --locale=C --auth-local=trust --auth-host=reject \
            --no-sync >"$dir/initdb.log" 2>&1 || {
            cat "$dir/initdb.log" >&2
            exit 1
        }
    fi
    if ! running; then
        as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
            -o "-c listen_addresses='' -c unix_socket_directories='$dir' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=2000" \
            start >/dev/null || {
            tail -n 20 "$dir/server.log" >&2
            exit 1
        }
    fi
    url
    ;;
url)
    [ -n "$dir" ] || usage
    url
    ;;
halt)
    [ -n "$dir" ] || usage
    if running; then as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null; fi
    ;;
stop)
    [ -n "$dir" ] || usage
    [ -d "$dir" ] || exit 0
    if running; then as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null || true; fi
    rm -rf "$dir"
    ;;
*)
    usage
    ;;
esac
