#!/usr/bin/env bash
# The Swift sources as `swift format` writes them, with the checked-in .swift-format (4
# spaces, 140 columns; the naming and documentation rules the code does not follow are off).
# CI runs it in lint mode; `scripts/lint-swift.sh --fix` rewrites the files in place.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--fix" ]; then
    exec swift format format --in-place --recursive Sources Tests Package.swift
fi
swift format lint --strict --recursive Sources Tests Package.swift
