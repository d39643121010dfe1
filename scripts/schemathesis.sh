#!/usr/bin/env bash
# Property-based API tests: runs schemathesis (every check; the examples, coverage, fuzzing
# and stateful phases) against a fresh `sluice serve` built by scripts/test.sh, using the
# OpenAPI document the service itself serves at /openapi.yaml. Exits non-zero when
# schemathesis reports any failure or error.
#
# It never builds: it uses .build/debug/sluice (or $SLUICE_BIN) and waits for it to appear
# (up to $SLUICE_BIN_WAIT seconds, default 1200) when another process is still building.
#
# The service and schemathesis run inside a network namespace of their own that has only
# a loopback interface (`unshare -n`, needs root or user namespaces), so that the job URLs
# the fuzzer invents reach nothing outside this machine. When no namespace can be made,
# it says so and skips (exit 0): it never fuzzes with the host's network open.
#
# Knobs (environment): SCHEMATHESIS_MAX_EXAMPLES (default 150), SCHEMATHESIS_SEED (default
# a fixed seed, so that CI's run is reproducible; `random` for a fresh one),
# SCHEMATHESIS_WORKERS (default 1: with more, hypothesis parses lambdas' source in several
# threads at once, which CPython 3.11.7's `ast.parse` can fail at, "AST constructor
# recursion depth mismatch"), SCHEMATHESIS_TIME_LIMIT (seconds for the whole
# schemathesis run, default 480; a run it stops exits 3 when nothing failed in what it ran), SCHEMATHESIS_KEEP=1 (keep the temporary directory with
# the service log and the reports), PYTHON.
set -euo pipefail
self="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
cd "$(dirname "$self")/.."

python=${PYTHON:-python3}
schemathesis_version=4.32.5
binary=${SLUICE_BIN:-.build/debug/sluice}
token=schemathesis-token
default_seed=20261125

if [[ -z ${SLUICE_SCHEMATHESIS_STAGE:-} ]]; then
    # Outside the namespace: the one step that needs the network (PyPI), then the binary.
    if ! "$python" -c "import schemathesis, sys; sys.exit(schemathesis.__version__ != '$schemathesis_version')" 2>/dev/null; then
        echo "Installing schemathesis $schemathesis_version"
        "$python" -m pip install --quiet --disable-pip-version-check "schemathesis==$schemathesis_version" >/dev/null
    fi
    # `install`: only that (CI installs ahead, while it builds).
    if [[ ${1:-} == install ]]; then exit 0; fi
    waited=0
    until [[ -x $binary ]] && "$binary" --help >/dev/null 2>&1; do
        if (( waited >= ${SLUICE_BIN_WAIT:-1200} )); then
            echo "schemathesis.sh: $binary is missing; build it first (scripts/test.sh)" >&2
            exit 1
        fi
        (( waited == 0 )) && echo "Waiting for $binary (built by scripts/test.sh) ..."
        sleep 10
        waited=$(( waited + 10 ))
    done
    if unshare -n true 2>/dev/null; then
        echo "Running in a loopback-only network namespace"
        exec unshare -n env SLUICE_SCHEMATHESIS_STAGE=netns "$self" "$@"
    fi
    # Never fuzz with the network open: the service on a loopback bind may reach private
    # addresses, and invented job URLs could reach real hosts.
    echo "schemathesis.sh: SKIPPED: cannot create a network namespace (unshare -n needs root or" \
        "user namespaces), and the fuzzer is never run with the host's network open" >&2
    exit 0
fi

