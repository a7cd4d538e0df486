#!/usr/bin/env bash
# Quick start: installs what is missing, builds a release binary and runs the server on SQLite.
# Extra arguments go to 'roost serve' (see 'roost serve --help').
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
echo "serve: building (the first build takes a few minutes)"
swift build -c release --product roost
exec .build/release/roost serve "$@"
