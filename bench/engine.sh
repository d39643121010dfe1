#!/usr/bin/env bash
# Downloader benchmark (issue 3): `sluice get` vs curl, aria2c and axel.
#
#   bench/engine.sh
#
# nginx on 127.0.0.1 serves a 1 GiB and a 4 GiB file of random data (temp dir on the real
# disk, removed at the end). For each size, every client downloads the file RUNS times,
# round-robin (curl, aria2c -x4, axel -n4, sluice get -x1, sluice get -x4), each run under
# /usr/bin/time -v for the peak RSS and CPU time; the wall time is measured around it with
# a nanosecond clock. The output (and aria2's/axel's/sluice's control files) is deleted
# after each run and `sync` runs before the next, so no run pays for another's writeback.
# The source files stay in the page cache (nothing is dropped): nginx sends from memory,
# the clients write to the real disk through the page cache. The first run of each client
# and size is verified against the source's SHA-256, so a broken download cannot post a
# fast number. Prints a markdown table: median wall time, MB/s (10^6 bytes/s), peak RSS
# (largest of the runs), CPU time, and throughput ratios to curl and to aria2c.
#
# Environment (all optional):
#   SKIP_BUILD=1        use the existing release binary instead of building it
#   SLUICE_BIN=PATH     binary to benchmark (default .build-release/release/sluice)
#   SIZES_MIB="1024 4096"   file sizes in MiB
#   RUNS=3              runs per client and size (median reported)
#   TOOLS="curl aria2c axel sluice-x1 sluice-x4"
#   PROFILE=1           afterwards, profile `sluice get -x1` on the first size with perf
#                       (0 to skip); report in bench/out/engine-profile.txt
#   QUIET_WAIT=300      before each run, wait up to this many seconds for an idle machine
#                       (CPU < 15% and no wrk/chromium/swift-build/swift-frontend process)
#   OUT=FILE            also write the markdown results to FILE
#   KEEP_TMP=1          keep the temp dir
#   TMPDIR=DIR          where the temp dir goes (must not be tmpfs; default /var/tmp)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
SLUICE_BIN=${SLUICE_BIN:-$REPO/.build-release/release/sluice}
SIZES_MIB=${SIZES_MIB:-1024 4096}
RUNS=${RUNS:-3}
TOOLS=${TOOLS:-curl aria2c axel sluice-x1 sluice-x4}
PROFILE=${PROFILE:-1}
QUIET_WAIT=${QUIET_WAIT:-300}

log() { printf '[engine] %s\n' "$*" >&2; }
die() { printf '[engine] FAIL: %s\n' "$*" >&2; exit 1; }

for tool in nginx curl aria2c axel sha256sum awk /usr/bin/time; do
  command -v "$tool" >/dev/null || die "$tool is not installed"
done

# ---------------------------------------------------------------- build
if [[ ${SKIP_BUILD:-0} != 1 ]]; then
  log "building release (scratch path .build-release)"
  (cd "$REPO" && swift build -c release --static-swift-stdlib --product sluice --scratch-path .build-release) >&2
fi
[[ -x $SLUICE_BIN ]] || die "no sluice binary at $SLUICE_BIN (build it or unset SKIP_BUILD)"

# ---------------------------------------------------------------- temp dir + cleanup
BASE_TMP=${TMPDIR:-/var/tmp}
FSTYPE=$(findmnt -no FSTYPE -T "$BASE_TMP" 2>/dev/null || stat -f -c %T "$BASE_TMP")
[[ $FSTYPE != tmpfs && $FSTYPE != ramfs ]] || die "$BASE_TMP is $FSTYPE; set TMPDIR to a directory on a real disk"
TMP=$(mktemp -d "$BASE_TMP/sluice-engine-bench.XXXXXX")
chmod 755 "$TMP"
NGINX_PID=
cleanup() {
  local status=$?
  if [[ -n $NGINX_PID ]] && kill -0 "$NGINX_PID" 2>/dev/null; then
    kill -TERM "$NGINX_PID" 2>/dev/null || true
    wait "$NGINX_PID" 2>/dev/null || true
  fi
  if [[ ${KEEP_TMP:-0} == 1 ]]; then log "kept $TMP"; else rm -rf "$TMP"; fi
  exit "$status"
}
trap cleanup EXIT
trap 'log "FAIL: command failed at line $LINENO: $BASH_COMMAND"' ERR
trap 'exit 130' INT TERM

