#!/usr/bin/env bash
# Scale benchmark (issue 20, "200,000 jobs"): `sluice serve` with a store of JOBS paused jobs.
#
#   bench/scale.sh
#   SLUICE_BIN=/work/bench-bin/sluice-efc678e JOBS=200000 OUT=/tmp/scale-efc678e.md bench/scale.sh
#
# One `sluice serve --data DIR` (SQLite, the default store) on 127.0.0.1, fresh data dir in a temp
# dir on the real disk. The queue runs nothing: every job is created with "paused": true and the
# URL http://127.0.0.1:9/f<N> (nothing listens there; a paused job is never fetched). The API
# cannot create failed or finished jobs, so the store holds JOBS paused jobs and nothing else.
# One run measures:
#   (1) creation: one python3 client (http.client, one keep-alive connection) POSTs JOBS jobs
#       {"url":...,"paused":true} one after the other, each answer read (and 201) before the next
#       request: jobs/s over the whole fill, and the time of the first and of the last 1,000
#       creates (does a create slow down as the table grows?). CREATE_CONNECTIONS=N: N such
#       connections at once (threads), each one request at a time;
#   (2) with all jobs in, the same client (one connection, 5 warm-up requests each) times
#       REQUESTS=50 requests each of GET /queue, GET /jobs?state=failed&limit=100 (no job has
#       that state: a scan of the table finds nothing), GET /jobs?state=paused&limit=100 (every
#       job), GET /jobs?limit=100: median and max in ms, from sending the request to the last
#       byte of the answer (each answer's status and job count are checked);
#   (3) GET /events: the bytes curl reads in EVENTS_SECONDS=3 s on a new connection (curl -sN
#       --max-time), i.e. the initial snapshot (nothing changes meanwhile), and its `event: job`
#       frames;
#   (4) VmRSS and VmHWM of the service (/proc/PID/status);
#   (5) restart: SIGTERM, wait for the exit (timed), start the same binary on the same data dir;
#       from the exec to the first 200 answer of GET /jobs?limit=100 with 100 jobs (a python3
#       client reads the log for the listening line every 2 ms, then asks on one connection until
#       it gets that answer), and the time of that first list itself; then VmRSS / VmHWM, and the
#       same 50 requests as (2) once more.
# Prints a markdown table of the figures against issue 20's targets.
#
# Environment (all optional; see also bench/lib.sh):
#   SLUICE_BIN=PATH     binary to benchmark (default .build-release/release/sluice, built
#                       first unless SKIP_BUILD=1)
#   JOBS=200000         paused jobs to create
#   REQUESTS=50         timed requests of each kind in (2) and (5)
#   EVENTS_SECONDS=3    how long (3) reads /events
#   CREATE_CONNECTIONS=1  connections that create at once in (1)
#   FINISHED=0          before the restart (5), this many completed jobs are written straight
#                       into the stopped service's SQLite store (python3's sqlite3: the API
#                       cannot make finished jobs), older than the paused ones: the restart and
#                       the reads after it then run with them in the store (issue 20: "1,000,000
#                       finished jobs in the store change none of these by more than 2x")
#   CLEAR=0             with FINISHED, CLEAR=1 then times (6) DELETE /jobs?state=completed (the
#                       dashboard's "Clear finished" over the stored completed jobs), checks its
#                       count, and reads VmHWM after it
#   QUIET_WAIT=300      before each measurement, wait up to this many seconds for an idle machine
#   OUT=FILE            also write the markdown results to FILE
#   KEEP_TMP=1          keep the temp dir      TMPDIR=DIR  where it goes (default /var/tmp)
set -euo pipefail

BENCH_NAME=scale
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

JOBS=${JOBS:-200000}
REQUESTS=${REQUESTS:-50}
EVENTS_SECONDS=${EVENTS_SECONDS:-3}
CREATE_CONNECTIONS=${CREATE_CONNECTIONS:-1}
FINISHED=${FINISHED:-0}
CLEAR=${CLEAR:-0}

