#!/usr/bin/env bash
# API latency under download load (issue 4 (a), issue 11; rows 5-6 of bench/table.sh):
# `GET /jobs/ID` of `sluice serve` while 3 jobs download at full speed in the same process.
#
#   bench/api-latency.sh                 both modes
#   MODES=paced bench/api-latency.sh     row 5 only      MODES=hammer ...   row 6 only
#
# nginx on 127.0.0.1 (bench/lib.sh: 2 workers, sendfile, access_log off) is the origin: a
# BIG_MIB file of random data in a temp dir on the real disk, in the page cache, so that the
# downloads do not share the API server. First, curl alone downloads it to a file
# (`curl -s -o FILE URL`, CURL_RUNS times, median MB/s; each file verified by SHA-256): the
# throughput the jobs are compared with. Then `sluice serve --max-active 3`, fresh data dir,
# and for each mode:
#   baseline  the mode's client against GET /jobs/ID of a paused job, nothing downloading;
#   loaded    3 jobs POSTed for the big file (connections JOB_CONNECTIONS each); once all 3
#             are running with bytes moving, the client runs against GET /jobs/ID of the first
#             one. The jobs' aggregate throughput during the client's run comes from their
#             bytesDone before and after it (the service updates it every 0.25 s); whether all
#             3 were still running at the end is checked (if one finished early, the figure is
#             flagged: raise BIG_MIB). Then the jobs run to completion, each finished file's
#             SHA-256 (read back from disk) must be the source's, and their whole-run aggregate
#             (3 x size / POST-to-last-completion) is reported too.
# Modes:
#   paced   (row 5) one keep-alive client asking every PACE_MS=20 ms (wrk -t1 -c1 and a 20 ms
#           pause after each answer, bench/latency.lua with PACE_MS) for PACED_DURATION=8s.
#           Targets: p99 < 5 ms; the 3 jobs' aggregate >= 0.7x curl alone.
#   hammer  (row 6) 16 clients hammering: wrk -t2 -c16 -d10s (what bench/service.sh (a) did).
#           Target: p99 < 10 ms.
# wrk measures each request from its write to the end of the answer; any non-200 answer or
# socket error fails the run. Prints a markdown table.
#
# Environment (all optional; see also bench/lib.sh):
#   SLUICE_BIN=PATH     binary to benchmark (default .build-release/release/sluice, built
#                       first unless SKIP_BUILD=1)
#   MODES="paced hammer"
#   BIG_MIB=4096        size of the origin's file; each job downloads all of it, and must
#                       still be running when the client stops
#   JOB_CONNECTIONS=4   Range connections per job
#   PACE_MS=20  PACED_DURATION=8s                    the paced client
#   HAMMER_THREADS=2  HAMMER_CONNECTIONS=16  HAMMER_DURATION=10s   the hammering clients
#   CURL_RUNS=3         curl-alone downloads (median)
#   BASELINE=1          also measure each client with nothing downloading (0 to skip)
#   JOB_TIMEOUT=900     seconds the 3 jobs may take to complete
#   QUIET_WAIT=300      before each measurement, wait up to this many seconds for an idle machine
#   OUT=FILE            also write the markdown results to FILE
#   KEEP_TMP=1          keep the temp dir      TMPDIR=DIR  where it goes (default /var/tmp)
set -euo pipefail

BENCH_NAME=api-latency
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

MODES=${MODES:-paced hammer}
BIG_MIB=${BIG_MIB:-4096}
JOBS=3
JOB_CONNECTIONS=${JOB_CONNECTIONS:-4}
PACE_MS=${PACE_MS:-20}
PACED_DURATION=${PACED_DURATION:-8s}
HAMMER_THREADS=${HAMMER_THREADS:-2}
HAMMER_CONNECTIONS=${HAMMER_CONNECTIONS:-16}
HAMMER_DURATION=${HAMMER_DURATION:-10s}
CURL_RUNS=${CURL_RUNS:-3}
BASELINE=${BASELINE:-1}
JOB_TIMEOUT=${JOB_TIMEOUT:-900}
LUA=$BENCH_DIR/latency.lua

for mode in $MODES; do
  [[ $mode == paced || $mode == hammer ]] || die "unknown mode $mode in MODES (paced hammer)"
done
require_tools nginx wrk curl jq
resolve_sluice
log "sluice: $(sluice_describe)"
bench_tmp
BIG=$TMP/root/big.bin
make_random_file "$BIG" "$BIG_MIB"
BIG_SHA256=${FILE_SHA256[$BIG]}
BIG_BYTES=$((BIG_MIB * MIB))
start_nginx "$TMP/root"
BIG_URL=$NGINX_URL/big.bin