mkdir -p "$TMP/root" "$TMP/nginx" "$TMP/dl" "$TMP/time"
declare -A SHA
for mib in $SIZES_MIB; do
  log "writing $mib MiB of random data to $TMP/root/f$mib.bin"
  head -c "$((mib * 1048576))" /dev/urandom >"$TMP/root/f$mib.bin"
  chmod 644 "$TMP/root/f$mib.bin"
  SHA[$mib]=$(sha256sum "$TMP/root/f$mib.bin" | cut -d' ' -f1) # also reads it into the page cache
done

# ---------------------------------------------------------------- helpers
port_is_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
free_port() {
  local port
  for port in $(seq 18280 18380); do
    if port_is_free "$port"; then echo "$port"; return; fi
  done
  die "no free port in 18280-18380"
}
wait_for_port() {
  local i
  for i in $(seq 1 100); do port_is_free "$1" || return 0; sleep 0.1; done
  die "nothing listening on port $1"
}

# Percentage of all cores busy over $1 seconds.
cpu_busy_percent() {
  local a b
  a=($(head -1 /proc/stat)); sleep "${1:-1}"; b=($(head -1 /proc/stat))
  awk -v a="${a[*]}" -v b="${b[*]}" 'BEGIN {
    n = split(a, x, " "); split(b, y, " ")
    for (i = 2; i <= n; i++) total += y[i] - x[i]
    idle = (y[5] - x[5]) + (y[6] - x[6])
    printf "%.0f", 100 * (total - idle) / total }'
}
busy_processes() {
  pgrep -f 'wrk|chromium|swift-frontend|swift-build' 2>/dev/null | grep -vx "$$" | tr '\n' ' ' || true
}
# Waits (up to QUIET_WAIT s) for 2 quiet seconds in a row; sets QUIET_NOTE ("" when quiet).
wait_for_quiet() {
  local deadline=$((SECONDS + QUIET_WAIT)) quiet=0 busy procs
  QUIET_NOTE=
  while true; do
    busy=$(cpu_busy_percent 1); procs=$(busy_processes)
    if ((busy < 15)) && [[ -z $procs ]]; then quiet=$((quiet + 1)); else quiet=0; fi
    ((quiet >= 2)) && return 0
    if ((SECONDS >= deadline)); then
      QUIET_NOTE="${busy}% CPU busy${procs:+, wrk/chromium/swift running}"
      log "WARNING: machine not idle after ${QUIET_WAIT}s ($QUIET_NOTE, load $(cut -d' ' -f1 /proc/loadavg)${procs:+, pids $procs}); measuring anyway"
      return 0
    fi
  done
}

# ---------------------------------------------------------------- nginx
NGINX_PORT=$(free_port)
if [[ $EUID == 0 ]]; then NGINX_USER="user root;"; else NGINX_USER=; fi
cat >"$TMP/nginx/nginx.conf" <<EOF
$NGINX_USER
worker_processes 2;
daemon off;
pid $TMP/nginx/nginx.pid;
error_log $TMP/nginx/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_timeout 65;
  default_type application/octet-stream;
  client_body_temp_path $TMP/nginx/client_body;
  proxy_temp_path $TMP/nginx/proxy;
  fastcgi_temp_path $TMP/nginx/fastcgi;
  uwsgi_temp_path $TMP/nginx/uwsgi;
  scgi_temp_path $TMP/nginx/scgi;
  server {
    listen 127.0.0.1:$NGINX_PORT;
    root $TMP/root;
  }
}
EOF
nginx -t -q -p "$TMP/nginx" -e "$TMP/nginx/error.log" -c "$TMP/nginx/nginx.conf" || die "nginx rejected its config"
nginx -p "$TMP/nginx" -e "$TMP/nginx/error.log" -c "$TMP/nginx/nginx.conf" &
NGINX_PID=$!
wait_for_port "$NGINX_PORT"
BASE_URL=http://127.0.0.1:$NGINX_PORT
log "nginx pid $NGINX_PID on $BASE_URL, files in $TMP/root ($FSTYPE)"

