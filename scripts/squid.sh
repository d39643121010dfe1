#!/usr/bin/env bash
# Runs a throwaway Squid forward proxy on 127.0.0.1 for tests and CI, with Debian's access rules.
#
#   scripts/squid.sh install       install Debian's squid if missing (its system service left stopped)
#   scripts/squid.sh start DIR     start a Squid that keeps all its files in DIR; prints 127.0.0.1:PORT
#   scripts/squid.sh stop DIR      stop it; no error if it is not running
#
# `start` prints exactly one line on stdout, 127.0.0.1:PORT, and also writes the port to
# DIR/port and http://127.0.0.1:PORT to DIR/url. If it is already running in DIR, it prints
# its address again. Its configuration, DIR/squid.conf, is the installed
# /etc/squid/squid.conf (with its includes inlined) as Debian ships it, so with Debian's
# default http_access rules (CONNECT only to port 443; plain http from localhost to any
# "safe" port, 1025-65535 among them), less the directives that name a port or a system path
# (http_port, pid, log, cache and core dump files), plus its own: http_port on a free port of
# 127.0.0.1 (DIR/port's again if it is free), pid in DIR/squid.pid, requests logged to
# DIR/access.log, its own log in DIR/cache.log (its stdout and stderr in DIR/squid.out), no
# caching, nothing under /var. As root, Squid runs as its cache_effective_user (Debian's:
# `proxy`), which then owns DIR. DIR is made searchable by every user, and the logs are
# readable by every user (umask 022).
set -euo pipefail

BASE_CONF=/etc/squid/squid.conf
START_TIMEOUT=20
STOP_TIMEOUT=5

die() {
    echo "squid.sh: $*" >&2
    exit 1
}

usage() {
    sed -n '4,6s/^# \{0,1\}//p' "$0" >&2
    exit 2
}

is_root() {
    [ "$(id -u)" -eq 0 ]
}

# Sets SQUID to the squid binary, /usr/sbin being outside the PATH of most users.
find_squid() {
    SQUID=$(command -v squid 2>/dev/null || true)
    if [ -z "$SQUID" ] && [ -x /usr/sbin/squid ]; then
        SQUID=/usr/sbin/squid
    fi
    [ -n "$SQUID" ]
}

# Where policy-rc.d allows it, the package's postinst starts the system's Squid on port 3128,
# with its files under /var. The tests never use it: it is stopped (not disabled), quietly.
stop_system_squid() {
    local sudo_cmd=("$@")
    if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
        "${sudo_cmd[@]}" systemctl stop squid.service >&2 || true
    elif command -v service >/dev/null 2>&1; then
        "${sudo_cmd[@]}" service squid stop >&2 || true
    fi
    # Whatever still runs from the default configuration (its pid file says which).
    "${sudo_cmd[@]}" "$SQUID" -k shutdown -f "$BASE_CONF" >/dev/null 2>&1 || true
}

cmd_install() {
    find_squid && return 0
    local sudo_cmd=()
    if ! is_root; then
        command -v sudo >/dev/null 2>&1 || die "Squid is not installed and, not being root, no sudo to install squid"
        sudo_cmd=(sudo)
    fi
    command -v apt-get >/dev/null 2>&1 || die "Squid is not installed and there is no apt-get to install squid"
    local install=("${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive
        apt-get install -y -qq --no-install-recommends squid)
    # apt's progress goes to stderr: stdout stays clean for callers that capture it.
    if ! "${install[@]}" >&2; then
        "${sudo_cmd[@]}" apt-get update -qq >&2 || true
        "${install[@]}" >&2 || die "apt-get could not install squid (see its output above)"
    fi
    find_squid || die "squid was installed but there is still no squid binary"
    stop_system_squid "${sudo_cmd[@]}"
}

