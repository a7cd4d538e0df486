#!/usr/bin/env bash
# Builds a release roost and measures creates with and without a POST handler (bench/scripts.py);
# rewrites the "## Server-side scripts" section of bench/RESULTS.md. Options: --duration SECONDS.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh wrk
swift build -c release --product roost
exec python3 bench/scripts.py --roost .build/release/roost "$@"
