#!/usr/bin/env bash
# Origin benchmark (issue 2; rows 3-4 of bench/table.sh): `sluice serve` vs nginx serving the
# same 1 GiB file.
#
#   bench/origin.sh
#
# nginx (bench/lib.sh: 2 workers, sendfile, access_log off, keepalive_requests 1000000) and
# `sluice serve --origin-root` serve the same random file from the page cache on 127.0.0.1.
# For each server: a wrk run of random 64 KiB-aligned 64 KiB ranges (bench/random-range.lua;
# 2 threads, 64 connections, 15 s, after a 3 s warm-up) and whole-file `curl -o /dev/null`
# transfers (3 runs, median). Both servers are checked first: ranged GETs (the first, a middle
# and the last 64 KiB) must answer 206 with the right Content-Range and bytes (SHA-256 against
# the file), HEAD 200, and one untimed whole-file GET must have the file's SHA-256 (the timed
# transfers go to /dev/null and are checked for status 200 and the full size). wrk runs with
# any non-2xx answer or a wrong body size fail the script. CPU time of each server (from
# /proc/PID/stat) is recorded during the wrk run and the curl runs, with the share of the CPU
# that other processes took meanwhile. Prints a markdown table and the Sluice/nginx ratios
# (targets: req/s >= 0.8x, MB/s >= 1.0x nginx; with TLS=1, issue 19: both >= 0.8x).
#
# TLS=1 (bench/lib.sh) does all of it over HTTPS: nginx (TLS 1.3 only, no kTLS, so no
# sendfile) and `sluice serve --tls-cert C --tls-key K` use the same throwaway certificate;
# curl runs with --http1.1 --cacert CA (Sluice would offer it h2), wrk speaks HTTP/1.1 over TLS
# without verifying.
#
# Environment (all optional; see also bench/lib.sh):
#   SLUICE_BIN=PATH     binary to benchmark (default .build-release/release/sluice, built
#                       first unless SKIP_BUILD=1)
#   DURATION=15s        wrk duration        WARMUP=3s   wrk warm-up (0 to skip)
#   THREADS=2           wrk threads         CONNECTIONS=64
#   FILE_MIB=1024       size of the served file in MiB
#   CURL_RUNS=3         whole-file transfers per server (median reported)
#   QUIET_WAIT=300      wait up to this many seconds for an idle machine before each server
#   TARGET_REQS=0.8     Sluice / nginx req/s target   TARGET_MBS=1.0 (0.8 with TLS=1) MB/s
#   TLS=1               everything over HTTPS (see above and bench/lib.sh)
#   PROFILE=0           1: afterwards, `perf record -a` (cpu-clock, call graphs) of PROFILE_WRK=5s of
#                       the same wrk load and of one whole-file curl, for each server; report in
#                       PROFILE_OUT (default bench/out/origin-profile.txt, origin-tls-profile.txt
#                       with TLS=1)
#   OUT=FILE            also write the markdown results to FILE
#   KEEP_TMP=1          keep the temp dir (file, configs, logs) for inspection
set -euo pipefail

BENCH_NAME=origin
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DURATION=${DURATION:-15s}
WARMUP=${WARMUP:-3s}
THREADS=${THREADS:-2}
CONNECTIONS=${CONNECTIONS:-64}
FILE_MIB=${FILE_MIB:-1024}
CURL_RUNS=${CURL_RUNS:-3}
TARGET_REQS=${TARGET_REQS:-0.8}
if [[ ${TLS:-0} == 1 ]]; then TARGET_MBS=${TARGET_MBS:-0.8}; else TARGET_MBS=${TARGET_MBS:-1.0}; fi
PROFILE=${PROFILE:-0}
PROFILE_WRK=${PROFILE_WRK:-5s}
FILE_BYTES=$((FILE_MIB * MIB))
RANGE_BYTES=65536
LUA=$BENCH_DIR/random-range.lua

require_tools nginx wrk curl
[[ $PROFILE != 1 ]] || require_tools perf
resolve_sluice
log "sluice: $(sluice_describe)"
bench_tmp
DATA=$TMP/root/data.bin
make_random_file "$DATA" "$FILE_MIB" # hashing it also puts it in the page cache
DATA_SHA256=${FILE_SHA256[$DATA]}