# ---------------------------------------------------------------- curl alone, to a file
mkdir -p "$TMP/dl"
CURL_SPEEDS=()
for ((run = 1; run <= CURL_RUNS; run++)); do
  wait_for_quiet "curl alone run $run"
  out=$TMP/dl/curl.bin
  rm -f "$out"
  sync
  start=$(now_ns)
  curl -s -o "$out" "$BIG_URL" || die "curl failed on $BIG_URL"
  end=$(now_ns)
  [[ $(stat -c %s "$out") == "$BIG_BYTES" ]] || die "curl wrote $(stat -c %s "$out") bytes for $BIG_MIB MiB"
  verify_sha256 "$out" "$BIG_SHA256" "curl alone run $run"
  CURL_SPEEDS+=("$(mb_per_s "$BIG_BYTES" $((end - start)))")
  log "curl alone run $run: ${CURL_SPEEDS[-1]} MB/s, SHA-256 ok"
  rm -f "$out"
  sync
done
CURL_MBS=$(printf '%s\n' "${CURL_SPEEDS[@]}" | median | awk '{ printf "%.0f", $1 }')

# ---------------------------------------------------------------- sluice serve
DATA=$TMP/data
start_sluice "$DATA" --max-active "$JOBS"
IDLE_ID=$(post_job '{"url":"http://127.0.0.1:1/x","paused":true}')
wrk -t2 -c16 -d2s "$SLUICE_URL/jobs/$IDLE_ID" >/dev/null # warm-up

# client MODE URL OUTFILE: runs the mode's wrk client; fills WRK (LAT_RESULT), fails on any
# non-200 answer or socket error.
client_cmd() {
  case $1 in
    paced) CMD=(env PACE_MS="$PACE_MS" wrk -t1 -c1 -d"$PACED_DURATION" --latency -s "$LUA") ;;
    hammer) CMD=(wrk -t"$HAMMER_THREADS" -c"$HAMMER_CONNECTIONS" -d"$HAMMER_DURATION" --latency -s "$LUA") ;;
  esac
}
client() {
  local mode=$1 url=$2 out=$3
  client_cmd "$mode"
  "${CMD[@]}" "$url" >"$out"
  check_alive sluice "$SLUICE_PID"
  sed "s/^/[wrk $mode] /" "$out" >&2
  wrk_result "$out" LAT_RESULT
  ((WRK[requests] > 0)) || die "$mode: wrk completed no requests"
  ((WRK[non200] == 0 && WRK[errors] == 0)) || die "$mode: ${WRK[non200]} non-200 answers, ${WRK[errors]} socket errors"
}
rps() { awk -v r="${WRK[requests]}" -v d="${WRK[duration_us]}" 'BEGIN { printf "%.0f", r / (d / 1e6) }'; }

declare -A R
for mode in $MODES; do
  if [[ $BASELINE == 1 ]]; then
    wait_for_quiet "$mode baseline"
    log "$mode baseline (nothing downloading): GET /jobs/$IDLE_ID"
    client "$mode" "$SLUICE_URL/jobs/$IDLE_ID" "$TMP/$mode-baseline.wrk"
    R[$mode.base.p50]=$(us_to_ms "${WRK[p50_us]}") R[$mode.base.p99]=$(us_to_ms "${WRK[p99_us]}")
    R[$mode.base.rps]=$(rps) R[$mode.base.n]=${WRK[requests]}
    log "$mode baseline: p50 ${R[$mode.base.p50]} ms, p99 ${R[$mode.base.p99]} ms, ${R[$mode.base.rps]} req/s"
  fi

  wait_for_quiet "$mode under load"
  log "$mode: starting $JOBS downloads of $BIG_MIB MiB (connections $JOB_CONNECTIONS)"
  start_downloads "$BIG_URL" "$JOBS" "$JOB_CONNECTIONS"
  target=${DL_IDS[0]}
  read -r _ bytes0 < <(downloads_status)
  t0=$(now_ns)
  log "$mode: GET /jobs/$target while they run"
  client "$mode" "$SLUICE_URL/jobs/$target" "$TMP/$mode.wrk"
  t1=$(now_ns)
  read -r running bytes1 < <(downloads_status)
  R[$mode.p50]=$(us_to_ms "${WRK[p50_us]}") R[$mode.p90]=$(us_to_ms "${WRK[p90_us]}")
  R[$mode.p99]=$(us_to_ms "${WRK[p99_us]}") R[$mode.max]=$(us_to_ms "${WRK[max_us]}")
  R[$mode.rps]=$(rps) R[$mode.n]=${WRK[requests]} R[$mode.running]=$running
  R[$mode.mbs]=$(mb_per_s $((bytes1 - bytes0)) $((t1 - t0)))
  log "$mode: p50 ${R[$mode.p50]} ms, p99 ${R[$mode.p99]} ms (${R[$mode.n]} requests); $running of $JOBS downloads still running at the end, ${R[$mode.mbs]} MB/s together meanwhile"
  ((running == JOBS)) || warn "$mode: only $running of $JOBS downloads were still running when the client stopped: raise BIG_MIB (now $BIG_MIB)"
  wait_downloads_done "$DATA" "$BIG_SHA256" "$JOB_TIMEOUT"
  R[$mode.whole_mbs]=$(mb_per_s $((JOBS * BIG_BYTES)) $((DL_DONE_NS - DL_POSTED_NS)))
  log "$mode: whole run, POST to last completion: ${R[$mode.whole_mbs]} MB/s together"
  stop_downloads
  sync
