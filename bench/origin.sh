#!/usr/bin/env bash
# Origin benchmark (issue 2): `sluice serve` vs nginx serving the same 1 GiB file.
#
#   bench/origin.sh
#
# For each server: a wrk run of random 64 KiB ranges (2 threads, 64 connections, 15 s,
# after a short warm-up) and a 1 GiB whole-file curl transfer (3 runs, median). Both
# servers are checked first to answer a ranged request with a correct 206, and wrk runs
# with any non-2xx answer or a wrong body size fail the script. Prints a markdown table
# and the Sluice/nginx ratios; CPU time of each server (from /proc/PID/stat) is recorded
# during the wrk run and the curl runs.
#
# Environment (all optional):
#   SKIP_BUILD=1        use the existing release binary instead of building it
#   SLUICE_BIN=PATH     binary to benchmark (default .build-release/release/sluice)
#   DURATION=15s        wrk duration        WARMUP=3s   wrk warm-up (0 to skip)
#   THREADS=2           wrk threads         CONNECTIONS=64
#   FILE_MIB=1024       size of the served file in MiB
#   CURL_RUNS=3         whole-file transfers per server (median reported)
#   OUT=FILE            also write the markdown results to FILE
#   KEEP_TMP=1          keep the temp dir (file, configs, logs) for inspection
#   QUIET_WAIT=600      wait up to this many seconds for an idle machine first (0: no wait)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
SLUICE_BIN=${SLUICE_BIN:-$REPO/.build-release/release/sluice}
DURATION=${DURATION:-15s}
WARMUP=${WARMUP:-3s}
THREADS=${THREADS:-2}
CONNECTIONS=${CONNECTIONS:-64}
FILE_MIB=${FILE_MIB:-1024}
CURL_RUNS=${CURL_RUNS:-3}
FILE_BYTES=$((FILE_MIB * 1024 * 1024))
RANGE_BYTES=65536
LUA=$HERE/random-range.lua
CLK_TCK=$(getconf CLK_TCK)

log() { printf '[origin] %s\n' "$*" >&2; }
die() { printf '[origin] FAIL: %s\n' "$*" >&2; exit 1; }

for tool in nginx wrk curl awk; do
  command -v "$tool" >/dev/null || die "$tool is not installed"
done

# ---------------------------------------------------------------- build
if [[ ${SKIP_BUILD:-0} != 1 ]]; then
  log "building release (scratch path .build-release)"
  (cd "$REPO" && swift build -c release --static-swift-stdlib --product sluice --scratch-path .build-release) >&2
fi
[[ -x $SLUICE_BIN ]] || die "no sluice binary at $SLUICE_BIN (build it or unset SKIP_BUILD)"