# ---------------------------------------------------------------- checks
# preflight NAME URL: ranged GETs answer 206 with the right Content-Range and bytes, HEAD 200,
# and a whole-file GET has the file's SHA-256.
preflight() {
  local name=$1 url=$2 out code size first expected
  for first in 0 $(((FILE_BYTES / 2 / RANGE_BYTES) * RANGE_BYTES + 12345)) $((FILE_BYTES - RANGE_BYTES)); do
    out=$(curl -s "${CURL_TLS[@]}" -o "$TMP/$name.range" -r "$first-$((first + RANGE_BYTES - 1))" -D "$TMP/$name.headers" \
      -w '%{http_code} %{size_download}' "$url")
    read -r code size <<<"$out"
    [[ $code == 206 ]] || die "$name answered $code to a ranged GET of $url (expected 206)"
    [[ $size == "$RANGE_BYTES" ]] || die "$name sent $size bytes for a $RANGE_BYTES-byte range"
    grep -qi "^content-range: bytes $first-$((first + RANGE_BYTES - 1))/$FILE_BYTES" "$TMP/$name.headers" \
      || die "$name sent a wrong Content-Range: $(grep -i '^content-range' "$TMP/$name.headers" || echo none)"
    expected=$(dd if="$DATA" iflag=skip_bytes,count_bytes skip="$first" count="$RANGE_BYTES" status=none | sha256sum)
    [[ $(sha256sum <"$TMP/$name.range") == "$expected" ]] || die "$name sent the wrong bytes for the range at $first"
  done
  out=$(curl -s "${CURL_TLS[@]}" -o /dev/null -I -w '%{http_code}' "$url")
  [[ $out == 200 ]] || die "$name answered $out to HEAD $url"
  verify_stream_sha256 "$DATA_SHA256" "$name: whole-file GET of $url" < <(curl -sf "${CURL_TLS[@]}" "$url")
  log "$name: ranged GETs -> 206 with the right Content-Range and bytes; whole file SHA-256 ok"
}

# Runs wrk; sets REQS P99_MS P50_MS WRK_SOCKET_ERRORS WRK_CPU_MS_PER_KREQ WRK_OTHER_PCT.
run_wrk() {
  local name=$1 url=$2 pid=$3 out
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
  wrk_result "$out" WRK_RESULT
  local requests=${WRK[requests]} bytes=${WRK[bytes]}
  ((requests > 0)) || die "$name: wrk completed no requests"
  ((WRK[status_errors] == 0)) || die "$name: ${WRK[status_errors]} answers with status >= 400"
  # Each answer is 64 KiB of body plus a few hundred bytes of headers; anything else means
  # the server ignored the range (200 with the whole file) or cut bodies short.
  local per=$((bytes / requests))
  ((per >= RANGE_BYTES && per < RANGE_BYTES + 2048)) \
    || die "$name: $per bytes per answer (expected $RANGE_BYTES plus headers)"
  WRK_SOCKET_ERRORS=$((WRK[connect_errors] + WRK[read_errors] + WRK[write_errors] + WRK[timeouts]))
  ((WRK_SOCKET_ERRORS == 0)) || warn "$name: $WRK_SOCKET_ERRORS socket errors/timeouts during wrk"
  ((WRK_SOCKET_ERRORS * 100 <= requests)) || die "$name: $WRK_SOCKET_ERRORS socket errors for $requests requests"
  REQS=$(awk -v r="$requests" -v d="${WRK[duration_us]}" 'BEGIN { printf "%.0f", r / (d / 1e6) }')
  P99_MS=$(us_to_ms "${WRK[p99_us]}")
  P50_MS=$(us_to_ms "${WRK[p50_us]}")
  WRK_CPU_MS_PER_KREQ=$(awk -v t="$SERVER_TICKS" -v hz="$CLK_TCK" -v r="$requests" \
    'BEGIN { printf "%.1f", t / hz * 1000 / (r / 1000) }')
}

# Whole-file transfers to /dev/null; sets MBS (median MB/s, 10^6 bytes), CURL_CPU_S_PER_GIB,
# CURL_OTHER_PCT.
run_curl() {
  local name=$1 url=$2 pid=$3 i out code size speed total version speeds=()
  phase_begin "$pid"
  for ((i = 1; i <= CURL_RUNS; i++)); do
    out=$(curl -s "${CURL_TLS[@]}" -o /dev/null -w '%{http_code} %{size_download} %{speed_download} %{time_total} %{http_version}' "$url") \
      || {
        check_alive "$name" "$pid"
        die "$name: curl failed on $url"
      }
    read -r code size speed total version <<<"$out"
    [[ $code == 200 && $size == "$FILE_BYTES" ]] || die "$name: whole-file GET gave $code with $size bytes"
    [[ $version == 1.1 ]] || die "$name: whole-file GET spoke HTTP/$version, expected 1.1"
    log "$name: curl run $i: $(awk -v s="$speed" 'BEGIN { printf "%.0f", s / 1e6 }') MB/s, ${total}s"
    speeds+=("$speed")
  done
  phase_end "$pid"
  CURL_OTHER_PCT=$OTHER_PCT
  MBS=$(printf '%s\n' "${speeds[@]}" | median | awk '{ printf "%.0f", $1 / 1e6 }')
  CURL_CPU_S_PER_GIB=$(awk -v t="$SERVER_TICKS" -v hz="$CLK_TCK" -v n="$CURL_RUNS" -v b="$FILE_BYTES" \
    'BEGIN { printf "%.2f", t / hz / (n * b / 1073741824) }')
}

