#!/usr/bin/env bash
# Installs what is missing and runs the whole test suite against real servers.
# Extra arguments go to 'swift test', e.g. scripts/test.sh --filter ObjectAPITests
set -euo pipefail
cd "$(dirname "$0")/.."
# Beyond the build's packages: headless Chromium and selenium for the CORS browser test, and for the
# TLS tests the openssl command (a throwaway CA), Python, curl and the system CA bundle; for the
# PostgreSQL tests the server (a private cluster, started below).
scripts/install-deps.sh --browser-tests openssl ca-certificates python3 curl postgresql
swift build --build-tests
# The PostgreSQL tests run against ROOST_TEST_DATABASE_URL: a private cluster in a temporary folder,
# stopped and removed on exit, unless the variable already names a server.
if [ -z "${ROOST_TEST_DATABASE_URL:-}" ]; then
    cluster="$(mktemp -d "${TMPDIR:-/tmp}/roost-pg.XXXXXX")"
    trap 'scripts/postgres-test-cluster.sh stop "$cluster"' EXIT
    ROOST_TEST_DATABASE_URL="$(scripts/postgres-test-cluster.sh start "$cluster")"
    export ROOST_TEST_DATABASE_URL
fi
# A bound on each run, so that a test that hangs fails the run in minutes, not at CI's limit.
timeout --signal=KILL 1800 swift test --skip-build "$@"
# The API suite again, every server on PostgreSQL (the same tests: TestServer picks the backend).
if [ "$#" -eq 0 ]; then
    ROOST_TEST_BACKEND=postgres timeout --signal=KILL 1800 swift test --skip-build --filter RoostServerTests
fi
