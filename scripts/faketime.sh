#!/usr/bin/env bash
# Debian's faketime (libfaketime) for the tests that move the service's wall clock.
#
#   scripts/faketime.sh install     install Debian's faketime if missing
#   scripts/faketime.sh shim DIR    build the monotonic pass-through into DIR; prints its path
#
# libfaketime 0.9.10 shifts the absolute deadlines a process sets on the monotonic clock
# (timerfd, clock_nanosleep) by its fake offset, even with FAKETIME_DONT_FAKE_MONOTONIC=1: at a
# faked date NIO's timers stall. The shim, preloaded before it (`faketime` appends its library
# to LD_PRELOAD), hands those deadlines to the C library as they are
# (scripts/faketime-passthrough.c). Start a process with
#   LD_PRELOAD=SHIM FAKETIME_DONT_FAKE_MONOTONIC=1 faketime -f '@2027-03-28 01:59:55' CMD
# (through the wrapper: loaded with a bare LD_PRELOAD, libfaketime leaves a Swift program
# without its command line). The wrapper forks and does not pass signals on: signal its child.
set -euo pipefail

die() {
    echo "faketime.sh: $*" >&2
    exit 1
}

cmd_install() {
    "$(dirname "$0")/apt-install.sh" faketime faketime
}

cmd_shim() {
    local dir=$1 compiler
    compiler=$(command -v cc || command -v clang || command -v gcc || true)
    [ -n "$compiler" ] || die "no C compiler (cc, clang or gcc) to build the shim"
    mkdir -p "$dir"
    "$compiler" -shared -fPIC -O2 -o "$dir/faketime-passthrough.so" \
        "$(dirname "$0")/faketime-passthrough.c" -ldl >&2 || die "the shim did not build"
    echo "$dir/faketime-passthrough.so"
}

case "${1:-}" in
    install) cmd_install ;;
    shim)
        [ $# -eq 2 ] || die "usage: scripts/faketime.sh shim DIR"
        cmd_shim "$2"
        ;;
    *)
        sed -n '4,5s/^# \{0,1\}//p' "$0" >&2
        exit 2
        ;;
esac
