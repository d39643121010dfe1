#!/usr/bin/env bash
# Checks what the container image would run, without a Docker engine:
#  1. builds the binary with the Dockerfile's own command (release, static Swift stdlib);
#  2. checks with ldd that it needs only libraries the runtime stage installs;
#  3. runs it as a non-root user with a fresh data directory and SLUICE_* variables only;
#  4. checks /healthz, the built-in dashboard and openapi.yaml, `sluice healthcheck`, a download from its own /testdata, and that
#     SIGTERM exits 0 within 5 s.
# Takes a release build (~15 min cold, seconds when .build-release is warm): not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=${SCRATCH_PATH:-.build-release}
say() { printf '== %s\n' "$*"; }

say "build: swift build -c release --static-swift-stdlib --product sluice (scratch $scratch)"
swift build -c release --static-swift-stdlib --product sluice --scratch-path "$scratch" 2>&1 | tail -n 2
binary="$(swift build -c release --scratch-path "$scratch" --show-bin-path)/sluice"
ls -l "$binary"

say "ldd: only the runtime stage's libraries (libc, libm, libstdc++/libgcc, sqlite3, zlib)"
ldd "$binary" | tee /tmp/sluice-ldd.txt
allowed='linux-vdso|ld-linux|libc\.so|libm\.so|libpthread|libdl\.so|librt\.so|libutil|libgcc_s|libstdc\+\+|libsqlite3|libz\.so'
unexpected=$(grep -Ev "$allowed" /tmp/sluice-ldd.txt || true)
if [ -n "$unexpected" ]; then
    echo "unexpected libraries:"; echo "$unexpected"; exit 1
fi
if grep -q "not found" /tmp/sluice-ldd.txt; then echo "missing libraries"; exit 1; fi

say "run as a non-root user with a fresh /data-like directory and SLUICE_* only"
user=sluice-check
id "$user" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$user"
work=$(mktemp -d)
chmod 755 "$work"
trap 'kill -9 "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
install -d -o "$user" "$work/data"
install -D -m 0755 "$binary" "$work/bin/sluice"
port=$((20000 + RANDOM % 20000))
env -i PATH=/usr/bin:/bin \
    SLUICE_HOST=127.0.0.1 SLUICE_PORT="$port" SLUICE_DATA="$work/data" SLUICE_TOKEN=check-token \
    setpriv --reuid="$user" --regid="$(id -g "$user")" --clear-groups "$work/bin/sluice" serve >"$work/out.log" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q "listening on" "$work/out.log" && break; sleep 0.1; done
cat "$work/out.log"
echo "process user: $(ps -o user= -p "$pid")"
[ "$(ps -o user= -p "$pid" | tr -d ' ')" = "$user" ] || { echo "not running as $user"; exit 1; }

base="http://127.0.0.1:$port"
curl -fsS "$base/healthz"; echo
# The dashboard and the spec come from the binary alone: nothing but it was copied.
for path in / /openapi.yaml; do
    code=$(curl -s -o /dev/null -w '%{http_code}' "$base$path")
    [ "$code" = 200 ] || { echo "GET $path: $code from a binary alone"; exit 1; }
    echo "GET $path from the binary alone: 200"
done
env -i SLUICE_PORT="$port" "$work/bin/sluice" healthcheck && echo "sluice healthcheck: exit 0"
code=$(curl -s -o /dev/null -w '%{http_code}' "$base/jobs")
[ "$code" = 401 ] && echo "GET /jobs without token: 401"

job=$(curl -fsS -X POST "$base/jobs" -H 'Authorization: Bearer check-token' -H 'Content-Type: application/json' \
    -d "{\"url\":\"$base/testdata/64M?seed=3\",\"connections\":4,\"headers\":{\"Authorization\":\"Bearer check-token\"}}")
id=$(echo "$job" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
for _ in $(seq 300); do
    state=$(curl -fsS "$base/jobs/$id" -H 'Authorization: Bearer check-token' | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["state"])')
    [ "$state" = completed ] || [ "$state" = failed ] && break
    sleep 0.1
done
curl -fsS "$base/jobs/$id" -H 'Authorization: Bearer check-token'; echo
[ "$state" = completed ] || { echo "download did not complete"; exit 1; }
expected=$(python3 - <<'PY'
import hashlib, struct
M = (1 << 64) - 1
def sm(x):
    z = (x + 0x9E3779B97F4A7C15) & M
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
    return z ^ (z >> 31)
h = hashlib.sha256()
words = (64 << 20) // 8
chunk = 1 << 16
for start in range(0, words, chunk):
    h.update(struct.pack("<%dQ" % chunk, *(sm(3 + i) for i in range(start, start + chunk))))
print(h.hexdigest())
PY
)
got=$(sha256sum "$work/data/documents/64M" | cut -d' ' -f1)
echo "sha256 of the downloaded file: $got"
[ "$got" = "$expected" ] || { echo "digest differs from the generator's ($expected)"; exit 1; }
stat -c 'owner of the file: %U' "$work/data/documents/64M"

start=$(date +%s%N)
kill -TERM "$pid"
wait "$pid" && status=0 || status=$?
elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
echo "SIGTERM: exit $status after $elapsed ms"
[ "$status" = 0 ] && [ "$elapsed" -lt 5000 ] || exit 1
say "container check passed"
