#!/usr/bin/env bash
# Service benchmark (issue 4): the jobs API of `sluice serve` with a large store, and its memory
# with downloads running.
#
#   bench/service.sh
#
# (a), GET /jobs/ID latency while 3 downloads run, is bench/api-latency.sh: `MODES=hammer`
# there is what (a) measured here before (wrk -t2 -c16 -d10s, plus the same run with nothing
# downloading), `MODES=paced` is one client every 20 ms (rows 5-6 of bench/table.sh).
#
# nginx on 127.0.0.1 (bench/lib.sh: 2 workers, sendfile, access_log off) is the origin (a BIG_MIB
# file of random data in a temp dir on the real disk). One run measures:
#   (b) the store filled with exactly FILL_JOBS=10,000 paused jobs (dummy URL) by POST /jobs from
#       `curl -Z --parallel-max 8` (one process, keep-alive connections, URL glob): jobs created
#       per second over the whole fill; then GET /jobs?limit=100, median of 20 curl requests
#       (time_total) and a wrk -t1 -c1 -d5s latency run;
#   (c) RSS (VmRSS sampled every 0.5 s for RSS_SECONDS, and VmHWM) of a service restarted on a
#       data dir with exactly RSS_JOBS=1,000 jobs while 3 more (downloads of the big file,
#       connections 4) run; the 3 then run to completion and each file's SHA-256 is verified.
# Prints a markdown table with the figures, targets and pass/miss.
#
# Environment (all optional; see also bench/lib.sh):
#   SLUICE_BIN=PATH     binary to benchmark (default .build-release/release/sluice, built
#                       first unless SKIP_BUILD=1)
#   BIG_MIB=4096        size of the origin's file in MiB
#   FILL_JOBS=10000     jobs in the store for (b)     RSS_JOBS=1000   jobs in the store for (c)
#   RSS_SECONDS=10      how long (c) samples RSS while the downloads run
#   JOB_TIMEOUT=900     seconds the 3 downloads of (c) may take to complete
#   QUIET_WAIT=300      before each measurement, wait up to this many seconds for an idle machine
#   OUT=FILE            also write the markdown results to FILE
#   KEEP_TMP=1          keep the temp dir      TMPDIR=DIR  where it goes (default /var/tmp)
set -euo pipefail

BENCH_NAME=service
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

BIG_MIB=${BIG_MIB:-4096}
FILL_JOBS=${FILL_JOBS:-10000}
RSS_JOBS=${RSS_JOBS:-1000}
RSS_SECONDS=${RSS_SECONDS:-10}
JOB_TIMEOUT=${JOB_TIMEOUT:-900}

require_tools nginx wrk curl jq
resolve_sluice
log "sluice: $(sluice_describe)"
bench_tmp
BIG=$TMP/root/big.bin
make_random_file "$BIG" "$BIG_MIB" # hashing it also puts it in the page cache
start_nginx "$TMP/root"
BIG_URL=$NGINX_URL/big.bin

# fill_jobs N: N paused jobs with a dummy URL, 8 POSTs in flight; sets FILL_MS, FILL_CREATED.
fill_jobs() {
  local n=$1 start end
  start=$(now_ns)
  curl -s --no-progress-meter -Z --parallel-max 8 -X POST -H 'Content-Type: application/json' \
    -d '{"url":"http://127.0.0.1:1/x","paused":true}' -o /dev/null -w '%{http_code}\n' \
    "$SLUICE_URL/jobs?n=[1-$n]" >"$TMP/fill.codes" || true
  end=$(now_ns)
  FILL_MS=$(((end - start) / 1000000))
  FILL_CREATED=$(grep -cx 201 "$TMP/fill.codes" || true)
  ((FILL_CREATED == n)) || die "only $FILL_CREATED of $n POST /jobs answered 201 ($(sort "$TMP/fill.codes" | uniq -c | tr '\n' ' '))"
}
rss_mib() { awk -v key="^$1" '$0 ~ key { printf "%.1f", $2 / 1024 }' "/proc/$SLUICE_PID/status"; }

# ================================================================ (b) 10,000 jobs
start_sluice "$TMP/data-b" --max-active 3
wait_for_quiet "(b)"
log "(b) POST /jobs x $FILL_JOBS (paused, dummy URL) with curl -Z --parallel-max 8"
fill_jobs "$FILL_JOBS"
B_FILL_CREATED=$FILL_CREATED B_FILL_MS=$FILL_MS
B_RATE=$(awk -v n="$FILL_CREATED" -v ms="$FILL_MS" 'BEGIN { printf "%.0f", n / (ms / 1000) }')
B_JOBS=$(count_jobs)
log "(b) $FILL_CREATED jobs created in $FILL_MS ms: $B_RATE/s; store holds $B_JOBS jobs"
((B_JOBS == FILL_JOBS)) || die "(b): the store holds $B_JOBS jobs, expected $FILL_JOBS"