# ---------------------------------------------------------------- one run
OUTF=$TMP/dl/out.bin
tool_cmd() { # tool url -> prints nothing; sets CMD array
  local tool=$1 url=$2
  case $tool in
    curl) CMD=(curl -s -o "$OUTF" "$url") ;;
    aria2c) CMD=(aria2c -x4 -s4 -k1M --file-allocation=falloc --allow-overwrite=true --auto-file-renaming=false -q
      -d "$TMP/dl" -o out.bin "$url") ;;
    axel) CMD=(axel -n4 -q -o "$OUTF" "$url") ;;
    sluice-x1) CMD=("$SLUICE_BIN" get -x 1 -q -o "$OUTF" "$url") ;;
    sluice-x4) CMD=("$SLUICE_BIN" get -x 4 -q -o "$OUTF" "$url") ;;
    *) die "unknown tool $tool" ;;
  esac
}
clean_out() { rm -f "$OUTF" "$OUTF.aria2" "$OUTF.st" "$OUTF.sluice"; sync; }

# run_once tool mib verify -> sets WALL (s), RSS_KB, CPU_S
run_once() {
  local tool=$1 mib=$2 verify=$3 url=$BASE_URL/f$mib.bin tf=$TMP/time/t.txt start end status=0 got
  tool_cmd "$tool" "$url"
  clean_out
  start=$(date +%s%N)
  /usr/bin/time -v -o "$tf" "${CMD[@]}" >"$TMP/time/stdout" 2>"$TMP/time/stderr" || status=$?
  end=$(date +%s%N)
  ((status == 0)) || { cat "$TMP/time/stderr" "$tf" >&2; die "$tool exited with $status on $url"; }
  [[ $(stat -c %s "$OUTF") == $((mib * 1048576)) ]] || die "$tool wrote $(stat -c %s "$OUTF") bytes for $mib MiB"
  if [[ $verify == 1 ]]; then
    got=$(sha256sum "$OUTF" | cut -d' ' -f1)
    [[ $got == "${SHA[$mib]}" ]] || die "$tool: SHA-256 of the download is $got, expected ${SHA[$mib]}"
  fi
  WALL=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.3f", (e - s) / 1e9 }')
  RSS_KB=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$tf")
  CPU_S=$(awk -F': ' '/User time/ { u = $2 } /System time/ { s = $2 } END { printf "%.2f", u + s }' "$tf")
  clean_out
}

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
maximum() { sort -g | tail -1; }

# ---------------------------------------------------------------- measure
declare -A WALLS RSSES CPUS
NOTES=()
for mib in $SIZES_MIB; do
  for ((run = 1; run <= RUNS; run++)); do
    for tool in $TOOLS; do
      wait_for_quiet
      verify=0; ((run == 1)) && verify=1
      run_once "$tool" "$mib" "$verify"
      [[ -z $QUIET_NOTE ]] || NOTES+=("$tool $mib MiB run $run: $QUIET_NOTE")
      WALLS[$tool.$mib]+="$WALL "; RSSES[$tool.$mib]+="$RSS_KB "; CPUS[$tool.$mib]+="$CPU_S "
      log "$mib MiB run $run $tool: ${WALL}s, $(awk -v b=$((mib * 1048576)) -v t="$WALL" 'BEGIN { printf "%.0f", b / 1e6 / t }') MB/s, RSS $((RSS_KB / 1024)) MiB, CPU ${CPU_S}s$([[ $verify == 1 ]] && echo ', SHA-256 ok')"
    done
  done
