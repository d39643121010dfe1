#!/usr/bin/env bash
# Store stall (issue 20): a `sluice serve` node whose PostgreSQL freezes (the postmaster and
# every backend stopped with SIGSTOP, as a failover or a partition looks from the node) while
# 3 downloads run. Issue 20's targets, while the store is frozen: `GET /jobs/ID` p99 < 100 ms,
# a create and a pause answered within 3 s; once it thaws, 3 of 3 downloads completed with the
# right SHA-256.
#
#   bench/store-stall.sh
#   FREEZE=30 bench/store-stall.sh       a longer freeze
#
# One run:
#   1. a throwaway PostgreSQL 15 (scripts/postgres.sh install, then start in the temp dir;
#      stopped at exit);
#   2. the origin: a second `sluice serve` (the same binary, its own data dir) serving
#      /testdata/FILE_BYTES?seed=N&rate=RATE (deterministic bytes, RATE bytes per second per
#      response). The expected SHA-256 of each file is taken first from one unthrottled curl
#      of the same URL without the rate;
#   3. the node: `sluice serve --store POSTGRES_URL --node-name bench` (default lease, 15 s, so
#      a 20 s freeze outlasts the node's claims); 3 jobs POSTed ({"url", "connections"}), and
#      the freeze starts once all 3 are running. With the defaults each job takes about 32 s
#      (2 connections x 750,000 B/s for 48,000,000 bytes), so it runs before, during and after
#      the freeze;
#   4. the freeze: kill -STOP the postmaster (first line of DATA/postmaster.pid), then every
#      process whose parent it is (pgrep -P). For FREEZE seconds, from t = 0 (the freeze):
#        - GET /jobs/ID every READ_INTERVAL (0.05 s) after the previous answer, rotating over
#          the 3 jobs (curl -w time_total, one process a request, no keep-alive; timeout 30 s);
#        - GET /healthz every 0.5 s (kept up until the downloads are done, to see it recover);
#        - t = 3 s: POST /jobs (a new 1000-byte job); t = 4 s: POST /jobs/ID/pause on job 2;
#        - t = 6 s: GET /jobs and GET /queue, once each;
#        - t = 0.6 x FREEZE (12 s), and not before /healthz has answered 503: another POST /jobs
#          and POST /jobs/ID/pause on job 3 (the store is then known down).
#      Every command has its own curl (timeout 60 s), started on time whatever the others do.
#      A command that succeeded anyway (a pause answered 2xx) is undone after the thaw (the
#      job is resumed), so that its download can still complete.
#   5. kill -CONT everything; then up to COMPLETE_TIMEOUT seconds for the 3 jobs to complete.
#      Each job's `sha256` must be the expected one, and so must the file on disk. A failed
#      job is reported with its error, and the node's log tail is printed.
# Prints a markdown table. Exits 1 when a download failed, did not complete or has the wrong
# SHA-256 (after printing the report); a slow answer is reported as a miss, not an error.
#
# Environment (all optional; see also bench/lib.sh):
#   SLUICE_BIN=PATH     binary to benchmark, both node and origin (default
#                       .build-release/release/sluice, built first unless SKIP_BUILD=1)
#   FREEZE=20           seconds PostgreSQL stays frozen (at least 10)
#   FILE_BYTES=48000000 size of each download      SEEDS="41 42 43"  their /testdata seeds
#   RATE=750000         the origin's pace per response, bytes/s (a job's 2 connections: 1.5 MB/s)
#   CONNECTIONS=2       Range connections per job
#   READ_INTERVAL=0.05  pause between two GET /jobs/ID during the freeze
#   COMPLETE_TIMEOUT=120  seconds after the thaw for the 3 jobs to complete
#   NODE_ARGS="..."     more `sluice serve` arguments for the node, e.g. "--lease 30s"
#   QUIET_WAIT=300      before the run, wait up to this many seconds for an idle machine
#   OUT=FILE            also write the markdown results to FILE
#   KEEP_TMP=1          keep the temp dir      TMPDIR=DIR  where it goes (default /var/tmp)
set -euo pipefail

