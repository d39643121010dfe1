#!/usr/bin/env bash
# Downloader benchmark (issue 3; rows 1-2 of bench/table.sh): `sluice get` vs curl, aria2c and axel.
#
#   bench/engine.sh
#
# nginx on 127.0.0.1 (bench/lib.sh: 2 workers, sendfile, access_log off) serves a 1 GiB and a
# 4 GiB file of random data (temp dir on the real disk, removed at the end). For each size,
# every client downloads the file RUNS times, round-robin (curl, aria2c -x4, axel -n4,
# sluice get -x1, sluice get -x4), each run under /usr/bin/time -v for the peak RSS and CPU
# time; the wall time is measured around it with a nanosecond clock. The output (and aria2's/
# axel's/sluice's control files) is deleted after each run and `sync` runs before the next, so
# no run pays for another's writeback. The source files stay in the page cache (nothing is
# dropped): nginx sends from memory, the clients write to the real disk through the page
# cache. Every download is verified against the source's SHA-256 after its timed run (a wrong
# byte fails the run), so a broken download cannot post a fast number. Before each run the
# script waits for a quiet machine. Prints a markdown table: median wall time, MB/s (10^6
# bytes/s), peak RSS (largest of the runs), the client's CPU time, nginx's CPU time during the
# run, and throughput ratios to curl and to aria2c, then the targets (sluice -x1 >= 1.0x curl,
# sluice -x4 >= 1.5x aria2c -x4 (1.3x with TLS=1, issue 19), peak RSS <= 48 MiB).
#
# TLS=1 (bench/lib.sh) does all of it over HTTPS: nginx serves TLS 1.3 only with a throwaway
# certificate, and the clients trust its CA: curl --http1.1 --cacert, aria2c
# --ca-certificate=, sluice get --cacert.
#
# Environment (all optional; see also bench/lib.sh):
#   SLUICE_BIN=PATH     binary to benchmark (default .build-release/release/sluice, built
#                       first unless SKIP_BUILD=1)
#   SIZES_MIB="1024 4096"   file sizes in MiB
#   RUNS=3              runs per client and size (median reported)
#   TOOLS="curl aria2c axel sluice-x1 sluice-x4"
#   VERIFY=all          SHA-256 of every download (first: only each client's first run per size)
#   PROFILE=1           afterwards, profile `sluice get -x1` on the first size with
#                       `perf record -a` (the whole machine: nginx's share shows too), and count
#                       its syscalls with strace (0 to skip); report in PROFILE_OUT (default
#                       bench/out/engine-profile.txt, engine-tls-profile.txt with TLS=1);
#                       PROFILE_CURL=1 profiles curl the same way
#   TARGET_X1=1.0       sluice -x1 / curl target     TARGET_X4=1.5 (1.3 with TLS=1) -x4 / aria2c
#   TLS=1               everything over HTTPS (see above and bench/lib.sh)
#   QUIET_WAIT=300      before each run, wait up to this many seconds for an idle machine
#   OUT=FILE            also write the markdown results to FILE
#   KEEP_TMP=1          keep the temp dir      TMPDIR=DIR  where it goes (default /var/tmp)
set -euo pipefail

BENCH_NAME=engine
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SIZES_MIB=${SIZES_MIB:-1024 4096}
RUNS=${RUNS:-3}
TOOLS=${TOOLS:-curl aria2c axel sluice-x1 sluice-x4}
PROFILE=${PROFILE:-1}
PROFILE_CURL=${PROFILE_CURL:-0}
VERIFY=${VERIFY:-all}
TARGET_X1=${TARGET_X1:-1.0}
if [[ ${TLS:-0} == 1 ]]; then TARGET_X4=${TARGET_X4:-1.3}; else TARGET_X4=${TARGET_X4:-1.5}; fi

needed=(curl /usr/bin/time)
for tool in $TOOLS; do
  case $tool in
    curl | aria2c | axel) needed+=("$tool") ;;
    sluice-x1 | sluice-x4) ;;
    *) die "unknown tool $tool in TOOLS (curl aria2c axel sluice-x1 sluice-x4)" ;;
  esac
done
require_tools "${needed[@]}"
[[ $PROFILE != 1 ]] || require_tools perf

