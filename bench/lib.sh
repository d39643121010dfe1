# shellcheck shell=bash
# shellcheck disable=SC2034 # variables set here are read by the scripts that source this file
# Shared helpers of the bench/ scripts. Sourced, never run:
#
#   BENCH_NAME=engine
#   . "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#
# What it gives a script:
#   log / warn / die                  messages on stderr, prefixed with [BENCH_NAME]
#   require_tools CMD...              fails naming the Debian package of every missing command
#   resolve_sluice                    SLUICE_BIN (built first when it was not given; see below)
#   sluice_describe                   one line: binary, version, SHA-256 prefix, commit
#   bench_tmp                         TMP: a temp dir on a real disk (not tmpfs), removed at exit
#                                     with every server started here (KEEP_TMP=1 keeps it)
#   free_port / wait_for_port         loopback ports
#   start_nginx ROOT / stop_nginx     nginx on 127.0.0.1 serving ROOT: NGINX_URL, NGINX_PID
#   start_sluice DATA [ARGS] / stop_sluice   `sluice serve` on 127.0.0.1:0: SLUICE_URL, SLUICE_PID
#   TLS=1: both servers over HTTPS    bench_tmp makes a throwaway CA and one leaf certificate
#                                     (TLS_CA, TLS_CERT, TLS_KEY) that nginx and `sluice serve`
#                                     both use; CURL_TLS / ARIA2_TLS / SLUICE_TLS are the
#                                     clients' arguments to trust it (empty over plain HTTP);
#                                     tls_describe says what was set up
#   check_alive NAME PID              fails with the server's exit status and log tail if it died
#   wait_for_quiet WHAT               waits for an idle machine; records a note when it was not
#   make_random_file PATH MIB         random data, its SHA-256 in FILE_SHA256[PATH]
#   sha256_of FILE / verify_sha256 FILE EXPECTED WHAT    (a wrong byte fails the run)
#   median / maximum                  of numbers on stdin, one a line
#   phase_begin PID / phase_end PID   server CPU ticks and other processes' CPU share
#   wrk_result FILE TAG               parses a `TAG key=value ...` line of a wrk Lua script into WRK[]
#   post_job / job_json / delete_job / count_jobs / start_downloads / downloads_status / ...
#                                     the jobs API of a running `sluice serve`
#   result KEY VALUE                  records a figure for bench/table.sh (in RESULTS_KV)
#   emit_report TEXT                  prints the markdown report, and writes it to OUT if set
#
# Environment read here (all optional):
#   SLUICE_BIN=PATH     binary to benchmark; when not given: .build-release/release/sluice,
#                       built first with `swift build -c release` unless SKIP_BUILD=1
#   SLUICE_COMMIT=TEXT  the commit the binary was built from, for the reports (default: the
#                       work tree's HEAD for the default binary, or the hex suffix of a name
#                       like sluice-5ac5e0c)
#   QUIET_WAIT=300      wait up to this many seconds for an idle machine (0: do not wait)
#   QUIET_CPU=15        idle means: all cores less than this % busy for QUIET_SECONDS=2
#                       seconds in a row, and no wrk/chromium/swift-build/swift-frontend/
#                       swift-test process
#   QUIET_PROCS=REGEX   the process names that mean "busy" (pgrep -x; default
#                       wrk|chromium|chrome|swift-frontend|swift-build|swift-test|swift-driver);
#                       e.g. leave swift-test out while someone's test process sits idle (the
#                       CPU condition still holds)
#   NGINX_WORKERS=2     nginx worker_processes
#   TLS=0               1: nginx and `sluice serve` serve HTTPS only, with the same certificate
#                       (EC P-256 leaf for localhost and 127.0.0.1, signed by a CA made for the
#                       run with openssl); nginx speaks TLS 1.3 only (ssl_protocols TLSv1.3),
#                       keeps `sendfile on` (unused over TLS: no kTLS) and offers no HTTP/2;
#                       curl is run with --http1.1, so every client and server here speaks
#                       HTTP/1.1 over TLS 1.3
#   TLS_CIPHERSUITES=TLS_AES_256_GCM_SHA384   the only TLS 1.3 suite nginx accepts (set
#                       empty to let each client choose): curl, wrk and aria2c (GnuTLS) put
#                       AES-256-GCM first, BoringSSL (`sluice get`) AES-128-GCM, so pinning it
#                       gives every download the same cipher; `sluice serve` (BoringSSL)
#                       follows the client's order, i.e. AES-256-GCM for curl and wrk too
#   TMPDIR=/var/tmp     where the temp dir goes (must not be tmpfs)    KEEP_TMP=1
#   RESULTS_KV=FILE     where `result` appends KEY<TAB>VALUE lines (bench/table.sh sets it)
#   OUT=FILE            also write the markdown report to FILE

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  echo "bench/lib.sh is sourced by the bench scripts, not run" >&2
  exit 64
