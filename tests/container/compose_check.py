#!/usr/bin/env python3
"""The checks of docker/compose.yaml, through its nginx (tests/container/compose.sh brings
the stack up and tears it down).

Standard library only. Each check prints one line; the first failure raises and the run
exits non-zero. Which replica served a request is read from the replicas' JSON logs, by the
request id the check sent.
"""

import argparse
import http.client
import json
import os
import subprocess
import time
import urllib.parse
import uuid

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
ARGS = None


def say(what):
    print(f"compose: {what}", flush=True)


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


class Answer:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    def json(self):
        return json.loads(self.body)


def request(method, path, body=None, headers=None, key=True, rid=None, timeout=120):
    u = urllib.parse.urlsplit(ARGS.gateway)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    h = dict(headers or {})
    if key:
        h["Authorization"] = f"Bearer {ARGS.key}"
    if rid:
        h["X-Request-Id"] = rid
    if isinstance(body, (dict, list)):
        body = json.dumps(body).encode()
        h.setdefault("Content-Type", "application/json")
    try:
        conn.request(method, path, body=body, headers=h)
        r = conn.getresponse()
        return Answer(r.status, {k.lower(): v for k, v in r.getheaders()}, r.read())
    finally:
        conn.close()


def new_id(what):
    return f"compose-{what}-{uuid.uuid4().hex[:12]}"


def served_by(rids):
    """{request id: the replica whose log has its `served` line}, for each id."""
    podman = os.environ.get("PODMAN", "podman").split()
    found = {}
    for name in ARGS.replica:
        out = subprocess.run([*podman, "logs", name], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if not line.startswith("{"):
                continue
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            text = json.dumps(rec)
            for rid in rids:
                if rid in text and "served" in text:
                    found[rid] = name
    missing = [r for r in rids if r not in found]
    expect(not missing, f"no replica logged serving {missing}")
    return found


def check_gateway():
    r = request("GET", "/readyz", key=False)
    expect(r.status == 200, f"/readyz through nginx: {r.status} {r.body[:300]!r}")
    expect(r.json()["engines"]["pdf"] is True, f"engines: {r.json()}")
    r = request("GET", "/files", key=False)
    expect(r.status == 401, f"/files without a key: {r.status} {r.body[:200]!r}")
    say("nginx answers on the published port: /readyz 200 without a key, /files 401 without "
        "one (the keys come from the compose secret)")


def check_shared_reads():
    """An upload through nginx lands on one replica; reads of it through nginx are served by
    both: the record is in Postgres and the bytes in the S3 bucket, not on the replica."""
    with open(os.path.join(ROOT, "fixtures", "pdf", "three_pages.pdf"), "rb") as f:
        data = f.read()
    boundary = uuid.uuid4().hex
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; "
            f"filename=\"three_pages.pdf\"\r\nContent-Type: application/pdf\r\n\r\n").encode() \
        + data + f"\r\n--{boundary}--\r\n".encode()
    up = new_id("upload")
    r = request("POST", "/upload", body=body, rid=up,
                headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
    expect(r.status == 200, f"upload through nginx: {r.status} {r.body[:300]!r}")
    fid = r.json()["files"][0]["file_id"]
    reads, texts = [], []
    for _ in range(4):
        rid = new_id("read")
        a = request("POST", "/read", body={"file_id": fid}, rid=rid)
        expect(a.status == 200, f"read through nginx: {a.status} {a.body[:300]!r}")
        expect(a.headers.get("x-request-id") == rid, f"request id not echoed: {a.headers}")
        reads.append(rid)
        texts.append(a.json()["text"])
    expect(len(set(texts)) == 1, "reads through nginx gave different text")
    for want in ("Alpha page one", "The needle is on this line.", "A second NEEDLE, in capitals."):
        expect(want in texts[0], f"{want!r} not in the text: {texts[0][:300]!r}")
    who = served_by([up, *reads])
    other = [rid for rid in reads if who[rid] != who[up]]
    expect(other, f"every read went to {who[up]}, the replica that took the upload: {who}")
    expect(len({who[rid] for rid in reads}) == 2, f"reads not spread over both replicas: {who}")
    say(f"an upload through nginx (on {who[up]}) reads the same {len(texts[0])} characters through "
        f"nginx {len(reads)} times, {len(other)} of them on the other replica (record from Postgres, "
        "bytes from the bucket)")
    return fid


def check_upload_url():
    """An upload URL points at DOCREADER_PUBLIC_URL (the gateway) and takes the PUT through
    it on whichever replica nginx picks (the token is in Postgres)."""
    gw = urllib.parse.urlsplit(ARGS.gateway)
    mk = new_id("token")
    r = request("POST", "/uploads", body={"name": "birds.txt"}, rid=mk)
    expect(r.status == 200, f"POST /uploads: {r.status} {r.body[:300]!r}")
    url = urllib.parse.urlsplit(r.json()["upload_url"])
    expect((url.scheme, url.hostname, url.port) == (gw.scheme, gw.hostname, gw.port),
           f"the upload URL {r.json()['upload_url']} does not point at the gateway {ARGS.gateway}")
    put = new_id("put")
    r = request("PUT", url.path, body=b"zebra finches and quokkas\n", key=False, rid=put,
                headers={"Content-Type": "application/octet-stream"})
    expect(r.status == 200, f"PUT to the upload URL: {r.status} {r.body[:300]!r}")
    fid = r.json()["files"][0]["file_id"]
    a = request("POST", "/read", body={"file_id": fid})
    expect(a.status == 200 and "quokkas" in a.json()["text"], f"read: {a.status} {a.body[:200]!r}")
    who = served_by([mk, put])
    say(f"an upload URL points at DOCREADER_PUBLIC_URL ({url.scheme}://{url.netloc}); made on "
        f"{who[mk]}, its PUT served by {who[put]}, the file reads")


def check_mcp_host():
    gw = urllib.parse.urlsplit(ARGS.gateway)
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "compose-check", "version": "1"}}}
    accept = {"Accept": "application/json, text/event-stream"}
    r = request("POST", "/mcp", body=init, headers=accept)  # Host: the gateway's address
    expect(r.status == 200 and r.json()["result"]["serverInfo"]["name"] == "docreader",
           f"/mcp initialize through nginx: {r.status} {r.body[:300]!r}")
    r = request("POST", "/mcp", body=init, headers={**accept, "Host": f"other.example.test:{gw.port}"})
    expect(r.status == 403, f"/mcp for a host not in DOCREADER_MCP_ALLOWED_HOSTS: {r.status}")
    say(f"/mcp answers through nginx for {gw.hostname} (DOCREADER_MCP_ALLOWED_HOSTS), 403 for another name")