done

# ---------------------------------------------------------------- report
label() {
  case $1 in
    curl) echo "curl $(curl --version | awk 'NR == 1 { print $2 }')" ;;
    aria2c) echo "aria2c $(aria2c --version | awk 'NR == 1 { print $3 }') -x4 -s4 -k1M" ;;
    axel) echo "axel $(axel --version | awk 'NR == 1 { print $2 }') -n4" ;;
    sluice-x1) echo "**sluice get -x1**" ;;
    sluice-x4) echo "**sluice get -x4**" ;;
  esac
}
words() { tr ' ' '\n' <<<"$1" | grep .; }
size_label() { if (($1 % 1024 == 0)); then echo "$(($1 / 1024)) GiB"; else echo "$1 MiB"; fi; }
declare -A MED PEAK
TABLE="| tool | size | median wall s | MB/s | peak RSS MiB | CPU s (user+sys) | vs curl | vs aria2c |
|---|---|---:|---:|---:|---:|---:|---:|"
for mib in $SIZES_MIB; do
  for tool in $TOOLS; do MED[$tool.$mib]=$(words "${WALLS[$tool.$mib]}" | median); done
  for tool in $TOOLS; do
    w=${MED[$tool.$mib]}
    mbs=$(awk -v b=$((mib * 1048576)) -v t="$w" 'BEGIN { printf "%.0f", b / 1e6 / t }')
    PEAK[$tool.$mib]=$(words "${RSSES[$tool.$mib]}" | maximum)
    cpu=$(words "${CPUS[$tool.$mib]}" | median)
    vc=$(awk -v c="${MED[curl.$mib]:-0}" -v t="$w" 'BEGIN { if (c > 0) printf "%.2fx", c / t; else print "-" }')
    va=$(awk -v c="${MED[aria2c.$mib]:-0}" -v t="$w" 'BEGIN { if (c > 0) printf "%.2fx", c / t; else print "-" }')
    TABLE+="
| $(label "$tool") | $(size_label "$mib") | $w | $mbs | $(awk -v k="${PEAK[$tool.$mib]}" 'BEGIN { printf "%.1f", k / 1024 }') | $cpu | $vc | $va |"
  done
done

# Targets: sluice -x1 >= 1.0x curl's throughput, sluice -x4 >= 1.5x aria2c -x4's, peak RSS
# <= 48 MiB on the largest file.
verdict() { awk -v v="$1" -v t="$2" -v dir="$3" 'BEGIN { ok = dir == ">=" ? v >= t : v <= t; print (ok ? "meets" : "**misses**") }'; }
has_tool() { [[ " $TOOLS " == *" $1 "* ]]; }
TARGETS=
LARGEST=$(words "$SIZES_MIB" | sort -n | tail -1)
for mib in $SIZES_MIB; do
  if has_tool sluice-x1 && has_tool curl; then
    r=$(awk -v c="${MED[curl.$mib]}" -v t="${MED[sluice-x1.$mib]}" 'BEGIN { printf "%.2f", c / t }')
    TARGETS+="- sluice -x1 / curl throughput, $(size_label "$mib"): ${r}x (target >= 1.0x): $(verdict "$r" 1.0 '>=')"$'\n'
  fi
  if has_tool sluice-x4 && has_tool aria2c; then
    r=$(awk -v c="${MED[aria2c.$mib]}" -v t="${MED[sluice-x4.$mib]}" 'BEGIN { printf "%.2f", c / t }')
    TARGETS+="- sluice -x4 / aria2c -x4 throughput, $(size_label "$mib"): ${r}x (target >= 1.5x): $(verdict "$r" 1.5 '>=')"$'\n'
  fi
