#!/usr/bin/env bash
# The test command of the README and of CI: system libraries, then the whole suite, then
# the job service's tests again on the cluster's store. PostgreSQL 15 (Debian's) is
# installed if missing and run for the tests in a temporary directory on 127.0.0.1, as a
# user that is not root, and stopped at the end; where it cannot be installed, the tests
# that need it say so and are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-build-deps.sh
swift build --build-tests
postgres_dir=""
if scripts/postgres.sh install; then
    postgres_dir=$(mktemp -d /tmp/sluice-pg-XXXXXX)
    trap 'scripts/postgres.sh stop "$postgres_dir" >/dev/null 2>&1 || true; rm -rf "$postgres_dir"' EXIT
    SLUICE_TEST_POSTGRES=$(scripts/postgres.sh start "$postgres_dir")
    export SLUICE_TEST_POSTGRES SLUICE_TEST_POSTGRES_DIR="$postgres_dir"
else
    echo "test.sh: PostgreSQL 15 cannot be installed here: the cluster's tests are skipped" >&2
fi
swift test --skip-build
if [ -n "$postgres_dir" ]; then
    # The API and recovery tests once more, each service on a PostgreSQL database of its own.
    SLUICE_TEST_STORE=postgres swift test --skip-build \
        --filter 'JobsAPITests|RecoveryTests|QueueControlTests|DependencyTests|BulkActionTests|JobEditTests|EventsAndAuthTests|WebhookTests|CompletionRaceTests|QueueRaceTests'
fi
