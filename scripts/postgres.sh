#!/usr/bin/env bash
# Runs a throwaway PostgreSQL 15 server on 127.0.0.1 for tests and CI.
#
#   scripts/postgres.sh install              install PostgreSQL 15's server binaries and openssl if missing
#   scripts/postgres.sh start DIR [PORT]     create (first time) and start a cluster in DIR; prints its URL
#   scripts/postgres.sh stop DIR             fast shutdown; no error if it is not running
#   scripts/postgres.sh restart DIR          stop, then start again on the same port; prints its URL
#   scripts/postgres.sh psql DIR [ARGS...]   psql on the sluice database as sluice
#
# `start` prints exactly one line on stdout, postgres://sluice:sluice@127.0.0.1:PORT/sluice,
# and also writes it to DIR/url and the port to DIR/port. Without PORT it reuses DIR/port
# if there is one, else picks a free port. The cluster lives in DIR/data, logs to
# DIR/postgres.log and puts its unix socket in DIR (mode 0700: only the cluster's user and
# root may use it). It is tuned for tests, not for data that matters (fsync=off). As root,
# the server runs as the system user `sluicepg` (created if missing), which then owns DIR.
#
# The server accepts TLS (ssl = on) as well as plain connections on the same port, and on
# the same pg_hba `host` lines. Its certificate comes from a throwaway CA made with the
# openssl command on the first start and kept for later starts and restarts: DIR/ca.crt
# (the CA's certificate, readable by every user: clients verify the server with it, e.g.
# ?sslmode=verify-full&sslrootcert=DIR/ca.crt) and DIR/ca.key; DIR/server.crt and
# DIR/server.key (CN=localhost, subjectAltName DNS:localhost and IP:127.0.0.1). The keys are
# the cluster user's, mode 0600; DIR is made searchable by every user (not listable) for
# DIR/ca.crt. A cluster made before TLS gets the settings on its next start.
set -euo pipefail

PG_BIN=/usr/lib/postgresql/15/bin
PG_USER=sluicepg
START_TIMEOUT=20
NAME=sluice
# The URL and the setup are spelled out here; nothing from the caller's environment may redirect them.
unset PGDATA PGHOST PGHOSTADDR PGPORT PGUSER PGDATABASE PGPASSWORD PGPASSFILE PGSERVICE \
    PGSERVICEFILE PGOPTIONS PGSSLMODE PGREQUIRESSL PGTARGETSESSIONATTRS PGCONNECT_TIMEOUT

die() {
    echo "postgres.sh: $*" >&2
    exit 1
}

usage() {
    sed -n '4,8s/^# \{0,1\}//p' "$0" >&2
    exit 2
}

is_root() {
    [ "$(id -u)" -eq 0 ]
}

require_binaries() {
    local binary
    for binary in initdb pg_ctl postgres pg_isready psql; do
        [ -x "$PG_BIN/$binary" ] || die "$PG_BIN/$binary is missing; run: scripts/postgres.sh install"
    done
}

