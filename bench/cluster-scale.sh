#!/usr/bin/env bash
# Cluster-node scale benchmark (issue 20, "200,000 jobs", point 3 for a cluster node): what a
# `sluice serve --store postgres://…` node costs with JOBS finished jobs in its store.
#
#   bench/cluster-scale.sh
#   SLUICE_BIN="/work/bench-bin/sluice-8bc4868 /work/bench-bin/sluice-d2de816" JOBS=200000 \
#     OUT=/tmp/cluster-scale.md bench/cluster-scale.sh
#
# SLUICE_BIN may name several binaries (separated by spaces): they are compared side by side,
# their runs interleaved (REPS rounds; each round runs every binary once, the order reversed
# every other round), so that the machine's noise falls on all of them alike.
#
# Setup, once per run of the script:
#   - a throwaway PostgreSQL 15 (scripts/postgres.sh install, then start in a temp dir under
#     /tmp; stopped and removed at exit); one fresh database per binary (sluice_bench_1, …,
#     made by the `sluice` role, which has CREATEDB);
#   - each binary starts once on its empty database (`sluice serve --store URL --node-name
#     bench`, port 0) and is stopped when it has printed its listening line: its migrations
#     made the schema (a binary with the job_count table, migration 4, has its triggers in
#     place before the fill, so they count the rows);
#   - the job table is then filled with SQL (INSERT … SELECT FROM generate_series,
#     FILL_BATCH rows a statement, each its own transaction): JOBS finished jobs, every
#     FAILED_EVERY-th row 'failed' (error_code http_status), the others 'completed' (sha256,
#     path, completed_at), and PAUSED 'paused' jobs spread evenly among them (URL
#     http://127.0.0.1:9/p<N>: a paused job is never fetched). Then VACUUM ANALYZE. Where
#     job_count exists, its sums by state must equal the table's counts (the run stops
#     otherwise). Then 3 s, so that the fill is older than the 2 s a node's change feed
#     reads again (else its rows would come through /events as changes).
# Each run (one binary, one round) measures:
#   (1) start: from the exec (a python3 client reads the log for the listening line every
#       2 ms, then asks GET /jobs?limit=100 on one connection, a new one after a refusal)
#       to the first 200 answer with 100 jobs; and from the exec until GET /queue (asked
#       every 10 ms) shows completed, failed and paused counts equal to the table's
#       (COUNTS_TIMEOUT=120 s at most: a run where they never match says so); the service's
#       CPU time (user + system) at the first 200;
#   (2) VmRSS and VmHWM of the service (/proc/PID/status) right after (1), and again at the
#       end of the run (after (3) and (4));
#   (3) one python3 http.client keep-alive connection, 5 warm-up requests then REQUESTS=50
#       timed ones of each of GET /queue, GET /jobs?state=completed&limit=100, GET
#       /jobs?limit=100, GET /jobs?state=paused&limit=100: median and max in ms, from
#       sending the request to the last byte of the answer (each answer must be 200; the
#       lists must hold 100 jobs, of the state asked for);
#   (4) GET /events: the bytes curl reads in EVENTS_SECONDS=3 s (curl -sN --max-time), i.e.
#       the initial snapshot (nothing changes meanwhile), and its frames by event name;
#   (5) GET /queue's counts (after (3)) against SELECT state, count(*) FROM job GROUP BY
#       state: completed, failed and paused must be equal (a mismatch is reported, not fatal);
#   then SIGTERM, and the time to the exit.
# Prints a markdown table: the median of the REPS runs of each figure per binary (for a
# "max", the median of the runs' maxima), then every run's figures.
#
# Environment (all optional; see also bench/lib.sh):
#   SLUICE_BIN=PATH...  binary or binaries to benchmark (default .build-release/release/sluice,
#                       built first unless SKIP_BUILD=1)
#   JOBS=200000         finished jobs in the store (completed and failed)
#   FAILED_EVERY=20     every this-many-th row is failed (about 5% of the finished jobs)
#   PAUSED=1000         paused jobs besides them
#   FILL_BATCH=1000     rows inserted per statement (transaction) by the fill
#   REPS=3              rounds (runs of each binary)
#   REQUESTS=50         timed requests of each kind in (3)
#   EVENTS_SECONDS=3    how long (4) reads /events
#   READY_TIMEOUT=300   seconds a start may take before the run fails
#   COUNTS_TIMEOUT=120  seconds (1) waits for GET /queue's counts to match the table
#   NODE_ARGS="..."     more `sluice serve` arguments for the node
#   QUIET_WAIT=300      before each run, wait up to this many seconds for an idle machine
#   OUT=FILE            also write the markdown results to FILE
#   KEEP_TMP=1          keep the temp dirs (the PostgreSQL cluster is stopped all the same)
#   TMPDIR=DIR          where the data dirs go (default /var/tmp)
set -euo pipefail