if [[ $SLUICE_SCHEMATHESIS_STAGE == netns ]]; then
    if command -v ip >/dev/null; then
        ip link set lo up
    else
        ifconfig lo up
    fi
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/sluice-schemathesis.XXXXXX")
server_pid=
cleanup() {
    local status=$?
    if [[ -n $server_pid ]] && kill -0 "$server_pid" 2>/dev/null; then
        kill -TERM "$server_pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$server_pid" 2>/dev/null; then
            echo "schemathesis.sh: the service did not stop within 5 s of SIGTERM" >&2
            kill -KILL "$server_pid" 2>/dev/null || true
            status=1
        fi
        wait "$server_pid" 2>/dev/null || true
    fi
    if [[ $status -ne 0 && -s $work/service.log ]]; then
        echo "--- last lines of the service log ($work/service.log) ---"
        tail -n 40 "$work/service.log"
    fi
    if [[ ${SCHEMATHESIS_KEEP:-0} == 1 ]]; then
        echo "Kept $work"
    else
        rm -rf "$work"
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A file under the origin root, at the path of the spec's example, so that /files has
# something to serve.
mkdir -p "$work/data/documents/isos"
head -c 65536 /dev/urandom >"$work/data/documents/isos/file.iso"

# `--allow-insecure-tls`: a job's `"insecure": true` is valid input to this service.
# A trusted key, so that a job's signatureUrl is taken as the document says (without
# --trusted-keys it is refused): a minisign public key, "Ed", an 8-byte id and 32 bytes.
mkdir -p "$work/keys"
{
    echo "untrusted comment: schemathesis's key, which signs nothing"
    { printf 'Ed'; head -c 40 /dev/zero | tr '\0' '\7'; } | base64 -w0
    echo
} >"$work/keys/schemathesis.pub"
"$binary" serve --host 127.0.0.1 --port 0 --data "$work/data" --token "$token" --allow-insecure-tls \
    --trusted-keys "$work/keys" >"$work/service.log" 2>&1 &
server_pid=$!
base=
for _ in $(seq 100); do
    base=$(sed -n 's|^Sluice listening on \(http://127\.0\.0\.1:[0-9][0-9]*\)$|\1|p' "$work/service.log" | head -n 1)
    [[ -n $base ]] && break
    kill -0 "$server_pid" 2>/dev/null || { echo "schemathesis.sh: the service exited at start" >&2; exit 1; }
    sleep 0.1
done
[[ -n $base ]] || { echo "schemathesis.sh: the service printed no 'Sluice listening on' line" >&2; exit 1; }
echo "Service at $base (data in $work/data)"

# Per-operation settings.
# - The events streams never end: schemathesis reads each one for at most its request
#   timeout (or 10 events), then checks the events it got against the ServerSentEvent schema.
# - GET /jobs?after=ID answers 400 when ID names no job, and a generated ID never does: the
#   hook below drops `after` from positive requests (negative ones keep it).
# - /files and /testdata implement RFC 9110 conditional and range requests: a well-formed
#   `If-Match`, `If-Unmodified-Since` or `Range` that does not hold is answered 412 or 416,
#   which are right answers to valid requests.
# - /testdata answers any status asked for with `status=` (5xx included), by design.
# - POST /jobs/pause and /jobs/resume with `{"ids": [...]}` answer 400 when an id names no
#   job (nothing changes), and generated ids never do.
# - POST /jobs/batch is read as POST /jobs is, job by job: the same settings, and `after`
#   dropped from each job of a positive request.
# - `dir` (POST /jobs, each job of a batch): the schema's pattern counts characters and names
#   the format characters of the Basic Multilingual Plane only; the service counts bytes (255
#   a part) and refuses every format character. A positive request's `dir` that the service's
#   rule refuses is dropped (`_plain_name`), the others are sent.
# - POST /jobs answers 422 `idempotency_key_reused` to an `Idempotency-Key` that made a job
#   from another body (as the spec declares): the fuzzer draws keys from a small space and
#   sends them again with other bodies, so a valid request can meet a key already used.
# - Every operation with a body answers 413 to a body over 64 KiB, as the spec declares.
#   A schema can bound characters but not the bytes they encode to (an 8 KiB `url` of
#   characters JSON writes as `\uXXXX` is 48 KiB), so a valid body can be too large, and
#   so can an invalid one: 413 is a right answer to either.
# - PUT /schedule answers 400 to a time zone this system does not know, a timetable rclone
#   would not read, and a rule that sets nothing: a schema cannot say which strings are IANA
#   names or timetables.
# - POST /tokens answers 409 `token_exists` to a name already made, and the fuzzer draws
#   names from a small space.
# - /jsonrpc answers a call that failed with 400 (aria2's error object: a missing
#   `token:`, since the fuzzer sends the token as a header, an unknown GID) and an unknown
#   method with 404, as aria2 does; a generated call is valid JSON-RPC and still fails so.
cat >"$work/schemathesis.toml" <<'TOML'
[[operations]]
include-operation-id-regex = "^stream(Job)?Events$"
request-timeout = 1.0
max-stream-events = 10

[[operations]]
include-operation-id-regex = "^(createJobs?|editJob|updateQueue)$"
checks.positive_data_acceptance.expected-statuses = ["2xx", "3xx", "401", "403", "404", "409", "413", "422", "429", "5xx"]
checks.negative_data_rejection.expected-statuses = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429", "5xx"]

[[operations]]
include-path-regex = "^/(files|testdata)/"
checks.positive_data_acceptance.expected-statuses = ["2xx", "3xx", "401", "403", "404", "409", "412", "416", "429", "5xx"]

[[operations]]
include-operation-id-regex = "^(pause|resume)Jobs$"
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "401", "403", "404", "413"]
checks.negative_data_rejection.expected-statuses = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429", "5xx"]

