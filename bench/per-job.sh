#!/usr/bin/env bash
# Per-job overhead (issue 20): many small downloads through `sluice serve`'s jobs API vs one
# `curl --parallel` process and one `aria2c -i` process fetching the same files.
#
#   bench/per-job.sh
#
# nginx on 127.0.0.1 (bench/lib.sh: 2 workers, sendfile, access_log off, keep-alive) serves
# N=1000 distinct files of SIZE_KIB=256 KiB of random data (temp dir on the real disk; their
# SHA-256s are kept, and hashing them puts them in the page cache). Each round runs every
# client once, round-robin, RUNS times (median reported), each into a fresh output directory,
# with `sync` after the previous client's output was removed and a quiet-machine wait before:
#   curl    one process: `curl -s -f --parallel --parallel-max P --parallel-immediate
#           --output-dir DIR -K CONFIG`, CONFIG holding a url/output pair per file;
#   aria2c  one process: `aria2c -i LIST -j P -x1 -s1 --file-allocation=none
#           --console-log-level=warn --summary-interval=0 -d DIR` (URL, then `  out=NAME`);
#   sluice  a fresh `sluice serve --max-active P` on its own data dir. A python3 client
#           (http.client, ONE keep-alive connection; the number of connections it used is
#           checked) takes the time right before its first `POST /jobs`, sends all N
#           `{"url": ..., "filename": NAME, "connections": 1}` one after another (each must be
#           201), then polls `GET /queue` on the same connection every POLL_MS=20 ms until
#           counts.completed == N (any failed job fails the run); that instant ends the time.
#           It also records when the N-th 201 arrived (creation) and the POST latencies.
#           The service's VmHWM (/proc) and CPU time are read before it is stopped.
# curl's and aria2c's times are the process's wall time (fork/exec included, ~ms); their peak
# RSS and CPU come from /usr/bin/time -v. nginx's CPU during each run is read from /proc. After
# every timed run all N files are checked against the source's SHA-256 (sha256sum -c; a wrong
# or missing file fails the run), outside the time.
#
# Targets (issue 20): sluice's time <= aria2c's, and <= 2x curl's (with curl at ~0.6 s, about
# 1.2 ms per job, creation included). When one is missed (PROFILE=auto), or with PROFILE=1,
# three more sluice runs say where the time goes, written to PROFILE_OUT:
#   (1) creation alone: N POSTs with "paused": true to a fresh service (nothing downloads);
#   (2) `strace -c -f -p PID` attached to the service for a full run (slows it down);
#   (3) `perf record -g -p PID` (frame pointers) for a full run: by thread, DSO and symbol.
#
# Environment (all optional; see also bench/lib.sh):
#   SLUICE_BIN=PATH     binary to benchmark (default .build-release/release/sluice, built
#                       first unless SKIP_BUILD=1)
#   N=1000              files, i.e. jobs          SIZE_KIB=256   size of each file
#   PARALLEL=16         downloads at once (curl --parallel-max, aria2c -j, sluice --max-active)
#   RUNS=3              rounds (median reported)  CLIENTS="curl aria2c sluice"
#   POLL_MS=20          GET /queue interval once every POST is answered
#   JOB_TIMEOUT=300     seconds the sluice run may take before it fails
#   CREATE=single       single: one POST /jobs per job; batch: the list in POST /jobs/batch
#                       (250 a request), as aria2c -i and curl -K take theirs
#   TARGET_ARIA2=1.0    sluice / aria2c time target (<=)   TARGET_CURL=2.0 sluice / curl (<=)
#   PROFILE=auto        auto: profile when a target is missed; 1: always; 0: never
#   PROFILE_OUT=FILE    default bench/out/per-job-profile.txt
#   QUIET_WAIT=300      before each run, wait up to this many seconds for an idle machine
#   OUT=FILE            also write the markdown results to FILE
#   KEEP_TMP=1          keep the temp dir      TMPDIR=DIR  where it goes (default /var/tmp)
set -euo pipefail

