#!/usr/bin/env bash
# Webhooks (issue 21, findings 3 and 4): what a receiver that never answers costs the others,
# and what an attempt costs as the backlog grows.
#
#   bench/webhooks.sh
#   SIZES="250 2500 5000" bench/webhooks.sh
#
# One run:
#   1. delay: a node with `--webhook` to a receiver that answers 200 at once (a python
#      http.server recording when each call came) and 16 jobs whose `notify` is a port that
#      takes connections and never answers (the service's 10 s attempt timeout then runs out
#      every time). Then an unrelated job; its delay is the time from its `completed` (seen by
#      polling GET /jobs/ID every 20 ms) to its call at the receiver. Target: within 10 s.
#   2. backlog: for each SIZE, a fresh node with `--webhook` to a closed port (each attempt
#      fails at once: connection refused) and SIZE jobs of the origin's
#      /testdata/1?status=404, each failing at once with one `failed` delivery. Once all have
#      failed: for WINDOW seconds, the node's CPU (utime + stime) over the attempts it made
#      (sluice_webhook_deliveries_total, every outcome) = CPU per attempt; and the seconds
#      from the first create until SIZE attempts were made (every delivery's first).
#      Target: per attempt at 2,500 pending at most twice that at 250, plus 0.3 ms, and 2,500
#      first attempts within a minute.
#
# Environment (all optional; see also bench/lib.sh):
#   SLUICE_BIN=PATH   binary (default .build-release/release/sluice, built unless SKIP_BUILD=1)
#   SIZES="250 2500 5000"   backlog sizes        WINDOW=20   seconds measured per size
#   OUT=FILE          also write the markdown results to FILE
set -euo pipefail

BENCH_NAME=webhooks
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

read -ra SIZE_LIST <<<"${SIZES:-250 2500 5000}"
WINDOW=${WINDOW:-20}
require_tools curl jq python3
[[ $TLS == 0 ]] || die "webhooks.sh runs over plain HTTP only (unset TLS)"
resolve_sluice
log "sluice: $(sluice_describe)"
bench_tmp