[[operations]]
include-operation-id-regex = "^replaceSchedule$"
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "401", "403", "413"]

[[operations]]
include-operation-id-regex = "^createToken$"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "409", "413"]

[[operations]]
include-operation-id-regex = "^aria2JSONRPC$"
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "403", "404", "413", "5xx"]

[[operations]]
include-path-regex = "^/testdata/"
checks.not_a_server_error.expected-statuses = ["2xx", "3xx", "4xx", "5xx"]
TOML

# Hooks that keep every generated request bounded in time and size without changing whether
# it is valid: /testdata can be told to answer slowly, hugely or by cutting the connection.
# Only values the service accepts are changed, always to other accepted values.
cat >"$work/sluice_hooks.py" <<'PY'
import re
import unicodedata

import schemathesis

_SIZE = re.compile(r"^0*([0-9]+)([KkMmGgTt]?)$")
_SHIFT = {"": 0, "k": 10, "m": 20, "g": 30, "t": 40}
_MAX_BODY = 1 << 20  # the largest /testdata body a generated GET may ask for
_MAX_DELAY = 200  # ms


def _plain_name(part):
    """A name as the service's rule for `filename` and each part of `dir` has it: at most
    255 bytes of UTF-8, no C1 control, no format character (Unicode's Cf) but the
    zero-width (non-)joiners. The schema's pattern counts characters and lists the format
    characters of the Basic Multilingual Plane only (a JSON Schema pattern cannot name the
    others in a way every regex dialect reads alike), so it admits a few names this refuses."""
    return len(part.encode("utf-8", "surrogatepass")) <= 255 and not any(
        0x80 <= ord(c) <= 0x9F or (unicodedata.category(c) == "Cf" and c not in "\u200c\u200d") for c in part)


def _admitted_dir(job):
    """Drops a `dir` whose parts the service's rule refuses (above): the rest are sent."""
    directory = job.get("dir")
    if isinstance(directory, str) and not all(_plain_name(part) for part in directory.split("/")):
        del job["dir"]


def _bytes(value, limit):
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return None
    match = _SIZE.match(str(value))
    if not match:
        return None
    number = int(match.group(1)) << _SHIFT[match.group(2).lower()]
    return number if number <= limit else None


def _positive(case):
    meta = getattr(case, "meta", None)
    return meta is not None and meta.generation.mode.is_positive