resolve_sluice
log "sluice: $(sluice_describe)"
bench_tmp
mkdir -p "$TMP/root" "$TMP/dl" "$TMP/time"
for mib in $SIZES_MIB; do make_random_file "$TMP/root/f$mib.bin" "$mib"; done
start_nginx "$TMP/root"

# ---------------------------------------------------------------- one run
OUTF=$TMP/dl/out.bin
tool_cmd() { # tool url -> sets CMD array
  local tool=$1 url=$2
  case $tool in
    curl) CMD=(curl -s "${CURL_TLS[@]}" -o "$OUTF" "$url") ;;
    aria2c) CMD=(aria2c -x4 -s4 -k1M --file-allocation=falloc --allow-overwrite=true --auto-file-renaming=false -q
      "${ARIA2_TLS[@]}" -d "$TMP/dl" -o out.bin "$url") ;;
    axel) CMD=(axel -n4 -q -o "$OUTF" "$url") ;;
    sluice-x1) CMD=("$SLUICE_BIN" get -x1 -q "${SLUICE_TLS[@]}" -o "$OUTF" "$url") ;;
    sluice-x4) CMD=("$SLUICE_BIN" get -x4 -q "${SLUICE_TLS[@]}" -o "$OUTF" "$url") ;;
  esac
}
clean_out() {
  rm -f "$OUTF" "$OUTF.aria2" "$OUTF.st" "$OUTF.sluice"
  sync
}

# run_once tool mib verify -> sets WALL (s), RSS_KB, CPU_S, NGINX_CPU_S
run_once() {
  local tool=$1 mib=$2 verify=$3 tf=$TMP/time/t.txt start end status=0
  local url=$NGINX_URL/f$mib.bin
  tool_cmd "$tool" "$url"
  clean_out
  phase_begin "$NGINX_PID"
  start=$(now_ns)
  /usr/bin/time -v -o "$tf" "${CMD[@]}" >"$TMP/time/stdout" 2>"$TMP/time/stderr" || status=$?
  end=$(now_ns)
  phase_end "$NGINX_PID"
  NGINX_CPU_S=$(awk -v t="$SERVER_TICKS" -v hz="$CLK_TCK" 'BEGIN { printf "%.2f", t / hz }')
  ((status == 0)) || {
    cat "$TMP/time/stderr" "$tf" >&2
    die "$tool exited with $status on $url"
  }
  [[ $(stat -c %s "$OUTF") == $((mib * MIB)) ]] || die "$tool wrote $(stat -c %s "$OUTF") bytes for $mib MiB"
  [[ $verify == 1 ]] && verify_sha256 "$OUTF" "${FILE_SHA256[$TMP/root/f$mib.bin]}" "$tool, $mib MiB"
  WALL=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.3f", (e - s) / 1e9 }')
  RSS_KB=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$tf")
  CPU_S=$(awk -F': ' '/User time/ { u = $2 } /System time/ { s = $2 } END { printf "%.2f", u + s }' "$tf")
  clean_out
}

