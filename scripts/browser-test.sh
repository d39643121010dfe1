#!/usr/bin/env bash
# The dashboard in a real browser: installs headless Chromium, its driver and Selenium
# when missing, then runs scripts/browser_test.py against the built service
# (SLUICE_BIN, default .build/debug/sluice). Prints where the screenshots are. With
# `install`, it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
apt_install() {
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
    echo "Installing chromium and chromium-driver..."
    apt_install chromium chromium-driver
fi

if ! python3 -c 'import selenium' 2>/dev/null; then
    echo "Installing selenium..."
    if ! python3 -m pip --version >/dev/null 2>&1; then apt_install python3-pip; fi
    # Debian's own python3 refuses pip installs outside a venv unless told otherwise.
    python3 -m pip install --quiet --disable-pip-version-check selenium 2>/dev/null \
        || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages selenium
fi

# `install`: only what is missing, installed (CI installs ahead, while it builds).
if [ "${1:-}" = install ]; then exit 0; fi
exec python3 scripts/browser_test.py "$@"