fi

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
BENCH_NAME=${BENCH_NAME:-bench}
QUIET_WAIT=${QUIET_WAIT:-300}
QUIET_CPU=${QUIET_CPU:-15}
QUIET_SECONDS=${QUIET_SECONDS:-2}
QUIET_PROCS=${QUIET_PROCS:-wrk|chromium|chrome|swift-frontend|swift-build|swift-test|swift-driver}
NGINX_WORKERS=${NGINX_WORKERS:-2}
TLS=${TLS:-0}
TLS_CIPHERSUITES=${TLS_CIPHERSUITES-TLS_AES_256_GCM_SHA384}
SCHEME=http
[[ $TLS == 1 ]] && SCHEME=https
CLK_TCK=$(getconf CLK_TCK)
NCPU=$(nproc)
MIB=1048576

# ================================================================ messages
log() { printf '[%s] %s\n' "$BENCH_NAME" "$*" >&2; }
warn() { printf '[%s] WARNING: %s\n' "$BENCH_NAME" "$*" >&2; }
die() {
  printf '[%s] FAIL: %s\n' "$BENCH_NAME" "$*" >&2
  exit 1
}
trap 'log "FAIL: command failed at line $LINENO: $BASH_COMMAND"' ERR

# ================================================================ tools
# Debian package of each command the scripts use.
declare -A BENCH_PACKAGE=(
  [nginx]="nginx-light (or nginx)" [curl]=curl [aria2c]=aria2 [axel]=axel [wrk]=wrk [jq]=jq
  [sha256sum]=coreutils [/usr/bin/time]=time [perf]=linux-perf [strace]=strace
  [findmnt]=util-linux [hyperfine]=hyperfine [dd]=coreutils [awk]=mawk [pgrep]=procps
)
require_tools() {
  local tool missing=() packages=()
  for tool in "$@"; do
    command -v "$tool" >/dev/null 2>&1 && continue
    missing+=("$tool")
    packages+=("${BENCH_PACKAGE[$tool]:-$tool}")
  done
  ((${#missing[@]} == 0)) && return 0
  die "missing command(s): ${missing[*]}; install the Debian package(s): apt-get install -y $(printf '%s\n' "${packages[@]}" | sed 's/ (or .*)//' | sort -u | tr '\n' ' ')"
}
require_tools awk sha256sum pgrep findmnt dd

# ================================================================ the binary under test
SLUICE_DEFAULT_BIN=$REPO/.build-release/release/sluice
SLUICE_BIN=${SLUICE_BIN:-$SLUICE_DEFAULT_BIN}

# Builds the default binary (only that one, and not with SKIP_BUILD=1) before using it; fails
# when there is no executable at SLUICE_BIN. Makes SLUICE_BIN absolute.
resolve_sluice() {
  if [[ $SLUICE_BIN == "$SLUICE_DEFAULT_BIN" && ${SKIP_BUILD:-0} != 1 ]]; then
    log "building release (swift build -c release --static-swift-stdlib --product sluice --scratch-path .build-release)"
    (cd "$REPO" && swift build -c release --static-swift-stdlib --product sluice --scratch-path .build-release) >&2 \
      || die "the release build failed"
  fi
  [[ -x $SLUICE_BIN ]] || die "no sluice binary at $SLUICE_BIN (set SLUICE_BIN, or build it: unset SKIP_BUILD)"
  SLUICE_BIN=$(cd "$(dirname "$SLUICE_BIN")" && pwd)/$(basename "$SLUICE_BIN")
  export SLUICE_BIN
}

# The commit the binary was built from, as well as can be told.
sluice_commit() {
  local name
  if [[ -n ${SLUICE_COMMIT:-} ]]; then echo "$SLUICE_COMMIT"; return; fi
  name=$(basename "$SLUICE_BIN")
  if [[ $SLUICE_BIN -ef $SLUICE_DEFAULT_BIN ]] && git -C "$REPO" rev-parse --short HEAD >/dev/null 2>&1; then
    local head dirty
    head=$(git -C "$REPO" rev-parse --short HEAD)
    dirty=$(git -C "$REPO" status --porcelain -- Sources Package.swift 2>/dev/null | head -1)
    echo "$head${dirty:+ + uncommitted changes in Sources/}"
  elif [[ $name =~ -([0-9a-f]{7,40})$ ]]; then
    echo "${BASH_REMATCH[1]}"
  else
    echo "unknown (set SLUICE_COMMIT)"
  fi
}
sluice_describe() {
  printf '%s (sluice %s, SHA-256 %s…, commit %s)' "$SLUICE_BIN" \
    "$("$SLUICE_BIN" --version 2>/dev/null | head -1)" "$(sha256sum "$SLUICE_BIN" | cut -c1-12)" "$(sluice_commit)"
}

# ================================================================ temp dir, cleanup
BENCH_PIDS=()       # other background processes of ours to stop at exit
BENCH_EXIT_HOOKS=() # functions to run at exit, before the servers stop
NGINX_PID=
SLUICE_PID=

# Creates TMP on a real disk and installs the exit trap.
bench_tmp() {
  local base=${TMPDIR:-/var/tmp}
  TMP_FSTYPE=$(findmnt -no FSTYPE -T "$base" 2>/dev/null || stat -f -c %T "$base")
  [[ $TMP_FSTYPE != tmpfs && $TMP_FSTYPE != ramfs ]] \
    || die "$base is $TMP_FSTYPE; set TMPDIR to a directory on a real disk"
  TMP=$(mktemp -d "$base/sluice-$BENCH_NAME-bench.XXXXXX")
  chmod 755 "$TMP"
  TMP_DEVICE=$(df --output=source "$TMP" | tail -1)
  trap bench_cleanup EXIT
  trap 'log "FAIL: command failed at line $LINENO: $BASH_COMMAND"' ERR
  trap 'exit 130' INT TERM
  [[ $TLS != 1 ]] || make_tls_cert
}

# Stops one process of ours: TERM, up to 10 s, then KILL.
stop_pid() {
  local pid=$1 i
  [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    warn "pid $pid did not stop on TERM within 10 s; killing it"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}

bench_cleanup() {
  local status=$? hook pid
  trap - ERR
  for hook in "${BENCH_EXIT_HOOKS[@]}"; do "$hook" || true; done
  stop_sluice
  stop_nginx
  for pid in "${BENCH_PIDS[@]}"; do stop_pid "$pid"; done
  if [[ -n ${TMP:-} && -d $TMP ]]; then
    if [[ ${KEEP_TMP:-0} == 1 ]]; then log "kept $TMP"; else rm -rf "$TMP"; fi
  fi
  exit "$status"
}

# ================================================================ ports
port_is_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# A free loopback port, tried from a random start in 20000-59999 (so that two scripts that
# run at once do not race for the same one).
free_port() {
  local port=$((20000 + (RANDOM * 32768 + RANDOM) % 40000)) i
  for ((i = 0; i < 200; i++)); do
    if port_is_free "$port"; then
      echo "$port"
      return
    fi
    port=$((port + 1))
  done
  die "no free port found"
}
wait_for_port() {
  local i
  for i in $(seq 1 100); do
    port_is_free "$1" || return 0
    sleep 0.1
  done
  die "nothing listening on port $1"
}

# ================================================================ quiet machine
# Percentage of all cores busy over $1 seconds (iowait counts as idle).
cpu_busy_percent() {
  local a b
  read -ra a < <(head -1 /proc/stat)
  sleep "${1:-1}"
  read -ra b < <(head -1 /proc/stat)
  awk -v a="${a[*]}" -v b="${b[*]}" 'BEGIN {
    n = split(a, x, " "); split(b, y, " ")
    for (i = 2; i <= n; i++) total += y[i] - x[i]
    idle = (y[5] - x[5]) + (y[6] - x[6])
    printf "%.0f", (total > 0 ? 100 * (total - idle) / total : 0) }'
}
# Pids of processes that mean someone else is building, testing or load-testing (matched on
# the process name, so a command line that merely mentions them does not count).
# One pgrep per name: procps-ng refuses (zero matches, a warning) a pattern longer than 15
# characters, which the whole list is, so a single `pgrep -x LIST` never found anything.
busy_processes() {
  local name
  local -a names
  IFS='|' read -r -a names <<<"$QUIET_PROCS"
  for name in "${names[@]}"; do pgrep -x "$name" 2>/dev/null || true; done | tr '\n' ' ' | sed 's/ $//'
}
QUIET_NOTES=()
# wait_for_quiet WHAT: waits up to QUIET_WAIT s for QUIET_SECONDS idle seconds in a row;
# measures anyway after that, with a warning and a note in QUIET_NOTES (and QUIET_NOTE).
wait_for_quiet() {
  local what=${1:-measurement} deadline=$((SECONDS + QUIET_WAIT)) quiet=0 busy procs
  QUIET_NOTE=
  if [[ $QUIET_WAIT == 0 ]]; then
    QUIET_NOTE="quiet check skipped (QUIET_WAIT=0)"
    QUIET_NOTES+=("$what: $QUIET_NOTE")
    return 0
  fi
  while true; do
    busy=$(cpu_busy_percent 1)
    procs=$(busy_processes)
    if ((busy < QUIET_CPU)) && [[ -z $procs ]]; then quiet=$((quiet + 1)); else quiet=0; fi
    ((quiet >= QUIET_SECONDS)) && return 0
    if ((SECONDS >= deadline)); then
      QUIET_NOTE="${busy}% CPU busy${procs:+, $(ps -o comm= -p "${procs// /,}" | sort -u | tr '\n' ' ' | sed 's/ $//') running}"
      QUIET_NOTES+=("$what: $QUIET_NOTE")
      warn "machine not idle after ${QUIET_WAIT}s before $what ($QUIET_NOTE, load $(cut -d' ' -f1 /proc/loadavg)${procs:+, pids $procs}); measuring anyway"
      return 0
    fi
  done
}
quiet_summary() {
  if ((${#QUIET_NOTES[@]} == 0)); then
    echo "every measurement started on an idle machine (CPU < ${QUIET_CPU}% for ${QUIET_SECONDS} s in a row, no process named ${QUIET_PROCS//|/, })"
  else
    echo "NOT idle before ${#QUIET_NOTES[@]} measurement(s): $(printf '%s; ' "${QUIET_NOTES[@]}" | sed 's/; $//')"
  fi
}

# ================================================================ files and checksums
declare -A FILE_SHA256=()
sha256_of() { sha256sum "$1" | cut -d' ' -f1; }
# make_random_file PATH MIB: MIB MiB of random data, world-readable; its SHA-256 goes to
# FILE_SHA256[PATH] (hashing also reads it into the page cache).
make_random_file() {
  local path=$1 mib=$2
  log "writing $mib MiB of random data to $path"
  mkdir -p "$(dirname "$path")"
  head -c "$((mib * MIB))" /dev/urandom >"$path"
  chmod 644 "$path"
  FILE_SHA256[$path]=$(sha256_of "$path")
}
VERIFIED=0 # downloads whose SHA-256 matched
# verify_sha256 FILE EXPECTED WHAT: fails the run unless FILE's SHA-256 is EXPECTED.
verify_sha256() {
  local file=$1 expected=$2 what=$3 got
  [[ -f $file ]] || die "$what: no file at $file"
  got=$(sha256_of "$file")
  [[ $got == "$expected" ]] || die "$what: SHA-256 of $file is $got, expected $expected"
  VERIFIED=$((VERIFIED + 1))
}
# verify_stream_sha256 EXPECTED WHAT < DATA: the same for bytes on standard input.
verify_stream_sha256() {
  local expected=$1 what=$2 got
  got=$(sha256sum | cut -d' ' -f1)
  [[ $got == "$expected" ]] || die "$what: SHA-256 of the bytes received is $got, expected $expected"
  VERIFIED=$((VERIFIED + 1))
}

# ================================================================ numbers
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
maximum() { sort -g | tail -1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
mb_per_s() { awk -v b="$1" -v ns="$2" 'BEGIN { printf "%.0f", b / 1e6 / (ns / 1e9) }'; } # bytes, nanoseconds
us_to_ms() { awk -v u="$1" 'BEGIN { printf "%.2f", u / 1000 }'; }
now_ns() { date +%s%N; }
now_ms() { date +%s%3N; }
# meets VALUE OP TARGET -> "yes" or "no" (OP is >=, >, <=, <)
meets() {
  awk -v v="$1" -v op="$2" -v t="$3" 'BEGIN {
    if (v !~ /^[0-9.]+$/) { print "no"; exit }
    ok = (op == ">=") ? v >= t : (op == ">") ? v > t : (op == "<=") ? v <= t : v < t
    print (ok ? "yes" : "no") }'
}
size_label() { if (($1 % 1024 == 0)); then echo "$(($1 / 1024)) GiB"; else echo "$1 MiB"; fi; }

# ================================================================ CPU accounting
# CPU ticks (utime + stime) of a process and all its descendants (nginx workers). The stat
# files are read with cat so that processes exiting meanwhile are just skipped.
cpu_ticks() {
  { cat /proc/[0-9]*/stat 2>/dev/null || true; } | awk -v root="$1" '
    {
      pid = $1; line = $0; sub(/^[0-9]+ \(.*\) /, "", line); split(line, f, " ")
      parent[pid] = f[2]; ticks[pid] = f[12] + f[13]
    }
    END {
      for (pid in ticks) {
        p = pid
        while (p != "" && p != "0" && p != "1" && p != root) p = parent[p]
        if (p == root) total += ticks[pid]
      }
      print total + 0
    }'
}
# Busy CPU ticks of the whole machine (user, nice, system, steal), and CPU ticks of this
# script's finished children (wrk, curl): with the server's ticks they tell how much CPU
# something else took while a measurement ran. irq and softirq time is left out: loopback
# TCP processing lands there without belonging to any process.
machine_busy_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $9; exit }' /proc/stat; }
client_ticks() { sed 's/^[0-9]* (.*) //' "/proc/$$/stat" | awk '{ print $14 + $15 }'; }
# phase_begin PID / phase_end PID: sets SERVER_TICKS and OTHER_PCT (share of all cores used
# by processes other than the server and this script's children during the phase).
phase_begin() {
  P_SERVER=$(cpu_ticks "$1") P_MACHINE=$(machine_busy_ticks) P_CLIENT=$(client_ticks) P_START=$(now_ms)
}
phase_end() {
  local server machine client elapsed
  server=$(cpu_ticks "$1") machine=$(machine_busy_ticks) client=$(client_ticks) elapsed=$(($(now_ms) - P_START))
  SERVER_TICKS=$((server - P_SERVER))
  OTHER_PCT=$(awk -v m=$((machine - P_MACHINE)) -v s="$SERVER_TICKS" -v c=$((client - P_CLIENT)) \
    -v e="$elapsed" -v hz="$CLK_TCK" -v n="$NCPU" \
    'BEGIN { o = (m - s - c) / hz; if (o < 0) o = 0; printf "%.0f", 100 * o / (e / 1000 * n) }')
}

# ================================================================ wrk
# wrk_result FILE TAG: parses the `TAG key=value ...` line a bench/*.lua script prints in
# done() into the associative array WRK.
declare -A WRK=()
wrk_result() {
  local line kv
  line=$(grep "^$2 " "$1") || die "no $2 line in the wrk output $1"
  WRK=()
  for kv in ${line#"$2" }; do WRK[${kv%%=*}]=${kv#*=}; done
}
wrk_version() { wrk -v 2>&1 | awk 'NR == 1 { sub(/^debian\//, "", $2); print $2 }'; }

# ================================================================ TLS (TLS=1)
[[ $TLS == 0 || $TLS == 1 ]] || die "TLS must be 0 or 1 (got $TLS)"
# The clients' arguments to trust the run's CA (and curl's to speak HTTP/1.1, as every other
# client here does: `sluice serve` offers h2 by ALPN, nginx here does not); empty over HTTP.
CURL_TLS=() ARIA2_TLS=() SLUICE_TLS=()
TLS_CA='' TLS_CERT='' TLS_KEY=''
# make_tls_cert: a throwaway CA and a leaf for localhost and 127.0.0.1 signed by it, both EC
# P-256, in $TMP/tls (called by bench_tmp when TLS=1). The helpers' own curl calls (jobs API,
# checks) trust the CA through CURL_CA_BUNDLE.
make_tls_cert() {
  local dir=$TMP/tls
  require_tools openssl
  mkdir -p "$dir"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj "/CN=Sluice bench CA" -keyout "$dir/ca.key" -out "$dir/ca.pem" 2>"$dir/openssl.log" \
    || die "openssl could not make the CA: $(cat "$dir/openssl.log")"
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=localhost \
    -keyout "$dir/leaf.key" -out "$dir/leaf.csr" 2>"$dir/openssl.log" \
    || die "openssl could not make the leaf key: $(cat "$dir/openssl.log")"
  printf '%s\n' 'subjectAltName=DNS:localhost,IP:127.0.0.1' 'basicConstraints=critical,CA:FALSE' \
    'keyUsage=critical,digitalSignature' 'extendedKeyUsage=serverAuth' >"$dir/leaf.ext"
  openssl x509 -req -in "$dir/leaf.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial \
    -days 1 -extfile "$dir/leaf.ext" -out "$dir/leaf.pem" 2>"$dir/openssl.log" \
    || die "openssl could not sign the leaf: $(cat "$dir/openssl.log")"
  chmod 644 "$dir"/*.pem "$dir"/*.key
  TLS_CA=$dir/ca.pem TLS_CERT=$dir/leaf.pem TLS_KEY=$dir/leaf.key
  CURL_TLS=(--http1.1 --cacert "$TLS_CA")
  ARIA2_TLS=("--ca-certificate=$TLS_CA")
  SLUICE_TLS=(--cacert "$TLS_CA")
  export CURL_CA_BUNDLE=$TLS_CA
  log "TLS: CA $TLS_CA, leaf $TLS_CERT (EC P-256, localhost + 127.0.0.1) for both servers"
}
# One line about the TLS setup for the reports (empty over plain HTTP).
tls_describe() {
  [[ $TLS == 1 ]] || return 0
  local suites="each client picks its cipher suite (TLS_CIPHERSUITES empty)"
  [[ -z $TLS_CIPHERSUITES ]] || suites="nginx accepts only $TLS_CIPHERSUITES"
  printf 'HTTPS only: TLS 1.3 only at nginx (%s), HTTP/1.1 everywhere (curl --http1.1; nginx offers no h2), the same EC P-256 certificate on both servers (a throwaway CA made with openssl, trusted with --cacert / --ca-certificate), nginx without kTLS (so no sendfile over TLS), %s' \
    "$(nginx -V 2>&1 | sed -n 's/.*running with \(OpenSSL [^ ]*\).*/\1/p; t; s/^built with \(OpenSSL [^ ]*\).*/\1/p')" "$suites"
}
# tls_handshake URL [openssl s_client ARGS]: "PROTOCOL CIPHER" of a handshake verified against
# the run's CA, or nothing when it failed.
tls_handshake() {
  local hostport=${1#https://}
  shift
  hostport=${hostport%%/*}
  openssl s_client -connect "$hostport" -servername localhost -verify_return_error -CAfile "$TLS_CA" "$@" \
    </dev/null 2>/dev/null | awk '/^New, / { p = $2; c = $NF; sub(/,$/, "", p) } END { if (p != "" && p != "(NONE)") print p, c }'
}
# check_tls NAME URL: a verified TLS 1.3 handshake must succeed (and for nginx, TLS 1.2 must
# fail); records "PROTOCOL CIPHER" (openssl s_client's choice) in TLS_SEEN[NAME].
declare -A TLS_SEEN=()
check_tls() {
  local name=$1 url=$2 got
  [[ $TLS == 1 ]] || return 0
  got=$(tls_handshake "$url")
  [[ $got == TLSv1.3* ]] || die "$name: no verified TLS 1.3 handshake at $url (got: ${got:-nothing})"
  TLS_SEEN[$name]=$got
  if [[ $name == nginx ]]; then
    [[ -z $(tls_handshake "$url" -tls1_2) ]] || die "nginx accepted a TLS 1.2 handshake"
  fi
  local refused=
  [[ $name != nginx ]] || refused="; TLS 1.2 refused"
  log "$name: $got, certificate verified against the run's CA$refused"
}

# ================================================================ nginx
nginx_version() { nginx -v 2>&1 | sed 's/.*nginx\///'; }
# start_nginx ROOT: nginx on 127.0.0.1 serving ROOT (NGINX_WORKERS workers, sendfile on,
# access_log off, keep-alive up to 1,000,000 requests); sets NGINX_PID, NGINX_PORT, NGINX_URL.
# With TLS=1: HTTPS only, TLS 1.3 only, the run's certificate, TLS_CIPHERSUITES (when set)
# the only suite; checked with openssl s_client (check_tls).
start_nginx() {
  local root=$1 dir=$TMP/nginx user='' attempt tls_conf=''
  require_tools nginx
  mkdir -p "$dir"
  [[ $EUID == 0 ]] && user="user root;"
  if [[ $TLS == 1 ]]; then
    tls_conf="ssl_certificate $TLS_CERT;
    ssl_certificate_key $TLS_KEY;
    ssl_protocols TLSv1.3;"
    [[ -z $TLS_CIPHERSUITES ]] || tls_conf+="
    ssl_conf_command Ciphersuites $TLS_CIPHERSUITES;"
  fi
  for attempt in 1 2 3 4 5; do
    NGINX_PORT=$(free_port)
    cat >"$dir/nginx.conf" <<EOF
$user
worker_processes $NGINX_WORKERS;
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_timeout 65;
  keepalive_requests 1000000;
  default_type application/octet-stream;
  client_body_temp_path $dir/client_body;
  proxy_temp_path $dir/proxy;
  fastcgi_temp_path $dir/fastcgi;
  uwsgi_temp_path $dir/uwsgi;
  scgi_temp_path $dir/scgi;
  server {
    listen 127.0.0.1:$NGINX_PORT${tls_conf:+ ssl};
    ${tls_conf}
    root $root;
  }
}
EOF
    nginx -t -q -p "$dir" -e "$dir/error.log" -c "$dir/nginx.conf" || die "nginx rejected $dir/nginx.conf"
    nginx -p "$dir" -e "$dir/error.log" -c "$dir/nginx.conf" &
    NGINX_PID=$!
    wait_for_port "$NGINX_PORT"
    sleep 0.2
    if kill -0 "$NGINX_PID" 2>/dev/null; then
      NGINX_URL=$SCHEME://127.0.0.1:$NGINX_PORT
      log "nginx $(nginx_version) pid $NGINX_PID on $NGINX_URL serving $root ($NGINX_WORKERS workers)"
      check_tls nginx "$NGINX_URL"
      return 0
    fi
    wait "$NGINX_PID" 2>/dev/null || true
    NGINX_PID=
    warn "nginx did not start on port $NGINX_PORT (attempt $attempt): $(tail -n 2 "$dir/error.log" 2>/dev/null)"
  done
  die "nginx did not start"
}
stop_nginx() {
  stop_pid "$NGINX_PID"
  NGINX_PID=
}

# ================================================================ sluice serve
SLUICE_STARTS=0
# start_sluice DATA_DIR [MORE SERVE ARGS]: `sluice serve` on 127.0.0.1, a free port, the data
# dir given; sets SLUICE_PID, SLUICE_URL (http://127.0.0.1:PORT) and SLUICE_LOG (its output
# files, SLUICE_LOG.out / .err). With TLS=1 it gets --tls-cert/--tls-key (the run's
# certificate, the same as nginx's) and SLUICE_URL is https://.
start_sluice() {
  local data=$1 i
  shift
  SLUICE_STARTS=$((SLUICE_STARTS + 1))
  SLUICE_LOG=$TMP/sluice.$SLUICE_STARTS
  mkdir -p "$data"
  SLUICE_CMD=("$SLUICE_BIN" serve --host 127.0.0.1 --port 0 --data "$data" "$@")
  [[ $TLS != 1 ]] || SLUICE_CMD+=(--tls-cert "$TLS_CERT" --tls-key "$TLS_KEY")
  "${SLUICE_CMD[@]}" >"$SLUICE_LOG.out" 2>"$SLUICE_LOG.err" &
  SLUICE_PID=$!
  SLUICE_URL=
  for i in $(seq 1 300); do
    SLUICE_URL=$(sed -n 's/^Sluice listening on \(https\{0,1\}:[^ ]*\).*/\1/p' "$SLUICE_LOG.out" | head -1)
    [[ -n $SLUICE_URL ]] && break
    kill -0 "$SLUICE_PID" 2>/dev/null || die "sluice serve exited: $(cat "$SLUICE_LOG.err" "$SLUICE_LOG.out")"
    sleep 0.1
  done
  [[ -n $SLUICE_URL ]] || die "sluice serve did not print its listening line within 30 s"
  SLUICE_URL=${SLUICE_URL%/}
  [[ $SLUICE_URL == "$SCHEME://"* ]] || die "sluice serve listens on $SLUICE_URL, expected $SCHEME://"
  log "sluice serve pid $SLUICE_PID on $SLUICE_URL (data $data${*:+, $*})"
  check_tls sluice "$SLUICE_URL"
}
stop_sluice() {
  stop_pid "$SLUICE_PID"
  SLUICE_PID=
}

# check_alive NAME PID: fails, with the server's exit status and the tail of its log, when it
# died (under load).
check_alive() {
  local name=$1 pid=$2 status=0
  kill -0 "$pid" 2>/dev/null && return 0
  wait "$pid" || status=$?
  log "$name (pid $pid) died with exit status $status; last lines of its log:"
  if [[ $pid == "$SLUICE_PID" ]]; then
    tail -n 30 "$SLUICE_LOG.err" "$SLUICE_LOG.out" >&2 || true
    SLUICE_PID=
  elif [[ $pid == "$NGINX_PID" ]]; then
    tail -n 30 "$TMP/nginx/error.log" >&2 || true
    NGINX_PID=
  fi
  die "$name died during the benchmark"
}

# ================================================================ jobs API (needs jq)
# post_job JSON -> prints the new job's id
post_job() {
  local answer
  answer=$(curl -sf -X POST "$SLUICE_URL/jobs" -H 'Content-Type: application/json' -d "$1") || die "POST /jobs $1 failed"
  jq -r .id <<<"$answer"
}
job_json() { curl -sf "$SLUICE_URL/jobs/$1" || die "GET /jobs/$1 failed"; }
delete_job() { curl -sf -o /dev/null -X DELETE "$SLUICE_URL/jobs/$1?deleteFile=true" || warn "DELETE /jobs/$1 failed"; }
count_jobs() { # jobs in the store, from /metrics
  curl -sf "$SLUICE_URL/metrics" | awk '/^sluice_jobs[{ ]/ { n += $NF } END { printf "%d", n }'
}
# wait_jobs_gone: waits until the store is empty (after deleting every job).
wait_jobs_gone() {
  local i
  for i in $(seq 1 100); do
    (($(count_jobs) == 0)) && return 0
    sleep 0.1
  done
  die "the store still holds $(count_jobs) jobs after deleting them"
}

# start_downloads URL N CONNECTIONS: N jobs downloading URL (as dl-1.bin ... dl-N.bin),
# CONNECTIONS Range connections each; sets DL_IDS and DL_POSTED_NS, and returns once all are
# running with bytes moving.
start_downloads() {
  local url=$1 n=$2 connections=$3 i id ok
  DL_IDS=()
  DL_POSTED_NS=$(now_ns)
  for ((i = 1; i <= n; i++)); do
    DL_IDS+=("$(post_job "{\"url\":\"$url\",\"connections\":$connections,\"filename\":\"dl-$i.bin\"}")")
  done
  for i in $(seq 1 200); do
    ok=0
    for id in "${DL_IDS[@]}"; do
      # (completed too: a small file can be done before the first look)
      [[ $(job_json "$id" | jq -r 'if (.state == "running" and .bytesDone > 0) or .state == "completed" then "y" else "n" end') == y ]] \
        && ok=$((ok + 1))
    done
    ((ok == n)) && return 0
    sleep 0.1
  done
  for id in "${DL_IDS[@]}"; do job_json "$id" >&2; echo >&2; done
  die "the $n downloads did not all start running within 20 s"
}
# downloads_status: prints "RUNNING-COUNT TOTAL-bytesDone" over DL_IDS.
downloads_status() {
  local id running=0 bytes=0 j
  for id in "${DL_IDS[@]}"; do
    j=$(job_json "$id")
    [[ $(jq -r .state <<<"$j") == running ]] && running=$((running + 1))
    bytes=$((bytes + $(jq -r '.bytesDone // 0' <<<"$j")))
  done
  echo "$running $bytes"
}
# wait_downloads_done DATA_DIR EXPECTED_SHA256 TIMEOUT_S: waits until every job in DL_IDS is
# completed (fails on a failed job or the timeout), then verifies each finished file's SHA-256
# (read from disk, and the job's own `sha256`); sets DL_DONE_NS.
wait_downloads_done() {
  local data=$1 expected=$2 timeout=$3 deadline id j state done_count path
  deadline=$((SECONDS + timeout))
  while true; do
    done_count=0
    for id in "${DL_IDS[@]}"; do
      j=$(job_json "$id")
      state=$(jq -r .state <<<"$j")
      [[ $state == failed ]] && die "job $id failed: $(jq -c .error <<<"$j")"
      [[ $state == completed ]] && done_count=$((done_count + 1))
    done
    ((done_count == ${#DL_IDS[@]})) && break
    ((SECONDS < deadline)) || die "the downloads did not complete within ${timeout}s ($done_count of ${#DL_IDS[@]} done)"
    sleep 0.2
  done
  DL_DONE_NS=$(now_ns)
  for id in "${DL_IDS[@]}"; do
    j=$(job_json "$id")
    path=$(jq -r .path <<<"$j")
    [[ $(jq -r .sha256 <<<"$j") == "$expected" ]] || die "job $id reports SHA-256 $(jq -r .sha256 <<<"$j"), expected $expected"
    verify_sha256 "$data/documents/$path" "$expected" "job $id ($path)"
  done
  log "the ${#DL_IDS[@]} downloads completed; SHA-256 of each file on disk verified"
}
stop_downloads() {
  local id
  for id in "${DL_IDS[@]}"; do delete_job "$id"; done
  DL_IDS=()
}

# ================================================================ results
# result KEY VALUE...: a figure for bench/table.sh, appended to RESULTS_KV as KEY<TAB>VALUE.
result() {
  local key=$1
  shift
  [[ -n ${RESULTS_KV:-} ]] || return 0
  printf '%s\t%s\n' "$key" "$*" >>"$RESULTS_KV"
}
# One line about the machine for the reports.
machine_line() {
  printf '%s, %s cores, %s, Linux %s' "$(date -u '+%Y-%m-%d %H:%M UTC')" "$NCPU" \
    "$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)" "$(uname -r)"
}
# emit_report TEXT: prints it, and writes it to OUT when set.
emit_report() {
  echo "$1"
  if [[ -n ${OUT:-} ]]; then
    mkdir -p "$(dirname "$OUT")"
    echo "$1" >"$OUT"
    log "wrote $OUT"
  fi
}