# Resolves DIR (creating it for `start`) and the files in it.
set_dir() {
    local create=$1 given=$2
    [ -n "$given" ] || usage
    if [ "$create" = yes ]; then
        mkdir -p -- "$given"
    elif [ ! -d "$given" ]; then
        die "$given is not a directory"
    fi
    DIR=$(cd -- "$given" && pwd -P)
    # Squid's configuration has no quoting for paths.
    [[ $DIR =~ ^[A-Za-z0-9/._+-]+$ ]] ||
        die "DIR may only contain letters, digits and / . _ + -: $DIR"
    CONF=$DIR/squid.conf
    PID_FILE=$DIR/squid.pid
    BG_PID_FILE=$DIR/squid.bgpid
    CACHE_LOG=$DIR/cache.log
    OUT=$DIR/squid.out
    # Squid's shared memory segments (/dev/shm/NAME-*.shm) are named after its service name,
    # by default `squid` for every instance: each DIR gets its own (alphanumeric only).
    SERVICE=sluice$(printf '%s' "$DIR" | cksum | cut -d ' ' -f 1)
    # Every user may reach the logs in DIR (DIR stays unlistable to them).
    if [ "$create" = yes ]; then
        chmod a+x "$DIR" 2>/dev/null || true
    fi
}

# Prints the configuration file $1 without comments, blank lines and the directives that
# this script sets itself, with its includes inlined and filtered the same way.
filter_conf() {
    local file=$1 depth=$2 line word rest included
    [ "$depth" -le 8 ] || die "includes nested too deeply in $file"
    [ -r "$file" ] || die "cannot read $file"
    while IFS= read -r line || [ -n "$line" ]; do
        read -r word rest <<<"$line" || true
        case $word in
            '' | '#'*) ;;
            include)
                echo "# scripts/squid.sh: from $line"
                # The include's glob, expanded here as Squid would.
                # shellcheck disable=SC2086
                for included in $rest; do
                    [ -f "$included" ] || continue
                    filter_conf "$included" $((depth + 1))
                done
                ;;
            http_port | https_port | ftp_port | icp_port | htcp_port | snmp_port | \
                pid_filename | access_log | cache_access_log | cache_log | cache_store_log | \
                cache_dir | cache_swap_log | coredump_dir | netdb_filename | pinger_enable | \
                workers | shutdown_lifetime | umask | buffered_logs)
                echo "# scripts/squid.sh: dropped $line"
                ;;
            *) printf '%s\n' "$line" ;;
        esac
    done <"$file"
}

write_conf() {
    local port=$1
    [ -r "$BASE_CONF" ] || die "$BASE_CONF is missing; run: scripts/squid.sh install"
    {
        echo "# Made by scripts/squid.sh from $BASE_CONF: Debian's rules, this instance's own port and files."
        filter_conf "$BASE_CONF" 0
        cat <<EOF

# scripts/squid.sh: a throwaway instance for tests, all its files in $DIR.
http_port 127.0.0.1:$port
pid_filename $PID_FILE
access_log stdio:$DIR/access.log
# Each request in access.log as soon as it ends (tests read it right after their requests).
buffered_logs off
cache_log $CACHE_LOG
cache_store_log none
cache deny all
coredump_dir $DIR
netdb_filename none
pinger_enable off
workers 1
shutdown_lifetime 1 seconds
# Its logs readable by every user (tests that read access.log may not run as root).
umask 022
EOF
    } >"$CONF.tmp"
    chmod 0644 "$CONF.tmp"
    mv -f -- "$CONF.tmp" "$CONF"
}

# The user Squid drops to when started as root.
squid_user() {
    local user
    user=$(sed -n 's/^[[:space:]]*cache_effective_user[[:space:]]\{1,\}\([^[:space:]]\{1,\}\).*/\1/p' "$CONF" | tail -n 1)
    echo "${user:-proxy}"
}

# Whether pid $1 is this DIR's Squid (a zombie, whose command line is empty, is not).
is_ours() {
    local pid=$1 cmdline
    [[ $pid =~ ^[0-9]+$ ]] || return 1
    cmdline=$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline") || return 1
    [[ $cmdline == *" -f $CONF "* ]]
}