# ---------------------------------------------------------------- servers
start_nginx "$TMP/root"
start_sluice "$TMP/sluice-data" --origin-root "$TMP/root"
declare -A URL=([nginx]=$NGINX_URL/data.bin [sluice]=$SLUICE_URL/files/data.bin)
preflight nginx "${URL[nginx]}"
preflight sluice "${URL[sluice]}"

declare -A R
for name in nginx sluice; do
  if [[ $name == nginx ]]; then pid=$NGINX_PID; else pid=$SLUICE_PID; fi
  url=${URL[$name]}
  wait_for_quiet "$name"
  log "$name: wrk -t$THREADS -c$CONNECTIONS -d$DURATION random ${RANGE_BYTES}-byte ranges"
  run_wrk "$name" "$url" "$pid"
  R[$name.reqs]=$REQS R[$name.p50]=$P50_MS R[$name.p99]=$P99_MS R[$name.errors]=$WRK_SOCKET_ERRORS
  R[$name.cpu_kreq]=$WRK_CPU_MS_PER_KREQ R[$name.other_wrk]=$WRK_OTHER_PCT
  log "$name: $CURL_RUNS x whole-file GET ($FILE_MIB MiB)"
  run_curl "$name" "$url" "$pid"
  R[$name.mbs]=$MBS R[$name.cpu_gib]=$CURL_CPU_S_PER_GIB R[$name.other_curl]=$CURL_OTHER_PCT
  result "origin.$name.reqs" "${R[$name.reqs]}"
  result "origin.$name.p50_ms" "${R[$name.p50]}"
  result "origin.$name.p99_ms" "${R[$name.p99]}"
  result "origin.$name.mbs" "${R[$name.mbs]}"
done
for name in nginx sluice; do
  url=$(sed -E 's|^(https?)://127\.0\.0\.1:[0-9]+/|\1://127.0.0.1:PORT/|' <<<"${URL[$name]}")
  result "origin.cmd.wrk.$name" "wrk -t$THREADS -c$CONNECTIONS -d$DURATION --latency -s bench/random-range.lua $url -- $FILE_BYTES"
  curl_args="${CURL_TLS[*]}"
  result "origin.cmd.curl.$name" "curl -s ${curl_args:+${curl_args//$TMP/\$TMP} }-o /dev/null $url"
  result "origin.$name.cpu_ms_per_kreq" "${R[$name.cpu_kreq]}"
  result "origin.$name.cpu_s_per_gib" "${R[$name.cpu_gib]}"
  result "origin.$name.other_pct" "wrk ${R[$name.other_wrk]}%, curl ${R[$name.other_curl]}%"
  [[ -z ${TLS_SEEN[$name]:-} ]] || result "origin.$name.tls" "${TLS_SEEN[$name]}"
done
result origin.note "$WARMUP wrk warm-up first; curl: median of $CURL_RUNS"
result origin.cmd.sluice "${SLUICE_CMD[*]//$TMP/\$TMP}"
result origin.file_mib "$FILE_MIB"
result origin.verified "$VERIFIED"

yesno() { [[ $1 == yes ]] && echo "meets $2" || echo "**misses $2**"; }
TLS_TEXT=
[[ $TLS != 1 ]] || TLS_TEXT=" $(tls_describe); openssl s_client negotiated ${TLS_SEEN[nginx]} with nginx and ${TLS_SEEN[sluice]} with Sluice."
RQ=$(ratio "${R[sluice.reqs]}" "${R[nginx.reqs]}")
RM=$(ratio "${R[sluice.mbs]}" "${R[nginx.mbs]}")
RP=$(ratio "${R[sluice.p99]}" "${R[nginx.p99]}")
RCK=$(ratio "${R[sluice.cpu_kreq]}" "${R[nginx.cpu_kreq]}")
RCG=$(ratio "${R[sluice.cpu_gib]}" "${R[nginx.cpu_gib]}")