done

# ---------------------------------------------------------------- report
yesno() { [[ $1 == yes ]] && echo pass || echo "**miss**"; }
flag() { [[ ${R[$1.running]} == "$JOBS" ]] || echo " (only ${R[$1.running]} of $JOBS still running at the end: not a full-load figure)"; }
client_cmd paced
PACED_CMD="${CMD[*]//$BENCH_DIR/bench} http://127.0.0.1:PORT/jobs/ID"
client_cmd hammer
HAMMER_CMD="${CMD[*]//$BENCH_DIR/bench} http://127.0.0.1:PORT/jobs/ID"
CURL_CMD="curl -s -o FILE http://127.0.0.1:PORT/big.bin"
JOB_BODY="{\"url\":\"http://127.0.0.1:PORT/big.bin\",\"connections\":$JOB_CONNECTIONS,\"filename\":\"dl-N.bin\"}"
result api.curl_alone.mbs "$CURL_MBS"
result api.cmd.curl "$CURL_CMD"
result api.cmd.serve "${SLUICE_CMD[*]//$TMP/\$TMP}"
result api.cmd.jobs "curl -X POST -H 'Content-Type: application/json' -d '$JOB_BODY' http://127.0.0.1:PORT/jobs"
result api.cmd.paced "$PACED_CMD"
result api.cmd.hammer "$HAMMER_CMD"
result api.note "a $BIG_MIB MiB file; curl alone: median of $CURL_RUNS; the jobs' files verified by SHA-256 once complete"
ROWS=
for mode in $MODES; do
  for key in p50 p90 p99 max rps n running mbs whole_mbs; do result "api.$mode.$key" "${R[$mode.$key]}"; done
  if [[ $BASELINE == 1 ]]; then
    for key in p50 p99 rps; do result "api.$mode.base.$key" "${R[$mode.base.$key]}"; done
  fi
  if [[ $mode == paced ]]; then
    name="1 client every $PACE_MS ms, $PACED_DURATION"
    target=5
  else
    name="$HAMMER_CONNECTIONS clients (wrk -t$HAMMER_THREADS -c$HAMMER_CONNECTIONS -d$HAMMER_DURATION)"
    target=10
  fi
  r=$(ratio "${R[$mode.mbs]}" "$CURL_MBS")
  mbs_target='' mbs_met=''
  if [[ $mode == paced ]]; then
    mbs_target=">= 0.7x"
    mbs_met=$(yesno "$(meets "$r" '>=' 0.7)")
  fi
  if [[ $BASELINE == 1 ]]; then
    ROWS+="
| $name, nothing downloading: GET /jobs/ID p50 / p99 (req/s) | ${R[$mode.base.p50]} / ${R[$mode.base.p99]} ms (${R[$mode.base.rps]}) | | |"
  fi
  ROWS+="
| $name, $JOBS jobs downloading: GET /jobs/ID p50 / p90 / max (${R[$mode.n]} requests, ${R[$mode.rps]} req/s) | ${R[$mode.p50]} / ${R[$mode.p90]} / ${R[$mode.max]} ms | | |
| $name, $JOBS jobs downloading: GET /jobs/ID **p99** | **${R[$mode.p99]} ms** | < $target ms | $(yesno "$(meets "${R[$mode.p99]}" '<' "$target")") |
| $name: the $JOBS jobs' aggregate MB/s meanwhile$(flag "$mode") vs curl alone ($CURL_MBS MB/s) | ${R[$mode.mbs]} MB/s = **${r}x** | $mbs_target | $mbs_met |
| $name: the $JOBS jobs' aggregate over their whole run (POST to last completion) | ${R[$mode.whole_mbs]} MB/s | | |"
done
result api.verified "$VERIFIED"

emit_report "$(machine_line), data dir on $TMP_FSTYPE; sluice: $(sluice_describe), \`serve --max-active $JOBS\`; origin nginx $(nginx_version) ($NGINX_WORKERS workers, sendfile) serving a $BIG_MIB MiB random file from the page cache; $JOBS jobs of it, $JOB_CONNECTIONS connections each; curl alone: \`curl -s -o FILE $BIG_URL\`, median of $CURL_RUNS. wrk, nginx, the downloads and the service share the $NCPU cores. Every download verified by SHA-256 ($VERIFIED files). Quiet check: $(quiet_summary).

| measurement | result | target | |
|---|---:|---:|---|
| curl alone to a file, $BIG_MIB MiB (median of $CURL_RUNS) | $CURL_MBS MB/s | | |$ROWS"