# ================================================================ receivers
RECEIVER_PORT=$(free_port)
python3 - "$RECEIVER_PORT" "$TMP/calls.txt" <<'EOF' &
import http.server, json, sys, time
port, log = int(sys.argv[1]), sys.argv[2]
class Hook(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        job = json.loads(body).get("job", {}).get("id", "")
        with open(log, "a") as f:
            f.write(f"{int(time.time() * 1000)} {job}\n")
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", port), Hook).serve_forever()
EOF
BENCH_PIDS+=($!)
SILENT_PORT=$(free_port)
python3 - "$SILENT_PORT" <<'EOF' &
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(1024)  # connections complete into the backlog; nothing is ever read or answered
time.sleep(1e9)
EOF
BENCH_PIDS+=($!)
wait_for_port "$RECEIVER_PORT"
wait_for_port "$SILENT_PORT"
DEAD_PORT=$(free_port)

start_sluice "$TMP/origin"
ORIGIN_URL=$SLUICE_URL
BENCH_PIDS+=("$SLUICE_PID")
SLUICE_PID=

metric_attempts() {
  curl -sf "$SLUICE_URL/metrics" | awk '/^sluice_webhook_deliveries_total[{ ]/ { n += $NF } END { printf "%d", n }'
}
wait_state() { # wait_state ID STATE SECONDS
  local deadline=$((SECONDS + $3))
  until [[ $(job_json "$1" | jq -r .state) == "$2" ]]; do
    ((SECONDS < deadline)) || die "job $1 not $2 after $3 s"
    sleep 0.02
  done
}

# ================================================================ 1. delay
wait_for_quiet "the delay run"
start_sluice "$TMP/delay" --webhook "http://127.0.0.1:$RECEIVER_PORT/hook"
STALLED=()
for i in $(seq 1 16); do
  STALLED+=("$(post_job "{\"url\":\"$ORIGIN_URL/testdata/1000?seed=$i\",\"notify\":\"http://127.0.0.1:$SILENT_PORT/hook\"}")")
done
for id in "${STALLED[@]}"; do wait_state "$id" completed 30; done
sleep 1 # the silent receiver's first attempts under way
ID=$(post_job "{\"url\":\"$ORIGIN_URL/testdata/1000?seed=99\"}")
wait_state "$ID" completed 30
DONE_MS=$(now_ms)
deadline=$((SECONDS + 120))
until grep -q " $ID\$" "$TMP/calls.txt" 2>/dev/null; do
  ((SECONDS < deadline)) || break
  sleep 0.02
done
CALL_MS=$(awk -v id="$ID" '$2 == id { print $1; exit }' "$TMP/calls.txt" 2>/dev/null || true)
if [[ -n $CALL_MS ]]; then
  DELAY=$(awk -v a="$CALL_MS" -v b="$DONE_MS" 'BEGIN { d = (a - b) / 1000; if (d < 0) d = 0; printf "%.2f", d }')
else
  DELAY="> 120"
fi
log "the unrelated job's call came $DELAY s after it completed"
result webhook_delay_s "$DELAY"
stop_sluice

# ================================================================ 2. backlog
ROWS=""
for size in "${SIZE_LIST[@]}"; do
  wait_for_quiet "the backlog run of $size"
  start_sluice "$TMP/backlog-$size" --webhook "http://127.0.0.1:$DEAD_PORT/hook"
  node=$SLUICE_PID
  start=$(now_ms)
  for i in $(seq 1 "$size"); do
    curl -sf -o /dev/null -X POST "$SLUICE_URL/jobs" -H 'Content-Type: application/json' \
      -d "{\"url\":\"$ORIGIN_URL/testdata/1?status=404&seed=$i\"}" || die "POST /jobs failed"
  done
  deadline=$((SECONDS + 300))
  until (($(curl -sf "$SLUICE_URL/metrics" | awk '/^sluice_jobs[{ ].*state="failed"/ { n += $NF } END { printf "%d", n }') >= size)); do
    ((SECONDS < deadline)) || die "not all $size jobs failed within 300 s"
    sleep 0.2
  done
  first=""
  deadline=$((SECONDS + 180))
  while (($(metric_attempts) < size)); do
    ((SECONDS < deadline)) || break
    sleep 0.1
  done
  (($(metric_attempts) >= size)) && first=$(awk -v a="$(now_ms)" -v b="$start" 'BEGIN { printf "%.1f", (a - b) / 1000 }')
  before=$(metric_attempts)
  phase_begin "$node"
  sleep "$WINDOW"
  phase_end "$node"
  after=$(metric_attempts)
  attempts=$((after - before))
  per=$(awk -v t="$SERVER_TICKS" -v hz="$CLK_TCK" -v n="$attempts" 'BEGIN { if (n > 0) printf "%.3f", 1000 * t / hz / n; else print "-" }')
  log "$size pending: $attempts attempts in ${WINDOW}s, $per ms CPU each; first attempts of all after ${first:-more than 180} s"
  result "webhook_cpu_per_attempt_ms_$size" "$per"
  result "webhook_first_attempts_s_$size" "${first:-}"
  ROWS+="| $size | $attempts | $per | ${first:-> 180} | ${OTHER_PCT}% |"$'\n'
  stop_sluice
done

emit_report "$(
  cat <<EOF
### Webhooks: $(sluice_describe)

$(machine_line)

**Delay** of an unrelated job's \`--webhook\` call while 16 jobs' \`notify\` receiver never
answers (the attempt timeout is 10 s): **$DELAY s** after the job completed.

**Backlog**: \`--webhook\` to a closed port, every delivery failing at once and retried on its
schedule; measured over ${WINDOW} s once every job had failed.

| pending | attempts in ${WINDOW} s | CPU per attempt (ms) | all first attempts made after (s, from the first create) | other processes' CPU |
|---:|---:|---:|---:|---:|
$ROWS
EOF
)"
