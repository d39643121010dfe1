#!/usr/bin/env bash
# Service benchmark (issue 4): the jobs API of `sluice serve` under download load and with
# a large store.
#
#   bench/service.sh
#
# nginx on 127.0.0.1 is the origin (a BIG_MIB file of random data in a temp dir on the
# real disk), so downloads do not share the API server. One run measures:
#   (a) wrk -t2 -c16 -d10s --latency GET /jobs/ID (ID = one of the running downloads) while
#       3 downloads of the big file (connections 4) run at full speed; whether all 3 were
#       still running when wrk ended is recorded (and the bytes they moved meanwhile);
#       For comparison, the same wrk run first with no download running.
#   (b) the store filled with exactly 10,000 paused jobs (dummy URL) by POST /jobs from
#       `curl -Z --parallel-max 8` (one process, keep-alive connections, URL glob):
#       jobs created per second over the whole fill; then GET /jobs?limit=100, median of 20
#       curl requests (time_total) and a wrk -t1 -c1 -d5s latency run;
#   (c) RSS (VmRSS sampled every 0.5 s, and VmHWM) of a service restarted on a data dir with
#       exactly 1,000 jobs while 3 more (downloads, connections 4) run.
# Prints a markdown table with the figures, targets and pass/miss.
#
# Environment (all optional):
#   SKIP_BUILD=1        use the existing release binary instead of building it
#   SLUICE_BIN=PATH     binary to benchmark (default .build-release/release/sluice)
#   BIG_MIB=4096        size of the origin's file in MiB
#   FILL_JOBS=10000     jobs in the store for (b)     RSS_JOBS=1000   jobs in the store for (c)
#   RSS_SECONDS=10      how long (c) samples RSS while the downloads run
#   QUIET_WAIT=300      before each measurement, wait up to this many seconds for an idle
#                       machine (CPU < 15% and no wrk/chromium/swift-build/swift-frontend)
#   OUT=FILE            also write the markdown results to FILE
#   KEEP_TMP=1          keep the temp dir      TMPDIR=DIR  where it goes (default /var/tmp)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
SLUICE_BIN=${SLUICE_BIN:-$REPO/.build-release/release/sluice}
BIG_MIB=${BIG_MIB:-4096}
FILL_JOBS=${FILL_JOBS:-10000}
RSS_JOBS=${RSS_JOBS:-1000}
RSS_SECONDS=${RSS_SECONDS:-10}
QUIET_WAIT=${QUIET_WAIT:-300}

log() { printf '[service] %s\n' "$*" >&2; }
die() { printf '[service] FAIL: %s\n' "$*" >&2; exit 1; }

for tool in nginx wrk curl jq awk; do
  command -v "$tool" >/dev/null || die "$tool is not installed"
done

# ---------------------------------------------------------------- build
if [[ ${SKIP_BUILD:-0} != 1 ]]; then
  log "building release (scratch path .build-release)"
  (cd "$REPO" && swift build -c release --static-swift-stdlib --product sluice --scratch-path .build-release) >&2
fi
[[ -x $SLUICE_BIN ]] || die "no sluice binary at $SLUICE_BIN (build it or unset SKIP_BUILD)"

# ---------------------------------------------------------------- temp dir + cleanup
BASE_TMP=${TMPDIR:-/var/tmp}
FSTYPE=$(findmnt -no FSTYPE -T "$BASE_TMP" 2>/dev/null || stat -f -c %T "$BASE_TMP")
[[ $FSTYPE != tmpfs && $FSTYPE != ramfs ]] || die "$BASE_TMP is $FSTYPE; set TMPDIR to a directory on a real disk"
TMP=$(mktemp -d "$BASE_TMP/sluice-service-bench.XXXXXX")
chmod 755 "$TMP"
NGINX_PID=
SLUICE_PID=
stop_sluice() {
  if [[ -n $SLUICE_PID ]] && kill -0 "$SLUICE_PID" 2>/dev/null; then
    kill -TERM "$SLUICE_PID" 2>/dev/null || true
    wait "$SLUICE_PID" 2>/dev/null || true
  fi
  SLUICE_PID=
}
cleanup() {
  local status=$?
  stop_sluice
  if [[ -n $NGINX_PID ]] && kill -0 "$NGINX_PID" 2>/dev/null; then
    kill -TERM "$NGINX_PID" 2>/dev/null || true
    wait "$NGINX_PID" 2>/dev/null || true
  fi
  if [[ ${KEEP_TMP:-0} == 1 ]]; then log "kept $TMP"; else rm -rf "$TMP"; fi
  exit "$status"
}
trap cleanup EXIT
trap 'log "FAIL: command failed at line $LINENO: $BASH_COMMAND"' ERR
trap 'exit 130' INT TERM