# Whether process $1 exists and is not a zombie.
alive() {
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    stat=${stat##*) }
    [[ ${stat:0:1} != [ZX] ]]
}

# Prints the pid of this DIR's running Squid; fails when there is none.
running_pid() {
    local file pid
    for file in "$PID_FILE" "$BG_PID_FILE"; do
        [ -s "$file" ] || continue
        pid=$(tr -d '[:space:]' <"$file" 2>/dev/null || true)
        if is_ours "$pid"; then
            echo "$pid"
            return 0
        fi
    done
    return 1
}

# Whether something listens on 127.0.0.1:$1. A test connection would do as well, but Squid
# logs one without a request (error:transaction-end-before-headers) in access.log, which the
# tests read.
listening() {
    local hex
    hex=$(printf '%04X' "$1")
    grep -Eq "^ *[0-9]+: 0100007F:$hex [0-9A-F]+:[0-9A-F]+ 0A " /proc/net/tcp 2>/dev/null
}

# Whether the Squid that logs to DIR/cache.log from byte $2 on accepts connections on port $1.
accepting() {
    local port=$1 offset=$2
    tail -c "+$((offset + 1))" "$CACHE_LOG" 2>/dev/null |
        grep -q "Accepting HTTP Socket connections at .* local=127\.0\.0\.1:$port " || return 1
    [ ! -r /proc/net/tcp ] || listening "$port"
}

free_port() {
    if command -v python3 >/dev/null 2>&1; then
        python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
        return
    fi
    local port
    for _ in $(seq 100); do
        port=$((20000 + RANDOM % 40000))
        # Nothing listening on it: taken as free.
        if ! listening "$port"; then
            echo "$port"
            return
        fi
    done
    die "found no free port"
}

# Shared memory that a Squid which did not exit normally leaves behind.
remove_shm() {
    rm -f -- /dev/shm/"$SERVICE"-*.shm 2>/dev/null || true
}

# Stops pid $1: SIGTERM, then SIGKILL after STOP_TIMEOUT seconds. Fails if it is still there.
terminate() {
    local pid=$1 deadline
    if ! kill -TERM "$pid" 2>/dev/null && is_ours "$pid"; then
        return 1
    fi
    deadline=$((SECONDS + STOP_TIMEOUT))
    while is_ours "$pid" && [ "$SECONDS" -lt "$deadline" ]; do
        sleep 0.1
    done
    if is_ours "$pid"; then
        kill -KILL "$pid" 2>/dev/null || true
        deadline=$((SECONDS + 2))
        while is_ours "$pid" && [ "$SECONDS" -lt "$deadline" ]; do
            sleep 0.1
        done
    fi
    ! is_ours "$pid" || return 1
    rm -f -- "$PID_FILE" "$BG_PID_FILE"
    remove_shm
}

# Starts Squid on $1. Returns 0 when it accepts connections; 1 when it failed, its logs
# printed; 2 when the port was taken.
launch() {
    local port=$1 offset=0 pid status=0
    write_conf "$port"
    if is_root; then
        local user
        user=$(squid_user)
        id -u "$user" >/dev/null 2>&1 || die "Squid's user $user does not exist"
        chown "$user:" "$DIR"
        runuser -u "$user" -- test -w "$DIR" -a -x "$DIR" ||
            die "user $user cannot reach $DIR (a parent directory is not searchable by others); use a directory under /tmp"
    fi
    [ -f "$CACHE_LOG" ] && offset=$(stat -c %s "$CACHE_LOG")
    rm -f -- "$PID_FILE"
    remove_shm
    # In the background, in a session of its own, its output in DIR/squid.out. Descriptors
    # above 2 are closed first, so that Squid keeps no pipe of the caller open.
    (
        for fd in /proc/self/fd/*; do
            fd=${fd##*/}
            if [ "$fd" -gt 2 ] && [ "$fd" -ne 255 ]; then
                eval "exec $fd>&-"
            fi
        done
        cd "$DIR"
        exec setsid "$SQUID" -N -n "$SERVICE" -f "$CONF" </dev/null >"$OUT" 2>&1
    ) &
    pid=$!
    echo "$pid" >"$BG_PID_FILE"
    local deadline=$((SECONDS + START_TIMEOUT))
    while :; do
        if accepting "$port" "$offset"; then
            [ -s "$PID_FILE" ] || echo "$pid" >"$PID_FILE"
            return 0
        fi
        if ! alive "$pid"; then
            # It exited (a bad configuration, a taken port): reaped, its log read.
            wait "$pid" 2>/dev/null || status=$?
            break
        fi
        if [ "$SECONDS" -ge "$deadline" ]; then
            status=timeout
            kill -TERM "$pid" 2>/dev/null || true
            deadline=$((SECONDS + STOP_TIMEOUT))
            while alive "$pid" && [ "$SECONDS" -lt "$deadline" ]; do
                sleep 0.1
            done
            kill -KILL "$pid" 2>/dev/null || true
            wait "$pid" 2>/dev/null || true
            break
        fi
        sleep 0.1
    done
    rm -f -- "$BG_PID_FILE" "$PID_FILE"
    remove_shm
    local new_log
    new_log=$(tail -c "+$((offset + 1))" "$CACHE_LOG" 2>/dev/null || true)
    if grep -q 'Address already in use' <<<"$new_log" && grep -q 'FATAL: Unable to open HTTP Socket' <<<"$new_log"; then
        return 2
    fi
    if [ "$status" = timeout ]; then
        echo "squid.sh: Squid did not accept connections on 127.0.0.1:$port within ${START_TIMEOUT}s; stopped." >&2
    else
        echo "squid.sh: Squid exited (status $status) before accepting connections on 127.0.0.1:$port." >&2
    fi
    echo "squid.sh: $CACHE_LOG says:" >&2
    printf '%s\n' "$new_log" >&2
    echo "squid.sh: $OUT says:" >&2
    cat -- "$OUT" >&2 2>/dev/null || true
    return 1
}