require_tools curl python3
resolve_sluice
log "sluice: $(sluice_describe)"
bench_tmp
DATA=$TMP/data
PY=$TMP/scale.py

# ---------------------------------------------------------------- the python3 client
cat >"$PY" <<'EOF'
import http.client, json, re, statistics, sys, threading, time

def connect(url):
    host, port = re.match(r"https?://([^:/]+):(\d+)", url).groups()
    return http.client.HTTPConnection(host, int(port), timeout=120)

def create(url, n, connections):
    """POSTs n paused jobs, one at a time on each of `connections` keep-alive connections;
    prints key=value figures."""
    lock = threading.Lock()
    state = {"next": 1, "done": 0, "error": None}
    marks = []  # time after every 1,000 creates

    def worker():
        conn = connect(url)
        headers = {"Content-Type": "application/json"}
        while True:
            with lock:
                i = state["next"]
                if i > n or state["error"]:
                    return
                state["next"] = i + 1
            body = json.dumps({"url": f"http://127.0.0.1:9/f{i}", "paused": True})
            conn.request("POST", "/jobs", body, headers)
            answer = conn.getresponse()
            data = answer.read()
            with lock:
                if answer.status != 201:
                    state["error"] = f"POST /jobs #{i} answered {answer.status}: {data[:300]!r}"
                    return
                state["done"] += 1
                done = state["done"]
                if done % 1000 == 0 or done == n:
                    marks.append(time.perf_counter())
            if done % 20000 == 0:
                print(f"[scale] {done} jobs created in {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)

    start = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if state["error"]:
        sys.exit(state["error"])
    total = time.perf_counter() - start
    first = marks[0] - start
    last = marks[-1] - marks[-2] if len(marks) > 1 else first
    slowest = max([marks[0] - start] + [b - a for a, b in zip(marks, marks[1:])])
    print(f"create_s={total:.3f} rate={n / total:.0f} first1000_ms={first * 1000:.0f} "
          f"last1000_ms={last * 1000:.0f} slowest1000_ms={slowest * 1000:.0f}")

def get(conn, path):
    t0 = time.perf_counter()
    conn.request("GET", path)
    answer = conn.getresponse()
    data = answer.read()
    return (time.perf_counter() - t0) * 1000, answer.status, data

def check(path, status, data, expect):
    if status != 200:
        sys.exit(f"GET {path} answered {status}: {data[:300]!r}")
    if expect is not None:
        got = len(json.loads(data)["jobs"])
        if got != expect:
            sys.exit(f"GET {path} returned {got} jobs, expected {expect}")

def latency(url, requests, name, path, expect):
    """Times `requests` GETs of path on one connection (after 5 warm-ups)."""
    conn = connect(url)
    expect = None if expect == "-" else int(expect)
    for _ in range(5):
        _, status, data = get(conn, path)
        check(path, status, data, expect)
    times = []
    for _ in range(requests):
        ms, status, data = get(conn, path)
        check(path, status, data, expect)
        times.append(ms)
    print(f"{name}_med={statistics.median(times):.2f} {name}_max={max(times):.2f} {name}_bytes={len(data)}")

def restart(log, t0_ns, timeout):
    """After an exec at t0_ns (CLOCK_REALTIME ns): the listening line in log, then GET
    /jobs?limit=100 until a 200 with 100 jobs; prints the times from the exec."""
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
    attempts, refused = 0, 0
    while True:
        attempts += 1
        try:
            conn = connect(url)
            ms, status, data = get(conn, "/jobs?limit=100")
            if status == 200 and len(json.loads(data)["jobs"]) == 100:
                break
            conn.close()
        except (OSError, http.client.HTTPException):
            refused += 1
        if time.time() > deadline:
            sys.exit(f"no 200 answer of GET /jobs?limit=100 with 100 jobs within {timeout} s")
        time.sleep(0.002)
    total_ms = (time.time_ns() - t0_ns) / 1e6
    print(f"url={url} listen_ms={listen_ms:.0f} first_list_ms={ms:.1f} ready_ms={total_ms:.0f} attempts={attempts}")

mode = sys.argv[1]
if mode == "create":
    create(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
elif mode == "latency":
    latency(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6])
elif mode == "restart":
    restart(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
EOF

# Parses python's `key=value ...` line into R[].
declare -A R=()
parse_kv() {
  local kv
  for kv in $1; do R[${kv%%=*}]=${kv#*=}; done
}
rss_mib() { awk -v key="^$1" '$0 ~ key { printf "%.0f", $2 / 1024 }' "/proc/$SLUICE_PID/status"; }

# measure_reads TAG: REQUESTS x each GET on one connection; figures in R[TAG.name_med] etc.
measure_reads() {
  local tag=$1 line name path expect
  while read -r name path expect; do
    line=$(python3 "$PY" latency "$SLUICE_URL" "$REQUESTS" "$name" "$path" "$expect") || die "$tag: GET $path"
    parse_kv "$line"
    R[$tag.${name}_med]=${R[${name}_med]} R[$tag.${name}_max]=${R[${name}_max]} R[$tag.${name}_bytes]=${R[${name}_bytes]}
    log "$tag: GET $path x $REQUESTS: median ${R[${name}_med]} ms, max ${R[${name}_max]} ms (${R[${name}_bytes]} bytes)"
  done <<EOF
queue /queue -
failed /jobs?state=failed&limit=100 0
paused /jobs?state=paused&limit=100 100
list /jobs?limit=100 100
EOF
  check_alive sluice "$SLUICE_PID"
}

# ================================================================ (1) creation
start_sluice "$DATA"
wait_for_quiet "creation"
log "(1) POST /jobs x $JOBS (paused, http://127.0.0.1:9/f<N>), $CREATE_CONNECTIONS keep-alive connection(s)"
line=$(python3 "$PY" create "$SLUICE_URL" "$JOBS" "$CREATE_CONNECTIONS") || die "creating the jobs failed"
parse_kv "$line"
check_alive sluice "$SLUICE_PID"
STORED=$(count_jobs)
log "(1) $JOBS jobs in ${R[create_s]} s: ${R[rate]}/s; first 1,000 ${R[first1000_ms]} ms, last 1,000 ${R[last1000_ms]} ms, slowest 1,000 ${R[slowest1000_ms]} ms; /metrics counts $STORED"
((STORED == JOBS)) || die "the store holds $STORED jobs, expected $JOBS"
CREATE_RSS=$(rss_mib VmRSS) CREATE_HWM=$(rss_mib VmHWM)

# ================================================================ (2) reads, (3) /events, (4) RSS
wait_for_quiet "reads"
measure_reads "(2)"

wait_for_quiet "/events"
curl -sN --max-time "$EVENTS_SECONDS" -o "$TMP/events.txt" "$SLUICE_URL/events" || true # ends at the timeout
EVENTS_BYTES=$(wc -c <"$TMP/events.txt")
EVENTS_JOBS=$(grep -c '^event: job' "$TMP/events.txt" || true)
EVENTS_MB=$(awk -v b="$EVENTS_BYTES" 'BEGIN { printf "%.2f", b / 1e6 }')
log "(3) GET /events for ${EVENTS_SECONDS} s: $EVENTS_BYTES bytes ($EVENTS_MB MB), $EVENTS_JOBS 'event: job' frames"
check_alive sluice "$SLUICE_PID"
RSS=$(rss_mib VmRSS) HWM=$(rss_mib VmHWM)
log "(4) VmRSS $RSS MiB, VmHWM $HWM MiB (after the fill: $CREATE_RSS / $CREATE_HWM MiB)"

# ================================================================ (5) restart
wait_for_quiet "restart"
STOP_START=$(now_ns)
stop_sluice
STOP_MS=$((($(now_ns) - STOP_START) / 1000000))
log "(5) SIGTERM to exit: $STOP_MS ms; starting again on the same data dir"
if ((FINISHED > 0)); then
  python3 - "$DATA/sluice.sqlite" "$FINISHED" <<'PYEOF'
import sqlite3, sys, time
path, n = sys.argv[1], int(sys.argv[2])
db = sqlite3.connect(path)
first = db.execute("SELECT COALESCE(MIN(sequence), 0) FROM job").fetchone()[0]
start = time.time() - n - 3600
rows = ((f"done{i:09d}", first - n + i, f"http://127.0.0.1:9/done{i}", "completed", f"done{i}", 1024, 1024, 1, 1,
         "0" * 64, f"done{i}", start + i, start + i, start + i) for i in range(n))
db.executemany("INSERT INTO job (id, sequence, url, state, filename, bytesTotal, bytesDone, connections, resumable,"
               " sha256, path, createdAt, updatedAt, completedAt) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
db.commit()
PYEOF
  log "(5) wrote $FINISHED completed jobs into the stopped service's store"
fi
SLUICE_STARTS=$((SLUICE_STARTS + 1))
SLUICE_LOG=$TMP/sluice.$SLUICE_STARTS
T0=$(now_ns)
"$SLUICE_BIN" serve --host 127.0.0.1 --port 0 --data "$DATA" >"$SLUICE_LOG.out" 2>"$SLUICE_LOG.err" &
SLUICE_PID=$!
line=$(python3 "$PY" restart "$SLUICE_LOG.out" "$T0" 120) || {
  tail -n 20 "$SLUICE_LOG.err" "$SLUICE_LOG.out" >&2 || true
  die "the restarted service did not answer GET /jobs?limit=100"
}
parse_kv "$line"
SLUICE_URL=${R[url]}
READY_S=$(awk -v ms="${R[ready_ms]}" 'BEGIN { printf "%.2f", ms / 1000 }')
RESTART_RSS=$(rss_mib VmRSS) RESTART_HWM=$(rss_mib VmHWM)
log "(5) exec to listening line ${R[listen_ms]} ms, to the first list answered ${R[ready_ms]} ms ($READY_S s, ${R[attempts]} attempt(s)); that first list ${R[first_list_ms]} ms; VmRSS $RESTART_RSS MiB, VmHWM $RESTART_HWM MiB"
RESTART_STORED=$(count_jobs)
((RESTART_STORED == JOBS + FINISHED)) || die "the restarted store holds $RESTART_STORED jobs, expected $((JOBS + FINISHED))"
wait_for_quiet "reads after restart"
measure_reads "(5)"
RESTART_RSS2=$(rss_mib VmRSS) RESTART_HWM2=$(rss_mib VmHWM)
CLEAR_LINE=""
if ((FINISHED > 0 && CLEAR == 1)); then
  wait_for_quiet "clear finished"
  T0=$(now_ns)
  cleared=$(curl -sS --max-time 3600 -X DELETE "$SLUICE_URL/jobs?state=completed") || die "DELETE /jobs?state=completed failed"
  CLEAR_S=$(awk -v ns="$(($(now_ns) - T0))" 'BEGIN { printf "%.1f", ns / 1e9 }')
  [[ $cleared == "{\"deleted\":$FINISHED}" ]] || die "DELETE /jobs?state=completed answered $cleared, expected $FINISHED deleted"
  CLEAR_RSS=$(rss_mib VmRSS) CLEAR_HWM=$(rss_mib VmHWM)
  log "(6) DELETE /jobs?state=completed: $cleared in $CLEAR_S s; VmRSS $CLEAR_RSS MiB, VmHWM $CLEAR_HWM MiB"
  CLEAR_LINE="| (6) DELETE /jobs?state=completed ($FINISHED stored jobs): time; VmRSS / VmHWM after | $CLEAR_S s; $CLEAR_RSS / $CLEAR_HWM MiB | | |"
fi
stop_sluice

# ---------------------------------------------------------------- report
yesno() { [[ $1 == yes ]] && echo pass || echo "**miss**"; }
n=$(sed ':a; s/\B[0-9]\{3\}\>/,&/; ta' <<<"$JOBS")
r() { echo "${R[$1]}"; }
emit_report "$(machine_line), data dir on $TMP_FSTYPE; sluice: $(sluice_describe), \`serve --data DIR\` (SQLite, default log level). Clients: python3 http.client keep-alive connections, each one request at a time ($CREATE_CONNECTIONS for the creates; one for the reads: $REQUESTS timed requests of each after 5 warm-ups), curl for /events. The store holds $n paused jobs (URL http://127.0.0.1:9/f<N>, never fetched) and no others: the API cannot create failed or finished jobs.$( ((FINISHED > 0)) && echo " Before the restart, $FINISHED completed jobs (older than the paused ones) were written into the stopped service's store: the figures from (5) on are with them.") Quiet check: $(quiet_summary).

| measurement ($n jobs) | result | target | |
|---|---:|---:|---|
| POST /jobs, $n paused jobs, $CREATE_CONNECTIONS connection(s) one request at a time (${R[create_s]} s) | ${R[rate]} jobs/s | >= 2,000/s | $(yesno "$(meets "${R[rate]}" '>=' 2000)") |
| the first / last 1,000 of those creates (slowest 1,000: ${R[slowest1000_ms]} ms) | ${R[first1000_ms]} / ${R[last1000_ms]} ms | | |
| GET /queue, median / max of $REQUESTS | $(r '(2).queue_med') / $(r '(2).queue_max') ms | < 5 ms | $(yesno "$(meets "$(r '(2).queue_med')" '<' 5)") |
| GET /jobs?state=failed&limit=100 (0 jobs), median / max | $(r '(2).failed_med') / $(r '(2).failed_max') ms | < 10 ms | $(yesno "$(meets "$(r '(2).failed_med')" '<' 10)") |
| GET /jobs?state=paused&limit=100 (100 jobs, $(r '(2).paused_bytes') bytes), median / max | $(r '(2).paused_med') / $(r '(2).paused_max') ms | < 10 ms | $(yesno "$(meets "$(r '(2).paused_med')" '<' 10)") |
| GET /jobs?limit=100, median / max | $(r '(2).list_med') / $(r '(2).list_max') ms | | |
| GET /events, bytes read in ${EVENTS_SECONDS} s ($EVENTS_JOBS \`event: job\` frames) | $EVENTS_MB MB | <= 10 MB | $(yesno "$(meets "$EVENTS_MB" '<=' 10)") |
| VmRSS / VmHWM with $n jobs (after the reads and /events; after the fill: $CREATE_RSS / $CREATE_HWM) | $RSS / $HWM MiB | < 300 MiB | $(yesno "$(meets "$HWM" '<' 300)") |
| SIGTERM to exit | $STOP_MS ms | | |
| restart: exec to the first GET /jobs?limit=100 answered (listening line at ${R[listen_ms]} ms) | $READY_S s | < 3 s | $(yesno "$(meets "$READY_S" '<' 3)") |
| restart: that first list | ${R[first_list_ms]} ms | < 50 ms | $(yesno "$(meets "${R[first_list_ms]}" '<' 50)") |
| restart: VmRSS / VmHWM after the first list; after $REQUESTS x 4 reads | $RESTART_RSS / $RESTART_HWM; $RESTART_RSS2 / $RESTART_HWM2 MiB | < 300 MiB | $(yesno "$(meets "$RESTART_HWM2" '<' 300)") |
| after restart: GET /queue / state=failed / state=paused / list, medians | $(r '(5).queue_med') / $(r '(5).failed_med') / $(r '(5).paused_med') / $(r '(5).list_med') ms | | |
$CLEAR_LINE"
