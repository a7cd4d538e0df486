#!/usr/bin/env bash
# Pushes per second from Roost's APNs sender to the fake APNs (Tests/fakes/fake_apns.py, HTTP/2 over
# TLS) through one connection (issue 28). Usage: bench/push.sh [PUSHES [IN_FLIGHT]] (20000, 200).
# The fake is Python and single-threaded per connection: the number measures the pair, and the
# fake's side dominates (see bench/RESULTS.md).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --browser-tests openssl python3
swift build --build-tests
ROOST_PUSH_BENCH="${1:-20000}" ROOST_PUSH_BENCH_CONCURRENCY="${2:-200}" \
    swift test --skip-build --filter PushBenchmark 2>&1 | grep -E "push bench|passed|failed|error"