# ---------------------------------------------------------------- temp dir + cleanup
TMP=$(mktemp -d "${TMPDIR:-/tmp}/sluice-origin-bench.XXXXXX")
chmod 755 "$TMP"
NGINX_PID=
SLUICE_PID=
cleanup() {
  local status=$?
  if [[ -n $SLUICE_PID ]] && kill -0 "$SLUICE_PID" 2>/dev/null; then
    kill -TERM "$SLUICE_PID" 2>/dev/null || true
    wait "$SLUICE_PID" 2>/dev/null || true
  fi
  if [[ -n $NGINX_PID ]] && kill -0 "$NGINX_PID" 2>/dev/null; then
    kill -TERM "$NGINX_PID" 2>/dev/null || true
    wait "$NGINX_PID" 2>/dev/null || true
  fi
  if [[ ${KEEP_TMP:-0} == 1 ]]; then
    log "kept $TMP"
  else
    rm -rf "$TMP"
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'log "FAIL: command failed at line $LINENO: $BASH_COMMAND"' ERR
trap 'exit 130' INT TERM

mkdir -p "$TMP/root" "$TMP/sluice-data" "$TMP/nginx"
DATA=$TMP/root/data.bin
log "writing ${FILE_MIB} MiB of random data to $DATA"
head -c "$FILE_BYTES" /dev/urandom >"$DATA"
chmod 644 "$DATA"
cat "$DATA" >/dev/null # into the page cache: both servers read from memory

# ---------------------------------------------------------------- helpers
port_is_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
free_port() {
  local port
  for port in $(seq 18080 18180); do
    if port_is_free "$port"; then echo "$port"; return; fi
  done
  die "no free port in 18080-18180"
}

# CPU ticks (utime + stime) of a process and all its descendants (nginx workers). The
# stat files are read with cat so that processes exiting meanwhile are just skipped.
cpu_ticks() {
  local root=$1
  { cat /proc/[0-9]*/stat 2>/dev/null || true; } | awk -v root="$root" '
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

# Percentage of all cores busy over 2 s.
cpu_busy_percent() {
  local a b
  a=($(head -1 /proc/stat)); sleep 2; b=($(head -1 /proc/stat))
  awk -v a="${a[*]}" -v b="${b[*]}" 'BEGIN {
    n = split(a, x, " "); split(b, y, " ")
    for (i = 2; i <= n; i++) total += y[i] - x[i]
    idle = (y[5] - x[5]) + (y[6] - x[6])
    printf "%.0f", 100 * (total - idle) / total }'
}

# Busy CPU ticks of the whole machine (user, nice, system, steal), and CPU ticks of this script's finished
# children (wrk, curl): with the server's ticks they tell how much CPU something else on
# the machine took while a measurement ran ("other CPU" in the report).
# irq and softirq time is left out: loopback TCP processing lands there (~10% of the
# machine during a 2.5 GB/s transfer) without belonging to any process.
machine_busy_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $9; exit }' /proc/stat; }
client_ticks() { sed 's/^[0-9]* (.*) //' "/proc/$$/stat" | awk '{ print $14 + $15 }'; }
now_ms() { date +%s%3N; }
# phase_begin PID / phase_end PID: sets SERVER_TICKS and OTHER_PCT (share of all cores used
# by processes other than the server and its load generator during the phase).
phase_begin() {
  P_SERVER=$(cpu_ticks "$1") P_MACHINE=$(machine_busy_ticks) P_CLIENT=$(client_ticks) P_START=$(now_ms)
}
phase_end() {
  local server machine client elapsed
  server=$(cpu_ticks "$1") machine=$(machine_busy_ticks) client=$(client_ticks) elapsed=$(($(now_ms) - P_START))
  SERVER_TICKS=$((server - P_SERVER))
  OTHER_PCT=$(awk -v m=$((machine - P_MACHINE)) -v s="$SERVER_TICKS" -v c=$((client - P_CLIENT)) \
    -v e="$elapsed" -v hz="$CLK_TCK" -v n="$(nproc)" \
    'BEGIN { o = (m - s - c) / hz; if (o < 0) o = 0; printf "%.0f", 100 * o / (e / 1000 * n) }')
}

# Waits (up to QUIET_WAIT seconds) until the machine is idle, so a build or test run in
# another shell does not end up in the numbers.
wait_for_quiet() {
  local deadline=$((SECONDS + ${QUIET_WAIT:-600})) quiet=0 busy
  while ((SECONDS < deadline)); do
    busy=$(cpu_busy_percent)
    if ((busy < 10)); then quiet=$((quiet + 1)); else quiet=0; fi
    ((quiet >= 3)) && return 0
  done
  log "WARNING: the machine did not become idle within ${QUIET_WAIT:-600}s (last: ${busy}% busy)"
}

# Fails (with the server's exit status and log tail) when a server died under load.
check_alive() {
  local name=$1 pid=$2 status=0
  kill -0 "$pid" 2>/dev/null && return 0
  wait "$pid" || status=$?
  log "$name (pid $pid) died with exit status $status; last lines of its log:"
  if [[ $name == sluice ]]; then tail -n 30 "$TMP/sluice.err" "$TMP/sluice.out" >&2 || true
  else tail -n 30 "$TMP/nginx/error.log" >&2 || true; fi
  if [[ $name == sluice ]]; then SLUICE_PID=; else NGINX_PID=; fi
  die "$name died during the benchmark"
}

wait_for_port() {
  local port=$1 i
  for i in $(seq 1 100); do
    port_is_free "$port" || return 0
    sleep 0.1
  done
  die "nothing listening on port $port"
}

