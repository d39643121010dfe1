#!/usr/bin/env bash
# The test command of the README and of CI: system libraries, then the whole suite, then
# the job service's tests again on the cluster's store. PostgreSQL 15 (Debian's) is
# installed if missing and run for the tests in a temporary directory on 127.0.0.1, as a
# user that is not root, and stopped at the end; where it cannot be installed, the tests
# that need it say so and are skipped. Its server also takes TLS, with a throwaway CA
# (SLUICE_TEST_POSTGRES_CA). Squid (Debian's, with Debian's access rules) is installed and
# run the same way for the forward-proxy tests (SLUICE_TEST_SQUID, its request log in
# SLUICE_TEST_SQUID_LOG). Debian's faketime is installed the same way for the tests that fake
# the service's wall clock (SLUICE_TEST_FAKETIME_SHIM: scripts/faketime.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-build-deps.sh
# SLUICE_BUILD_FLAGS: more flags for the build (CI's clean clone builds without debug
# information, which nothing there reads: .ci/run).
# shellcheck disable=SC2086
swift build --build-tests ${SLUICE_BUILD_FLAGS:-}
postgres_dir=""
squid_dir=""
faketime_dir=""
stop_services() {
    if [ -n "$postgres_dir" ]; then
        scripts/postgres.sh stop "$postgres_dir" >/dev/null 2>&1 || true
        rm -rf "$postgres_dir"
    fi
    if [ -n "$squid_dir" ]; then
        scripts/squid.sh stop "$squid_dir" >/dev/null 2>&1 || true
        rm -rf "$squid_dir"
    fi
    if [ -n "$faketime_dir" ]; then
        rm -rf "$faketime_dir"
    fi
}
trap stop_services EXIT
if scripts/postgres.sh install; then
    postgres_dir=$(mktemp -d /tmp/sluice-pg-XXXXXX)
    SLUICE_TEST_POSTGRES=$(scripts/postgres.sh start "$postgres_dir")
    export SLUICE_TEST_POSTGRES SLUICE_TEST_POSTGRES_DIR="$postgres_dir" SLUICE_TEST_POSTGRES_CA="$postgres_dir/ca.crt"
else
    echo "test.sh: PostgreSQL 15 cannot be installed here: the cluster's tests are skipped" >&2
fi
if scripts/squid.sh install; then
    squid_dir=$(mktemp -d /tmp/sluice-squid-XXXXXX)
    SLUICE_TEST_SQUID=$(scripts/squid.sh start "$squid_dir")
    export SLUICE_TEST_SQUID SLUICE_TEST_SQUID_LOG="$squid_dir/access.log"
else
    echo "test.sh: Squid cannot be installed here: the tests through a forward proxy are skipped" >&2
fi
# Debian's faketime moves the wall clock of the services the schedule's tests start, with a
# shim of ours that keeps their monotonic timers true (scripts/faketime.sh).
faketime_dir=$(mktemp -d /tmp/sluice-faketime-XXXXXX)
if scripts/faketime.sh install && SLUICE_TEST_FAKETIME_SHIM=$(scripts/faketime.sh shim "$faketime_dir"); then
    export SLUICE_TEST_FAKETIME_SHIM
else
    echo "test.sh: faketime cannot be installed or its shim built here: the tests of a faked clock are skipped" >&2
fi
# gpg and minisign sign the signature tests' fixtures, and gpgv checks OpenPGP signatures as
# the service does (scripts/signing-tools.sh); without them those tests are skipped.
if ! scripts/signing-tools.sh install; then
    echo "test.sh: gpg, gpgv or minisign cannot be installed here: the signature tests are skipped" >&2
