#!/usr/bin/env bash
# Installs the Debian packages Roost builds against, if any is missing.
# With --browser-tests (scripts/test.sh passes it), also headless Chromium, its driver and Python's
# selenium (in a virtual environment under .build/browser-venv) for the CORS browser test, and h2 in the
# same environment for the fake push providers (Tests/fakes), and schemathesis for the OpenAPI test; if
# those cannot be installed, it says so and the tests that need them are skipped with that reason.
set -euo pipefail
cd "$(dirname "$0")/.."

browser=0
if [ "${1:-}" = "--browser-tests" ]; then
    browser=1
    shift
fi
sudo=""
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null; then sudo="sudo"; fi

missing_packages() {
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || echo "$package"
    done
}

install_packages() {
    if [ "$(id -u)" -ne 0 ] && [ -z "$sudo" ]; then
        echo "install-deps: run as root or install sudo; missing: $*" >&2
        return 1
    fi
    echo "install-deps: installing $*"
    $sudo apt-get update -qq
    # Packages with a service (nginx, caddy: the proxy tests run their own) must not start it.
    local policy=/usr/sbin/policy-rc.d added=0
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null && $sudo chmod +x "$policy" && added=1
    fi
    local status=0
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null || status=$?
    if [ "$added" -eq 1 ]; then $sudo rm -f "$policy"; fi
    return "$status"
}

mapfile -t missing < <(missing_packages libevent-dev libssl-dev libsqlite3-dev libsodium-dev libpq-dev duktape-dev libcurl4-openssl-dev pkg-config "$@")
[ ${#missing[@]} -eq 0 ] || install_packages "${missing[@]}"

if [ "$browser" -eq 1 ]; then
    mapfile -t missing < <(missing_packages chromium chromium-driver python3-venv)
    if [ ${#missing[@]} -gt 0 ] && ! install_packages "${missing[@]}"; then
        echo "install-deps: could not install ${missing[*]}; the browser test will be skipped" >&2
    fi
    venv=.build/browser-venv
    if ! "$venv/bin/python3" -c 'import selenium, h2, schemathesis, aiosmtpd' 2>/dev/null; then
        echo "install-deps: installing selenium, h2, schemathesis and aiosmtpd into $venv"
        if ! { python3 -m venv "$venv" && "$venv/bin/pip" install -q selenium h2 'schemathesis>=4,<5' aiosmtpd; }; then
            echo "install-deps: could not install selenium, h2, schemathesis and aiosmtpd; the browser, push, mail and OpenAPI tests will be skipped" >&2
        fi
    fi
fi
