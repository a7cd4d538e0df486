#!/usr/bin/env bash
# Installs what is missing and runs the whole test suite against real servers.
# Extra arguments go to 'swift test', e.g. scripts/test.sh --filter ObjectAPITests
set -euo pipefail
cd "$(dirname "$0")/.."
# The TLS tests make their CA with the openssl command and verify with Python, curl and the system CA bundle.
scripts/install-deps.sh openssl ca-certificates python3 curl
swift build --build-tests
swift test --skip-build "$@"