# Checks a server answers a ranged request with a correct 206 before measuring it.
preflight() {
  local name=$1 url=$2 out code size first expected
  first=$(((FILE_BYTES / 2 / RANGE_BYTES) * RANGE_BYTES + 12345))
  out=$(curl -s -o "$TMP/$name.range" -r "$first-$((first + RANGE_BYTES - 1))" -D "$TMP/$name.headers" \
    -w '%{http_code} %{size_download}' "$url")
  read -r code size <<<"$out"
  [[ $code == 206 ]] || die "$name answered $code to a ranged GET of $url (expected 206)"
  [[ $size == "$RANGE_BYTES" ]] || die "$name sent $size bytes for a $RANGE_BYTES-byte range"
  grep -qi "^content-range: bytes $first-$((first + RANGE_BYTES - 1))/$FILE_BYTES" "$TMP/$name.headers" \
    || die "$name sent a wrong Content-Range: $(grep -i '^content-range' "$TMP/$name.headers" || echo none)"
  expected=$(dd if="$DATA" iflag=skip_bytes,count_bytes skip="$first" count="$RANGE_BYTES" status=none | cksum)
  [[ $(cksum <"$TMP/$name.range") == "$expected" ]] || die "$name sent the wrong bytes for the range"
  out=$(curl -s -o /dev/null -I -w '%{http_code}' "$url")
  [[ $out == 200 ]] || die "$name answered $out to HEAD $url"
  log "$name: ranged GET -> 206 with the right Content-Range and bytes"
}