# ---------------------------------------------------------------- measure
declare -A WALLS RSSES CPUS NCPUS
for mib in $SIZES_MIB; do
  for ((run = 1; run <= RUNS; run++)); do
    for tool in $TOOLS; do
      wait_for_quiet "$tool $mib MiB run $run"
      verify=0
      [[ $VERIFY == all || $run == 1 ]] && verify=1
      run_once "$tool" "$mib" "$verify"
      WALLS[$tool.$mib]+="$WALL " RSSES[$tool.$mib]+="$RSS_KB " CPUS[$tool.$mib]+="$CPU_S " NCPUS[$tool.$mib]+="$NGINX_CPU_S "
      log "$mib MiB run $run $tool: ${WALL}s, $(awk -v b=$((mib * MIB)) -v t="$WALL" 'BEGIN { printf "%.0f", b / 1e6 / t }') MB/s, RSS $((RSS_KB / 1024)) MiB, CPU ${CPU_S}s (nginx ${NGINX_CPU_S}s)$([[ $verify == 1 ]] && echo ', SHA-256 ok')"
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
has_tool() { [[ " $TOOLS " == *" $1 "* ]]; }
declare -A MED PEAK MBS
TABLE="| tool | size | median wall s | MB/s | peak RSS MiB | CPU s (user+sys) | nginx CPU s | vs curl | vs aria2c |
|---|---|---:|---:|---:|---:|---:|---:|---:|"
for mib in $SIZES_MIB; do
  for tool in $TOOLS; do MED[$tool.$mib]=$(words "${WALLS[$tool.$mib]}" | median); done
  for tool in $TOOLS; do
    w=${MED[$tool.$mib]}
    MBS[$tool.$mib]=$(awk -v b=$((mib * MIB)) -v t="$w" 'BEGIN { printf "%.0f", b / 1e6 / t }')
    PEAK[$tool.$mib]=$(words "${RSSES[$tool.$mib]}" | maximum)
    cpu=$(words "${CPUS[$tool.$mib]}" | median)
    ncpu=$(words "${NCPUS[$tool.$mib]}" | median)
    vc=$(awk -v c="${MED[curl.$mib]:-0}" -v t="$w" 'BEGIN { if (c > 0) printf "%.2fx", c / t; else print "-" }')
    va=$(awk -v c="${MED[aria2c.$mib]:-0}" -v t="$w" 'BEGIN { if (c > 0) printf "%.2fx", c / t; else print "-" }')
    TABLE+="
| $(label "$tool") | $(size_label "$mib") | $w | ${MBS[$tool.$mib]} | $(awk -v k="${PEAK[$tool.$mib]}" 'BEGIN { printf "%.1f", k / 1024 }') | $cpu | $ncpu | $vc | $va |"
    result "engine.$tool.$mib.mbs" "${MBS[$tool.$mib]}"
    result "engine.$tool.$mib.wall_s" "$w"
    result "engine.$tool.$mib.peak_rss_mib" "$(awk -v k="${PEAK[$tool.$mib]}" 'BEGIN { printf "%.1f", k / 1024 }')"
    result "engine.$tool.$mib.cpu_s" "$cpu"
    result "engine.$tool.$mib.nginx_cpu_s" "$ncpu"
    result "engine.$tool.$mib.walls" "${WALLS[$tool.$mib]% }"
  done
done
for tool in $TOOLS; do
  tool_cmd "$tool" "$SCHEME://127.0.0.1:PORT/fN.bin"
  result "engine.$tool.cmd" "${CMD[*]//$TMP/\$TMP}"
  result "engine.$tool.label" "$(label "$tool" | tr -d '*')"
done
result engine.verified "$VERIFIED"

TARGETS=
LARGEST=$(words "$SIZES_MIB" | sort -n | tail -1)
yesno() { [[ $1 == yes ]] && echo meets || echo "**misses**"; }
for mib in $SIZES_MIB; do
  if has_tool sluice-x1 && has_tool curl; then
    r=$(ratio "${MED[curl.$mib]}" "${MED[sluice-x1.$mib]}")
    TARGETS+="- sluice -x1 / curl throughput, $(size_label "$mib"): ${r}x (target >= ${TARGET_X1}x): $(yesno "$(meets "$r" '>=' "$TARGET_X1")")"$'\n'
  fi
  if has_tool sluice-x4 && has_tool aria2c; then
    r=$(ratio "${MED[aria2c.$mib]}" "${MED[sluice-x4.$mib]}")
    TARGETS+="- sluice -x4 / aria2c -x4 throughput, $(size_label "$mib"): ${r}x (target >= ${TARGET_X4}x): $(yesno "$(meets "$r" '>=' "$TARGET_X4")")"$'\n'
  fi
done
for tool in sluice-x1 sluice-x4; do
  has_tool "$tool" || continue
  m=$(awk -v k="${PEAK[$tool.$LARGEST]}" 'BEGIN { printf "%.1f", k / 1024 }')
  TARGETS+="- $tool peak RSS, $(size_label "$LARGEST"): $m MiB (target <= 48 MiB): $(yesno "$(meets "$m" '<=' 48)")"$'\n'
done