wait_for_quiet "(b) list"
LIST_URL="$SLUICE_URL/jobs?limit=100"
N=$(curl -sf "$LIST_URL" | jq '.jobs | length')
EXPECT_LIST=$((FILL_JOBS < 100 ? FILL_JOBS : 100))
((N == EXPECT_LIST)) || die "(b): GET /jobs?limit=100 returned $N jobs, expected $EXPECT_LIST"
LIST_BYTES=$(curl -sf "$LIST_URL" | wc -c)
for _ in 1 2 3; do curl -sf -o /dev/null "$LIST_URL"; done # warm-up
TIMES=()
for _ in $(seq 1 20); do TIMES+=("$(curl -sf -o /dev/null -w '%{time_total}' "$LIST_URL")"); done
B_LIST_MED=$(printf '%s\n' "${TIMES[@]}" | median | awk '{ printf "%.2f", $1 * 1000 }')
B_LIST_MAX=$(printf '%s\n' "${TIMES[@]}" | maximum | awk '{ printf "%.2f", $1 * 1000 }')
wrk -t1 -c1 -d5s -s "$BENCH_DIR/latency.lua" "$LIST_URL" >"$TMP/b-list.wrk"
check_alive sluice "$SLUICE_PID"
wrk_result "$TMP/b-list.wrk" LAT_RESULT
((WRK[non200] == 0)) || die "(b) list: ${WRK[non200]} non-200 answers"
B_LIST_P50=$(us_to_ms "${WRK[p50_us]}") B_LIST_P99=$(us_to_ms "${WRK[p99_us]}")
B_LIST_RPS=$(awk -v r="${WRK[requests]}" -v d="${WRK[duration_us]}" 'BEGIN { printf "%.0f", r / (d / 1e6) }')
log "(b) GET /jobs?limit=100 ($LIST_BYTES bytes): curl median ${B_LIST_MED} ms (max ${B_LIST_MAX}); wrk -c1 p50 ${B_LIST_P50} ms p99 ${B_LIST_P99} ms, $B_LIST_RPS req/s"
B_RSS=$(rss_mib VmRSS) B_HWM=$(rss_mib VmHWM)
log "(b) service RSS with $B_JOBS jobs: VmRSS $B_RSS MiB, VmHWM $B_HWM MiB"
stop_sluice

# ================================================================ (c) RSS: 1,000 jobs + 3 running
log "(c) filling a fresh data dir with $RSS_JOBS paused jobs"
start_sluice "$TMP/data-c" --max-active 3
fill_jobs "$RSS_JOBS"
C_JOBS=$(count_jobs)
((C_JOBS == RSS_JOBS)) || die "(c): the store holds $C_JOBS jobs, expected $RSS_JOBS"
stop_sluice
start_sluice "$TMP/data-c" --max-active 3 # a fresh process that loads a store of exactly RSS_JOBS jobs
C_START_RSS=$(rss_mib VmRSS)
C_JOBS=$(count_jobs)
wait_for_quiet "(c)"
log "(c) $C_JOBS jobs in the store (RSS at start $C_START_RSS MiB); starting 3 downloads, sampling RSS for ${RSS_SECONDS}s"
start_downloads "$BIG_URL" 3 4
C_MAX_KB=0
for _ in $(seq 1 $((RSS_SECONDS * 2))); do
  r=$(awk '/^VmRSS/ { print $2 }' "/proc/$SLUICE_PID/status")
  ((r > C_MAX_KB)) && C_MAX_KB=$r
  sleep 0.5
done
read -r C_RUNNING _ < <(downloads_status)
C_HWM=$(rss_mib VmHWM)
C_MAX_RSS=$(awk -v k="$C_MAX_KB" 'BEGIN { printf "%.1f", k / 1024 }')
C_TOTAL=$(count_jobs)
log "(c) $C_TOTAL jobs ($C_RUNNING running at the end): max VmRSS $C_MAX_RSS MiB, VmHWM $C_HWM MiB; letting the downloads complete"
wait_downloads_done "$TMP/data-c" "${FILE_SHA256[$BIG]}" "$JOB_TIMEOUT"
C_HWM_END=$(rss_mib VmHWM)
stop_downloads
stop_sluice

# ---------------------------------------------------------------- report
yesno() { [[ $1 == yes ]] && echo pass || echo "**miss**"; }
result service.fill_rate "$B_RATE"
result service.list_median_ms "$B_LIST_MED"
result service.rss_max_mib "$C_MAX_RSS"
result service.verified "$VERIFIED"
emit_report "$(machine_line), data dirs on $TMP_FSTYPE; sluice: $(sluice_describe), \`serve --max-active 3\` (default log level); origin nginx $(nginx_version) ($NGINX_WORKERS workers, sendfile) serving a $BIG_MIB MiB random file from the page cache. wrk, nginx, the downloads and the service share the $NCPU cores. The downloads of (c) verified by SHA-256 ($VERIFIED files). GET /jobs/ID latency under downloads ((a) before): bench/api-latency.sh. Quiet check: $(quiet_summary).

| measurement | result | target | |
|---|---:|---:|---|
| (b) POST /jobs rate, paused jobs ($B_FILL_CREATED in $B_FILL_MS ms, curl -Z, 8 in flight) | $B_RATE jobs/s | >= 1,000/s | $(yesno "$(meets "$B_RATE" '>=' 1000)") |
| (b) GET /jobs?limit=100 with $B_JOBS jobs, curl time_total median of 20 ($LIST_BYTES bytes) | $B_LIST_MED ms | < 20 ms | $(yesno "$(meets "$B_LIST_MED" '<' 20)") |
| (b) same, wrk -t1 -c1 -d5s p50 / p99 ($B_LIST_RPS req/s) | $B_LIST_P50 / $B_LIST_P99 ms | | |
| (b) service VmRSS / VmHWM after (b), $B_JOBS jobs | $B_RSS / $B_HWM MiB | | |
| (c) service max VmRSS, restarted on $RSS_JOBS jobs + 3 downloads running ($C_RUNNING of 3 still running after ${RSS_SECONDS}s) | $C_MAX_RSS MiB | <= 64 MiB | $(yesno "$(meets "$C_MAX_RSS" '<=' 64)") |
| (c) VmHWM of that process then; VmRSS right after start | $C_HWM MiB; $C_START_RSS MiB | <= 64 MiB | $(yesno "$(meets "$C_HWM" '<=' 64)") |
| (c) VmHWM once the 3 downloads completed | $C_HWM_END MiB | <= 64 MiB | $(yesno "$(meets "$C_HWM_END" '<=' 64)") |"