# Runs wrk; sets REQS P99_MS P50_MS WRK_SOCKET_ERRORS WRK_CPU_MS_PER_KREQ WRK_OTHER_PCT.
run_wrk() {
  local name=$1 url=$2 pid=$3 out result
  if [[ $WARMUP != 0 ]]; then
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"$WARMUP" -s "$LUA" "$url" -- "$FILE_BYTES" >/dev/null
  fi
  out=$TMP/$name.wrk
  phase_begin "$pid"
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency -s "$LUA" "$url" -- "$FILE_BYTES" >"$out"
  phase_end "$pid"
  WRK_OTHER_PCT=$OTHER_PCT
  check_alive "$name" "$pid"
  sed "s/^/[wrk $name] /" "$out" >&2
  if grep -q 'Non-2xx or 3xx responses' "$out"; then
    die "$name: wrk saw non-2xx answers ($(grep 'Non-2xx' "$out"))"
  fi
  result=$(grep '^WRK_RESULT' "$out") || die "$name: no WRK_RESULT line from $LUA"
  local kv requests duration_us bytes status_errors connect read write timeouts p50 p99
  for kv in ${result#WRK_RESULT }; do declare "w_${kv%%=*}=${kv#*=}"; done
  # shellcheck disable=SC2154 # w_* are declared by the loop above
  requests=$w_requests duration_us=$w_duration_us bytes=$w_bytes status_errors=$w_status_errors \
    connect=$w_connect_errors read=$w_read_errors write=$w_write_errors timeouts=$w_timeouts \
    p50=$w_p50_us p99=$w_p99_us
  ((requests > 0)) || die "$name: wrk completed no requests"
  ((status_errors == 0)) || die "$name: $status_errors answers with status >= 400"
  # Each answer is 64 KiB of body plus a few hundred bytes of headers; anything else means
  # the server ignored the range (200 with the whole file) or cut bodies short.
  local per=$((bytes / requests))
  ((per >= RANGE_BYTES && per < RANGE_BYTES + 2048)) \
    || die "$name: $per bytes per answer (expected $RANGE_BYTES plus headers)"
  WRK_SOCKET_ERRORS=$((connect + read + write + timeouts))
  ((WRK_SOCKET_ERRORS == 0)) || log "WARNING $name: $WRK_SOCKET_ERRORS socket errors/timeouts during wrk"
  ((WRK_SOCKET_ERRORS * 100 <= requests)) || die "$name: $WRK_SOCKET_ERRORS socket errors for $requests requests"
  REQS=$(awk -v r="$requests" -v d="$duration_us" 'BEGIN { printf "%.0f", r / (d / 1e6) }')
  P99_MS=$(awk -v u="$p99" 'BEGIN { printf "%.2f", u / 1000 }')
  P50_MS=$(awk -v u="$p50" 'BEGIN { printf "%.2f", u / 1000 }')
  WRK_CPU_MS_PER_KREQ=$(awk -v t="$SERVER_TICKS" -v hz="$CLK_TCK" -v r="$requests" \
    'BEGIN { printf "%.1f", t / hz * 1000 / (r / 1000) }')
}

# Whole-file transfers; sets MBS (median MB/s, 10^6 bytes), CURL_CPU_S_PER_GIB, CURL_OTHER_PCT.
run_curl() {
  local name=$1 url=$2 pid=$3 i out code size speed total speeds=()
  phase_begin "$pid"
  for ((i = 1; i <= CURL_RUNS; i++)); do
    out=$(curl -s -o /dev/null -w '%{http_code} %{size_download} %{speed_download} %{time_total}' "$url") \
      || { check_alive "$name" "$pid"; die "$name: curl failed on $url"; }
    read -r code size speed total <<<"$out"
    [[ $code == 200 && $size == "$FILE_BYTES" ]] || die "$name: whole-file GET gave $code with $size bytes"
    log "$name: curl run $i: $(awk -v s="$speed" 'BEGIN { printf "%.0f", s / 1e6 }') MB/s, ${total}s"
    speeds+=("$speed")
  done
  phase_end "$pid"
  CURL_OTHER_PCT=$OTHER_PCT
  MBS=$(printf '%s\n' "${speeds[@]}" | sort -g | awk '{ v[NR] = $1 } END { printf "%.0f", v[int((NR + 1) / 2)] / 1e6 }')
  CURL_CPU_S_PER_GIB=$(awk -v t="$SERVER_TICKS" -v hz="$CLK_TCK" -v n="$CURL_RUNS" -v b="$FILE_BYTES" \
    'BEGIN { printf "%.2f", t / hz / (n * b / 1073741824) }')
}

# ---------------------------------------------------------------- servers
NGINX_PORT=$(free_port)
if [[ $EUID == 0 ]]; then NGINX_USER="user root;"; else NGINX_USER=; fi
cat >"$TMP/nginx/nginx.conf" <<EOF
$NGINX_USER
worker_processes 2;
daemon off;
pid $TMP/nginx/nginx.pid;
error_log $TMP/nginx/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_timeout 65;
  keepalive_requests 1000000;
  default_type application/octet-stream;
  client_body_temp_path $TMP/nginx/client_body;
  proxy_temp_path $TMP/nginx/proxy;
  fastcgi_temp_path $TMP/nginx/fastcgi;
  uwsgi_temp_path $TMP/nginx/uwsgi;
  scgi_temp_path $TMP/nginx/scgi;
  server {
    listen 127.0.0.1:$NGINX_PORT;
    root $TMP/root;
  }
}
EOF
nginx -t -q -p "$TMP/nginx" -e "$TMP/nginx/error.log" -c "$TMP/nginx/nginx.conf" \
  || die "nginx rejected $TMP/nginx/nginx.conf"
nginx -p "$TMP/nginx" -e "$TMP/nginx/error.log" -c "$TMP/nginx/nginx.conf" &
NGINX_PID=$!
wait_for_port "$NGINX_PORT"
NGINX_URL=http://127.0.0.1:$NGINX_PORT/data.bin
log "nginx $(nginx -v 2>&1 | sed 's/.*nginx\///') pid $NGINX_PID on $NGINX_URL"

"$SLUICE_BIN" serve --host 127.0.0.1 --port 0 --data "$TMP/sluice-data" --origin-root "$TMP/root" \
  >"$TMP/sluice.out" 2>"$TMP/sluice.err" &
SLUICE_PID=$!
SLUICE_BASE=
for _ in $(seq 1 300); do
  SLUICE_BASE=$(sed -n 's/^Sluice listening on \(http:[^ ]*\).*/\1/p' "$TMP/sluice.out" | head -1)
  [[ -n $SLUICE_BASE ]] && break
  kill -0 "$SLUICE_PID" 2>/dev/null || die "sluice exited: $(cat "$TMP/sluice.err")"
  sleep 0.1