mkdir -p "$TMP/root" "$TMP/nginx"
BIG=$TMP/root/big.bin
log "writing $BIG_MIB MiB of random data to $BIG"
head -c "$((BIG_MIB * 1048576))" /dev/urandom >"$BIG"
chmod 644 "$BIG"
cat "$BIG" >/dev/null # into the page cache: the origin sends from memory

# ---------------------------------------------------------------- helpers
port_is_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
free_port() {
  local port
  for port in $(seq 18480 18580); do
    if port_is_free "$port"; then echo "$port"; return; fi
  done
  die "no free port in 18480-18580"
}
wait_for_port() {
  local i
  for i in $(seq 1 100); do port_is_free "$1" || return 0; sleep 0.1; done
  die "nothing listening on port $1"
}
cpu_busy_percent() {
  local a b
  a=($(head -1 /proc/stat)); sleep "${1:-1}"; b=($(head -1 /proc/stat))
  awk -v a="${a[*]}" -v b="${b[*]}" 'BEGIN {
    n = split(a, x, " "); split(b, y, " ")
    for (i = 2; i <= n; i++) total += y[i] - x[i]
    idle = (y[5] - x[5]) + (y[6] - x[6])
    printf "%.0f", 100 * (total - idle) / total }'
}
busy_processes() {
  pgrep -f 'wrk|chromium|swift-frontend|swift-build' 2>/dev/null | grep -vx "$$" | tr '\n' ' ' || true
}
# Waits (up to QUIET_WAIT s) for 2 quiet seconds in a row; appends to NOTES when it was not.
NOTES=()
wait_for_quiet() {
  local what=$1 deadline=$((SECONDS + QUIET_WAIT)) quiet=0 busy procs
  while true; do
    busy=$(cpu_busy_percent 1); procs=$(busy_processes)
    if ((busy < 15)) && [[ -z $procs ]]; then quiet=$((quiet + 1)); else quiet=0; fi
    ((quiet >= 2)) && return 0
    if ((SECONDS >= deadline)); then
      NOTES+=("$what: ${busy}% CPU busy${procs:+, wrk/chromium/swift running}")
      log "WARNING: machine not idle after ${QUIET_WAIT}s before $what (${busy}% busy, load $(cut -d' ' -f1 /proc/loadavg)${procs:+, pids $procs}); measuring anyway"
      return 0
    fi
  done
}

# ---------------------------------------------------------------- nginx (the origin)
NGINX_PORT=$(free_port)
if [[ $EUID == 0 ]]; then NGINX_USER="user root;"; else NGINX_USER=; fi
cat >"$TMP/nginx/nginx.conf" <<EOF
$NGINX_USER
worker_processes 1;
daemon off;
pid $TMP/nginx/nginx.pid;
error_log $TMP/nginx/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
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
nginx -t -q -p "$TMP/nginx" -e "$TMP/nginx/error.log" -c "$TMP/nginx/nginx.conf" || die "nginx rejected its config"
nginx -p "$TMP/nginx" -e "$TMP/nginx/error.log" -c "$TMP/nginx/nginx.conf" &
NGINX_PID=$!
wait_for_port "$NGINX_PORT"
BIG_URL=http://127.0.0.1:$NGINX_PORT/big.bin
log "nginx (origin) pid $NGINX_PID on $BIG_URL"

