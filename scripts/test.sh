#!/usr/bin/env bash
# Installs what is missing and runs the whole test suite against real servers.
# Extra arguments go to 'swift test', e.g. scripts/test.sh --filter ObjectAPITests
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --browser-tests
swift build --build-tests
swift test --skip-build "$@"
