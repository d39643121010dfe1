#!/usr/bin/env bash
# Event-stream readers that stop reading (issue 21, finding 5): what each costs the service.
#
#   bench/slow-readers.sh
#   READERS=300 bench/slow-readers.sh
#
# One run: a node with JOBS downloads running (each paced by the origin, so that each sends a
# progress event every 250 ms for the whole run), then READERS connections that send
# `GET /events` and never read a byte (python sockets). The node's RSS (VmRSS) is read before
# the readers connect and every 5 s for HOLD seconds after; the cost per reader is the
# growth at the end over READERS. The kernel's socket buffers fill first (not counted in
# RSS); past them the service's own queue per subscriber is what grows, bounded at 512 KiB of
# encoded events (a full queue ends that subscriber). Target: below 1 MiB per reader.
#
# Environment (all optional; see also bench/lib.sh):
#   SLUICE_BIN=PATH   binary (default .build-release/release/sluice, built unless SKIP_BUILD=1)
#   READERS=100       connections that never read      JOBS=16   downloads running
#   HOLD=60           seconds the readers stay           OUT=FILE  also write the report here
set -euo pipefail

BENCH_NAME=slow-readers
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

READERS=${READERS:-100}
JOBS=${JOBS:-16}
HOLD=${HOLD:-60}
require_tools curl jq python3
[[ $TLS == 0 ]] || die "slow-readers.sh runs over plain HTTP only (unset TLS)"
resolve_sluice
log "sluice: $(sluice_describe)"
bench_tmp

start_sluice "$TMP/origin"
ORIGIN_URL=$SLUICE_URL
BENCH_PIDS+=("$SLUICE_PID")
SLUICE_PID=
start_sluice "$TMP/node" --max-active "$JOBS"
NODE_PID=$SLUICE_PID
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$NODE_PID/status"; }

wait_for_quiet "the run"
for i in $(seq 1 "$JOBS"); do
  post_job "{\"url\":\"$ORIGIN_URL/testdata/1G?seed=$i&rate=256K\",\"connections\":1}" >/dev/null
done
sleep 5 # every download running and reporting
BEFORE=$(rss_kib)
PORT=${SLUICE_URL##*:}
python3 - "$PORT" "$READERS" "$HOLD" <<'EOF' &
import socket, sys, time
port, readers, hold = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
held = []
for _ in range(readers):
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
    held.append(s)
time.sleep(hold)
EOF
READERS_PID=$!
BENCH_PIDS+=("$READERS_PID")
SAMPLES=""
PEAK=$BEFORE
for ((t = 5; t <= HOLD; t += 5)); do
  sleep 5
  check_alive "the node" "$NODE_PID"
  now=$(rss_kib)
  ((now > PEAK)) && PEAK=$now
  SAMPLES+="$t s: $((now / 1024)) MiB; "
done
AFTER=$(rss_kib)
PER=$(awk -v a="$PEAK" -v b="$BEFORE" -v n="$READERS" 'BEGIN { d = (a - b) / n; if (d < 0) d = 0; printf "%.1f", d }')
log "RSS $((BEFORE / 1024)) MiB before, peak $((PEAK / 1024)) MiB, $((AFTER / 1024)) MiB at the end: $PER KiB per reader"
result slow_reader_kib "$PER"

emit_report "$(
  cat <<EOF
### Slow event-stream readers: $(sluice_describe)

$(machine_line)

$READERS connections send \`GET /events\` and never read (receive buffer 4 KiB), while $JOBS
downloads each send a progress event every 250 ms, for $HOLD s.

| RSS before | peak | at the end | per reader (peak - before) |
|---:|---:|---:|---:|
| $((BEFORE / 1024)) MiB | $((PEAK / 1024)) MiB | $((AFTER / 1024)) MiB | $PER KiB |

Samples: $SAMPLES
EOF
)"
