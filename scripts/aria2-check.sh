#!/usr/bin/env bash
# aria2's own parts against /jsonrpc (issue 22): installs Debian's aria2 and aria2p (PyPI)
# when missing, then runs scripts/aria2_check.py against the built service (SLUICE_BIN,
# default .build/debug/sluice): aria2p's library and command line driving Sluice, and
# `aria2c --enable-rpc` answering the same calls, with the key sets compared. With `install`,
# it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

aria2p_version=0.12.3
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
if ! command -v aria2c >/dev/null; then
    echo "Installing aria2..."
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends aria2 >/dev/null
fi
if ! python3 -c "import sys; from importlib.metadata import version; sys.exit(version('aria2p') != '$aria2p_version')" 2>/dev/null; then
    echo "Installing aria2p $aria2p_version..."
    python3 -m pip install --quiet --disable-pip-version-check "aria2p==$aria2p_version" 2>/dev/null \
        || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages "aria2p==$aria2p_version"
fi
# `install`: only what is missing, installed (CI installs ahead, while it builds).
if [ "${1:-}" = install ]; then exit 0; fi
exec python3 scripts/aria2_check.py "$@"