cmd_start() {
    [ $# -eq 1 ] || usage
    find_squid || die "squid is not installed; run: scripts/squid.sh install"
    set_dir yes "$1"
    local pid port=""
    if pid=$(running_pid); then
        # Already running (or starting): waited for until it listens.
        port=$(tr -d '[:space:]' <"$DIR/port" 2>/dev/null || true)
        [[ $port =~ ^[0-9]+$ ]] || die "a Squid runs in $DIR (pid $pid) but $DIR/port says no port; stop it first"
        local deadline=$((SECONDS + START_TIMEOUT))
        until listening "$port"; do
            is_ours "$pid" || die "the Squid in $DIR (pid $pid) exited; see $CACHE_LOG"
            [ "$SECONDS" -lt "$deadline" ] || die "the Squid in $DIR (pid $pid) does not listen on 127.0.0.1:$port; see $CACHE_LOG"
            sleep 0.1
        done
    else
        # The port of an earlier start in DIR if it is free, else a free one.
        if [ -s "$DIR/port" ]; then
            port=$(tr -d '[:space:]' <"$DIR/port")
            if ! [[ $port =~ ^[0-9]+$ ]] || listening "$port"; then
                port=""
            fi
        fi
        [ -n "$port" ] || port=$(free_port)
        local attempt status
        for attempt in 1 2 3 4 5; do
            status=0
            launch "$port" || status=$?
            [ "$status" -eq 0 ] && break
            [ "$status" -eq 2 ] || exit 1
            [ "$attempt" -lt 5 ] || die "port $port on 127.0.0.1 is already in use"
            # The port was taken between choosing it and binding it: choose again.
            port=$(free_port)
        done
    fi
    echo "$port" >"$DIR/port"
    echo "http://127.0.0.1:$port" >"$DIR/url"
    echo "127.0.0.1:$port"
}

cmd_stop() {
    [ $# -eq 1 ] || usage
    [ -d "$1" ] || return 0
    set_dir no "$1"
    local pid
    pid=$(running_pid) || return 0
    terminate "$pid" || die "could not stop the Squid in $DIR (pid $pid)"
}

[ $# -ge 1 ] || usage
command=$1
shift
case $command in
    install) [ $# -eq 0 ] || usage; cmd_install ;;
    start) cmd_start "$@" ;;
    stop) cmd_stop "$@" ;;
    *) usage ;;
esac
