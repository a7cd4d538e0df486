#!/usr/bin/env bash
# Installs what is missing and runs the whole test suite against real servers.
# Extra arguments go to 'swift test', e.g. scripts/test.sh --filter ObjectAPITests
set -euo pipefail
cd "$(dirname "$0")/.."
# Beyond the build's packages: headless Chromium and selenium for the CORS browser test, and for the
# TLS tests the openssl command (a throwaway CA), Python, curl and the system CA bundle; for the
# PostgreSQL tests the server (a private cluster, started below); nginx and Caddy for the tests
# that run the README's proxy blocks in front of Roost.
scripts/install-deps.sh --browser-tests openssl ca-certificates python3 curl postgresql nginx caddy
swift build --build-tests
# The PostgreSQL tests run against ROOST_TEST_DATABASE_URL: a private cluster in a temporary folder,
# stopped and removed on exit, unless the variable already names a server.
if [ -z "${ROOST_TEST_DATABASE_URL:-}" ]; then
    cluster="$(mktemp -d "${TMPDIR:-/tmp}/roost-pg.XXXXXX")"
    trap 'scripts/postgres-test-cluster.sh stop "$cluster"' EXIT
    ROOST_TEST_DATABASE_URL="$(scripts/postgres-test-cluster.sh start "$cluster")"
    export ROOST_TEST_DATABASE_URL
fi
# Runs 'swift test' with a bound, so that a test that hangs fails the run in minutes, not at CI's
# limit. Tests that fail are run once more on their own: on 2 cores a few timing-sensitive tests
# (sockets read with timeouts, hashing under pressure) can miss a deadline under the whole
# parallel suite's load. Each is named in the output ("failed under the suite's load"), and the
# run passes only if each passes alone; a crash or a hang is never retried.
run_tests() {
    local report
    report="$(mktemp -d "${TMPDIR:-/tmp}/roost-tests.XXXXXX")/results.xml"
    if timeout --signal=KILL 1800 swift test --skip-build --xunit-output "$report" "$@"; then return 0; fi
    local failed
    failed="$(python3 - "${report%.xml}-swift-testing.xml" <<'EOF'
import re, sys, xml.etree.ElementTree as ET
try:
    cases = ET.parse(sys.argv[1]).getroot().iter("testcase")
except (OSError, ET.ParseError):
    sys.exit(0)  # no report: the process crashed or hung
names = sorted({re.escape(c.get("classname", "")) + "/" + re.escape(c.get("name", "").split("(")[0]) + r"\("
                for c in cases if c.find("failure") is not None or c.find("error") is not None})
print("|".join(names))
EOF
)"
    [ -n "$failed" ] || return 1
    echo "These tests failed under the suite's load; each runs again alone and must pass:"
    echo "$failed" | tr '|' '\n' | sed 's/\\//g; s/^/  /'
    timeout --signal=KILL 900 swift test --skip-build --filter "$failed"
}
run_tests "$@"
# The API suite again, every server on PostgreSQL (the same tests: TestServer picks the backend).
if [ "$#" -eq 0 ]; then
    export ROOST_TEST_BACKEND=postgres
    run_tests --filter RoostServerTests
fi
