#!/usr/bin/env bash
# Builds a release roost and measures creates whose POST handler sends a push against the same
# handler without it (bench/push_create.py), sending to the fake APNs; rewrites the "## Push from
# a handler" section of bench/RESULTS.md. Options: --duration SECONDS.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --browser-tests wrk openssl python3
swift build -c release --product roost
exec python3 bench/push_create.py --roost .build/release/roost --python .build/browser-venv/bin/python3 "$@"