# ---------------------------------------------------------------- sluice serve
# start_sluice DATA_DIR: sets SLUICE_PID and API.
start_sluice() {
  local data=$1 log_prefix=$TMP/sluice.$((++SLUICE_STARTS))
  "$SLUICE_BIN" serve --host 127.0.0.1 --port 0 --data "$data" --max-active 3 >"$log_prefix.out" 2>"$log_prefix.err" &
  SLUICE_PID=$!
  API=
  for _ in $(seq 1 300); do
    API=$(sed -n 's/^Sluice listening on \(http:[^ ]*\).*/\1/p' "$log_prefix.out" | head -1)
    [[ -n $API ]] && break
    kill -0 "$SLUICE_PID" 2>/dev/null || die "sluice exited: $(cat "$log_prefix.err")"
    sleep 0.1
  done
  [[ -n $API ]] || die "sluice did not print its listening line"
  log "sluice serve pid $SLUICE_PID on $API (data $data)"
}
SLUICE_STARTS=0

# post_job JSON -> prints the id
post_job() {
  local answer
  answer=$(curl -sf -X POST "$API/jobs" -H 'Content-Type: application/json' -d "$1") || die "POST /jobs $1 failed"
  jq -r .id <<<"$answer"
}
job() { curl -sf "$API/jobs/$1"; }
delete_job() { curl -sf -o /dev/null -X DELETE "$API/jobs/$1?deleteFile=true" || log "DELETE /jobs/$1 failed"; }
# Starts 3 downloads of the big file; sets DL_IDS; waits until all are running with bytes moving.
start_downloads() {
  local i id ok
  DL_IDS=()
  for i in 1 2 3; do
    DL_IDS+=("$(post_job "{\"url\":\"$BIG_URL\",\"connections\":4,\"filename\":\"big-$i.bin\"}")")
  done
  for _ in $(seq 1 100); do
    ok=0
    for id in "${DL_IDS[@]}"; do
      [[ $(job "$id" | jq -r 'if .state == "running" and .bytesDone > 0 then "y" else "n" end') == y ]] && ok=$((ok + 1))
    done
    ((ok == 3)) && return 0
    sleep 0.1
  done
  for id in "${DL_IDS[@]}"; do job "$id" >&2; echo >&2; done
  die "the 3 downloads did not all start running"
}
# Prints "running-count total-bytesDone" over DL_IDS.
downloads_status() {
  local id running=0 bytes=0 j
  for id in "${DL_IDS[@]}"; do
    j=$(job "$id")
    [[ $(jq -r .state <<<"$j") == running ]] && running=$((running + 1))
    bytes=$((bytes + $(jq -r .bytesDone <<<"$j")))
  done
  echo "$running $bytes"
}
stop_downloads() {
  local id
  for id in "${DL_IDS[@]}"; do delete_job "$id"; done
  DL_IDS=()
}
# fill_jobs N: N paused jobs with a dummy URL, 8 POSTs in flight; sets FILL_MS, FILL_CREATED.
fill_jobs() {
  local n=$1 start end
  start=$(now_ns)
  curl -s --no-progress-meter -Z --parallel-max 8 -X POST -H 'Content-Type: application/json' \
    -d '{"url":"http://127.0.0.1:1/x","paused":true}' -o /dev/null -w '%{http_code}\n' \
    "$API/jobs?n=[1-$n]" >"$TMP/fill.codes" || true
  end=$(now_ns)
  FILL_MS=$(((end - start) / 1000000))
  FILL_CREATED=$(grep -cx 201 "$TMP/fill.codes" || true)
  ((FILL_CREATED == n)) || die "only $FILL_CREATED of $n POST /jobs answered 201 ($(sort "$TMP/fill.codes" | uniq -c | tr '\n' ' '))"
}
count_jobs() { # total jobs in the store, from /metrics
  curl -sf "$API/metrics" | awk '/^sluice_jobs[{ ]/ { n += $NF } END { printf "%d", n }'
}
us_to_ms() { awk -v u="$1" 'BEGIN { printf "%.2f", u / 1000 }'; }
now_ns() { date +%s%N; }

# ================================================================ (a) latency under downloads
start_sluice "$TMP/data-a"
wait_for_quiet "(a)"
WARM_ID=$(post_job '{"url":"http://127.0.0.1:1/x","paused":true}')
wrk -t2 -c16 -d2s "$API/jobs/$WARM_ID" >/dev/null # warm-up
log "(a0) baseline, no download running: wrk -t2 -c16 -d10s --latency $API/jobs/$WARM_ID"
wrk -t2 -c16 -d10s --latency -s "$HERE/latency.lua" "$API/jobs/$WARM_ID" >"$TMP/a0.wrk"
RES=$(grep '^LAT_RESULT' "$TMP/a0.wrk") || die "(a0): no LAT_RESULT from wrk"
for kv in ${RES#LAT_RESULT }; do declare "z_${kv%%=*}=${kv#*=}"; done
# shellcheck disable=SC2154 # z_* come from the loop above
((z_non200 == 0 && z_errors == 0)) || die "(a0): $z_non200 non-200 answers, $z_errors socket errors"
Z_P50=$(us_to_ms "$z_p50_us") Z_P99=$(us_to_ms "$z_p99_us")
Z_RPS=$(awk -v r="$z_requests" -v d="$z_duration_us" 'BEGIN { printf "%.0f", r / (d / 1e6) }')
log "(a0) p50 ${Z_P50} ms, p99 ${Z_P99} ms, $Z_RPS req/s"
wait_for_quiet "(a)"
log "(a) starting 3 downloads of $BIG_MIB MiB (connections 4)"
start_downloads
TARGET_ID=${DL_IDS[0]}
read -r _ A_BYTES0 < <(downloads_status)
A_T0=$(now_ns)
log "(a) wrk -t2 -c16 -d10s --latency $API/jobs/$TARGET_ID"
wrk -t2 -c16 -d10s --latency -s "$HERE/latency.lua" "$API/jobs/$TARGET_ID" >"$TMP/a.wrk"
read -r A_RUNNING A_BYTES1 < <(downloads_status)
A_T1=$(now_ns)
sed 's/^/[wrk a] /' "$TMP/a.wrk" >&2
kill -0 "$SLUICE_PID" 2>/dev/null || die "sluice died during (a)"
RES=$(grep '^LAT_RESULT' "$TMP/a.wrk") || die "(a): no LAT_RESULT from wrk"
for kv in ${RES#LAT_RESULT }; do declare "a_${kv%%=*}=${kv#*=}"; done
# shellcheck disable=SC2154 # a_* come from the loop above
{ ((a_non200 == 0)) && ((a_errors == 0)); } || die "(a): $a_non200 non-200 answers, $a_errors socket errors"
A_P50=$(us_to_ms "$a_p50_us") A_P99=$(us_to_ms "$a_p99_us") A_P90=$(us_to_ms "$a_p90_us") A_MAX=$(us_to_ms "$a_max_us")
A_RPS=$(awk -v r="$a_requests" -v d="$a_duration_us" 'BEGIN { printf "%.0f", r / (d / 1e6) }')
A_DL_MBS=$(awk -v b=$((A_BYTES1 - A_BYTES0)) -v t=$((A_T1 - A_T0)) 'BEGIN { printf "%.0f", b / 1e6 / (t / 1e9) }')
log "(a) p50 ${A_P50} ms, p99 ${A_P99} ms, $A_RPS req/s; $A_RUNNING of 3 downloads still running after wrk, ${A_DL_MBS} MB/s downloaded meanwhile"
stop_downloads
delete_job "$WARM_ID"
for _ in $(seq 1 100); do (($(count_jobs) == 0)) && break; sleep 0.1; done
(($(count_jobs) == 0)) || die "(b): the store still holds $(count_jobs) jobs after deleting them"

# ================================================================ (b) 10,000 jobs
wait_for_quiet "(b)"
log "(b) POST /jobs x $FILL_JOBS (paused, dummy URL) with curl -Z --parallel-max 8"
fill_jobs "$FILL_JOBS"
B_FILL_CREATED=$FILL_CREATED B_FILL_MS=$FILL_MS
B_RATE=$(awk -v n="$FILL_CREATED" -v ms="$FILL_MS" 'BEGIN { printf "%.0f", n / (ms / 1000) }')
B_JOBS=$(count_jobs)
log "(b) $FILL_CREATED jobs created in $FILL_MS ms: $B_RATE/s; store holds $B_JOBS jobs"
((B_JOBS == FILL_JOBS)) || die "(b): the store holds $B_JOBS jobs, expected $FILL_JOBS"

wait_for_quiet "(b) list"
LIST_URL="$API/jobs?limit=100"
N=$(curl -sf "$LIST_URL" | jq '.jobs | length')
((N == 100)) || die "(b): GET /jobs?limit=100 returned $N jobs"
LIST_BYTES=$(curl -sf "$LIST_URL" | wc -c)
for _ in 1 2 3; do curl -sf -o /dev/null "$LIST_URL"; done # warm-up
TIMES=()
for _ in $(seq 1 20); do TIMES+=("$(curl -sf -o /dev/null -w '%{time_total}' "$LIST_URL")"); done
B_LIST_MED=$(printf '%s\n' "${TIMES[@]}" | sort -g | awk '{ v[NR] = $1 } END { printf "%.2f", (v[10] + v[11]) / 2 * 1000 }')
B_LIST_MAX=$(printf '%s\n' "${TIMES[@]}" | sort -g | tail -1 | awk '{ printf "%.2f", $1 * 1000 }')
wrk -t1 -c1 -d5s -s "$HERE/latency.lua" "$LIST_URL" >"$TMP/b-list.wrk"
RES=$(grep '^LAT_RESULT' "$TMP/b-list.wrk") || die "(b): no LAT_RESULT from wrk"
for kv in ${RES#LAT_RESULT }; do declare "l_${kv%%=*}=${kv#*=}"; done
# shellcheck disable=SC2154
((l_non200 == 0)) || die "(b) list: $l_non200 non-200 answers"
B_LIST_P50=$(us_to_ms "$l_p50_us") B_LIST_P99=$(us_to_ms "$l_p99_us")
B_LIST_RPS=$(awk -v r="$l_requests" -v d="$l_duration_us" 'BEGIN { printf "%.0f", r / (d / 1e6) }')
log "(b) GET /jobs?limit=100 ($LIST_BYTES bytes): curl median ${B_LIST_MED} ms (max ${B_LIST_MAX}); wrk -c1 p50 ${B_LIST_P50} ms p99 ${B_LIST_P99} ms, $B_LIST_RPS req/s"
B_RSS=$(awk '/^VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$SLUICE_PID/status")
B_HWM=$(awk '/^VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/$SLUICE_PID/status")
log "(b) service RSS with $B_JOBS jobs: VmRSS $B_RSS MiB, VmHWM $B_HWM MiB"
stop_sluice

# ================================================================ (c) RSS: 1,000 jobs + 3 running
log "(c) filling a fresh data dir with $RSS_JOBS paused jobs"
start_sluice "$TMP/data-c"
fill_jobs "$RSS_JOBS"
C_JOBS=$(count_jobs)
((C_JOBS == RSS_JOBS)) || die "(c): the store holds $C_JOBS jobs, expected $RSS_JOBS"
stop_sluice
start_sluice "$TMP/data-c" # a fresh process that loads a store of exactly RSS_JOBS jobs
C_START_RSS=$(awk '/^VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$SLUICE_PID/status")
C_JOBS=$(count_jobs)
wait_for_quiet "(c)"
log "(c) $C_JOBS jobs in the store (RSS at start $C_START_RSS MiB); starting 3 downloads, sampling RSS for ${RSS_SECONDS}s"
start_downloads
C_MAX_RSS=0
for _ in $(seq 1 $((RSS_SECONDS * 2))); do
  r=$(awk '/^VmRSS/ { print $2 }' "/proc/$SLUICE_PID/status")
  ((r > C_MAX_RSS)) && C_MAX_RSS=$r
  sleep 0.5
done
read -r C_RUNNING _ < <(downloads_status)
C_HWM=$(awk '/^VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/$SLUICE_PID/status")
C_MAX_RSS=$(awk -v k="$C_MAX_RSS" 'BEGIN { printf "%.1f", k / 1024 }')
C_TOTAL=$(count_jobs)
log "(c) $C_TOTAL jobs ($C_RUNNING running at the end): max VmRSS $C_MAX_RSS MiB, VmHWM $C_HWM MiB"
stop_downloads
stop_sluice

# ---------------------------------------------------------------- report
verdict() { awk -v v="$1" -v t="$2" -v dir="$3" 'BEGIN { ok = dir == ">=" ? v >= t : (dir == "<" ? v < t : v <= t); print (ok ? "pass" : "**miss**") }'; }
NOTE_TEXT="every measurement started on an idle machine (CPU < 15% for 2 s in a row, no wrk/chromium/swift-build/swift-frontend process)"
if ((${#NOTES[@]} > 0)); then NOTE_TEXT="NOT idle before: $(IFS=';'; echo "${NOTES[*]}" | sed 's/;/; /g')"; fi
REPORT="$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), Linux $(uname -r), data dirs on $FSTYPE; \`sluice serve --max-active 3\` (release, default log level); origin nginx $(nginx -v 2>&1 | sed 's/.*nginx\///') (1 worker, sendfile) serving a $BIG_MIB MiB random file from the page cache. wrk, nginx, the downloads and the service share the $(nproc) cores. Quiet check: $NOTE_TEXT.

| measurement | result | target | |
|---|---:|---:|---|
| (a0) GET /jobs/ID p50 / p99, nothing running (same wrk) | $Z_P50 / $Z_P99 ms ($Z_RPS req/s) | | |
| (a) GET /jobs/ID p50, 3 downloads running (wrk -t2 -c16 -d10s) | $A_P50 ms | | |
| (a) GET /jobs/ID p99, same run | $A_P99 ms | < 5 ms | $(verdict "$A_P99" 5 '<') |
| (a) requests/s; p90; max | $A_RPS; $A_P90 ms; $A_MAX ms | | |
| (a) downloads still running when wrk ended; their MB/s during wrk | $A_RUNNING of 3; $A_DL_MBS MB/s | 3 of 3 | $( ((A_RUNNING == 3)) && echo pass || echo '**miss**') |
| (b) POST /jobs rate, paused jobs ($B_FILL_CREATED in $B_FILL_MS ms, curl -Z, 8 in flight) | $B_RATE jobs/s | >= 1,000/s | $(verdict "$B_RATE" 1000 '>=') |
| (b) GET /jobs?limit=100 with $B_JOBS jobs, curl time_total median of 20 ($LIST_BYTES bytes) | $B_LIST_MED ms | < 20 ms | $(verdict "$B_LIST_MED" 20 '<') |
| (b) same, wrk -t1 -c1 -d5s p50 / p99 ($B_LIST_RPS req/s) | $B_LIST_P50 / $B_LIST_P99 ms | | |
| (b) service VmRSS / VmHWM after (a) and (b), $B_JOBS jobs | $B_RSS / $B_HWM MiB | | |
| (c) service max VmRSS, restarted on $RSS_JOBS jobs + 3 downloads running ($C_RUNNING of 3 still running after ${RSS_SECONDS}s) | $C_MAX_RSS MiB | <= 64 MiB | $(verdict "$C_MAX_RSS" 64 '<=') |
| (c) VmHWM of that process; VmRSS right after start | $C_HWM MiB; $C_START_RSS MiB | <= 64 MiB | $(verdict "$C_HWM" 64 '<=') |"
echo "$REPORT"
if [[ -n ${OUT:-} ]]; then
  mkdir -p "$(dirname "$OUT")"
  echo "$REPORT" >"$OUT"
  log "wrote $OUT"
fi