BENCH_NAME=store-stall
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

FREEZE=${FREEZE:-20}
FILE_BYTES=${FILE_BYTES:-48000000}
SEEDS=${SEEDS:-41 42 43}
RATE=${RATE:-750000}
CONNECTIONS=${CONNECTIONS:-2}
READ_INTERVAL=${READ_INTERVAL:-0.05}
COMPLETE_TIMEOUT=${COMPLETE_TIMEOUT:-120}
read -ra NODE_EXTRA <<<"${NODE_ARGS:-}"
read -ra SEED_LIST <<<"$SEEDS"

require_tools curl jq pgrep
[[ $TLS == 0 ]] || die "store-stall.sh runs over plain HTTP only (unset TLS)"
if ! [[ $FREEZE =~ ^[0-9]+$ ]] || ((FREEZE < 10)); then
  die "FREEZE must be a whole number of seconds, at least 10 (got $FREEZE)"
fi
((${#SEED_LIST[@]} == 3)) || die "SEEDS must name 3 seeds (got: $SEEDS)"
resolve_sluice
log "sluice: $(sluice_describe)"
bench_tmp

# ================================================================ PostgreSQL
PG_SCRIPT=$REPO/scripts/postgres.sh
PG_DIR=$TMP/pg
PG_FROZEN=()
thaw_postgres() {
  ((${#PG_FROZEN[@]} > 0)) || return 0
  kill -CONT "${PG_FROZEN[@]}" 2>/dev/null || true
  PG_FROZEN=()
}
# At exit: the node first (so that it does not wait on a store going away), then PostgreSQL,
# thawed first if the run stopped during the freeze.
stop_node_and_postgres() {
  thaw_postgres
  stop_sluice
  "$PG_SCRIPT" stop "$PG_DIR" || warn "scripts/postgres.sh stop $PG_DIR failed"
}
log "PostgreSQL: scripts/postgres.sh install"
"$PG_SCRIPT" install
BENCH_EXIT_HOOKS+=(stop_node_and_postgres)
PG_URL=$("$PG_SCRIPT" start "$PG_DIR")
PG_VERSION=$(/usr/lib/postgresql/15/bin/postgres --version | awk '{ print $3 }')
log "PostgreSQL $PG_VERSION on $PG_URL (cluster in $PG_DIR)"

# ================================================================ origin and node
start_sluice "$TMP/origin"
ORIGIN_URL=$SLUICE_URL ORIGIN_PID=$SLUICE_PID
BENCH_PIDS+=("$ORIGIN_PID")
SLUICE_PID= # the origin is stopped from BENCH_PIDS; SLUICE_* are the node's from here on

declare -A EXPECTED=() # seed -> SHA-256
for seed in "${SEED_LIST[@]}"; do
  EXPECTED[$seed]=$(curl -sf "$ORIGIN_URL/testdata/$FILE_BYTES?seed=$seed" | sha256sum | cut -d' ' -f1)
  [[ ${EXPECTED[$seed]} =~ ^[0-9a-f]{64}$ ]] || die "could not fetch /testdata/$FILE_BYTES?seed=$seed from the origin"
done
log "origin pid $ORIGIN_PID on $ORIGIN_URL; expected SHA-256 of the 3 files taken with curl"

NODE_DATA=$TMP/node
start_sluice "$NODE_DATA" --store "$PG_URL" --node-name bench "${NODE_EXTRA[@]}"
NODE_URL=$SLUICE_URL

wait_for_quiet "the run"
IDS=()
declare -A SEED_OF=() # job id -> seed
for seed in "${SEED_LIST[@]}"; do
  id=$(post_job "{\"url\":\"$ORIGIN_URL/testdata/$FILE_BYTES?seed=$seed&rate=$RATE\",\"connections\":$CONNECTIONS}")
  IDS+=("$id")
  SEED_OF[$id]=$seed
done
log "3 jobs: ${IDS[*]}; waiting until all are running"
deadline=$((SECONDS + 30))
while true; do
  running=0
  for id in "${IDS[@]}"; do
    [[ $(job_json "$id" | jq -r .state) == running ]] && running=$((running + 1))
  done
  ((running == 3)) && break
  ((SECONDS < deadline)) || die "only $running of the 3 jobs running after 30 s"
  sleep 0.2
done
# bytesDone of the 3 jobs together; empty when the node did not answer within 5 s.
bytes_done_sum() {
  curl -s --max-time 5 "$NODE_URL/jobs?limit=1000" \
    | jq -r --arg ids "${IDS[*]}" '($ids | split(" ")) as $ids | [.jobs[] | select(.id as $i | $ids | index($i)) | .bytesDone] | add // empty' 2>/dev/null || true
}

# ================================================================ the freeze
sleep 1 # bytes moving on every connection
PG_POSTMASTER=$(head -1 "$PG_DIR/data/postmaster.pid")
BYTES_AT_FREEZE=$(bytes_done_sum)
# The postmaster first (it forks no new backend then), then its children as they are.
kill -STOP "$PG_POSTMASTER"
PG_FROZEN=("$PG_POSTMASTER")
T0=$(now_ms)
mapfile -t PG_CHILDREN < <(pgrep -P "$PG_POSTMASTER")
kill -STOP "${PG_CHILDREN[@]}"
PG_FROZEN+=("${PG_CHILDREN[@]}")
log "froze PostgreSQL: postmaster $PG_POSTMASTER and ${#PG_CHILDREN[@]} children, for ${FREEZE}s"
FREEZE_MS=$((FREEZE * 1000))
LATE_MS=$((FREEZE * 600))

# sleep_until MS: sleeps until MS milliseconds after the freeze began.
sleep_until() {
  local wait=$((T0 + $1 - $(now_ms)))
  if ((wait > 0)); then sleep "$(awk -v ms="$wait" 'BEGIN { printf "%.3f", ms / 1000 }')"; fi
}
# GET /jobs/ID, rotating over the 3 jobs, until the thaw: "T_MS CODE SECONDS" lines.
read_loop() {
  local i=0 line at
  while (($(now_ms) < T0 + FREEZE_MS)); do
    at=$(($(now_ms) - T0))
    line=$(curl -s -o /dev/null --max-time 30 -w '%{http_code} %{time_total}' "$NODE_URL/jobs/${IDS[i % 3]}" || true)
    echo "$at $line" >>"$TMP/reads.txt"
    i=$((i + 1))
    sleep "$READ_INTERVAL"
  done
}
# GET /healthz every 0.5 s until $TMP/health.stop exists: "T_MS CODE" lines.
health_loop() {
  local code at
  while [[ ! -e $TMP/health.stop ]]; do
    at=$(($(now_ms) - T0))
    code=$(curl -s -o /dev/null --max-time 5 -w '%{http_code}' "$NODE_URL/healthz" || true)
    echo "$at $code" >>"$TMP/health.txt"
    sleep 0.5
  done
}
degraded_seen() { awk '$2 == 503 { found = 1 } END { exit !found }' "$TMP/health.txt" 2>/dev/null; }
# timed NAME METHOD PATH [BODY]: one request; appends "NAME T_MS CODE SECONDS ERROR_CODE" to
# $TMP/commands.txt, the answer's body in $TMP/NAME.body.
timed() {
  local name=$1 method=$2 path=$3 body=${4:-} at out error args
  args=(-s -o "$TMP/$name.body" --max-time 60 -w '%{http_code} %{time_total}' -X "$method")
  [[ -z $body ]] || args+=(-H 'Content-Type: application/json' -d "$body")
  at=$(($(now_ms) - T0))
  out=$(curl "${args[@]}" "$NODE_URL$path" || true)
  error=$(jq -r '.error.code? // empty' "$TMP/$name.body" 2>/dev/null || true)
  echo "$name $at $out ${error:--}" >>"$TMP/commands.txt"
}
SMALL_JOB="{\"url\":\"$ORIGIN_URL/testdata/1000?seed=7\"}"
FREEZE_PIDS=()
read_loop &
FREEZE_PIDS+=($!)
health_loop &
HEALTH_PID=$!
BENCH_PIDS+=("$HEALTH_PID")
{ sleep_until 3000; timed create1 POST /jobs "$SMALL_JOB"; } &
FREEZE_PIDS+=($!)
{ sleep_until 4000; timed pause1 POST "/jobs/${IDS[1]}/pause"; } &
FREEZE_PIDS+=($!)
{ sleep_until 6000; timed list GET "/jobs"; } &
FREEZE_PIDS+=($!)
{ sleep_until 6000; timed queue GET /queue; } &
FREEZE_PIDS+=($!)
{
  sleep_until "$LATE_MS"
  # Not before the node knows the store is down (it says so within about 8 s), and not later
  # than 2 s before the thaw.
  while ! degraded_seen && (($(now_ms) < T0 + FREEZE_MS - 2000)); do sleep 0.1; done
  timed create2 POST /jobs "$SMALL_JOB"
  timed pause2 POST "/jobs/${IDS[2]}/pause"
} &
FREEZE_PIDS+=($!)
BENCH_PIDS+=("${FREEZE_PIDS[@]}")

sleep_until $((FREEZE_MS - 500))
BYTES_BEFORE_THAW=$(bytes_done_sum)
BYTES_BEFORE_THAW_MS=$(($(now_ms) - T0))
sleep_until "$FREEZE_MS"
check_alive "sluice serve (node)" "$SLUICE_PID"
thaw_postgres
THAW=$(now_ms)
log "thawed PostgreSQL at t=$(((THAW - T0) / 1000)).$(((THAW - T0) % 1000 / 100)) s; waiting for the freeze's requests"
for pid in "${FREEZE_PIDS[@]}"; do wait "$pid" || true; done

# Undo a command that went through anyway, so that its download can complete.
UNDONE=()
for name in pause1 pause2; do
  read -r _ _ code _ _ < <(grep "^$name " "$TMP/commands.txt" || echo "$name - 000 0 -")
  if [[ $code == 2?? ]]; then
    id=${IDS[1]}
    [[ $name == pause1 ]] || id=${IDS[2]}
    warn "$name was answered $code during the freeze: resuming job $id"
    curl -s -o /dev/null -X POST "$NODE_URL/jobs/$id/resume" || true
    UNDONE+=("$name ($code)")
  fi
done

# ================================================================ after the thaw
declare -A FINAL=() DONE_AFTER=() STATES=() JOB_JSON=()
deadline=$((SECONDS + COMPLETE_TIMEOUT))
while true; do
  pending=0
  for id in "${IDS[@]}"; do
    [[ -z ${FINAL[$id]:-} ]] || continue
    j=$(curl -s --max-time 5 "$NODE_URL/jobs/$id" || true)
    state=$(jq -r '.state // empty' <<<"$j" 2>/dev/null || true)
    # The sequence of states seen, e.g. "running queued running completed".
    [[ -z $state || ${STATES[$id]:-} == *"$state" ]] || STATES[$id]="${STATES[$id]:+${STATES[$id]} }$state"
    case $state in
    completed | failed)
      FINAL[$id]=$state JOB_JSON[$id]=$j DONE_AFTER[$id]=$(($(now_ms) - THAW))
      log "job $id $state $(awk -v ms="${DONE_AFTER[$id]}" 'BEGIN { printf "%.1f", ms / 1000 }') s after the thaw"
      ;;
    *) pending=$((pending + 1)) JOB_JSON[$id]=$j ;;
    esac
  done
  ((pending == 0)) && break
  if ((SECONDS >= deadline)); then
    warn "$pending job(s) not done ${COMPLETE_TIMEOUT}s after the thaw"
    break
  fi
  sleep 0.2
done
# /healthz once more after the jobs are done, then stop polling it.
sleep 1
touch "$TMP/health.stop"
wait "$HEALTH_PID" || true

# ================================================================ figures
ms() { awk -v s="$1" 'BEGIN { printf "%.1f", s * 1000 }'; }
secs() { awk -v ms="$1" 'BEGIN { printf "%.1f", ms / 1000 }'; }
# percentile P: nearest rank, of numbers on stdin.
percentile() {
  sort -g | awk -v p="$1" '{ v[NR] = $1 } END {
    if (NR == 0) { print "nan"; exit }
    r = p / 100 * NR; i = int(r); if (i < r) i++; if (i < 1) i = 1
    print v[i] }'
}
READ_N=$(wc -l <"$TMP/reads.txt")
READ_BAD=$(awk '$2 != 200' "$TMP/reads.txt" | wc -l)
READ_P50=$(ms "$(awk '{ print $3 }' "$TMP/reads.txt" | percentile 50)")
READ_P99=$(ms "$(awk '{ print $3 }' "$TMP/reads.txt" | percentile 99)")
READ_MAX=$(ms "$(awk '{ print $3 }' "$TMP/reads.txt" | maximum)")
# The reads that took 100 ms or more: "t=3.0 s: 1977 ms" (at most 5, slowest first).
SLOW_N=$(awk '$3 >= 0.1' "$TMP/reads.txt" | wc -l)
SLOW_READS=$(awk '$3 >= 0.1' "$TMP/reads.txt" | sort -k3,3gr | head -5 \
  | awk '{ printf "%st=%.1f s: %.0f ms (%s)", sep, $1 / 1000, $3 * 1000, $2; sep = ", " }')
log "GET /jobs/ID during the freeze: $READ_N requests ($READ_BAD not 200), p50 $READ_P50 ms, p99 $READ_P99 ms, max $READ_MAX ms; $SLOW_N took 100 ms or more${SLOW_READS:+: $SLOW_READS}"

declare -A C_AT=() C_CODE=() C_TIME=() C_ERR=()
while read -r name at code seconds error; do
  C_AT[$name]=$at C_CODE[$name]=$code C_TIME[$name]=$seconds C_ERR[$name]=$error
done <"$TMP/commands.txt"
LIST_JOBS=$(jq -r '.jobs | length' "$TMP/list.body" 2>/dev/null || echo "?")
# "503 store_unavailable in 2.01 s" (the answer of one command)
answer() {
  local name=$1
  [[ -n ${C_CODE[$name]:-} ]] || { echo "no answer recorded"; return; }
  if [[ ${C_CODE[$name]} == 000 ]]; then
    printf 'no answer (curl gave up after %.2f s)' "${C_TIME[$name]}"
  else
    printf '%s%s in %s' "${C_CODE[$name]}" "$([[ ${C_ERR[$name]} == - ]] || echo " ${C_ERR[$name]}")" \
      "$(awk -v s="${C_TIME[$name]}" 'BEGIN { if (s >= 1) printf "%.2f s", s; else printf "%.1f ms", s * 1000 }')"
  fi
}
answered_within() { # NAME SECONDS -> yes/no
  [[ -n ${C_CODE[$1]:-} && ${C_CODE[$1]} != 000 ]] || { echo no; return; }
  meets "${C_TIME[$1]}" '<' "$2"
}
for name in create1 pause1 list queue create2 pause2; do
  log "$name at t=$(secs "${C_AT[$name]:-0}") s: $(answer "$name")"
done

DEGRADED_MS=$(awk '$2 == 503 { print $1; exit }' "$TMP/health.txt")
HEALTH_CODES=$(awk -v f="$FREEZE_MS" '$1 < f { print $2 }' "$TMP/health.txt" | sort | uniq -c | awk '{ printf "%s%s x %s", sep, $1, $2; sep = ", " }')
OK_AGAIN_MS=$(awk -v t="$((THAW - T0))" '$1 >= t && $2 == 200 { print $1 - t; exit }' "$TMP/health.txt")
if [[ -n $DEGRADED_MS ]]; then
  DEGRADED="503 (degraded) first at t=$(secs "$DEGRADED_MS") s"
else
  DEGRADED="never 503 during the freeze"
fi
if [[ -n $OK_AGAIN_MS ]]; then
  DEGRADED+="; 200 again $(secs "$OK_AGAIN_MS") s after the thaw"
else
  DEGRADED+="; not 200 again after the thaw"
fi
log "/healthz: $DEGRADED (during the freeze: $HEALTH_CODES)"

MOVED="not measured (the node did not answer GET /jobs)"
if [[ -n $BYTES_AT_FREEZE && -n $BYTES_BEFORE_THAW ]]; then
  MOVED=$(awk -v a="$BYTES_AT_FREEZE" -v b="$BYTES_BEFORE_THAW" -v ms="$BYTES_BEFORE_THAW_MS" \
    'BEGIN { printf "%.1f MB in the first %.1f s (%.2f MB/s for the 3 jobs)", (b - a) / 1e6, ms / 1000, (b - a) / 1e6 / (ms / 1000) }')
fi
log "downloads during the freeze: $MOVED"

COMPLETED=0 RIGHT=0 LAST_DONE_MS=0 PROBLEMS=()
for id in "${IDS[@]}"; do
  j=${JOB_JSON[$id]:-}
  seed=${SEED_OF[$id]}
  log "job $id (seed $seed): states seen after the thaw: ${STATES[$id]:-none}"
  case ${FINAL[$id]:-} in
  completed)
    COMPLETED=$((COMPLETED + 1))
    ((DONE_AFTER[$id] > LAST_DONE_MS)) && LAST_DONE_MS=${DONE_AFTER[$id]}
    sha=$(jq -r '.sha256 // empty' <<<"$j")
    path=$(jq -r '.path // empty' <<<"$j")
    disk=
    [[ -z $path || ! -f $NODE_DATA/documents/$path ]] || disk=$(sha256_of "$NODE_DATA/documents/$path")
    if [[ $sha == "${EXPECTED[$seed]}" && $disk == "${EXPECTED[$seed]}" ]]; then
      RIGHT=$((RIGHT + 1))
    else
      PROBLEMS+=("job $id: sha256 field ${sha:-none}, file on disk ${disk:-missing} (${path:-no path}), expected ${EXPECTED[$seed]}")
    fi
    ;;
  failed) PROBLEMS+=("job $id failed: $(jq -c .error <<<"$j")") ;;
  *) PROBLEMS+=("job $id not done ${COMPLETE_TIMEOUT}s after the thaw: state ${STATES[$id]##* }, $(jq -c '{bytesDone, error}' <<<"$j" 2>/dev/null || echo "no answer")") ;;
  esac