VERIFIED_TEXT="every download verified by SHA-256 ($VERIFIED downloads)"
[[ $VERIFY == all ]] || VERIFIED_TEXT="first run of each client and size verified by SHA-256 ($VERIFIED downloads)"
emit_report "$(machine_line), $TMP_FSTYPE on $TMP_DEVICE; nginx $(nginx_version) ($NGINX_WORKERS workers, sendfile, access_log off) on 127.0.0.1${TLS_CA:+; $(tls_describe)}; sluice: $(sluice_describe); $RUNS runs per client and size, round-robin, median wall time; MB/s = 10^6 bytes/s; peak RSS = largest of the runs (/usr/bin/time -v); CPU = median user+sys of the client; nginx CPU = median CPU of nginx's workers during the run (/proc). The source files stay in the page cache (nothing dropped); the clients write to the same disk, the output is deleted (then \`sync\`) after every run; $VERIFIED_TEXT. Quiet check: $(quiet_summary).

$TABLE

$TARGETS"

# ---------------------------------------------------------------- profile
if [[ $PROFILE == 1 ]]; then
  mib=$(words "$SIZES_MIB" | sort -n | head -1)
  if [[ $TLS == 1 ]]; then PROF=${PROFILE_OUT:-$BENCH_DIR/out/engine-tls-profile.txt}; else PROF=${PROFILE_OUT:-$BENCH_DIR/out/engine-profile.txt}; fi
  mkdir -p "$(dirname "$PROF")"
  PROFILED=(sluice-x1)
  [[ $PROFILE_CURL != 1 ]] || PROFILED+=(curl)
  # profile_run TOOL: one download of the first size under `perf record -a` (the whole machine,
  # so that nginx's share shows next to the client's), verified by SHA-256.
  profile_run() {
    local tool=$1
    tool_cmd "$tool" "$NGINX_URL/f$mib.bin"
    clean_out
    wait_for_quiet "profile $tool"
    log "profiling $tool on $mib MiB with perf record -a (cpu-clock, 1999 Hz, frame-pointer call graphs)"
    perf record -q -a -F 1999 -e cpu-clock -g -o "$TMP/perf-$tool.data" -- "${CMD[@]}" >"$TMP/perf.out" 2>&1 \
      || {
        cat "$TMP/perf.out" >&2
        die "perf record failed"
      }
    verify_sha256 "$OUTF" "${FILE_SHA256[$TMP/root/f$mib.bin]}" "$tool under perf, $mib MiB"
    clean_out
  }
  for tool in "${PROFILED[@]}"; do profile_run "$tool"; done
  if command -v strace >/dev/null; then
    log "counting the syscalls of sluice get -x1 on $mib MiB with strace -c -f"
    tool_cmd sluice-x1 "$NGINX_URL/f$mib.bin"
    strace -c -f -o "$TMP/strace.txt" "${CMD[@]}" || die "strace run failed"
    verify_sha256 "$OUTF" "${FILE_SHA256[$TMP/root/f$mib.bin]}" "sluice-x1 under strace, $mib MiB"
    clean_out
  fi
  {
    for tool in "${PROFILED[@]}"; do
      report() { perf report -i "$TMP/perf-$tool.data" --stdio "$@" 2>/dev/null | grep -v '^#' | grep . || true; }
      tool_cmd "$tool" "$NGINX_URL/f$mib.bin"
      echo "# $tool: \`${CMD[*]//$TMP/\$TMP}\`, $mib MiB from nginx on 127.0.0.1${TLS_CA:+ over TLS}, perf record -a (the whole machine: the client, nginx, kernel threads), $(date -u '+%Y-%m-%d %H:%M UTC'); $(sluice_describe)"
      echo "## by process name (comm)"
      report --no-children --sort comm -g none | head -15
      echo "## by DSO"
      report --no-children --sort comm,dso -g none | head -20
      echo "## self, by symbol (top 60)"
      report --no-children --sort comm,dso,sym -g none | head -60
      echo "## inclusive (children), by symbol (top 60)"
      report --children --sort comm,sym -g none | head -60
      echo
    done
    if [[ -f $TMP/strace.txt ]]; then
      echo "## sluice get -x1: strace -c -f (a separate run; strace slows it down)"
      head -30 "$TMP/strace.txt"
    fi
  } >"$PROF"
  log "wrote $PROF"
fi