done
for tool in sluice-x1 sluice-x4; do
  has_tool "$tool" || continue
  m=$(awk -v k="${PEAK[$tool.$LARGEST]}" 'BEGIN { printf "%.1f", k / 1024 }')
  TARGETS+="- $tool peak RSS, $(size_label "$LARGEST"): $m MiB (target <= 48 MiB): $(verdict "$m" 48 '<=')"$'\n'
done

NOTE_TEXT="every run started on an idle machine (CPU < 15% for 2 s in a row, no wrk/chromium/swift-build/swift-frontend process)"
if ((${#NOTES[@]} > 0)); then NOTE_TEXT="NOT idle before ${#NOTES[@]} run(s): $(IFS=';'; echo "${NOTES[*]}" | sed 's/;/; /g')"; fi
SRC_DEV=$(df --output=source "$TMP" | tail -1)
REPORT="$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), Linux $(uname -r), $FSTYPE on $SRC_DEV; nginx $(nginx -v 2>&1 | sed 's/.*nginx\///') (sendfile, access_log off) on 127.0.0.1; $RUNS runs per client and size, round-robin, median wall time; MB/s = 10^6 bytes/s; peak RSS = largest of the runs (/usr/bin/time -v); CPU = median user+sys. The source files stay in the page cache (nothing dropped); the clients write to the same ext4 disk, the output is deleted (then \`sync\`) after every run. First run of each client and size verified by SHA-256. Quiet check: $NOTE_TEXT.

$TABLE

$TARGETS"
echo "$REPORT"
if [[ -n ${OUT:-} ]]; then
  mkdir -p "$(dirname "$OUT")"
  echo "$REPORT" >"$OUT"
  log "wrote $OUT"
fi

# ---------------------------------------------------------------- profile
if [[ $PROFILE == 1 ]]; then
  command -v perf >/dev/null || die "perf is not installed (apt-get install -y linux-perf)"
  mib=$(words "$SIZES_MIB" | sort -n | head -1)
  PROF=${PROFILE_OUT:-$HERE/out/engine-profile.txt}
  mkdir -p "$(dirname "$PROF")"
  wait_for_quiet
  log "profiling sluice get -x1 on $mib MiB with perf record (cpu-clock, 1999 Hz, frame-pointer call graphs)"
  clean_out
  perf record -q -F 1999 -e cpu-clock -g -o "$TMP/perf.data" -- \
    "$SLUICE_BIN" get -x 1 -q -o "$OUTF" "$BASE_URL/f$mib.bin" >"$TMP/perf.out" 2>&1 \
    || { cat "$TMP/perf.out" >&2; die "perf record failed"; }
  clean_out
  if command -v strace >/dev/null; then
    log "counting the syscalls of sluice get -x1 on $mib MiB with strace -c -f"
    strace -c -f -o "$TMP/strace.txt" "$SLUICE_BIN" get -x 1 -q -o "$OUTF" "$BASE_URL/f$mib.bin" || die "strace run failed"
    clean_out
  fi
  report() { perf report -i "$TMP/perf.data" --stdio "$@" 2>/dev/null | grep -v '^#' | grep . || true; }
  {
    echo "# sluice get -x1, $mib MiB from nginx on 127.0.0.1, $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "## by thread (comm)"
    report --no-children --sort comm -g none | head -15
    echo "## by DSO"
    report --no-children --sort dso -g none | head -15
    echo "## self, by symbol (top 50)"
    report --no-children --sort dso,sym -g none | head -50
    echo "## inclusive (children), by symbol (top 60)"
    report --children --sort sym -g none | head -60
    if [[ -f $TMP/strace.txt ]]; then
      echo "## strace -c -f (a separate run; strace slows it down)"
      head -30 "$TMP/strace.txt"
    fi
  } >"$PROF"
  log "wrote $PROF"
fi