done
for problem in "${PROBLEMS[@]}"; do warn "$problem"; done
SHA_OK=no
((RIGHT == 3)) && SHA_OK=yes
LAST_DONE="n/a"
((COMPLETED == 0)) || LAST_DONE="$(secs "$LAST_DONE_MS") s"
((COMPLETED == 3)) || LAST_DONE+=" (only $COMPLETED completed)"

if ((${#PROBLEMS[@]} > 0)) || [[ $(meets "$READ_P99" '<' 100) == no ]]; then
  log "the node's log, last 40 lines:"
  tail -n 40 "$SLUICE_LOG.err" "$SLUICE_LOG.out" >&2 || true
fi

# ---------------------------------------------------------------- report
yesno() { [[ $1 == yes ]] && echo pass || echo "**miss**"; }
result store_stall.read_p99_ms "$READ_P99"
result store_stall.read_max_ms "$READ_MAX"
result store_stall.create_s "${C_TIME[create1]:-}"
result store_stall.pause_s "${C_TIME[pause1]:-}"
result store_stall.completed "$COMPLETED"
result store_stall.sha256_right "$RIGHT"
NOTES=
((${#UNDONE[@]} == 0)) || NOTES+=" Answered 2xx during the freeze and undone after it (job resumed): ${UNDONE[*]}."
((${#PROBLEMS[@]} == 0)) || NOTES+=" Problems: $(printf '%s; ' "${PROBLEMS[@]}" | sed 's/; $//')."
emit_report "$(machine_line), data dirs on $TMP_FSTYPE; sluice: $(sluice_describe). Node: \`sluice serve --store postgres://… --node-name bench${NODE_EXTRA[*]:+ ${NODE_EXTRA[*]}}\` (lease: the default 15 s unless given there; log level info) on PostgreSQL $PG_VERSION (scripts/postgres.sh: fsync off, 127.0.0.1). Origin: a second \`sluice serve\`, /testdata/$FILE_BYTES?seed=N&rate=$RATE (per response); 3 jobs with $CONNECTIONS connections each, all running when PostgreSQL was frozen (kill -STOP of the postmaster and its ${#PG_CHILDREN[@]} children) for **${FREEZE} s**. Times are curl's time_total (a new connection per request); t counts from the freeze. Quiet check: $(quiet_summary).${NOTES}

| during the ${FREEZE} s freeze | result | target | |
|---|---:|---:|---|
| GET /jobs/ID, one every ${READ_INTERVAL} s after the previous answer: $READ_N requests, $READ_BAD not 200; p50 / **p99** / max | $READ_P50 / **$READ_P99** / $READ_MAX ms | p99 < 100 ms | $(yesno "$(meets "$READ_P99" '<' 100)") |
| GET /jobs/ID answers of 100 ms or more | ${SLOW_N}${SLOW_READS:+: $SLOW_READS} | | |
| GET /jobs ($LIST_JOBS jobs) at t=$(secs "${C_AT[list]:-0}") s | $(answer list) | | |
| GET /queue at t=$(secs "${C_AT[queue]:-0}") s | $(answer queue) | | |
| POST /jobs (new job) at t=$(secs "${C_AT[create1]:-0}") s | $(answer create1) | < 3 s | $(yesno "$(answered_within create1 3)") |
| POST /jobs/ID/pause (job 2) at t=$(secs "${C_AT[pause1]:-0}") s | $(answer pause1) | < 3 s | $(yesno "$(answered_within pause1 3)") |
| POST /jobs (new job) at t=$(secs "${C_AT[create2]:-0}") s, after /healthz said degraded | $(answer create2) | < 3 s | $(yesno "$(answered_within create2 3)") |
| POST /jobs/ID/pause (job 3) at t=$(secs "${C_AT[pause2]:-0}") s | $(answer pause2) | < 3 s | $(yesno "$(answered_within pause2 3)") |
| GET /healthz every 0.5 s ($HEALTH_CODES during the freeze) | $DEGRADED | | |
| downloads' bytesDone during the freeze | $MOVED | | |
| **after the thaw** | | | |
| downloads completed, SHA-256 right (job's \`sha256\` and the file on disk) | $COMPLETED/3 completed, SHA-256 match: $SHA_OK | 3/3 right | $(yesno "$([[ $RIGHT == 3 ]] && echo yes || echo no)") |
| thaw to the last completion | $LAST_DONE | | |"

((RIGHT == 3)) || die "${#PROBLEMS[@]} download problem(s): $(printf '%s; ' "${PROBLEMS[@]}" | sed 's/; $//')"