BENCH_NAME="per-job"
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

N=${N:-1000}
SIZE_KIB=${SIZE_KIB:-256}
PARALLEL=${PARALLEL:-16}
RUNS=${RUNS:-3}
CLIENTS=${CLIENTS:-curl aria2c sluice}
CREATE=${CREATE:-single}
POLL_MS=${POLL_MS:-20}
JOB_TIMEOUT=${JOB_TIMEOUT:-300}
TARGET_ARIA2=${TARGET_ARIA2:-1.0}
TARGET_CURL=${TARGET_CURL:-2.0}
PROFILE=${PROFILE:-auto}
PROFILE_OUT=${PROFILE_OUT:-$BENCH_DIR/out/per-job-profile.txt}

needed=(nginx python3 /usr/bin/time curl)
for client in $CLIENTS; do
  case $client in
    curl | sluice) ;;
    aria2c) needed+=(aria2c) ;;
    *) die "unknown client $client in CLIENTS (curl aria2c sluice)" ;;
  esac
done
require_tools "${needed[@]}"
[[ $TLS == 0 ]] || die "per-job.sh runs over plain HTTP only (TLS=1 is not supported here)"

resolve_sluice
log "sluice: $(sluice_describe)"
bench_tmp
mkdir -p "$TMP/root" "$TMP/time"

# ---------------------------------------------------------------- the files
log "writing $N files of $SIZE_KIB KiB of random data to $TMP/root"
NAMES=()
for ((i = 1; i <= N; i++)); do
  name=$(printf 'f%04d.bin' "$i")
  NAMES+=("$name")
  head -c "$((SIZE_KIB * 1024))" /dev/urandom >"$TMP/root/$name"
