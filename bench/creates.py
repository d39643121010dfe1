#!/usr/bin/env python3
"""Creates per second on one keep-alive connection against a fresh `sluice serve`.

usage: creates.py SLUICE_BIN [N=5000] [BATCH=500] [RUNS=3]
Each run: a fresh `sluice serve --port 0` on its own temp --data dir (/var/tmp, ext4), nothing
running; N jobs {"url","filename","connections":1,"paused":true} either as N single
POST /jobs (one after another) or through POST /jobs/batch in batches of BATCH, all on ONE
http.client connection. Time: right before the first POST to the last 201. Modes alternate
(single, batch, single, ...). Prints each run and the medians.
"""
import http.client, json, os, re, shutil, statistics, subprocess, sys, tempfile, time

BIN = sys.argv[1]
N = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
BATCH = int(sys.argv[3]) if len(sys.argv) > 3 else 500
RUNS = int(sys.argv[4]) if len(sys.argv) > 4 else 3
HZ = os.sysconf("SC_CLK_TCK")

def busy_share(interval=1.0):
    def read():
        v = list(map(int, open("/proc/stat").readline().split()[1:]))
        return sum(v), v[3] + v[4]
    t1, i1 = read(); time.sleep(interval); t2, i2 = read()
    return 1 - (i2 - i1) / max(1, t2 - t1)

def wait_quiet(limit=float(os.environ.get("QUIET_WAIT", "60"))):
    start = time.monotonic(); ok = 0
    while time.monotonic() - start < limit:
        ok = ok + 1 if busy_share(1.0) < 0.15 else 0
        if ok >= 2:
            return True
    return False

def cpu_ticks(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])

def start(data):
    out = open(os.path.join(data, "serve.out"), "w+")
    err = open(os.path.join(data, "serve.err"), "w")
    p = subprocess.Popen([BIN, "serve", "--host", "127.0.0.1", "--port", "0", "--data", os.path.join(data, "d")],
                         stdout=out, stderr=err)
    for _ in range(300):
        out.seek(0)
        m = re.search(r"^Sluice listening on (http://[^ \n]*)", out.read(), re.M)
        if m:
            return p, m.group(1).rstrip("/")
        if p.poll() is not None:
            sys.exit(f"serve exited {p.returncode}: {open(os.path.join(data, 'serve.err')).read()}")
        time.sleep(0.1)
    sys.exit("serve did not start")

def job(i):
    name = f"f{i:05d}.bin"
    return {"url": f"http://127.0.0.1:1/{name}", "filename": name, "connections": 1, "paused": True}

def run(mode):
    data = tempfile.mkdtemp(prefix="creates-", dir="/var/tmp")
    p, url = start(data)
    try:
        host, port = url.split("//")[1].split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=120)
        conn.request("GET", "/queue"); r = conn.getresponse(); r.read()  # connect; warm
        quiet = wait_quiet()
        ports = set()
        hdr = {"Content-Type": "application/json"}
        jobs = [job(i) for i in range(1, N + 1)]
        bodies = ([json.dumps(j).encode() for j in jobs] if mode == "single" else
                  [json.dumps({"jobs": jobs[k:k + BATCH]}).encode() for k in range(0, N, BATCH)])
        path = "/jobs" if mode == "single" else "/jobs/batch"
        lat = []
        c0 = cpu_ticks(p.pid)
        t0 = time.monotonic()
        for b in bodies:
            t = time.monotonic()
            conn.request("POST", path, b, hdr)
            ports.add(conn.sock.getsockname()[1])
            r = conn.getresponse(); d = r.read()
            if r.status != 201:
                sys.exit(f"{mode}: {r.status} {d[:300]!r}")
            if mode == "batch" and len(json.loads(d)["jobs"]) != BATCH:
                sys.exit("batch: wrong count in the answer")
            lat.append(time.monotonic() - t)
        dt = time.monotonic() - t0
        cpu = (cpu_ticks(p.pid) - c0) / HZ
        conn.request("GET", "/queue"); r = conn.getresponse(); counts = json.loads(r.read())["counts"]
        if counts.get("paused") != N:
            sys.exit(f"{mode}: counts {counts}")
        ports.add(conn.sock.getsockname()[1])
        if len(ports) != 1:
            sys.exit(f"{mode}: {len(ports)} connections")
        rss = [l for l in open(f"/proc/{p.pid}/status") if l.startswith("VmHWM")][0].split()[1]
        lat.sort()
        res = {"mode": mode, "jobs": N, "seconds": round(dt, 3), "jobs_per_s": round(N / dt), "service_cpu_s": round(cpu, 2),
               "req_p50_ms": round(1000 * lat[len(lat) // 2], 2), "req_max_ms": round(1000 * lat[-1], 2),
               "requests": len(bodies), "quiet_before": quiet, "vmhwm_kib": int(rss)}
        print(json.dumps(res), flush=True)
        return res
    finally:
        p.terminate()
        try: p.wait(10)
        except subprocess.TimeoutExpired: p.kill(); p.wait()
        errs = open(os.path.join(data, "serve.err")).read()
        if errs.strip():
            print(f"# serve stderr ({mode}): {errs[-600:]!r}", flush=True)
        shutil.rmtree(data, ignore_errors=True)

results = {"single": [], "batch": []}
for _ in range(RUNS):
    for mode in ("single", "batch"):
        results[mode].append(run(mode))
for mode, rs in results.items():
    print(f"{mode}: median {statistics.median(r['jobs_per_s'] for r in rs)} jobs/s "
          f"(runs {[r['jobs_per_s'] for r in rs]}; seconds {[r['seconds'] for r in rs]}; service CPU s {[r['service_cpu_s'] for r in rs]})")