def check_one_replica_stopped(fid):
    """One replica stopped (SIGTERM: it drains and exits 0): nginx sends everything to the
    other, and the file still reads."""
    podman = os.environ.get("PODMAN", "podman").split()
    stopped = ARGS.replica[0]
    t0 = time.monotonic()
    subprocess.run([*podman, "stop", "-t", "30", stopped], check=True, capture_output=True)
    took = time.monotonic() - t0
    code = subprocess.run([*podman, "inspect", "--format", "{{.State.ExitCode}}", stopped],
                          capture_output=True, text=True, check=True).stdout.strip()
    expect(code == "0", f"{stopped} exited {code} on SIGTERM")
    rids = []
    for _ in range(3):
        rid = new_id("after-stop")
        a = request("POST", "/read", body={"file_id": fid}, rid=rid)
        expect(a.status == 200, f"read with {stopped} stopped: {a.status} {a.body[:300]!r}")
        rids.append(rid)
    who = served_by(rids)
    expect(set(who.values()) == {ARGS.replica[1]}, f"served by {who}")
    say(f"{stopped} stopped with SIGTERM (exit 0 after {took:.1f} s): 3 reads through nginx "
        f"all served by {ARGS.replica[1]}")


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--gateway", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--replica", action="append", required=True, help="container name, twice")
    ARGS = p.parse_args()
    expect(len(ARGS.replica) == 2, "give --replica twice")
    check_gateway()
    fid = check_shared_reads()
    check_upload_url()
    check_mcp_host()
    check_one_replica_stopped(fid)


if __name__ == "__main__":
    main()
