#!/usr/bin/env bash
# Every row of issue 11's table in one run, against curl, aria2c and nginx from Debian's
# packages, and one markdown table of the figures with their commands.
#
#   SLUICE_BIN=/path/to/sluice bench/table.sh
#
# Runs, one after the other (each row once; each script's method is described at its top):
#   rows 1-2  bench/engine.sh       sluice get -x1 vs curl -o FILE, sluice get -x4 vs
#                                   aria2c -x4 -k1M, FILE_MIB (1 GiB) from nginx, RUNS=3 runs
#                                   each (median)
#   rows 3-4  bench/origin.sh       sluice serve's /files/... vs nginx: wrk -t2 -c64 random
#                                   64 KiB ranges (req/s), and one FILE_MIB transfer with
#                                   curl -o /dev/null (MB/s, median of CURL_RUNS=3)
#   rows 5-6  bench/api-latency.sh  GET /jobs/ID while 3 jobs download from nginx in the same
#                                   sluice serve: one client every 20 ms for 8 s (p50/p99, and
#                                   the jobs' aggregate MB/s vs curl to a file alone), and
#                                   16 clients (wrk -t2 -c16 -d10s, p99)
# Every download is verified by SHA-256: a wrong byte fails its script, its rows say FAILED
# and table.sh exits 1 (after running the others). About 6-10 minutes on an idle 2-core
# machine (longer when it has to wait for one: QUIET_WAIT).
#
# TLS=1: issue 19's table instead, rows 1-4 over HTTPS (bench/lib.sh: nginx TLS 1.3 only and
# `sluice serve --tls-cert/--tls-key` with the same throwaway certificate, the clients trusting
# its CA: curl --http1.1 --cacert, aria2c --ca-certificate=, sluice get --cacert); targets
# -x1 >= 1.0x curl, -x4 >= 1.3x aria2c, origin req/s and MB/s >= 0.8x nginx; ONLY defaults to
# "engine origin".
#
# Environment (all optional):
#   SLUICE_BIN=PATH       binary to measure (default .build-release/release/sluice, built first
#                         unless SKIP_BUILD=1); point it at a baseline and at a new build to
#                         compare them
#   SLUICE_COMMIT=TEXT    the commit it was built from, when its name does not say
#   FILE_MIB=1024         rows 1-4 file size          RUNS=3    rows 1-2 runs per client
#   ORIGIN_DURATION=15s   ORIGIN_WARMUP=3s  rows 3   CURL_RUNS=3  rows 4-5 curl runs
#   BIG_MIB=4096          rows 5-6 file each job downloads (must outlast the clients)
#   PACED_DURATION=8s     HAMMER_DURATION=10s
#   ONLY="engine origin api-latency"   run only some of the scripts ("engine origin" with TLS=1)
#   TLS=1                 rows 1-4 over HTTPS (issue 19; see above)
#   PROFILE=0             1: engine.sh profiles sluice get -x1 and curl, origin.sh both servers
#                         (perf record -a; bench/out/{engine,origin}[-tls]-profile.txt)
#   QUIET_WAIT=300        before each measurement, wait up to this long for an idle machine
#   OUT_DIR=DIR           where each script's report and log go (default
#                         bench/out/table-UTC-STAMP)
#   OUT=FILE              also write the table to FILE
set -euo pipefail

BENCH_NAME=table
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

FILE_MIB=${FILE_MIB:-1024}
RUNS=${RUNS:-3}
ORIGIN_DURATION=${ORIGIN_DURATION:-15s}
ORIGIN_WARMUP=${ORIGIN_WARMUP:-3s}
CURL_RUNS=${CURL_RUNS:-3}
BIG_MIB=${BIG_MIB:-4096}
PACED_DURATION=${PACED_DURATION:-8s}
HAMMER_DURATION=${HAMMER_DURATION:-10s}
if [[ ${TLS:-0} == 1 ]]; then ONLY=${ONLY:-engine origin}; else ONLY=${ONLY:-engine origin api-latency}; fi
PROFILE=${PROFILE:-0}
TARGET_X1=1.0 TARGET_REQS=0.8
if [[ ${TLS:-0} == 1 ]]; then TARGET_X4=1.3 TARGET_MBS=0.8; else TARGET_X4=1.5 TARGET_MBS=1.0; fi
STAMP=$(date -u +%Y%m%d-%H%M%S)
if [[ ${TLS:-0} == 1 ]]; then OUT_DIR=${OUT_DIR:-$BENCH_DIR/out/table-tls-$STAMP}; else OUT_DIR=${OUT_DIR:-$BENCH_DIR/out/table-$STAMP}; fi