done
[[ -n $SLUICE_BASE ]] || die "sluice did not print its listening line"
SLUICE_URL=$SLUICE_BASE/files/data.bin
log "sluice $SLUICE_BIN pid $SLUICE_PID on $SLUICE_URL"

preflight nginx "$NGINX_URL"
preflight sluice "$SLUICE_URL"

[[ ${QUIET_WAIT:-600} == 0 ]] || wait_for_quiet
BUSY=$(cpu_busy_percent)
log "CPU busy before measuring: ${BUSY}% (load $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores)"
((BUSY < 15)) || log "WARNING: the machine is busy (${BUSY}%); results will be noisy"

declare -A R
for name in nginx sluice; do
  if [[ $name == nginx ]]; then url=$NGINX_URL pid=$NGINX_PID; else url=$SLUICE_URL pid=$SLUICE_PID; fi
  log "$name: wrk -t$THREADS -c$CONNECTIONS -d$DURATION random ${RANGE_BYTES}-byte ranges"
  run_wrk "$name" "$url" "$pid"
  R[$name.reqs]=$REQS R[$name.p50]=$P50_MS R[$name.p99]=$P99_MS R[$name.errors]=$WRK_SOCKET_ERRORS
  R[$name.cpu_kreq]=$WRK_CPU_MS_PER_KREQ R[$name.other_wrk]=$WRK_OTHER_PCT
  log "$name: $CURL_RUNS x whole-file GET ($FILE_MIB MiB)"
  run_curl "$name" "$url" "$pid"
  R[$name.mbs]=$MBS R[$name.cpu_gib]=$CURL_CPU_S_PER_GIB R[$name.other_curl]=$CURL_OTHER_PCT
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
verdict() { awk -v r="$1" 'BEGIN { print (r >= 0.8 ? "meets 0.8x" : "**misses 0.8x**") }'; }
RQ=$(ratio "${R[sluice.reqs]}" "${R[nginx.reqs]}")
RM=$(ratio "${R[sluice.mbs]}" "${R[nginx.mbs]}")
RP=$(ratio "${R[sluice.p99]}" "${R[nginx.p99]}")
RCK=$(ratio "${R[sluice.cpu_kreq]}" "${R[nginx.cpu_kreq]}")
RCG=$(ratio "${R[sluice.cpu_gib]}" "${R[nginx.cpu_gib]}")

REPORT=$(cat <<EOF
$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(uname -r); wrk -t$THREADS -c$CONNECTIONS -d$DURATION (after ${WARMUP} warm-up), random 64 KiB-aligned 64 KiB ranges of a ${FILE_MIB} MiB file; MB/s = median of $CURL_RUNS whole-file curl GETs (10^6 bytes/s). File in page cache; wrk/curl share the $(nproc) cores with the server. CPU used by other processes during the measurements (share of all cores; should be ~0): nginx wrk ${R[nginx.other_wrk]}%, curl ${R[nginx.other_curl]}%; Sluice wrk ${R[sluice.other_wrk]}%, curl ${R[sluice.other_curl]}%.

| server | req/s (64 KiB ranges) | p50 latency | p99 latency | MB/s (whole file) | server CPU ms / 1k req | server CPU s / GiB |
|---|---:|---:|---:|---:|---:|---:|
| nginx $(nginx -v 2>&1 | sed 's/.*nginx\///') | ${R[nginx.reqs]} | ${R[nginx.p50]} ms | ${R[nginx.p99]} ms | ${R[nginx.mbs]} | ${R[nginx.cpu_kreq]} | ${R[nginx.cpu_gib]} |
| Sluice | ${R[sluice.reqs]} | ${R[sluice.p50]} ms | ${R[sluice.p99]} ms | ${R[sluice.mbs]} | ${R[sluice.cpu_kreq]} | ${R[sluice.cpu_gib]} |
| **Sluice / nginx** | **${RQ}x** ($(verdict "$RQ")) | | ${RP}x | **${RM}x** ($(verdict "$RM")) | ${RCK}x | ${RCG}x |
EOF
)
echo "$REPORT"
if [[ -n ${OUT:-} ]]; then
  mkdir -p "$(dirname "$OUT")"
  echo "$REPORT" >"$OUT"
  log "wrote $OUT"
fi