done
chmod 644 "$TMP/root"/*.bin
(cd "$TMP/root" && sha256sum -- "${NAMES[@]}") >"$TMP/expected.sha256" # also fills the page cache
printf '%s\n' "${NAMES[@]}" >"$TMP/names.txt"
start_nginx "$TMP/root"

for name in "${NAMES[@]}"; do
  printf 'url = "%s/%s"\noutput = "%s"\n' "$NGINX_URL" "$name" "$name"
done >"$TMP/curl.config"
for name in "${NAMES[@]}"; do
  printf '%s/%s\n  out=%s\n' "$NGINX_URL" "$name" "$name"
done >"$TMP/aria2.list"

# ---------------------------------------------------------------- the jobs client
# post_jobs.py SLUICE_URL ORIGIN_URL NAMES_FILE MODE POLL_MS TIMEOUT_S CREATE: MODE "download"
# posts every job and waits for all to complete; "paused" posts them paused and returns.
# CREATE "single" posts one POST /jobs per job, "batch" the list in POST /jobs/batch. Prints
# one JSON line of timings (seconds from right before the first POST).
cat >"$TMP/post_jobs.py" <<'EOF'
import http.client, json, sys, time, urllib.parse

sluice, origin, names_file, mode, poll_ms, timeout_s, create = sys.argv[1:8]
names = [line.strip() for line in open(names_file) if line.strip()]
u = urllib.parse.urlsplit(sluice)
conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
headers = {"Content-Type": "application/json"}
ports = set()
latencies = []

def call(method, path, body=None):
    t = time.monotonic()
    conn.request(method, path, body, headers if body is not None else {})
    ports.add(conn.sock.getsockname()[1])
    r = conn.getresponse()
    data = r.read()
    return r.status, data, time.monotonic() - t

def job(name):
    job = {"url": f"{origin}/{name}", "filename": name, "connections": 1}
    if mode == "paused":
        job["paused"] = True
    return job

t0 = time.monotonic()
if create == "batch":
    # The list in POST /jobs/batch requests of 250 jobs (under the 64 KiB a body may hold),
    # as aria2c -i and curl -K take theirs in one go.
    for first in range(0, len(names), 250):
        chunk = [job(name) for name in names[first:first + 250]]
        status, data, dt = call("POST", "/jobs/batch", json.dumps({"jobs": chunk}).encode())
        if status != 201:
            sys.exit(f"POST /jobs/batch: {status} {data[:300]!r}")
        latencies.append(dt)
else:
    for name in names:
        status, data, dt = call("POST", "/jobs", json.dumps(job(name)).encode())
        if status != 201:
            sys.exit(f"POST /jobs for {name}: {status} {data[:300]!r}")
        latencies.append(dt)
t_posted = time.monotonic() - t0
result = {"posted_s": t_posted, "jobs": len(names)}
latencies.sort()
result["post_p50_ms"] = 1000 * latencies[len(latencies) // 2]
result["post_p99_ms"] = 1000 * latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
result["post_max_ms"] = 1000 * latencies[-1]
if mode == "download":
    deadline = time.monotonic() + float(timeout_s)
    first = None
    polls = 0
    while True:
        status, data, _ = call("GET", "/queue")
        if status != 200:
            sys.exit(f"GET /queue: {status} {data[:300]!r}")
        counts = json.loads(data)["counts"]
        polls += 1
        if first is None:
            first = counts
        if counts.get("failed", 0):
            sys.exit(f"{counts['failed']} job(s) failed: {counts}")
        if counts["completed"] >= len(names):
            break
        if time.monotonic() > deadline:
            sys.exit(f"not all completed within {timeout_s} s: {counts}")
        time.sleep(int(poll_ms) / 1000)
    result["done_s"] = time.monotonic() - t0
    result["completed_when_posted"] = first["completed"]
    result["polls"] = polls
result["connections"] = len(ports)
print(json.dumps(result))
EOF

# ---------------------------------------------------------------- one run
fresh_dir() {
  rm -rf "$1"
  sync
  mkdir -p "$1"
}
# verify_dir DIR WHAT: every one of the N files in DIR has the source's SHA-256.
verify_dir() {
  local dir=$1 what=$2
  (cd "$dir" && sha256sum --strict --quiet -c "$TMP/expected.sha256") >"$TMP/verify.log" 2>&1 \
    || die "$what: files differ from the source: $(head -5 "$TMP/verify.log" | tr '\n' ' ')"
  VERIFIED=$((VERIFIED + N))
}
secs() { awk -v s="$1" -v e="$2" 'BEGIN { printf "%.3f", (e - s) / 1e9 }'; }
ticks_s() { awk -v t="$1" -v hz="$CLK_TCK" 'BEGIN { printf "%.2f", t / hz }'; }
js() { python3 -c 'import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }

client_cmd() { # client dir -> CMD
  case $1 in
    curl) CMD=(curl -s -f --parallel --parallel-max "$PARALLEL" --parallel-immediate --output-dir "$2" -K "$TMP/curl.config") ;;
    aria2c) CMD=(aria2c -i "$TMP/aria2.list" -j "$PARALLEL" -x1 -s1 --file-allocation=none --console-log-level=warn
      --summary-interval=0 -d "$2") ;;
  esac
}

# run_tool curl|aria2c -> WALL, RSS_KB, CPU_S, NGINX_CPU_S
run_tool() {
  local client=$1 dir=$TMP/dl-$1 tf=$TMP/time/t.txt start end status=0
  fresh_dir "$dir"
  client_cmd "$client" "$dir"
  wait_for_quiet "$client run $run"
  phase_begin "$NGINX_PID"
  start=$(now_ns)
  /usr/bin/time -v -o "$tf" "${CMD[@]}" >"$TMP/time/stdout" 2>"$TMP/time/stderr" || status=$?
  end=$(now_ns)
  phase_end "$NGINX_PID"
  ((status == 0)) || {
    tail -20 "$TMP/time/stderr" "$TMP/time/stdout" >&2
    die "$client exited with $status"
  }
  WALL=$(secs "$start" "$end")
  NGINX_CPU_S=$(ticks_s "$SERVER_TICKS")
  RSS_KB=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$tf")
  CPU_S=$(awk -F': ' '/User time/ { u = $2 } /System time/ { s = $2 } END { printf "%.2f", u + s }' "$tf")
  verify_dir "$dir" "$client run $run"
  rm -rf "$dir"
}

# run_sluice [paused] -> WALL (to the last completion), POSTED_S, SLUICE_JSON, RSS_KB, CPU_S,
# NGINX_CPU_S; PROFILER="strace"|"perf" attaches one to the service for the run.
run_sluice() {
  local mode=${1:-download} data=$TMP/data-sluice before after prof_pid=
  fresh_dir "$data"
  start_sluice "$data" --max-active "$PARALLEL"
  wait_for_quiet "sluice${PROFILER:+ under $PROFILER} ($mode) run $run"
  case ${PROFILER:-} in
    strace)
      strace -c -f -p "$SLUICE_PID" -o "$TMP/strace.txt" 2>"$TMP/strace.err" &
      prof_pid=$!
      ;;
    perf)
      perf record -q -g -F 1999 -e cpu-clock -p "$SLUICE_PID" -o "$TMP/perf.data" >"$TMP/perf.err" 2>&1 &
      prof_pid=$!
      ;;
  esac
  if [[ -n $prof_pid ]]; then
    BENCH_PIDS+=("$prof_pid")
    sleep 1 # attached to every thread before the first POST
  fi
  before=$(cpu_ticks "$SLUICE_PID")
  phase_begin "$NGINX_PID"
  SLUICE_JSON=$(python3 "$TMP/post_jobs.py" "$SLUICE_URL" "$NGINX_URL" "$TMP/names.txt" "$mode" "$POLL_MS" "$JOB_TIMEOUT" "$CREATE") \
    || {
      tail -20 "$SLUICE_LOG.err" "$SLUICE_LOG.out" >&2
      die "the sluice $mode run failed"
    }
  phase_end "$NGINX_PID"
  after=$(cpu_ticks "$SLUICE_PID")
  check_alive sluice "$SLUICE_PID"
  RSS_KB=$(awk '/^VmHWM/ { print $2 }' "/proc/$SLUICE_PID/status")
  if [[ -n $prof_pid ]]; then
    kill -INT "$prof_pid" 2>/dev/null || true
    wait "$prof_pid" 2>/dev/null || true
  fi
  stop_sluice
  CPU_S=$(ticks_s $((after - before)))
  NGINX_CPU_S=$(ticks_s "$SERVER_TICKS")
  POSTED_S=$(js "$SLUICE_JSON" posted_s)
  (($(js "$SLUICE_JSON" connections) == 1)) || die "the jobs client used $(js "$SLUICE_JSON" connections) connections, not one"
  if [[ $mode == download ]]; then
    WALL=$(awk -v s="$(js "$SLUICE_JSON" done_s)" 'BEGIN { printf "%.3f", s }')
    verify_dir "$data/documents" "sluice run $run"
  fi
  rm -rf "$data"
  sync
}

# ---------------------------------------------------------------- measure
declare -A WALLS RSSES CPUS NCPUS
SL_POSTED=() SL_P50=() SL_P99=() SL_DONE_AT_POST=()
for ((run = 1; run <= RUNS; run++)); do
  for client in $CLIENTS; do
    if [[ $client == sluice ]]; then
      run_sluice download
      SL_POSTED+=("$POSTED_S") SL_P50+=("$(js "$SLUICE_JSON" post_p50_ms)") SL_P99+=("$(js "$SLUICE_JSON" post_p99_ms)")
      SL_DONE_AT_POST+=("$(js "$SLUICE_JSON" completed_when_posted)")
      extra=" (the ${N}th 201 after $(printf '%.3f' "$POSTED_S") s, $(js "$SLUICE_JSON" completed_when_posted) completed then; POST p50 $(printf '%.2f' "${SL_P50[-1]}") ms, p99 $(printf '%.2f' "${SL_P99[-1]}") ms)"
    else
      run_tool "$client"
      extra=
    fi
    WALLS[$client]+="$WALL " RSSES[$client]+="$RSS_KB " CPUS[$client]+="$CPU_S " NCPUS[$client]+="$NGINX_CPU_S "
    log "run $run $client: ${WALL}s$extra, RSS $((RSS_KB / 1024)) MiB, CPU ${CPU_S}s, nginx CPU ${NGINX_CPU_S}s; $N files verified"
  done
done

# ---------------------------------------------------------------- report
words() { tr ' ' '\n' <<<"$1" | grep .; }
has_client() { [[ " $CLIENTS " == *" $1 "* ]]; }
label() {
  case $1 in
    curl) echo "curl $(curl --version | awk 'NR == 1 { print $2 }') \`--parallel --parallel-max $PARALLEL\`" ;;
    aria2c) echo "aria2c $(aria2c --version | awk 'NR == 1 { print $3 }') \`-j $PARALLEL -x1 -s1\`" ;;
    sluice) echo "**sluice serve** \`--max-active $PARALLEL\`, jobs \`connections: 1\`" ;;
  esac
}
declare -A MED
for client in $CLIENTS; do MED[$client]=$(words "${WALLS[$client]}" | median); done
TABLE="| client | median wall s (runs) | ms per job | peak RSS MiB | CPU s (user+sys) | nginx CPU s | sluice ÷ this |
|---|---:|---:|---:|---:|---:|---:|"
for client in $CLIENTS; do
  w=${MED[$client]}
  per=$(awk -v t="$w" -v n="$N" 'BEGIN { printf "%.2f", 1000 * t / n }')
  peak=$(awk -v k="$(words "${RSSES[$client]}" | maximum)" 'BEGIN { printf "%.1f", k / 1024 }')
  cpu=$(words "${CPUS[$client]}" | median)
  ncpu=$(words "${NCPUS[$client]}" | median)
  vs=-
  has_client sluice && [[ $client != sluice ]] && vs="$(ratio "${MED[sluice]}" "$w")x"
  TABLE+="
| $(label "$client") | $w ($(sed 's/ $//; s/ /, /g' <<<"${WALLS[$client]}")) | $per | $peak | $cpu | $ncpu | $vs |"
  result "per_job.$client.wall_s" "$w"
  result "per_job.$client.ms_per_job" "$per"
  result "per_job.$client.peak_rss_mib" "$peak"
  result "per_job.$client.walls" "${WALLS[$client]% }"
done
result per_job.verified "$VERIFIED"

TARGETS="" MISSED=0
yesno() { if [[ $1 == yes ]]; then echo meets; else echo "**misses**"; fi; }
if has_client sluice; then
  SL_POSTED_MED=$(printf '%s\n' "${SL_POSTED[@]}" | median)
  SL_P50_MED=$(printf '%s\n' "${SL_P50[@]}" | median | awk '{ printf "%.2f", $1 }')
  SL_P99_MED=$(printf '%s\n' "${SL_P99[@]}" | median | awk '{ printf "%.2f", $1 }')
  SL_DONE_MED=$(printf '%s\n' "${SL_DONE_AT_POST[@]}" | median)
  TARGETS+="- sluice: the ${N}th \`POST /jobs\` answered (201) after $(printf '%.3f' "$SL_POSTED_MED") s (median; $(awk -v t="$SL_POSTED_MED" -v n="$N" 'BEGIN { printf "%.2f", 1000 * t / n }') ms per POST; latency p50 $SL_P50_MED ms, p99 $SL_P99_MED ms), $SL_DONE_MED jobs completed by then; the rest of the ${MED[sluice]} s is waiting for completions"$'\n'
  for peer in aria2c curl; do
    has_client "$peer" || continue
    r=$(ratio "${MED[sluice]}" "${MED[$peer]}")
    t=$TARGET_ARIA2
    [[ $peer == curl ]] && t=$TARGET_CURL
    ok=$(meets "$r" '<=' "$t")
    [[ $ok == yes ]] || MISSED=1
    TARGETS+="- sluice time / $peer time: ${r}x (target <= ${t}x): $(yesno "$ok")"$'\n'
    result "per_job.sluice_vs_$peer" "$r"
  done
fi

emit_report "$(machine_line), $TMP_FSTYPE on $TMP_DEVICE; nginx $(nginx_version) ($NGINX_WORKERS workers, sendfile, access_log off, keep-alive) on 127.0.0.1 serving $N distinct $SIZE_KIB KiB random files from the page cache; sluice: $(sluice_describe), a fresh \`sluice serve --max-active $PARALLEL\` (default log level) per run, its time from right before the first of $N \`POST /jobs\` (one keep-alive connection, python3 http.client, one POST after another) to the \`GET /queue\` poll (every $POLL_MS ms) that shows $N completed; curl's and aria2c's the process's wall time. $RUNS rounds, round-robin, median; a fresh output directory per run, \`sync\` between runs; every file of every run verified by SHA-256 ($VERIFIED files). Peak RSS: the largest of the runs (/usr/bin/time -v; the service's VmHWM). Quiet check: $(quiet_summary).

$TABLE

$TARGETS"

# ---------------------------------------------------------------- profile
if [[ $PROFILE == 1 || ($PROFILE == auto && $MISSED == 1) ]] && has_client sluice; then
  mkdir -p "$(dirname "$PROFILE_OUT")"
  run=profile
  PROFILER="" run_sluice paused
  CREATE_S=$POSTED_S CREATE_JSON=$SLUICE_JSON CREATE_CPU=$CPU_S
  log "creation alone: $N paused jobs in $(printf '%.3f' "$CREATE_S") s ($CREATE_JSON), service CPU ${CREATE_CPU}s"
  PROFILE_TEXT="# bench/per-job.sh profile, $(machine_line); $(sluice_describe)
## (0) the timed runs: sluice ${WALLS[sluice]}s; the ${N}th 201 after $(printf '%.3f ' "${SL_POSTED[@]}")s
## (1) creation alone: $N POST /jobs with \"paused\": true, fresh service, one connection
$CREATE_JSON
service CPU ${CREATE_CPU}s"
  if command -v strace >/dev/null; then
    PROFILER=strace run_sluice download
    log "under strace -c -f: ${WALL}s ($SLUICE_JSON)"
    PROFILE_TEXT+="
## (2) strace -c -f -p PID, a full run (${WALL}s under strace; $SLUICE_JSON; service CPU ${CPU_S}s)
$(head -40 "$TMP/strace.txt")"
  fi
  if command -v perf >/dev/null; then
    PROFILER=perf run_sluice download
    log "under perf record: ${WALL}s"
    demangle() { if command -v swift-demangle >/dev/null; then swift-demangle --simplified; else cat; fi; }
    report() { perf report -i "$TMP/perf.data" --stdio "$@" 2>/dev/null | grep -v '^#' | grep . | demangle || true; }
    PROFILE_TEXT+="
## (3) perf record -g -p PID (cpu-clock 1999 Hz), a full run (${WALL}s; $SLUICE_JSON; service CPU ${CPU_S}s)
### by thread (comm)
$(report --no-children --sort comm -g none | head -20)
### by DSO
$(report --no-children --sort dso -g none | head -15)
### self, by symbol (top 70)
$(report --no-children --sort comm,dso,sym -g none | head -70)
### inclusive (children), by symbol (top 70)
$(report --children --sort sym -g none | head -70)"
  fi
  PROFILER=
  echo "$PROFILE_TEXT" >"$PROFILE_OUT"
  log "wrote $PROFILE_OUT"
fi