require_tools nginx curl aria2c wrk jq /usr/bin/time
resolve_sluice
export SKIP_BUILD=1 # built (or given) once, here
export QUIET_WAIT QUIET_CPU QUIET_SECONDS QUIET_PROCS NGINX_WORKERS TLS TLS_CIPHERSUITES
[[ -z ${SLUICE_COMMIT:-} ]] || export SLUICE_COMMIT
SLUICE_TEXT=$(sluice_describe)
mkdir -p "$OUT_DIR"
log "sluice: $SLUICE_TEXT"
log "reports and logs in $OUT_DIR"
STARTED=$SECONDS

declare -A FAILED=()
# run_script NAME VAR=VALUE...: runs bench/NAME.sh with those settings; its report goes to
# OUT_DIR/NAME.md, its figures to OUT_DIR/NAME.kv, its log (also shown) to OUT_DIR/NAME.log.
run_script() {
  local name=$1 status=0
  shift
  [[ " $ONLY " == *" $name "* ]] || return 0
  log "running bench/$name.sh $*"
  rm -f "$OUT_DIR/$name.kv"
  env "$@" RESULTS_KV="$OUT_DIR/$name.kv" OUT="$OUT_DIR/$name.md" "$BENCH_DIR/$name.sh" \
    2>&1 >/dev/null | tee "$OUT_DIR/$name.log" >&2 || status=$?
  if ((status != 0)); then
    FAILED[$name]=$status
    warn "bench/$name.sh failed (exit $status); see $OUT_DIR/$name.log"
  fi
}
run_script engine SIZES_MIB="$FILE_MIB" RUNS="$RUNS" TOOLS="curl aria2c sluice-x1 sluice-x4" PROFILE="$PROFILE" \
  PROFILE_CURL=1 PROFILE_OUT="$OUT_DIR/engine-profile.txt" VERIFY=all TARGET_X1=$TARGET_X1 TARGET_X4=$TARGET_X4
run_script origin FILE_MIB="$FILE_MIB" DURATION="$ORIGIN_DURATION" WARMUP="$ORIGIN_WARMUP" CURL_RUNS="$CURL_RUNS" \
  THREADS=2 CONNECTIONS=64 PROFILE="$PROFILE" PROFILE_OUT="$OUT_DIR/origin-profile.txt" TARGET_REQS=$TARGET_REQS TARGET_MBS=$TARGET_MBS
run_script api-latency MODES="paced hammer" BIG_MIB="$BIG_MIB" CURL_RUNS="$CURL_RUNS" PACE_MS=20 \
  PACED_DURATION="$PACED_DURATION" HAMMER_THREADS=2 HAMMER_CONNECTIONS=16 HAMMER_DURATION="$HAMMER_DURATION" JOB_CONNECTIONS=4

# ---------------------------------------------------------------- the table
declare -A KV=()
for name in engine origin api-latency; do
  [[ -f $OUT_DIR/$name.kv ]] || continue
  while IFS=$'\t' read -r key value; do KV[$key]=$value; done <"$OUT_DIR/$name.kv"
