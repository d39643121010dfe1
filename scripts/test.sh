#!/usr/bin/env bash
# The test command of the README and of CI: system libraries, then the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-build-deps.sh
swift build --build-tests
swift test --skip-build
