#!/usr/bin/env bash
# Installs what is missing and runs the whole test suite against real servers.
# Extra arguments go to 'swift test', e.g. scripts/test.sh --filter ObjectAPITests
set -euo pipefail
cd "$(dirname "$0")/.."
# Beyond the build's packages: headless Chromium and selenium for the CORS browser test, and for the
# TLS tests the openssl command (a throwaway CA), Python, curl and the system CA bundle.
scripts/install-deps.sh --browser-tests openssl ca-certificates python3 curl
swift build --build-tests
# A bound on the whole run, so that a test that hangs fails the run in minutes, not at CI's limit.
timeout --signal=KILL 1800 swift test --skip-build "$@"