@schemathesis.hook
def before_call(context, case, kwargs):
    operation = case.operation
    query = case.query if isinstance(case.query, dict) else None
    if operation.path == "/testdata/{size}" and query is not None:
        # `status=4xx` is answered as asked, which the positive-data check would read as the
        # request being rejected: positive requests ask for the 5xx of the same kind instead.
        status = _bytes(query.get("status"), 599)
        if _positive(case) and status is not None and 400 <= status <= 499:
            query["status"] = status + 100
        delay = _bytes(query.get("delay"), 600_000)
        if delay is not None and delay > _MAX_DELAY:
            query["delay"] = _MAX_DELAY
        if operation.method.upper() == "GET":
            params = case.path_parameters or {}
            size = _bytes(params.get("size"), 1 << 40)
            if size is not None and size > _MAX_BODY:
                params["size"] = "1M"
            rate = _bytes(query.get("rate"), (1 << 63) - 1)
            if rate is not None and 0 < rate < 4 * _MAX_BODY:
                query["rate"] = "4M"
            # A cut closes the connection abruptly, which a client sees as a network error.
            cut = query.get("cut")
            if isinstance(cut, str) and all(_bytes(item, (1 << 63) - 1) is not None for item in cut.split(",") if item):
                del query["cut"]
    elif (operation.path, operation.method.upper()) in (("/jobs", "POST"), ("/jobs/{id}", "PATCH")) \
            and isinstance(case.body, dict):
        # `after` must name existing jobs (else 400): generated ids never do.
        if _positive(case) and case.body.get("after"):
            del case.body["after"]
        if _positive(case):
            _admitted_dir(case.body)
    elif (operation.path, operation.method.upper()) == ("/jobs/batch", "POST") and isinstance(case.body, dict):
        # The same for each job of a batch.
        if _positive(case) and isinstance(case.body.get("jobs"), list):
            for job in case.body["jobs"]:
                if isinstance(job, dict):
                    job.pop("after", None)
                    _admitted_dir(job)
    elif operation.path == "/jobs" and operation.method.upper() == "GET" and query is not None:
        # `after` must name a current job (else 400): a generated value never does.
        if _positive(case) and isinstance(query.get("after"), str):
            del query["after"]
PY

max_examples=${SCHEMATHESIS_MAX_EXAMPLES:-150}
# A fixed seed makes the run that gates CI generate the same requests each time, so that a
# clean clone of unchanged main passes or fails alike. `SCHEMATHESIS_SEED=random` draws one
# (printed, so a failure can be replayed with it).
seed=${SCHEMATHESIS_SEED:-$default_seed}
if [[ $seed == random ]]; then
    seed=$(( (RANDOM << 15 | RANDOM) ))
fi
echo "schemathesis.sh: seed $seed (replay with SCHEMATHESIS_SEED=$seed)"
args=(
    --config-file "$work/schemathesis.toml"
    run "$base/openapi.yaml"
    --checks all
    --phases examples,coverage,fuzzing,stateful
    --header "Authorization: Bearer $token"
    --max-examples "$max_examples"
    --workers "${SCHEMATHESIS_WORKERS:-1}"
    --request-timeout 5
    --generation-database none
    --no-color
    --report junit,ndjson --report-dir "$work/report"
)
args+=(--seed "$seed")

echo "schemathesis ${args[*]}"
set +e
SCHEMATHESIS_HOOKS="$work/sluice_hooks.py" \
    timeout --signal=INT --kill-after=30 "${SCHEMATHESIS_TIME_LIMIT:-480}" \
    "$python" -m schemathesis.cli "${args[@]}"
status=$?
set -e
if (( status == 124 || status == 130 )); then
    echo "schemathesis.sh: schemathesis did not finish within ${SCHEMATHESIS_TIME_LIMIT:-480} s" >&2
    # Stopped by its time limit: what it had run is in its report. Nothing failed there:
    # exit 3, which a run bounded on purpose (CI's random seed) takes as "nothing found";
    # a run meant to finish (the gate) fails on it all the same.
    if compgen -G "$work/report/junit-*.xml" >/dev/null && ! grep -qE '<(failure|error)[ >]' "$work"/report/junit-*.xml; then
        echo "schemathesis.sh: nothing failed in what it ran before its time limit"
        exit 3
    fi
fi
if (( status != 0 )); then
    echo "schemathesis.sh: schemathesis reported failures or errors (exit $status)" >&2
    exit 1
fi
echo "schemathesis.sh: no failures"
