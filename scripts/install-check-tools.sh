#!/usr/bin/env bash
# What the tests and the checks after them install when it is missing (PostgreSQL and Squid
# for scripts/test.sh; schemathesis; aria2c and aria2p; Chromium, its driver and Selenium),
# installed ahead: CI runs this beside its build, which it does not wait on (downloads and
# unpacking, not the compiler's cores). Each script still installs what is missing itself, so
# a failure here costs only the time it would have saved.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
scripts/postgres.sh install || status=$?
scripts/squid.sh install || status=$?
scripts/schemathesis.sh install || status=$?
scripts/aria2-check.sh install || status=$?
scripts/browser-test.sh install || status=$?
exit "$status"