fi
# The suites that start processes of their own (TLS origins, service nodes, Squid clients,
# services under a faked clock whose boundaries are timed) or make thousands of jobs run in
# a second pass: beside the rest, on 2 cores, their load pushed older timing bounds
# (connection limits, stall timeouts, a boundary's second) over.
heavy='FakedClockScheduleTests|StoreStallTests|DeleteDurabilityTests|TLSGetTests|GetThroughSquidTests|TLSServeTests|TLSJobTests|SquidProxyTests|StoreOutageTests|EventReplayTests|DependencyChainTests|PostgresTLSTests'
# Each pass has a time limit: a test that hangs fails the run with its name and the test
# process's threads, where CI's own limit (90 minutes) cut the log at a point that said
# nothing.
pass_limit=${SLUICE_TEST_PASS_LIMIT:-900}
# At most this many tests at once. Swift Testing otherwise starts all 450 of a pass together:
# on 2 cores a test's own timing bounds (a read timeout, a checkpoint's interval, a 2 s
# store budget) then met seconds of waiting for a thread, and a different few failed in
# each CI rehearsal.
width=${SLUICE_TEST_WIDTH:-12}
run_pass() {
    local log pid threads waited=0 status=0
    log=$(mktemp /tmp/sluice-test-XXXXXX.log)
    # A session of its own: past the limit, the whole pass goes (the test process and the
    # `sluice` children it started), and nothing else on the machine. Line-buffered, so the
    # log names what started when the pass is stopped (into a pipe the test process
    # otherwise kept its last few kilobytes to itself).
    setsid stdbuf -oL -eL swift test --skip-build --experimental-maximum-parallelization-width "$width" "$@" > >(tee "$log") 2>&1 &
    pid=$!
    while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt "$pass_limit" ]; do
        sleep 5
        waited=$((waited + 5))
    done
    if kill -0 "$pid" 2>/dev/null; then
        echo "test.sh: the pass (swift test $*) ran over ${pass_limit} s; started and never ended:"
        unended "$log"
        for test_pid in $(pgrep -s "$pid" -f 'PackageTests.xctest' || true); do
            echo "test.sh: the threads of the test process $test_pid:"
            threads=""
            if command -v gdb >/dev/null; then
                threads=$(gdb -p "$test_pid" -batch -ex 'thread apply all bt 25' 2>&1 | grep -E '^(Thread|#)' || true)
            fi
            echo "${threads:-  (none: no gdb here, or it could not attach)}" | head -600
        done
        kill -KILL -- "-$pid" 2>/dev/null || true
        rm -f "$log"
        return 124
    fi
    wait "$pid" || status=$?
    if [ "$status" -gt 128 ] || grep -qE "^(💣|Fatal error|.*: Fatal error|Thread [0-9]+ .*crashed)" "$log"; then
        # A test process that crashed prints its threads last, and CI keeps only the end of
        # the log: the cause and the tests under way are repeated after them.
        echo "test.sh: the test process crashed (status $status); what it said of the crash:"
        grep -E "^(💣|Fatal error|.*: Fatal error|Thread [0-9]+ .*crashed)" -A 14 "$log" | head -60 || true
        echo "test.sh: the tests under way when it crashed:"
        unended "$log"
    fi
    rm -f "$log"
    return "$status"
}
# The tests the log says started and never passed nor failed.
unended() {
    awk '/^◇ Test [^ ]+\) started\.$/ { open[$3]++ }
         /^(✔|✘) Test [^ ]+ (with [0-9]+ test cases? )?(passed|failed) after/ { open[$3]-- }
         END { for (name in open) if (open[name] > 0) print "  " name }' "$1"
}
# Suites not about store outages get 6 s of store time for their commands (the heavy ones,
# which are, keep docs/job-service.md's 2 s): under CI's load on 2 cores a resume that reads a
# finished job back from SQLite was once answered with an error, by every sign the budget's
# 503 (DependencyTests now prints the answer).
SLUICE_TEST_STORE_BUDGET=6 run_pass --skip "$heavy"
run_pass --filter "$heavy"
if [ -n "$postgres_dir" ]; then
    # The whole API target once more (but its heavy suites), each service on a PostgreSQL
    # database of its own: the scheduler then runs as a cluster node. A new suite is in it
    # by being in the target; a test of the SQLite store's own files opts out itself
    # (`ServiceHarness.onPostgres`). None of its suites is about store outages (those are
    # heavy, and keep the 2 s of docs/job-service.md): their commands get 6 s of store time,
    # which a healthy PostgreSQL under this pass's load on 2 cores now and then needed past 2 s.
    # The runner's suites on the real engine (`RunnerOnTheOrigin`) run in it too, as a cluster node.
    SLUICE_TEST_STORE=postgres SLUICE_TEST_STORE_BUDGET=6 run_pass \
        --filter 'SluiceAPITests\.|JobServiceTests\.(NewLinkTests|PauseFinalityTests)' --skip "$heavy"
fi
