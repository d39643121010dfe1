"""aria2's clients and aria2 itself against Sluice's /jsonrpc (issue 22).

1. aria2p (library and command line) drives Sluice: adds, lists, pauses, resumes, removes.
2. The same calls go to `aria2c --enable-rpc` and to Sluice; for `tellStatus`,
   `getGlobalStat` and `getVersion`, Sluice's keys must include aria2c's, and every value
   aria2c gives as a string must be a string in Sluice's answer too.

3. A named `add` token (`sluice token create`) adds through aria2p and may not pause.

Prints a transcript; exits non-zero on the first difference.
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

import aria2p

BINARY = os.environ.get("SLUICE_BIN", ".build/debug/sluice")
SECRET = "aria2-check-secret"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(what, condition, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    sys.exit(f"aria2_check: timed out waiting for {what}")


def call(port, method, *params, token=True):
    body = {"jsonrpc": "2.0", "id": "c", "method": method, "params": ([f"token:{SECRET}"] if token else []) + list(params)}
    request = urllib.request.Request(f"http://127.0.0.1:{port}/jsonrpc", data=json.dumps(body).encode())
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            answer = json.load(response)
    except urllib.error.HTTPError as error:
        answer = json.load(error)
    if "error" in answer:
        raise RuntimeError(f"{method}: {answer['error']}")
    return answer["result"]


def start_sluice(work, name, token):
    """A Sluice node; with `token`, the service under test, without it the origin both
    downloaders fetch from (its /testdata needs no token then)."""
    log_path = os.path.join(work, f"{name}.log")
    log = open(log_path, "w")
    command = [BINARY, "serve", "--host", "127.0.0.1", "--port", "0", "--data", os.path.join(work, name)]
    process = subprocess.Popen(command + (["--token", token] if token else []), stdout=log, stderr=subprocess.STDOUT)

    def listening():
        with open(log_path) as f:
            match = re.search(r"Sluice listening on http://127\.0\.0\.1:(\d+)", f.read())
        return int(match.group(1)) if match else None

    return process, wait_until("Sluice to listen", listening)


def start_aria2c(work):
    port = free_port()
    directory = os.path.join(work, "aria2c")
    os.makedirs(directory)
    process = subprocess.Popen(
        ["aria2c", "--enable-rpc", f"--rpc-listen-port={port}", f"--rpc-secret={SECRET}", f"--dir={directory}",
         "--quiet=true", "--no-conf=true"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def answering():
        try:
            return call(port, "aria2.getVersion")
        except Exception:  # not listening yet
            return None

    wait_until("aria2c to answer", answering)
    return process, port


def finished(port, gid):
    status = call(port, "aria2.tellStatus", gid, ["status"])["status"]
    return status if status in ("complete", "error") else None


def compare(name, reference, sluice):
    """Sluice's keys include aria2c's; what aria2c gives as a string, Sluice does too."""
    missing = sorted(set(reference) - set(sluice))
    if missing:
        sys.exit(f"aria2_check: {name}: Sluice lacks {missing}")
    for key, value in reference.items():
        if isinstance(value, str) and not isinstance(sluice[key], str):
            sys.exit(f"aria2_check: {name}.{key}: aria2c gives a string, Sluice {type(sluice[key]).__name__}")
    extra = sorted(set(sluice) - set(reference))
    print(f"  {name}: aria2c's {len(reference)} keys all present, same types; Sluice adds {extra or 'nothing'}")


def differential(sluice_port, aria2c_port, url):
    print("Differential: the same calls to aria2c and to Sluice")
    answers = {}
    for port, name in ((aria2c_port, "aria2c"), (sluice_port, "sluice")):
        gid = call(port, "aria2.addUri", [url], {"out": "diff.bin"})
        wait_until(f"{name} to finish", lambda: finished(port, gid))
        answers[name] = {
            "tellStatus": call(port, "aria2.tellStatus", gid),
            "getGlobalStat": call(port, "aria2.getGlobalStat"),
            "getVersion": call(port, "aria2.getVersion"),
        }
        answers[name]["file"] = answers[name]["tellStatus"]["files"][0]
        answers[name]["uri"] = answers[name]["file"]["uris"][0]
    for method in ("tellStatus", "getGlobalStat", "getVersion", "file", "uri"):
        compare(method, answers["aria2c"][method], answers["sluice"][method])
    print(f"  aria2c {answers['aria2c']['getVersion']['version']} against Sluice")
    for key in ("status", "totalLength", "completedLength", "numPieces", "pieceLength", "bitfield"):
        ours, theirs = answers["sluice"]["tellStatus"].get(key), answers["aria2c"]["tellStatus"].get(key)
        print(f"  tellStatus.{key}: aria2c {theirs!r}, Sluice {ours!r}")
        if ours != theirs:
            sys.exit(f"aria2_check: tellStatus.{key} differs")


def aria2p_drives(port, origin):
    print("aria2p driving Sluice")
    api = aria2p.API(aria2p.Client(host="http://127.0.0.1", port=port, secret=SECRET))
    done = api.add_uris([f"{origin}/testdata/64K"], options={"out": "from-aria2p.bin"})
    print(f"  add_uris -> {done.gid}")
    wait_until("the aria2p download", lambda: api.get_download(done.gid).is_complete)
    done = api.get_download(done.gid)
    print(f"  {done.name}: {done.status}, {done.total_length} bytes, {done.progress_string()}")
    slow = api.add_uris([f"{origin}/testdata/64M?rate=1M"], options={"out": "slow.bin"})
    wait_until("the slow download to run", lambda: api.get_download(slow.gid).is_active)
    print(f"  {slow.gid} active: {api.get_download(slow.gid).status}")
    if not api.pause([slow])[0]:
        sys.exit("aria2_check: aria2p could not pause")
    wait_until("the pause", lambda: api.get_download(slow.gid).is_paused)
    print(f"  paused: {api.get_download(slow.gid).status}")
    if not api.resume([slow])[0]:
        sys.exit("aria2_check: aria2p could not resume")
    wait_until("the resume", lambda: api.get_download(slow.gid).status in ("active", "waiting"))
    print(f"  resumed: {api.get_download(slow.gid).status}")
    listed = {d.gid: d.status for d in api.get_downloads()}
    print(f"  get_downloads: {listed}")
    if listed.get(done.gid) != "complete" or slow.gid not in listed:
        sys.exit("aria2_check: get_downloads does not list both")
    if not api.remove([slow], clean=True)[0]:
        sys.exit("aria2_check: aria2p could not remove")
    rest = {d.gid for d in api.get_downloads()}
    print(f"  after remove(clean=True): {sorted(rest)}")
    if slow.gid in rest:
        sys.exit("aria2_check: the removed download is still listed")
    stats = api.get_stats()
    print(f"  get_stats: active {stats.num_active}, waiting {stats.num_waiting}, stopped {stats.num_stopped}")
    heard = []
    api.listen_to_notifications(
        threaded=True, timeout=1, on_download_start=lambda api, gid: heard.append(("start", gid)),
        on_download_complete=lambda api, gid: heard.append(("complete", gid)))
    try:
        # The listener connects in a thread of its own, with no sign of when: a download made
        # before that is not heard, so downloads are added until one's completion is.
        deadline = time.monotonic() + 30
        while True:
            told = api.add_uris([f"{origin}/testdata/32K"])
            try:
                wait_until("the completion", lambda: ("complete", told.gid) in heard, timeout=3)
                break
            except SystemExit:
                if time.monotonic() > deadline:
                    sys.exit("aria2_check: aria2p's listener heard no completion within 30 s")
        print(f"  listen_to_notifications heard: {[event for event in heard if event[1] == told.gid]}")
    finally:
        api.stop_listening()
    command = ["aria2p", "--host", "http://127.0.0.1", "--port", str(port), "--secret", SECRET, "show"]
    shown = subprocess.run(command, capture_output=True, text=True, timeout=60)
    print("  $ aria2p --host http://127.0.0.1 --port PORT --secret *** show")
    for line in shown.stdout.splitlines():
        print(f"    {line}")
    if shown.returncode != 0 or done.gid not in shown.stdout:
        sys.exit(f"aria2_check: `aria2p show` failed ({shown.returncode}): {shown.stderr.strip()[:500]}")
    added = subprocess.run(
        ["aria2p", "--host", "http://127.0.0.1", "--port", str(port), "--secret", SECRET, "add", f"{origin}/testdata/16K"],
        capture_output=True, text=True, timeout=60)
    print(f"  $ aria2p ... add {origin}/testdata/16K\n    {added.stdout.strip()}")
    if added.returncode != 0:
        sys.exit(f"aria2_check: `aria2p add` failed: {added.stderr.strip()[:500]}")


def scoped_token(work, port, origin):
    """A named `add` token made by `sluice token create` on the service's store: aria2p with
    it adds and reads, and a pause is refused with aria2's error."""
    print("a browser extension's token: sluice token create --scope add")
    made = subprocess.run(
        [BINARY, "token", "create", "--name", "extension", "--scope", "add", "--data", os.path.join(work, "sluice")],
        capture_output=True, text=True, timeout=60)
    if made.returncode != 0:
        sys.exit(f"aria2_check: `sluice token create` failed: {made.stderr.strip()[:500]}")
    secret = made.stdout.strip()
    print(f"  $ sluice token create --name extension --scope add --data DATA\n    {secret[:12]}…\n    {made.stderr.strip()}")
    api = aria2p.API(aria2p.Client(host="http://127.0.0.1", port=port, secret=secret))
    # The running service reads a token made beside it within 5 s.
    added = wait_until("the new token to be accepted", lambda: _try(lambda: api.add_uris([f"{origin}/testdata/16K"])), timeout=15)
    print(f"  add_uris with the add token -> {added.gid}")
    print(f"  get_downloads with it: {len(api.get_downloads())} downloads")
    try:
        api.client.pause(added.gid)
    except aria2p.ClientException as error:
        print(f"  pause with it: refused, {error.code} {error.message}")
        if not error.message.startswith("Forbidden"):
            sys.exit(f"aria2_check: a pause with an add token was refused for another reason: {error.message}")
    else:
        sys.exit("aria2_check: a pause with an add token was accepted")
    listed = subprocess.run([BINARY, "token", "list", "--data", os.path.join(work, "sluice")], capture_output=True, text=True, timeout=60)
    print("  $ sluice token list --data DATA")
    for line in listed.stdout.splitlines():
        print(f"    {line}")


def _try(action):
    try:
        return action()
    except aria2p.ClientException:
        return None


def main():
    work = tempfile.mkdtemp(prefix="sluice-aria2-")
    processes = []
    try:
        origin_process, origin_port = start_sluice(work, "origin", None)
        processes.append(origin_process)
        sluice, sluice_port = start_sluice(work, "sluice", SECRET)
        processes.append(sluice)
        aria2c, aria2c_port = start_aria2c(work)
        processes.append(aria2c)
        origin = f"http://127.0.0.1:{origin_port}"
        aria2p_drives(sluice_port, origin)
        scoped_token(work, sluice_port, origin)
        differential(sluice_port, aria2c_port, f"{origin}/testdata/3M")
        print("aria2_check: passed")
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