BENCH_NAME=cluster-scale
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

JOBS=${JOBS:-200000}
FAILED_EVERY=${FAILED_EVERY:-20}
PAUSED=${PAUSED:-1000}
REPS=${REPS:-3}
REQUESTS=${REQUESTS:-50}
EVENTS_SECONDS=${EVENTS_SECONDS:-3}
READY_TIMEOUT=${READY_TIMEOUT:-300}
FILL_BATCH=${FILL_BATCH:-1000}
COUNTS_TIMEOUT=${COUNTS_TIMEOUT:-120}
read -ra NODE_EXTRA <<<"${NODE_ARGS:-}"

for v in JOBS FAILED_EVERY PAUSED FILL_BATCH REPS REQUESTS EVENTS_SECONDS READY_TIMEOUT COUNTS_TIMEOUT; do
  [[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a whole number (got ${!v})"
done
((JOBS >= 100 && PAUSED >= 100 && REPS >= 1 && FAILED_EVERY >= 2 && FILL_BATCH >= 1)) \
  || die "JOBS and PAUSED must be at least 100 (the lists ask for 100), REPS at least 1, FAILED_EVERY at least 2"
require_tools curl python3 psql
[[ $TLS == 0 ]] || die "cluster-scale.sh runs over plain HTTP only (unset TLS)"

# ---------------------------------------------------------------- the binaries
read -ra BIN_ARGS <<<"$SLUICE_BIN"
((${#BIN_ARGS[@]} > 0)) || die "SLUICE_BIN is empty"
BINS=() LABELS=()
for bin in "${BIN_ARGS[@]}"; do
  SLUICE_BIN=$bin
  resolve_sluice
  BINS+=("$SLUICE_BIN")
  LABELS+=("$(sluice_commit)")
  log "binary $((${#BINS[@]})): $(sluice_describe)"
done
NB=${#BINS[@]}
bench_tmp
PY=$TMP/cluster-scale.py

# ---------------------------------------------------------------- PostgreSQL
PG_SCRIPT=$REPO/scripts/postgres.sh
PG_DIR=
stop_node_and_postgres() {
  stop_sluice
  [[ -n $PG_DIR ]] || return 0
  "$PG_SCRIPT" stop "$PG_DIR" || warn "scripts/postgres.sh stop $PG_DIR failed"
  if [[ ${KEEP_TMP:-0} == 1 ]]; then log "kept $PG_DIR (stopped)"; else rm -rf "$PG_DIR"; fi
}
log "PostgreSQL: scripts/postgres.sh install"
"$PG_SCRIPT" install
PG_DIR=$(mktemp -d /tmp/sluice-pg-XXXXXX)
BENCH_EXIT_HOOKS+=(stop_node_and_postgres)
PG_URL=$("$PG_SCRIPT" start "$PG_DIR")
PG_VERSION=$(/usr/lib/postgresql/15/bin/postgres --version | awk '{ print $3 }')
log "PostgreSQL $PG_VERSION on $PG_URL (cluster in $PG_DIR)"
# sql URL SQL...: runs the statements, prints unaligned tuples (fields separated by spaces).
sql() {
  local url=$1
  shift
  psql "$url" -X -q -At -F ' ' -v ON_ERROR_STOP=1 "$@"
}

# ---------------------------------------------------------------- the python3 client
cat >"$PY" <<'EOF'
import http.client, json, re, statistics, sys, time

def connect(url):
    host, port = re.match(r"https?://([^:/]+):(\d+)", url).groups()
    return http.client.HTTPConnection(host, int(port), timeout=120)

def get(conn, path):
    t0 = time.perf_counter()
    conn.request("GET", path)
    answer = conn.getresponse()
    data = answer.read()
    return (time.perf_counter() - t0) * 1000, answer.status, data

def expected_counts(text):
    return {k: int(v) for k, v in (kv.split(":") for kv in text.split(","))}

def counts_of(data):
    counts = json.loads(data)["counts"]
    return counts

def counts_text(counts):
    return ",".join(f"{s}:{counts.get(s, 0)}" for s in ("queued", "running", "paused", "completed", "failed"))

def ready(log, t0_ns, timeout, counts_timeout, expect):
    """After an exec at t0_ns (CLOCK_REALTIME ns): the listening line in log, then GET
    /jobs?limit=100 until a 200 with 100 jobs, then GET /queue until the counts match."""
    expect = expected_counts(expect)
    deadline = time.time() + timeout
    url = None
    while url is None:
        try:
            with open(log) as f:
                m = re.search(r"^Sluice listening on (\S+)", f.read(), re.M)
                url = m and m.group(1).rstrip("/")
        except FileNotFoundError:
            pass
        if url is None:
            if time.time() > deadline:
                sys.exit("no listening line")
            time.sleep(0.002)
    listen_ms = (time.time_ns() - t0_ns) / 1e6
    attempts, statuses = 0, {}
    conn = None
    while True:
        attempts += 1
        try:
            conn = conn or connect(url)
            ms, status, data = get(conn, "/jobs?limit=100")
            statuses[status] = statuses.get(status, 0) + 1
            if status == 200 and len(json.loads(data)["jobs"]) == 100:
                break
        except (OSError, http.client.HTTPException):
            statuses["refused"] = statuses.get("refused", 0) + 1
            conn = None
        if time.time() > deadline:
            sys.exit(f"no 200 answer of GET /jobs?limit=100 with 100 jobs within {timeout} s (answers: {statuses})")
        time.sleep(0.002)
    ready_ms = (time.time_ns() - t0_ns) / 1e6
    # The counts: completed, failed and paused as in the table.
    deadline = time.time() + counts_timeout
    counts_ms, seen = None, ""
    while True:
        try:
            _, status, data = get(conn, "/queue")
            if status == 200:
                counts = counts_of(data)
                seen = counts_text(counts)
                if all(counts.get(s, 0) == n for s, n in expect.items()):
                    counts_ms = (time.time_ns() - t0_ns) / 1e6
                    break
        except (OSError, http.client.HTTPException):
            conn = connect(url)
        if time.time() > deadline:
            break
        time.sleep(0.01)
    answers = "/".join(f"{k}x{v}" for k, v in statuses.items())
    print(f"url={url} listen_ms={listen_ms:.0f} first_list_ms={ms:.1f} ready_ms={ready_ms:.0f} "
          f"attempts={attempts} answers={answers} counts_ms={'never' if counts_ms is None else f'{counts_ms:.0f}'} "
          f"ready_counts={seen}")

def reads(url, requests, expect):
    """REQUESTS timed GETs (after 5 warm-ups) of each kind on one keep-alive connection."""
    expect = expected_counts(expect)
    conn = connect(url)
    out = []
    for name, path, state in (("queue", "/queue", None),
                              ("completed", "/jobs?state=completed&limit=100", "completed"),
                              ("list", "/jobs?limit=100", ""),
                              ("paused", "/jobs?state=paused&limit=100", "paused")):
        times = []
        for i in range(5 + requests):
            ms, status, data = get(conn, path)
            if status != 200:
                sys.exit(f"GET {path} answered {status}: {data[:300]!r}")
            if state is not None:
                jobs = json.loads(data)["jobs"]
                if len(jobs) != 100:
                    sys.exit(f"GET {path} returned {len(jobs)} jobs, expected 100")
                if state and any(j["state"] != state for j in jobs):
                    sys.exit(f"GET {path} returned jobs in other states: {sorted(set(j['state'] for j in jobs))}")
            if i >= 5:
                times.append(ms)
        out.append(f"{name}_med={statistics.median(times):.2f} {name}_max={max(times):.2f} {name}_bytes={len(data)}")
        if name == "queue":
            counts = counts_of(data)
            ok = all(counts.get(s, 0) == n for s, n in expect.items())
            out.append(f"queue_counts={counts_text(counts)} queue_ok={'yes' if ok else 'no'}")
        if name == "list":
            states = {}
            for j in json.loads(data)["jobs"]:
                states[j["state"]] = states.get(j["state"], 0) + 1
            out.append("list_states=" + "/".join(f"{k}:{v}" for k, v in sorted(states.items())))
    print(" ".join(out))

mode = sys.argv[1]
if mode == "ready":
    ready(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), sys.argv[6])
elif mode == "reads":
    reads(sys.argv[2], int(sys.argv[3]), sys.argv[4])
EOF

declare -A R=()
parse_kv() {
  local kv
  for kv in $1; do R[${kv%%=*}]=${kv#*=}; done
}
rss_mib() { awk -v key="^$1" '$0 ~ key { printf "%.0f", $2 / 1024 }' "/proc/$SLUICE_PID/status"; }
# Counts by state of the job table in database URL: "completed:N,failed:N,paused:N".
table_counts() {
  sql "$1" -c "SELECT state, count(*) FROM job GROUP BY state ORDER BY state" \
    | awk '$1 == "completed" || $1 == "failed" || $1 == "paused" { c[$1] = $2 }
      END { printf "completed:%d,failed:%d,paused:%d", c["completed"], c["failed"], c["paused"] }'
}

# ================================================================ setup: a database per binary
# The rows, FILL_BATCH to a statement (each statement its own transaction: job_count's
# trigger updates one row per row inserted, and one transaction that updates the same
# job_count row N times takes time quadratic in N).
BASE=$(($(date +%s) - JOBS - PAUSED - 86400)) # created_at of row 0: a day before the newest
read -r -d '' FILL_INSERT <<'SQL' || true
INSERT INTO job (id, url, state, filename, bytes_total, bytes_done, connections, resumable, sha256, path,
                 error_code, error_message, created_at, updated_at, completed_at)
SELECT 'b' || lpad(g.i::text, 12, '0'),
       CASE WHEN s.state = 'paused' THEN 'http://127.0.0.1:9/p' || g.i
            ELSE 'https://downloads.example.com/files/' || (g.i % 97) || '/file-' || g.i || '.bin' END,
       s.state,
       'file-' || g.i || '.bin',
       CASE WHEN s.state = 'completed' THEN 1048576 + (g.i % 1000) * 1024 END,
       CASE WHEN s.state = 'completed' THEN 1048576 + (g.i % 1000) * 1024 ELSE 0 END,
       4,
       s.state = 'completed',
       CASE WHEN s.state = 'completed' THEN md5(g.i::text) || md5('x' || g.i) END,
       CASE WHEN s.state = 'completed' THEN 'file-' || g.i || '.bin' END,
       CASE WHEN s.state = 'failed' THEN 'http_status' END,
       CASE WHEN s.state = 'failed' THEN 'the server answered 404 Not Found' END,
       :base + g.i,
       :base + g.i + 5,
       CASE WHEN s.state <> 'paused' THEN :base + g.i + 5 END
FROM generate_series(:lo, :hi) AS g(i)
CROSS JOIN LATERAL (SELECT CASE
        WHEN g.i % :step = 0 AND g.i / :step <= :paused THEN 'paused'
        WHEN g.i % :failed_every = 0 THEN 'failed'
        ELSE 'completed' END AS state) AS s
ORDER BY g.i;
SQL
fill_sql() {
  local lo hi
  for ((lo = 1; lo <= TOTAL; lo += FILL_BATCH)); do
    hi=$((lo + FILL_BATCH - 1))
    ((hi <= TOTAL)) || hi=$TOTAL
    printf '\\set lo %d\n\\set hi %d\n%s\n' "$lo" "$hi" "$FILL_INSERT"
  done
  echo "VACUUM ANALYZE job;"
}
TOTAL=$((JOBS + PAUSED))
STEP=$((TOTAL / PAUSED)) # row i is paused when i % STEP == 0 (the first PAUSED such rows)
DB_URLS=() EXPECT=() HAS_JOB_COUNT=()
for ((k = 0; k < NB; k++)); do
  db=sluice_bench_$((k + 1))
  sql "$PG_URL" -c "CREATE DATABASE $db"
  url=${PG_URL%/*}/$db
  DB_URLS+=("$url")
  SLUICE_BIN=${BINS[k]}
  start_sluice "$TMP/data-$((k + 1))" --store "$url" --node-name bench "${NODE_EXTRA[@]}"
  stop_sluice
  schema=$(sql "$url" -c "SELECT string_agg(version::text, ',' ORDER BY version) FROM sluice_schema")
  has=$(sql "$url" -c "SELECT to_regclass('job_count') IS NOT NULL")
  HAS_JOB_COUNT+=("$has")
  log "${LABELS[k]}: database $db migrated by the binary (sluice_schema versions $schema; job_count table: $has)"
  T0=$(now_ms)
  fill_sql | sql "$url" -v step="$STEP" -v paused="$PAUSED" -v failed_every="$FAILED_EVERY" -v base="$BASE"
  EXPECT+=("$(table_counts "$url")")
  log "${LABELS[k]}: filled in $(($(now_ms) - T0)) ms (with VACUUM ANALYZE): ${EXPECT[k]}"
  got=${EXPECT[k]}
  [[ $(awk -F'[:,]' -v j="$JOBS" -v p="$PAUSED" '{ print ($2 + $4 == j && $6 == p) ? "ok" : "bad" }' <<<"$got") == ok ]] \
    || die "${LABELS[k]}: the table holds $got, expected $JOBS finished and $PAUSED paused jobs"
  if [[ $has == t ]]; then
    jc=$(sql "$url" -c "SELECT state, sum(n) FROM job_count GROUP BY state HAVING sum(n) <> 0 ORDER BY state" | tr '\n' ' ')
    tc=$(sql "$url" -c "SELECT state, count(*) FROM job GROUP BY state ORDER BY state" | tr '\n' ' ')
    [[ $jc == "$tc" ]] || die "${LABELS[k]}: job_count says '$jc', the job table '$tc'"
    log "${LABELS[k]}: job_count matches the table ($jc)"
  fi
done

# A node re-reads rows changed in the 2 s before its change cursor, and a node that holds no
# finished job shows each one it reads as an event: the fill must be older than that when a
# node starts, or its rows would pass through /events as changes.
sleep 3

# ================================================================ the runs
declare -A F=() # F[k.rep.name] = figure
run_one() {
  local k=$1 rep=$2 url line t0 stop_start p=$1.$2
  SLUICE_BIN=${BINS[k]}
  url=${DB_URLS[k]}
  wait_for_quiet "run $rep of ${LABELS[k]}"
  SLUICE_STARTS=$((SLUICE_STARTS + 1))
  SLUICE_LOG=$TMP/sluice.$SLUICE_STARTS
  t0=$(now_ns)
  "$SLUICE_BIN" serve --host 127.0.0.1 --port 0 --data "$TMP/data-$((k + 1))" --store "$url" --node-name bench \
    "${NODE_EXTRA[@]}" >"$SLUICE_LOG.out" 2>"$SLUICE_LOG.err" &
  SLUICE_PID=$!
  R=()
  line=$(python3 "$PY" ready "$SLUICE_LOG.out" "$t0" "$READY_TIMEOUT" "$COUNTS_TIMEOUT" "${EXPECT[k]}") || {
    tail -n 20 "$SLUICE_LOG.err" "$SLUICE_LOG.out" >&2 || true
    die "${LABELS[k]} run $rep: the node did not answer GET /jobs?limit=100"
  }
  parse_kv "$line"
  F[$p.cpu_s]=$(awk -v t="$(cpu_ticks "$SLUICE_PID")" -v hz="$CLK_TCK" 'BEGIN { printf "%.2f", t / hz }')
  F[$p.rss_start]=$(rss_mib VmRSS) F[$p.hwm_start]=$(rss_mib VmHWM)
  SLUICE_URL=${R[url]}
  F[$p.listen_ms]=${R[listen_ms]} F[$p.ready_ms]=${R[ready_ms]} F[$p.first_list_ms]=${R[first_list_ms]}
  F[$p.counts_ms]=${R[counts_ms]} F[$p.answers]=${R[answers]} F[$p.ready_counts]=${R[ready_counts]}
  log "${LABELS[k]} run $rep: listening ${R[listen_ms]} ms, first 200 of GET /jobs?limit=100 at ${R[ready_ms]} ms (${R[answers]}; that list ${R[first_list_ms]} ms), /queue counts right at ${R[counts_ms]} ms (${R[ready_counts]}); CPU ${F[$p.cpu_s]} s; VmRSS ${F[$p.rss_start]} MiB, VmHWM ${F[$p.hwm_start]} MiB"

  line=$(python3 "$PY" reads "$SLUICE_URL" "$REQUESTS" "${EXPECT[k]}") || die "${LABELS[k]} run $rep: the reads failed"
  parse_kv "$line"
  local name
  for name in queue completed list paused; do
    F[$p.${name}_med]=${R[${name}_med]} F[$p.${name}_max]=${R[${name}_max]} F[$p.${name}_bytes]=${R[${name}_bytes]}
  done
  F[$p.queue_counts]=${R[queue_counts]} F[$p.queue_ok]=${R[queue_ok]} F[$p.list_states]=${R[list_states]}
  log "${LABELS[k]} run $rep: medians (max) in ms: /queue ${R[queue_med]} (${R[queue_max]}), state=completed ${R[completed_med]} (${R[completed_max]}), list ${R[list_med]} (${R[list_max]}), state=paused ${R[paused_med]} (${R[paused_max]}); /queue counts ${R[queue_counts]} (table ${EXPECT[k]}: ${R[queue_ok]})"
  [[ ${R[queue_ok]} == yes ]] || warn "${LABELS[k]} run $rep: GET /queue counts ${R[queue_counts]}, the table ${EXPECT[k]}"
  check_alive sluice "$SLUICE_PID"

  curl -sN --max-time "$EVENTS_SECONDS" -o "$TMP/events.$p.txt" "$SLUICE_URL/events" || true # ends at the timeout
  F[$p.events_bytes]=$(wc -c <"$TMP/events.$p.txt")
  F[$p.events_frames]=$(awk '/^event: / { n[$2]++ } END { for (e in n) printf "%s%s:%d", sep++ ? "/" : "", e, n[e] }' "$TMP/events.$p.txt")
  check_alive sluice "$SLUICE_PID"
  F[$p.rss_end]=$(rss_mib VmRSS) F[$p.hwm_end]=$(rss_mib VmHWM)
  log "${LABELS[k]} run $rep: GET /events ${EVENTS_SECONDS} s: ${F[$p.events_bytes]} bytes (${F[$p.events_frames]:-no event frames}); VmRSS ${F[$p.rss_end]} MiB, VmHWM ${F[$p.hwm_end]} MiB at the end"
  stop_start=$(now_ns)
  stop_sluice
  F[$p.stop_ms]=$((($(now_ns) - stop_start) / 1000000))
  # The store as the run left it.
  local after
  after=$(table_counts "$url")
  [[ $after == "${EXPECT[k]}" ]] || warn "${LABELS[k]} run $rep: the table now holds $after, before the run ${EXPECT[k]}"
}

for ((rep = 1; rep <= REPS; rep++)); do
  order=()
  for ((k = 0; k < NB; k++)); do
    if ((rep % 2 == 1)); then order+=("$k"); else order=("$k" "${order[@]}"); fi
  done
  for k in "${order[@]}"; do run_one "$k" "$rep"; done
done

# ---------------------------------------------------------------- report
# med K NAME: the median over the runs of binary K (non-numbers, e.g. "never", are listed).
med() {
  local k=$1 name=$2 rep values=() v
  for ((rep = 1; rep <= REPS; rep++)); do values+=("${F[$k.$rep.$name]}"); done
  for v in "${values[@]}"; do
    [[ $v =~ ^[0-9.]+$ ]] || { printf '%s' "$(printf '%s, ' "${values[@]}" | sed 's/, $//')"; return; }
  done
  printf '%s\n' "${values[@]}" | median
}
sec() { awk -v ms="$1" 'BEGIN { if (ms ~ /^[0-9.]+$/) printf "%.2f", ms / 1000; else print ms }'; }
# row TITLE CELL-COMMAND: one table row, the cell command run for each binary with K set.
row() {
  local title=$1 cmd=$2 line
  line="| $title |"
  for ((K = 0; K < NB; K++)); do line+=" $(eval "$cmd") |"; done
  echo "$line"
}
# all K NAME: every run's figure, in run order.
all() {
  local k=$1 name=$2 rep out=()
  for ((rep = 1; rep <= REPS; rep++)); do out+=("${F[$k.$rep.$name]}"); done
  printf '%s' "$(printf '%s, ' "${out[@]}" | sed 's/, $//')"
}
header="| median of $REPS runs |" sep="|---|"
for ((k = 0; k < NB; k++)); do header+=" ${LABELS[k]} |"; sep+="---:|"; done
n=$(sed ':a; s/\B[0-9]\{3\}\>/,&/; ta' <<<"$JOBS")
counts_ok() {
  local rep bad=0
  for ((rep = 1; rep <= REPS; rep++)); do [[ ${F[$K.$rep.queue_ok]} == yes ]] || bad=$((bad + 1)); done
  if ((bad == 0)); then echo "equal in $REPS/$REPS (${F[$K.1.queue_counts]})"; else echo "**differ in $bad/$REPS** ($(all "$K" queue_counts); table ${EXPECT[K]})"; fi
}
# (the cells are evaluated by row, for each binary)
# shellcheck disable=SC2016
TABLE=$(
  echo "$header"
  echo "$sep"
  row "(1) exec to the listening line" 'echo "$(med $K listen_ms) ms"'
  row "(1) **exec to the first 200 of GET /jobs?limit=100** (100 jobs)" 'echo "**$(sec "$(med $K ready_ms)") s**"'
  row "(1) that first list" 'echo "$(med $K first_list_ms) ms"'
  row "(1) exec to GET /queue counts equal to the table's" 'echo "$(sec "$(med $K counts_ms)") s"'
  row "(1) CPU time (user + system) at the first 200" 'echo "$(med $K cpu_s) s"'
  row "(2) **VmRSS / VmHWM after start**" 'echo "**$(med $K rss_start) / $(med $K hwm_start) MiB**"'
  row "(2) VmRSS / VmHWM at the end of the run" 'echo "$(med $K rss_end) / $(med $K hwm_end) MiB"'
  row "(3) GET /queue, median / max of $REQUESTS" 'echo "$(med $K queue_med) / $(med $K queue_max) ms"'
  row "(3) GET /jobs?state=completed&limit=100, median / max" 'echo "$(med $K completed_med) / $(med $K completed_max) ms"'
  row "(3) GET /jobs?limit=100, median / max" 'echo "$(med $K list_med) / $(med $K list_max) ms"'
  row "(3) GET /jobs?state=paused&limit=100, median / max" 'echo "$(med $K paused_med) / $(med $K paused_max) ms"'
  row "(3) answer sizes: /queue, state=completed, list, state=paused" 'echo "$(med $K queue_bytes) / $(med $K completed_bytes) / $(med $K list_bytes) / $(med $K paused_bytes) B"'
  row "(4) GET /events: bytes read in ${EVENTS_SECONDS} s" 'echo "$(med $K events_bytes) B"'
  row "(4) its frames (run 1)" 'echo "${F[$K.1.events_frames]:-none}"'
  row "(5) GET /queue completed / failed / paused vs the table" 'counts_ok'
  row "SIGTERM to exit" 'echo "$(med $K stop_ms) ms"'
)
RUNS=$(
  echo "| binary, run | listening / first 200 / counts right (ms) | CPU s | VmRSS / VmHWM start; end (MiB) | /queue, completed, list, paused median (max) ms | /events B | /queue counts |"
  echo "|---|---:|---:|---:|---:|---:|---|"
  for ((rep = 1; rep <= REPS; rep++)); do
    for ((k = 0; k < NB; k++)); do
      p=$k.$rep
      echo "| ${LABELS[k]} #$rep | ${F[$p.listen_ms]} / ${F[$p.ready_ms]} / ${F[$p.counts_ms]} | ${F[$p.cpu_s]} | ${F[$p.rss_start]} / ${F[$p.hwm_start]}; ${F[$p.rss_end]} / ${F[$p.hwm_end]} | ${F[$p.queue_med]} (${F[$p.queue_max]}), ${F[$p.completed_med]} (${F[$p.completed_max]}), ${F[$p.list_med]} (${F[$p.list_max]}), ${F[$p.paused_med]} (${F[$p.paused_max]}) | ${F[$p.events_bytes]} | ${F[$p.queue_counts]} |"
    done
  done
)
BIN_LINES=$(for ((k = 0; k < NB; k++)); do SLUICE_BIN=${BINS[k]}; echo "- ${LABELS[k]}: $(sluice_describe); before the fill its migrations made sluice_schema versions $(sql "${DB_URLS[k]}" -c "SELECT string_agg(version::text, ',' ORDER BY version) FROM sluice_schema"), job_count table: ${HAS_JOB_COUNT[k]}"; done)
emit_report "$(machine_line), data dirs on $TMP_FSTYPE; PostgreSQL $PG_VERSION (scripts/postgres.sh: fsync off, 127.0.0.1), one database per binary. Node: \`sluice serve --host 127.0.0.1 --port 0 --data DIR --store postgres://…/sluice_bench_K --node-name bench${NODE_EXTRA[*]:+ ${NODE_EXTRA[*]}}\`. The job table holds $n finished jobs (every ${FAILED_EVERY}th row failed, the others completed) and $PAUSED paused ones spread among them (${EXPECT[0]}), written with SQL after the binary's own migrations; VACUUM ANALYZE after the fill. $REPS runs per binary, interleaved (order reversed every other round). Reads: one python3 http.client keep-alive connection, 5 warm-ups then $REQUESTS timed requests of each; curl for /events. Quiet check: $(quiet_summary).

$BIN_LINES

$TABLE

Every run:

$RUNS"