cmd_install() {
    local packages=()
    [ -x "$PG_BIN/postgres" ] || packages+=(postgresql-15)
    # The server's TLS certificates are made with the openssl command.
    command -v openssl >/dev/null 2>&1 || packages+=(openssl)
    [ ${#packages[@]} -gt 0 ] || return 0
    local sudo_cmd=()
    if ! is_root; then
        command -v sudo >/dev/null 2>&1 || die "${packages[*]} not installed and, not being root, no sudo to install it"
        sudo_cmd=(sudo)
    fi
    command -v apt-get >/dev/null 2>&1 || die "${packages[*]} not installed and there is no apt-get to install it"
    local install=("${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive
        apt-get install -y -qq --no-install-recommends "${packages[@]}")
    # apt's progress goes to stderr: stdout stays clean for callers that capture it.
    if ! "${install[@]}" >&2; then
        "${sudo_cmd[@]}" apt-get update -qq >&2 || true
        "${install[@]}" >&2 || die "apt-get could not install ${packages[*]} (see its output above)"
    fi
    [ -x "$PG_BIN/postgres" ] || die "postgresql-15 was installed but $PG_BIN/postgres is still missing"
    command -v openssl >/dev/null 2>&1 || die "openssl was installed but there is still no openssl command"
}

# Runs a command as the user that owns the cluster, from DIR (which that user can enter).
as_owner() {
    if is_root; then
        (cd "$DIR" && runuser -u "$PG_USER" -- "$@")
    else
        (cd "$DIR" && "$@")
    fi
}

# Resolves DIR (creating it for `start`), and as root hands it to the cluster's user.
set_dir() {
    local create=$1 given=$2
    [ -n "$given" ] || usage
    if [ "$create" = yes ]; then
        mkdir -p -- "$given"
    elif [ ! -d "$given" ]; then
        die "$given is not a directory"
    fi
    DIR=$(cd -- "$given" && pwd -P)
    case $DIR in
        *[\'\",\\]* | *$'\n'*) die "DIR may not contain quotes, commas, backslashes or newlines: $DIR" ;;
    esac
    # A unix socket path holds at most 107 bytes: DIR/.s.PGSQL.PORT must fit.
    [ ${#DIR} -le 90 ] || die "DIR is too long for a unix socket path (${#DIR} > 90 characters): $DIR"
    DATA=$DIR/data
    LOG=$DIR/postgres.log
    if is_root && [ "$create" = yes ]; then
        if ! id -u "$PG_USER" >/dev/null 2>&1; then
            # A concurrent start may create the user first: only its absence afterwards is an error.
            useradd --system --user-group --no-create-home --home-dir /nonexistent \
                --shell /usr/sbin/nologin "$PG_USER" 2>/dev/null || id -u "$PG_USER" >/dev/null 2>&1 ||
                die "could not create the system user $PG_USER"
        fi
        chown "$PG_USER:" "$DIR"
        runuser -u "$PG_USER" -- test -w "$DIR" -a -x "$DIR" ||
            die "user $PG_USER cannot reach $DIR (a parent directory is not searchable by others); use a directory under /tmp"
    fi
    # Every user may reach DIR/ca.crt (DIR stays unlistable to them; the socket is 0700).
    if [ "$create" = yes ]; then
        chmod a+x "$DIR" 2>/dev/null || true
    fi
}

is_running() {
    [ -f "$DATA/PG_VERSION" ] && as_owner "$PG_BIN/pg_ctl" status -D "$DATA" >/dev/null 2>&1
}

free_port() {
    if command -v python3 >/dev/null 2>&1; then
        python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
        return
    fi
    local port
    for _ in $(seq 100); do
        port=$((20000 + RANDOM % 40000))
        # Nothing answering on it: taken as free.
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            echo "$port"
            return
        fi
    done
    die "found no free port"
}

url_for() {
    echo "postgres://$NAME:$NAME@127.0.0.1:$1/$NAME"
}

# Makes the throwaway CA and the server's certificate in DIR, unless a start made them before.
make_certs() {
    if [ -s "$DIR/ca.crt" ] && [ -s "$DIR/ca.key" ] && [ -s "$DIR/server.crt" ] && [ -s "$DIR/server.key" ]; then
        return 0
    fi
    command -v openssl >/dev/null 2>&1 || die "openssl is missing (the server's certificates are made with it); run: scripts/postgres.sh install"
    local staging
    staging=$(mktemp -d "$DIR/tls.XXXXXX")
    # Made in a staging directory and moved in place at the end: an interrupted start leaves
    # no half-made set behind (a set missing a file is made anew).
    # (set -e does not hold in the subshell of an `if`: each step is chained to the next.)
    if ! (
        umask 077 &&
        cd "$staging" &&
        cat >openssl.cnf <<'EOF' &&
[req]
distinguished_name = dn
prompt = no
[dn]
CN = localhost
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, IP:127.0.0.1
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
EOF
        openssl req -config openssl.cnf -x509 -new -newkey rsa:2048 -nodes -sha256 -days 3650 \
            -subj "/CN=Sluice test CA $(basename "$DIR")" -extensions ca -keyout ca.key -out ca.crt &&
        openssl req -config openssl.cnf -new -newkey rsa:2048 -nodes -sha256 \
            -subj /CN=localhost -keyout server.key -out server.csr &&
        openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -set_serial "0x$(openssl rand -hex 16)" \
            -sha256 -days 3650 -extfile openssl.cnf -extensions server -out server.crt
    ) >"$DIR/openssl.log" 2>&1; then
        cat "$DIR/openssl.log" >&2
        rm -rf -- "$staging"
        die "openssl could not make the server's certificates"
    fi
    chmod 0644 "$staging/ca.crt" "$staging/server.crt"
    chmod 0600 "$staging/ca.key" "$staging/server.key"
    # PostgreSQL takes a key only if it is the server user's (or root's) and no one else's.
    if is_root; then
        chown "$PG_USER:" "$staging/ca.key" "$staging/server.key" "$staging/ca.crt" "$staging/server.crt"
    fi
    local file
    for file in ca.key ca.crt server.key server.crt; do
        mv -f -- "$staging/$file" "$DIR/$file"
    done
    rm -rf -- "$staging" "$DIR/openssl.log"
}

# Turns TLS on in the postgresql.conf $1 with DIR's certificate, unless it names one already.
ensure_ssl_conf() {
    local conf=$1
    grep -Eq '^[[:space:]]*ssl_cert_file[[:space:]]*=' "$conf" && return 0
    as_owner tee -a "$conf" >/dev/null <<EOF

# scripts/postgres.sh: TLS with the certificate of a throwaway CA (DIR/ca.crt); plain
# connections are accepted too.
ssl = on
ssl_cert_file = '$DIR/server.crt'
ssl_key_file = '$DIR/server.key'
EOF
}

init_cluster() {
    local staging=$DIR/data.initdb
    # initdb into a staging directory, renamed when configured: an interrupted first start
    # leaves no half-made DIR/data behind.
    as_owner rm -rf -- "$staging"
    as_owner "$PG_BIN/initdb" --pgdata="$staging" --username=postgres --encoding=UTF8 --locale=C \
        --auth-local=trust --auth-host=scram-sha-256 --no-sync --no-instructions >"$DIR/initdb.log" 2>&1 || {
        cat "$DIR/initdb.log" >&2
        die "initdb failed in $staging"
    }
    as_owner tee -a "$staging/postgresql.conf" >/dev/null <<'EOF'

# scripts/postgres.sh: a throwaway server for tests. Port and socket directory are given
# on the command line by the script.
listen_addresses = '127.0.0.1'
# A test pass runs dozens of services at once, each with a pool of up to 4 connections
# (PostgresClient) and a listening one: 200 was reached in one pass.
max_connections = 400
fsync = off
synchronous_commit = off
full_page_writes = off
EOF
    ensure_ssl_conf "$staging/postgresql.conf"
    as_owner mv -- "$staging" "$DATA"
}

# Starts the server on $1. Returns 0 when it accepts connections; 1 when it failed, its log
# printed; 2 when the port was taken.
launch() {
    local port=$1 log_size=0 status=0 pg_ctl_output
    [ -f "$LOG" ] && log_size=$(stat -c %s "$LOG")
    # pg_ctl waits until the postmaster is ready, or for its exit (a bad port, a bad config).
    # Descriptors above 2 are closed first, so that the server keeps no pipe of the caller open;
    # the server's own output goes to the log, pg_ctl's is kept for a failure.
    pg_ctl_output=$(
        for fd in /proc/self/fd/*; do
            fd=${fd##*/}
            if [ "$fd" -gt 2 ] && [ "$fd" -ne 255 ]; then
                eval "exec $fd>&-"
            fi
        done
        as_owner "$PG_BIN/pg_ctl" start -D "$DATA" -l "$LOG" -w -t "$START_TIMEOUT" -s \
            -o "-p $port -k '$DIR' -c unix_socket_permissions=0700" 2>&1
    ) || status=$?
    if [ "$status" -eq 0 ]; then
        # Ready by its pid file; now wait until it accepts connections over TCP, the way clients connect.
        local deadline=$((SECONDS + START_TIMEOUT))
        until "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$port" -t 1; do
            if [ "$SECONDS" -ge "$deadline" ]; then
                status=1
                break
            fi
            sleep 0.1
        done
    fi
    [ "$status" -eq 0 ] && return 0
    local new_log
    new_log=$(tail -c "+$((log_size + 1))" "$LOG" 2>/dev/null || true)
    # A server that came up but never answered is not left behind.
    if is_running; then
        as_owner "$PG_BIN/pg_ctl" stop -D "$DATA" -m immediate -s >&2 || true
    fi
    if grep -q 'could not bind IPv4 address' <<<"$new_log" && grep -q 'Address already in use' <<<"$new_log"; then
        return 2
    fi
    [ -z "$pg_ctl_output" ] || printf '%s\n' "$pg_ctl_output" >&2
    echo "postgres.sh: PostgreSQL did not come up on 127.0.0.1:$port (deadline ${START_TIMEOUT}s); $LOG says:" >&2
    printf '%s\n' "$new_log" >&2
    return 1
}

# Creates the sluice role and database if missing, as the superuser over the unix socket.
ensure_database() {
    local port=$1
    "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$DIR" -p "$port" -U postgres -d postgres >/dev/null <<EOF
SELECT 'CREATE ROLE $NAME LOGIN CREATEDB PASSWORD ''$NAME''' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$NAME') \gexec
SELECT 'CREATE DATABASE $NAME OWNER $NAME' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '$NAME') \gexec
EOF
}

cmd_start() {
    if [ $# -lt 1 ] || [ $# -gt 2 ]; then usage; fi
    local port=${2:-} chosen=no
    if [ -n "$port" ]; then
        if ! [[ $port =~ ^[0-9]+$ ]] || [ "$port" -lt 1 ] || [ "$port" -gt 65535 ]; then
            die "bad port: $port"
        fi
    fi
    require_binaries
    set_dir yes "$1"
    # A server that is starting up, or one that just died (its pid lingers until reaped), is
    # waited for: it either answers or stops looking alive.
    local running_port="" deadline=$((SECONDS + START_TIMEOUT))
    while is_running; do
        running_port=$(sed -n 4p "$DATA/postmaster.pid" 2>/dev/null || true)
        if [ -n "$running_port" ] && "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$running_port" -t 1; then
            break
        fi
        running_port=""
        [ "$SECONDS" -lt "$deadline" ] ||
            die "the cluster in $DIR looks running but accepts no connections; see $LOG"
        sleep 0.1
    done
    if [ -n "$running_port" ]; then
        [ -z "$port" ] || [ "$port" = "$running_port" ] ||
            die "the cluster in $DIR is already running, on port $running_port, not $port"
        port=$running_port
    else
        make_certs
        [ -d "$DATA" ] || init_cluster
        ensure_ssl_conf "$DATA/postgresql.conf"
        if [ -z "$port" ] && [ -s "$DIR/port" ]; then
            port=$(<"$DIR/port")
        fi
        if [ -z "$port" ]; then
            port=$(free_port)
            chosen=yes
        fi
        local attempt status
        for attempt in 1 2 3 4 5; do
            status=0
            launch "$port" || status=$?
            [ "$status" -eq 0 ] && break
            [ "$status" -eq 2 ] || exit 1
            if [ "$chosen" = no ] || [ "$attempt" -eq 5 ]; then
                die "port $port on 127.0.0.1 is already in use"
            fi
            # The free port was taken between choosing it and binding it: choose again.
            port=$(free_port)
        done
    fi
    ensure_database "$port" || die "could not create the $NAME role and database (see $LOG)"
    local url
    url=$(url_for "$port")
    echo "$port" >"$DIR/port"
    echo "$url" >"$DIR/url"
    echo "$url"
}

cmd_stop() {
    [ $# -eq 1 ] || usage
    [ -d "$1" ] || return 0
    set_dir no "$1"
    is_running || return 0
    local output
    if ! output=$(as_owner "$PG_BIN/pg_ctl" stop -D "$DATA" -m fast -w -t 60 -s 2>&1); then
        # A server that died on its own (killed, crashed) makes pg_ctl fail; it is stopped all the same.
        if is_running; then
            printf '%s\n' "$output" >&2
            die "could not stop the cluster in $DIR"
        fi
    fi
}

cmd_restart() {
    [ $# -eq 1 ] || usage
    cmd_stop "$1"
    cmd_start "$1"
}

cmd_psql() {
    [ $# -ge 1 ] || usage
    local dir=$1
    shift
    [ -s "$dir/url" ] || die "no server was started in $dir (no $dir/url)"
    local psql=psql
    command -v psql >/dev/null 2>&1 || psql=$PG_BIN/psql
    exec "$psql" "$(<"$dir/url")" "$@"
}

[ $# -ge 1 ] || usage
command=$1
shift
case $command in
    install) [ $# -eq 0 ] || usage; cmd_install ;;
    start) cmd_start "$@" ;;
    stop) cmd_stop "$@" ;;
    restart) cmd_restart "$@" ;;
    psql) cmd_psql "$@" ;;
    *) usage ;;
esac
