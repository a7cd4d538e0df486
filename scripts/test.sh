#!/usr/bin/env bash
# Installs what is missing and runs the whole test suite against real servers.
# Extra arguments go to 'swift test', e.g. scripts/test.sh --filter ObjectAPITests
set -euo pipefail
cd "$(dirname "$0")/.."
# Beyond the build's packages: headless Chromium and selenium for the CORS browser test, and for the
# TLS tests the openssl command (a throwaway CA), Python, curl and the system CA bundle; for the
# PostgreSQL tests the server (a private cluster, started below); nginx and Caddy for the tests
# that run the docs' proxy blocks in front of Roost.
scripts/install-deps.sh --browser-tests openssl ca-certificates python3 curl postgresql nginx caddy
# A full run (no arguments) builds with coverage instrumentation in a folder of its own and prints
# each module's line coverage at the end; ROOST_TEST_COVERAGE=0 skips that, =1 asks for it with
# arguments too.
coverage="${ROOST_TEST_COVERAGE:-$([ "$#" -eq 0 ] && echo 1 || echo 0)}"
# Every temporary file of the run (data folders, logs, keys, the PostgreSQL cluster, coverage
# counts) goes under one folder, removed when the run passes and kept, with its path printed, when
# it fails: the servers' logs are there. A full run writes about 1 GB into it.
suite_tmp="$(mktemp -d "${TMPDIR:-/tmp}/roost-suite.XXXXXX")"
# Traversable by the PostgreSQL cluster's own user, which owns its folder inside.
chmod 711 "$suite_tmp"
export TMPDIR="$suite_tmp"
cluster=""
finish() {
    local status=$?
    if [ -n "$cluster" ]; then scripts/postgres-test-cluster.sh stop "$cluster" || true; fi
    if [ "$status" -eq 0 ]; then
        rm -rf "$suite_tmp"
    else
        echo "The run's temporary files (servers' logs, data folders) are kept in $suite_tmp" >&2
    fi
}
trap finish EXIT
build_options=()
if [ "$coverage" = 1 ]; then
    build_options=(--scratch-path .build/coverage)
    profiles="$(mktemp -d "${TMPDIR:-/tmp}/roost-coverage.XXXXXX")"
    # Every instrumented process (the tests, each roost server and script worker they start)
    # writes its counts to a file of its own when it exits: merging online (%m) corrupted the
    # files when hundreds of processes ended at once.
    export LLVM_PROFILE_FILE="$profiles/%p.profraw"
    swift build --build-tests --enable-code-coverage "${build_options[@]}"
else
    swift build --build-tests
fi
# The PostgreSQL tests run against ROOST_TEST_DATABASE_URL: a private cluster in a temporary folder,
# stopped and removed on exit, unless the variable already names a server.
if [ -z "${ROOST_TEST_DATABASE_URL:-}" ]; then
    cluster="$(mktemp -d "${TMPDIR:-/tmp}/roost-pg.XXXXXX")"
    ROOST_TEST_DATABASE_URL="$(scripts/postgres-test-cluster.sh start "$cluster")"
    export ROOST_TEST_DATABASE_URL
fi
# Swift Testing starts every test at once unless told otherwise: on a 2-core machine that was some
# 200 servers and 2,800 threads in one process, and tests with a deadline missed it. Six tests per
# core at a time ran the parallel pass in 78 s instead of 100-130 s, with 208 threads.
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH="${ROOST_TEST_PARALLELISM:-$(( $(nproc) * 6 ))}"
# Runs 'swift test' with a bound, so that a test that hangs fails the run in minutes, not at CI's
# Runs 'swift test' with a bound, so that a test that hangs fails the run in minutes, not at CI's
# limit. Failures are listed by name (read from the xUnit report) and each failed test runs once
# more alone, as a diagnostic only: any failure fails the run (a test that fails beside the others
# and passes alone is a race or a deadline to fix). ROOST_TESTS_STRICT=0 lets a test that passes
# alone pass the run, listed at the end as RETRIED, for a local run on a machine known to be
# overloaded; CI never sets it. A crash or a hang is never retried.
strict="${ROOST_TESTS_STRICT:-1}"
failures=()
retried=()
run_tests() {
    local report
    report="$(mktemp -d "${TMPDIR:-/tmp}/roost-tests.XXXXXX")/results.xml"
    if timeout --signal=KILL 1800 swift test --skip-build "${build_options[@]}" --xunit-output "$report" "$@"; then return 0; fi
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
    if [ -z "$failed" ]; then
        failures+=("swift test $* crashed or hung (no report)")
        return 0
    fi
    local names=() name
    while IFS= read -r name; do names+=("$name"); done < <(echo "$failed" | tr '|' '\n' | sed 's/\\//g; s/($//')
    echo "These tests failed beside the others; each runs again alone:"
    printf '  %s\n' "${names[@]}"
    if timeout --signal=KILL 900 swift test --skip-build "${build_options[@]}" --filter "$failed" && [ "$strict" != 1 ]; then
        retried+=("${names[@]}")
    else
        failures+=("${names[@]}")
    fi
}
# Suites that make heavy load on purpose (their names end in PressureTests or FuzzTests: hashing
# under pressure, 300 streams fed 3.6 GB, a million fuzzed requests on threads of their own) run
# after the rest, one test at a time: beside the parallel suite, their load decided other tests'
# deadlines, and the others' load decided theirs.
pressure='PressureTests|FuzzTests'
if [ "$#" -eq 0 ]; then
    run_tests --skip "$pressure"
    run_tests --filter "$pressure" --no-parallel
    # The API suite again, every server on PostgreSQL (the same tests: TestServer picks the backend).
    export ROOST_TEST_BACKEND=postgres
    run_tests --filter RoostServerTests --skip "$pressure"
    run_tests --filter "RoostServerTests\\..*($pressure)" --no-parallel
else
    run_tests "$@"
fi
if [ "$coverage" = 1 ]; then
    # The toolchain's own LLVM tools: Debian's older ones cannot read its profiles.
    tools="$(dirname "$(readlink -f "$(command -v swift)")")"
    binaries="$(swift build --show-bin-path "${build_options[@]}")"
    if "$tools/llvm-profdata" merge -sparse --failure-mode=all "$profiles"/*.profraw -o "$profiles/merged.profdata"; then
        echo "Line coverage (every test above; servers killed with SIGKILL count nothing):"
        "$tools/llvm-cov" export -summary-only -instr-profile "$profiles/merged.profdata" \
            "$binaries/RoostPackageTests.xctest" -object "$binaries/roost" | scripts/coverage-report.py
    else
        echo "Line coverage: the profiles could not be merged"
    fi
    rm -rf "$profiles"
fi
if [ "${#retried[@]}" -gt 0 ]; then
    echo "RETRIED: ${#retried[@]} test(s) failed beside the others and passed alone (a race or a deadline to fix; without ROOST_TESTS_STRICT=0 they fail the run):"
    printf '  %s\n' "${retried[@]}"
fi
if [ "${#failures[@]}" -gt 0 ]; then
    echo "FAILED: ${#failures[@]} test(s):"
    printf '  %s\n' "${failures[@]}"
    exit 1
fi
echo "All tests passed."