emit_report "$(machine_line); sluice: $(sluice_describe); nginx $(nginx_version) ($NGINX_WORKERS workers, sendfile, access_log off).$TLS_TEXT wrk -t$THREADS -c$CONNECTIONS -d$DURATION (after ${WARMUP} warm-up), random 64 KiB-aligned 64 KiB ranges of a ${FILE_MIB} MiB file; MB/s = median of $CURL_RUNS whole-file \`curl -o /dev/null\` GETs (10^6 bytes/s). File in page cache; wrk/curl share the $NCPU cores with the server. Ranges and one whole-file GET per server verified by SHA-256 ($VERIFIED checks). CPU used by other processes during the measurements (share of all cores; should be ~0): nginx wrk ${R[nginx.other_wrk]}%, curl ${R[nginx.other_curl]}%; Sluice wrk ${R[sluice.other_wrk]}%, curl ${R[sluice.other_curl]}%. Quiet check: $(quiet_summary).

| server | req/s (64 KiB ranges) | p50 latency | p99 latency | MB/s (whole file) | server CPU ms / 1k req | server CPU s / GiB |
|---|---:|---:|---:|---:|---:|---:|
| nginx $(nginx_version) | ${R[nginx.reqs]} | ${R[nginx.p50]} ms | ${R[nginx.p99]} ms | ${R[nginx.mbs]} | ${R[nginx.cpu_kreq]} | ${R[nginx.cpu_gib]} |
| Sluice | ${R[sluice.reqs]} | ${R[sluice.p50]} ms | ${R[sluice.p99]} ms | ${R[sluice.mbs]} | ${R[sluice.cpu_kreq]} | ${R[sluice.cpu_gib]} |
| **Sluice / nginx** | **${RQ}x** ($(yesno "$(meets "$RQ" '>=' "$TARGET_REQS")" "${TARGET_REQS}x")) | | ${RP}x | **${RM}x** ($(yesno "$(meets "$RM" '>=' "$TARGET_MBS")" "${TARGET_MBS}x")) | ${RCK}x | ${RCG}x |"

# ---------------------------------------------------------------- profile
if [[ $PROFILE == 1 ]]; then
  if [[ $TLS == 1 ]]; then PROF=${PROFILE_OUT:-$BENCH_DIR/out/origin-tls-profile.txt}; else PROF=${PROFILE_OUT:-$BENCH_DIR/out/origin-profile.txt}; fi
  mkdir -p "$(dirname "$PROF")"
  for name in nginx sluice; do
    url=${URL[$name]}
    wait_for_quiet "profile $name wrk"
    log "profiling $name under wrk -d$PROFILE_WRK with perf record -a"
    perf record -q -a -F 999 -e cpu-clock -g -o "$TMP/perf-$name-wrk.data" -- \
      wrk -t"$THREADS" -c"$CONNECTIONS" -d"$PROFILE_WRK" -s "$LUA" "$url" -- "$FILE_BYTES" >"$TMP/perf.out" 2>&1 \
      || { cat "$TMP/perf.out" >&2; die "perf record (wrk, $name) failed"; }
    wait_for_quiet "profile $name curl"
    log "profiling $name for one whole-file curl with perf record -a"
    perf record -q -a -F 1999 -e cpu-clock -g -o "$TMP/perf-$name-curl.data" -- \
      curl -s "${CURL_TLS[@]}" -o /dev/null "$url" >"$TMP/perf.out" 2>&1 \
      || { cat "$TMP/perf.out" >&2; die "perf record (curl, $name) failed"; }
  done
  {
    for name in nginx sluice; do
      for load in wrk curl; do
        report() { perf report -i "$TMP/perf-$name-$load.data" --stdio "$@" 2>/dev/null | grep -v '^#' | grep . || true; }
        echo "# $name${TLS_CA:+ over TLS}, $load load (perf record -a: the whole machine, server and client), $(date -u '+%Y-%m-%d %H:%M UTC'); sluice: $(sluice_describe)"
        echo "## by process name (comm)"
        report --no-children --sort comm -g none | head -12
        echo "## self, by comm, DSO and symbol (top 50)"
        report --no-children --sort comm,dso,sym -g none | head -50
        echo "## inclusive (children), by comm and symbol (top 40)"
        report --children --sort comm,sym -g none | head -40
        echo
      done
    done
  } >"$PROF"
  log "wrote $PROF"
fi