done
kv() { echo "${KV[$1]:-}"; }
have() { [[ -n ${KV[$1]:-} ]]; }
met() { [[ $(meets "$@") == yes ]] && echo yes || echo "**no**"; }
SIZE=$(size_label "$FILE_MIB")
# row WORK PEER PEER_FIGURE SLUICE RATIO TARGET MET
row() { printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$@"; }
failed_row() { row "$1" "$2" "FAILED" "FAILED (bench/$3.sh, see $3.log)" "" "$4" "**no**"; }
skipped_row() { row "$1" "$2" "not run" "not run" "" "$3" ""; }
# status_of SCRIPT: ok, failed or skipped
status_of() {
  if [[ -n ${FAILED[$1]:-} ]]; then echo failed
  elif [[ " $ONLY " != *" $1 "* ]]; then echo skipped
  else echo ok; fi
}

TABLE="| work | peer | peer figure | Sluice | ratio | target | met? |
|---|---|---:|---:|---:|---:|---|"
add() { TABLE+=$'\n'"$1"; }

OVER=
[[ $TLS != 1 ]] || OVER=" over HTTPS"
w1="\`sluice get -x1\`, $SIZE to a file$OVER"
w2="\`sluice get -x4\`, $SIZE to a file$OVER"
case $(status_of engine) in
  ok)
    r=$(ratio "$(kv "engine.curl.$FILE_MIB.wall_s")" "$(kv "engine.sluice-x1.$FILE_MIB.wall_s")")
    add "$(row "$w1" "$(kv engine.curl.label) \`-o file\`" "$(kv "engine.curl.$FILE_MIB.mbs") MB/s" \
      "$(kv "engine.sluice-x1.$FILE_MIB.mbs") MB/s" "${r}x" ">= ${TARGET_X1}x" "$(met "$r" '>=' "$TARGET_X1")")"
    r=$(ratio "$(kv "engine.aria2c.$FILE_MIB.wall_s")" "$(kv "engine.sluice-x4.$FILE_MIB.wall_s")")
    add "$(row "$w2" "$(kv engine.aria2c.label)" "$(kv "engine.aria2c.$FILE_MIB.mbs") MB/s" \
      "$(kv "engine.sluice-x4.$FILE_MIB.mbs") MB/s" "${r}x" ">= ${TARGET_X4}x" "$(met "$r" '>=' "$TARGET_X4")")" ;;
  failed)
    add "$(failed_row "$w1" curl engine ">= ${TARGET_X1}x")"
    add "$(failed_row "$w2" "aria2c -x4 -k1M" engine ">= ${TARGET_X4}x")" ;;
  skipped)
    add "$(skipped_row "$w1" curl ">= ${TARGET_X1}x")"
    add "$(skipped_row "$w2" "aria2c -x4 -k1M" ">= ${TARGET_X4}x")" ;;
esac

w3="origin$OVER: random 64 KiB ranges, \`wrk -t2 -c64\`, \`/files/...\` (req/s)"
w4="origin$OVER: one $SIZE transfer, \`curl -o /dev/null\` (MB/s)"
NGINX_LABEL="nginx $(nginx_version)"
case $(status_of origin) in
  ok)
    r=$(ratio "$(kv origin.sluice.reqs)" "$(kv origin.nginx.reqs)")
    add "$(row "$w3" "$NGINX_LABEL" "$(kv origin.nginx.reqs) req/s" "$(kv origin.sluice.reqs) req/s" "${r}x" ">= ${TARGET_REQS}x" "$(met "$r" '>=' "$TARGET_REQS")")"
    r=$(ratio "$(kv origin.sluice.mbs)" "$(kv origin.nginx.mbs)")
    add "$(row "$w4" "$NGINX_LABEL" "$(kv origin.nginx.mbs) MB/s" "$(kv origin.sluice.mbs) MB/s" "${r}x" ">= ${TARGET_MBS}x" "$(met "$r" '>=' "$TARGET_MBS")")" ;;
  failed)
    add "$(failed_row "$w3" nginx origin ">= ${TARGET_REQS}x")"
    add "$(failed_row "$w4" nginx origin ">= ${TARGET_MBS}x")" ;;
  skipped)
    add "$(skipped_row "$w3" nginx ">= ${TARGET_REQS}x")"
    add "$(skipped_row "$w4" nginx ">= ${TARGET_MBS}x")" ;;
esac

w5="\`GET /jobs/ID\`, 1 keep-alive client every 20 ms for $PACED_DURATION, 3 jobs downloading: p99 (p50)"
w5b="the 3 jobs' aggregate throughput meanwhile"
w6="\`GET /jobs/ID\`, 16 clients (\`wrk -t2 -c16 -d$HAMMER_DURATION\`), 3 jobs downloading: p99 (p50)"
# (issue 19's table, TLS=1, has no API rows unless ONLY asks for them)
api_status=$(status_of api-latency)
[[ $TLS != 1 || $api_status != skipped ]] || api_status=none
case $api_status in
  ok)
    add "$(row "$w5" "" "" "$(kv api.paced.p99) ms ($(kv api.paced.p50) ms)" "" "p99 < 5 ms" "$(met "$(kv api.paced.p99)" '<' 5)")"
    note=
    [[ $(kv api.paced.running) == 3 ]] || note=" (only $(kv api.paced.running) of 3 jobs still running at the end: raise BIG_MIB)"
    r=$(ratio "$(kv api.paced.mbs)" "$(kv api.curl_alone.mbs)")
    add "$(row "$w5b$note" "curl \`-o file\` alone" "$(kv api.curl_alone.mbs) MB/s" "$(kv api.paced.mbs) MB/s" "${r}x" ">= 0.7x" "$(met "$r" '>=' 0.7)")"
    add "$(row "$w6" "" "" "$(kv api.hammer.p99) ms ($(kv api.hammer.p50) ms)" "" "p99 < 10 ms" "$(met "$(kv api.hammer.p99)" '<' 10)")" ;;
  failed)
    add "$(failed_row "$w5" "" api-latency "p99 < 5 ms")"
    add "$(failed_row "$w5b" "curl alone" api-latency ">= 0.7x")"
    add "$(failed_row "$w6" "" api-latency "p99 < 10 ms")" ;;
  skipped)
    add "$(skipped_row "$w5" "" "p99 < 5 ms")"
    add "$(skipped_row "$w5b" "curl alone" ">= 0.7x")"
    add "$(skipped_row "$w6" "" "p99 < 10 ms")" ;;
esac

# CPU: what each side spent (the 2 cores hold the client and the server).
CPU_TEXT=
if [[ $(status_of engine) == ok ]]; then
  CPU_TEXT+="- rows 1-2, CPU seconds for the $SIZE download (median of the runs; client user+sys from \`/usr/bin/time\`, nginx's workers from /proc meanwhile):"
  for tool in curl sluice-x1 aria2c sluice-x4; do
    CPU_TEXT+=" $(kv "engine.$tool.label") $(kv "engine.$tool.$FILE_MIB.cpu_s") s + nginx $(kv "engine.$tool.$FILE_MIB.nginx_cpu_s") s;"
  done
  CPU_TEXT="${CPU_TEXT%;}"$'\n'
  CPU_TEXT+="- rows 1-2, wall seconds of each run:"
  for tool in curl sluice-x1 aria2c sluice-x4; do CPU_TEXT+=" $tool $(kv "engine.$tool.$FILE_MIB.walls");"; done
  CPU_TEXT="${CPU_TEXT%;}"$'\n'
fi
if [[ $(status_of origin) == ok ]]; then
  CPU_TEXT+="- rows 3-4, server CPU: nginx $(kv origin.nginx.cpu_ms_per_kreq) ms per 1,000 ranges and $(kv origin.nginx.cpu_s_per_gib) s per GiB, Sluice $(kv origin.sluice.cpu_ms_per_kreq) ms and $(kv origin.sluice.cpu_s_per_gib) s; p50/p99 of the ranges nginx $(kv origin.nginx.p50_ms)/$(kv origin.nginx.p99_ms) ms, Sluice $(kv origin.sluice.p50_ms)/$(kv origin.sluice.p99_ms) ms; CPU taken by other processes meanwhile: nginx $(kv origin.nginx.other_pct), Sluice $(kv origin.sluice.other_pct)"$'\n'
  if have origin.nginx.tls; then
    CPU_TEXT+="- TLS negotiated (openssl s_client, as curl and wrk offer): nginx $(kv origin.nginx.tls), Sluice $(kv origin.sluice.tls)"$'\n'
  fi
fi

VERIFIED_ALL=0
for key in engine.verified origin.verified api.verified; do VERIFIED_ALL=$((VERIFIED_ALL + ${KV[$key]:-0})); done

COMMANDS=
cmd() {
  if have "$2"; then COMMANDS+="- $1: \`$(kv "$2")\`"$'\n'; fi
}
note() {
  if have "$2"; then COMMANDS+="  - $1$(kv "$2")"$'\n'; fi
}
cmd "row 1, curl" engine.curl.cmd
cmd "row 1, Sluice" engine.sluice-x1.cmd
cmd "row 2, aria2c" engine.aria2c.cmd
cmd "row 2, Sluice" engine.sluice-x4.cmd
if have engine.curl.cmd; then
  COMMANDS+="  - nginx serves a $SIZE random file; $RUNS run(s) per client, round-robin, median wall time under \`/usr/bin/time -v\`; the output deleted and \`sync\` after each run; each download's SHA-256 checked"$'\n'
fi
cmd "rows 3-4, Sluice" origin.cmd.sluice
cmd "row 3, nginx" origin.cmd.wrk.nginx
cmd "row 3, Sluice" origin.cmd.wrk.sluice
cmd "row 4, nginx" origin.cmd.curl.nginx
cmd "row 4, Sluice" origin.cmd.curl.sluice
note "" origin.note
cmd "rows 5-6, Sluice" api.cmd.serve
cmd "rows 5-6, each of the 3 jobs" api.cmd.jobs
cmd "row 5, the client" api.cmd.paced
cmd "row 5, curl alone" api.cmd.curl
cmd "row 6, the clients" api.cmd.hammer
note "" api.note

QUIET_TEXT=$({ cat "$OUT_DIR"/*.md 2>/dev/null || true; } | { grep -o 'NOT idle before [0-9]* measurement(s)' || true; } \
  | awk '{ n += $4 } END { print n + 0 }')
if ((QUIET_TEXT == 0)); then
  QUIET_TEXT="every measurement started on an idle machine (QUIET_WAIT=$QUIET_WAIT)"
else
  QUIET_TEXT="**$QUIET_TEXT measurement(s) started on a busy machine** (see the reports)"
fi

TLS_TEXT='' TLS_FILES_TEXT=''
if [[ $TLS == 1 ]]; then
  TLS_TEXT="$(tls_describe). "
  TLS_FILES_TEXT="; \$TMP/tls/ca.pem: the CA made for the run, \$TMP/tls/leaf.pem and leaf.key: the certificate and key both servers use"
fi
REPORT="## bench/table.sh${OVER:+ (TLS=1)}, $(machine_line)

Sluice: $SLUICE_TEXT. ${TLS_TEXT}Peers: $(curl --version | awk 'NR == 1 { print $1, $2 }'), aria2c $(aria2c --version | awk 'NR == 1 { print $3 }'), nginx $(nginx_version) ($NGINX_WORKERS workers, sendfile on, access_log off, keepalive_requests 1000000) on 127.0.0.1, wrk $(wrk_version), from Debian's packages. Everything shares the $NCPU cores; files in the page cache, downloads written to $(findmnt -no FSTYPE -T "${TMPDIR:-/var/tmp}") on $(df --output=source "${TMPDIR:-/var/tmp}" | tail -1). $VERIFIED_ALL downloads verified by SHA-256, none wrong$( ((${#FAILED[@]} == 0)) || echo " in the scripts that finished; **FAILED: ${!FAILED[*]}**"). Quiet check: $QUIET_TEXT. Took $(((SECONDS - STARTED) / 60)) min $(((SECONDS - STARTED) % 60)) s.

$TABLE

${CPU_TEXT:+$CPU_TEXT
}Commands (PORT: a free loopback port; \$TMP: the script's temp dir on disk$TLS_FILES_TEXT):
$COMMANDS
Full reports: $(for name in $ONLY; do printf '%s ' "$OUT_DIR/$name.md"; done | sed 's/ $//')."
echo "$REPORT" >"$OUT_DIR/table.md"
emit_report "$REPORT"
((${#FAILED[@]} == 0)) || die "failed: ${!FAILED[*]} (see the logs in $OUT_DIR)"
