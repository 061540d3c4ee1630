#!/usr/bin/env python3
"""The container's checks, through the gateway (tests/container/run.sh starts both).

Standard library only. Each check prints one line; the first failure raises and the run exits
non-zero. Files come from fixtures/ and tests/corpus.
"""

import argparse
import http.client
import json
import os
import subprocess
import threading
import time
import urllib.parse
import uuid

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
ARGS = None


def say(what):
    print(f"container: {what}", flush=True)


class Answer:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    def json(self):
        return json.loads(self.body)


def request(method, path, body=None, headers=None, key=True, timeout=300):
    u = urllib.parse.urlsplit(ARGS.gateway)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    h = dict(headers or {})
    if key:
        h["Authorization"] = f"Bearer {ARGS.key}"
    if isinstance(body, (dict, list)):
        body = json.dumps(body).encode()
        h.setdefault("Content-Type", "application/json")
    conn.request(method, path, body=body, headers=h)
    r = conn.getresponse()
    data = r.read()
    conn.close()
    return Answer(r.status, {k.lower(): v for k, v in r.getheaders()}, data)


def multipart(name, data):
    boundary = uuid.uuid4().hex
    head = (
        f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n"
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    return head + data + f"\r\n--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def upload(name, data, headers=None):
    body, ctype = multipart(name, data)
    h = {"Content-Type": ctype, **(headers or {})}
    return request("POST", "/upload", body=body, headers=h)


def upload_id(name, data):
    r = upload(name, data)
    assert r.status == 200, f"upload {name}: {r.status} {r.body[:300]!r}"
    files = r.json()["files"]
    return files[0]["file_id"]


def read(req, headers=None):
    return request("POST", "/read", body=req, headers=headers)


def fixture(rel):
    with open(os.path.join(ROOT, "fixtures", rel), "rb") as f:
        return f.read()


def corpus(rel):
    with open(os.path.join(ARGS.shared, rel), "rb") as f:
        return f.read()


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def check_health():
    r = request("GET", "/readyz", key=False)
    expect(r.status == 200, f"/readyz {r.status} {r.body!r}")
    engines = r.json()["engines"]
    expect(engines["pdf"] is True and engines["ocr"] == "ppocr", f"engines: {engines}")
    expect("eng" in engines["tesseract"] and "kor" in engines["tesseract"], f"tesseract: {engines}")
    say(f"/readyz through the gateway without a key: 200, engines {engines['ocr']}, pdf, "
        f"tesseract {','.join(engines['tesseract'])}")


def check_console():
    """The console's page and assets through the gateway, without a key, under its CSP."""
    page = request("GET", "/", key=False)
    expect(page.status == 200 and b"/console/app.js" in page.body, f"/ {page.status} {page.body[:200]!r}")
    csp = page.headers.get("content-security-policy", "")
    expect("script-src 'self'" in csp and "unsafe" not in csp, f"console CSP: {csp!r}")
    for asset in ("/console/app.js", "/console/app.css"):
        r = request("GET", asset, key=False)
        expect(r.status == 200 and len(r.body) > 1000, f"{asset}: {r.status}")
    say("the web console through the gateway without a key: /, its script and style, strict CSP")


def check_keys_and_request_ids():
    r = request("GET", "/files", key=False, headers={"X-Request-Id": "ci-no-key-1"})
    expect(r.status == 401, f"no key: {r.status}")
    expect(r.headers.get("x-request-id") == "ci-no-key-1", f"request id header: {r.headers}")
    expect(r.json()["error"]["request_id"] == "ci-no-key-1", f"error body: {r.body!r}")
    r = request("GET", "/files", key=False, headers={"Authorization": "Bearer wrong-key-0123456789"})
    expect(r.status == 401, f"wrong key: {r.status}")
    r = request("GET", "/files")
    expect(r.status == 200, f"with the key: {r.status} {r.body!r}")
    # Without a client id, nginx's own is passed on and echoed.
    r = request("GET", "/files", key=False)
    rid = r.headers.get("x-request-id", "")
    expect(len(rid) == 32 and r.json()["error"]["request_id"] == rid, f"gateway id: {rid!r} {r.body!r}")
    say("keys pass through (none or a wrong one: 401, the key: 200); x-request-id passed "
        "through and echoed in the header and the error body (the client's, else nginx's)")


def check_cors():
    pre = {"Origin": ARGS.origin, "Access-Control-Request-Method": "POST",
           "Access-Control-Request-Headers": "authorization,content-type"}
    r = request("OPTIONS", "/read", key=False, headers=pre)
    expect(r.status in (200, 204), f"preflight: {r.status}")
    expect(r.headers.get("access-control-allow-origin") == ARGS.origin, f"preflight: {r.headers}")
    r = request("OPTIONS", "/read", key=False, headers={**pre, "Origin": "https://evil.example.test"})
    expect("access-control-allow-origin" not in r.headers, f"other origin allowed: {r.headers}")
    r = request("GET", "/files", headers={"Origin": ARGS.origin})
    expect(r.headers.get("access-control-allow-origin") == ARGS.origin, f"simple request: {r.headers}")
    say(f"CORS: {ARGS.origin} allowed (preflight and request), another origin not")


def check_upload_url_and_mcp():
    """An upload URL made through the gateway points at the gateway (its port kept), takes
    the file through it without a key; /mcp answers through it for the name listed in
    DOCREADER_MCP_ALLOWED_HOSTS (the container's setting) and refuses another in JSON."""
    gw = urllib.parse.urlsplit(ARGS.gateway)
    r = request("POST", "/uploads", body={"name": "birds.txt"})
    expect(r.status == 200, f"POST /uploads: {r.status} {r.body[:300]!r}")
    url = r.json()["upload_url"]
    u = urllib.parse.urlsplit(url)
    expect((u.hostname, u.port) == (gw.hostname, gw.port),
           f"the upload URL {url} does not point at the gateway {ARGS.gateway}")
    r = request("PUT", u.path, body=b"zebra finches and quokkas\n", key=False,
                headers={"Content-Type": "application/octet-stream"})
    expect(r.status == 200, f"PUT to the upload URL through the gateway: {r.status} {r.body[:300]!r}")
    fid = r.json()["files"][0]["file_id"]
    text = read({"file_id": fid}).json()["text"]
    expect("quokkas" in text, f"the uploaded file's text: {text!r}")
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "container-check", "version": "1"}}}
    mcp = {"Accept": "application/json, text/event-stream", "Host": f"docs.example.test:{gw.port}"}
    r = request("POST", "/mcp", body=init, headers=mcp)
    expect(r.status == 200 and r.json()["result"]["serverInfo"]["name"] == "docreader",
           f"/mcp initialize through the gateway: {r.status} {r.body[:300]!r}")
    r = request("POST", "/mcp", body=init, headers={**mcp, "Host": f"other.example.test:{gw.port}"})
    expect(r.status == 403 and "DOCREADER_MCP_ALLOWED_HOSTS" in r.json()["error"]["hint"],
           f"/mcp for a host not listed: {r.status} {r.body[:300]!r}")
    say(f"an upload URL through the gateway points at it ({u.scheme}://{u.netloc}/uploads/…) and "
        f"takes a PUT without a key; /mcp initialize through it for docs.example.test (listed), "
        f"a JSON 403 naming DOCREADER_MCP_ALLOWED_HOSTS for another name")


def check_big_uploads():
    line = b"2026-12-02,ACME,100.25,buy,settled,ref-0000000000\n"
    data = line * (50_000_000 // len(line) + 1)
    t0 = time.monotonic()
    fid = upload_id("trades.csv", data)
    took = time.monotonic() - t0
    r = read({"file_id": fid, "max_chars": 2000})
    expect(r.status == 200, f"read of the 50 MB file: {r.status} {r.body[:300]!r}")
    env = r.json()
    expect(env["text"].startswith("2026-12-02,ACME,100.25") and env.get("next"), f"envelope: {env}")
    say(f"a {len(data) / 1e6:.0f} MB upload through the gateway: 200 in {took:.1f} s; its read "
        f"is cut at 2,000 chars with next {env['next']}")
    over = b"x" * (100 * 1024 * 1024 + 4096)
    r = upload("too_big.txt", over)
    expect(r.status == 413, f"over the service's limit: {r.status} {r.body[:300]!r}")
    err = r.json()["error"]
    expect(err["code"] == "too_large", f"413 body: {err}")
    say(f"a file just over the service's 100 MiB limit: the service's own 413 too_large "
        f"through nginx (\"{err['message'][:60]}…\")")
    return fid


def check_reads():
    ids = {}
    fid = upload_id("three_pages.pdf", fixture("pdf/three_pages.pdf"))
    env = read({"file_id": fid}).json()
    expect("Alpha page one" in env["text"] and env["format"] == "pdf", f"text pdf: {env}")
    ids[fid] = ({"file_id": fid}, env["text"])
    say("a text PDF: read, 'Alpha page one' in its text")

    fid = upload_id("image_only_german_pdf.pdf", corpus("pdf/image_only_german_pdf.pdf"))
    r = read({"file_id": fid})
    env = r.json()
    expect(r.status == 200, f"scanned pdf: {r.status} {r.body[:300]!r}")
    for s in ["Bayerischer Landesverein", "Sehr geehrte Damen und Herren", "Archivgesetz"]:
        expect(s in env["text"], f"scanned pdf lacks {s!r}: {env['text'][:500]!r}")
    expect(env["ocr_quality"]["ocr_pages"] >= 1, f"no OCR: {env['ocr_quality']}")
    ids[fid] = ({"file_id": fid}, env["text"])
    say(f"a scanned PDF: OCR inside the container read {env['ocr_quality']['ocr_pages']} pages "
        f"({env['ocr_quality']['quality_flag']})")

    # The page layout model (layout_cdla.onnx in the image): a scan's title is a heading.
    fid = upload_id("layout_scan.pdf", fixture("pdf/layout_scan.pdf"))
    r = read({"file_id": fid, "output": "markdown"})
    env = r.json()
    expect(r.status == 200, f"scanned report: {r.status} {r.body[:300]!r}")
    expect("# Water Quality in the Northern Basin\n" in env["text"]
           and "Page 1 of 2" not in env["text"], f"scan's layout: {env['text'][:600]!r}")
    say("a scanned report as Markdown: its title a heading, its page numbers left out "
        "(the layout model inside the container)")

    fid = upload_id("book.xlsx", fixture("office/book.xlsx"))
    env = read({"file_id": fid}).json()
    expect("Id\tValue\tLabel\tDate\n1\t1.5\titem\t2024-01-03\n" in env["text"], f"xlsx: {env}")
    ids[fid] = ({"file_id": fid}, env["text"])
    say("an xlsx: read, its rows as tab-separated lines")

    fid = upload_id("cyrillic_message.msg", corpus("msg/cyrillic_message.msg"))
    env = read({"file_id": fid}).json()
    expect("Почта России" in env["text"] and env["mime"] == "application/vnd.ms-outlook", f"msg: {env}")
    ids[fid] = ({"file_id": fid}, env["text"])
    say("an Outlook .msg: read, 'Почта России' in its text")

    # Tesseract (libtesseract and its closure in the image, the Korean data) by ocr_lang.
    fid = upload_id("english_and_korean.png", corpus("image/english_and_korean.png"))
    env = read({"file_id": fid, "ocr_lang": "ko"}).json()
    expect("안녕하세요" in env.get("text", ""), f"Korean by Tesseract: {env}")
    expect("tesseract" in (env.get("ocr_engine") or ""), f"engine: {env.get('ocr_engine')}")
    ids[fid] = ({"file_id": fid, "ocr_lang": "ko"}, env["text"])
    say(f"an image read with ocr_lang ko: Tesseract in the container ({env['ocr_engine']}) "
        "read '안녕하세요'")

    r = upload("report.pdf", corpus("executable/testLinux-x86-64"), headers={"X-Request-Id": "ci-exe-1"})
    expect(r.status == 415 and r.json()["error"]["code"] == "blocked_type", f"exe: {r.status} {r.body!r}")
    expect(r.json()["error"]["request_id"] == "ci-exe-1", f"exe request id: {r.body!r}")
    say("an ELF executable named report.pdf: 415 blocked_type, request id in the error")
    return ids


def sse_read(req, on_first_progress=None):
    """POST /read as an event stream; each event with the time it arrived."""
    u = urllib.parse.urlsplit(ARGS.gateway)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=300)
    conn.request("POST", "/read", body=json.dumps(req), headers={
        "Authorization": f"Bearer {ARGS.key}", "Content-Type": "application/json",
        "Accept": "text/event-stream"})
    t0 = time.monotonic()
    r = conn.getresponse()
    if r.status != 200:
        raise AssertionError(f"event stream: {r.status} {r.read()[:300]!r}")
    events, name, data = [], None, []
    while True:
        line = r.readline()
        if not line:
            break
        line = line.decode().rstrip("\n")
        if line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())
        elif line == "" and data:
            events.append((time.monotonic() - t0, name, json.loads("\n".join(data))))
            if name == "progress" and on_first_progress and len(events) == 1:
                on_first_progress()
            name, data = None, []
            if events[-1][1] in ("envelope", "error"):
                break
    conn.close()
    return events


def check_sse():
    fid = upload_id("thirty_short.pdf", fixture("pdf/thirty_short.pdf"))
    events = sse_read({"file_id": fid, "pages": "1-12", "ocr": "force"})
    progress = [e for e in events if e[1] == "progress"]
    expect(len(progress) == 12 and events[-1][1] == "envelope", f"events: {[e[1] for e in events]}")
    first, last_progress, end = progress[0][0], progress[-1][0], events[-1][0]
    # Buffered by the gateway, every event would arrive together at the end.
    expect(last_progress - first > 0.25 * end, f"events arrived together: {[round(e[0], 2) for e in events]}")
    arrivals = len({round(e[0], 2) for e in progress})
    say(f"SSE through nginx arrives event by event: 12 progress events over {end:.2f} s "
        f"(first at {first:.2f} s, last at {last_progress:.2f} s, {arrivals} distinct arrival times)")


def podman(*args, check=True):
    cmd = os.environ.get("PODMAN", "podman --runtime runc --cgroup-manager cgroupfs").split()
    r = subprocess.run(cmd + list(args), capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError(f"podman {' '.join(args)}: {r.stderr.strip()}")
    return r.stdout.strip()


def wait_ready(seconds=30):
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        try:
            if request("GET", "/readyz", key=False, timeout=2).status == 200:
                return time.monotonic() - t0
        except OSError:
            pass
        time.sleep(0.02)
    raise AssertionError("the container did not come back ready")


def check_sigterm_and_restart(ids):
    fid = upload_id("thirty_pages.pdf", fixture("pdf/thirty_pages.pdf"))
    stopped = {}

    def stop():
        # Longer than the service's drain bound (deadline 120 s + grace 10 s).
        def run():
            t0 = time.monotonic()
            stopped["out"] = podman("stop", "-t", "150", ARGS.container)
            stopped["took"] = time.monotonic() - t0
        stopped["thread"] = threading.Thread(target=run)
        stopped["thread"].start()

    events = sse_read({"file_id": fid, "ocr": "force", "max_chars": 1_000_000}, on_first_progress=stop)
    expect("thread" in stopped, "the OCR read sent no progress event")
    stopped["thread"].join()
    expect(events[-1][1] == "envelope", f"the read cut by SIGTERM: {events[-1]}")
    env = events[-1][2]
    expect(env["pages_read"] == 30 and env["ocr_pages"] == 30 and not env["truncated"],
           f"pages: {env['pages_read']} read, {env['ocr_pages']} OCR'd")
    expect("--- Page 30 ---" in env["text"], "page 30 missing")
    code = podman("inspect", "--format", "{{.State.ExitCode}}", ARGS.container)
    expect(code == "0", f"exit code after SIGTERM: {code}")
    progress = sum(1 for e in events if e[1] == "progress")
    say(f"SIGTERM (podman stop -t 150) after the first of {progress} progress events of a 30-page "
        f"OCR read: the read completed (30 pages OCR'd, {events[-1][0]:.1f} s), then the container "
        f"exited 0 ({stopped['took']:.1f} s after the signal)")

    podman("start", ARGS.container)
    took = wait_ready()
    for fid, (req, text) in ids.items():
        r = read(req)
        expect(r.status == 200 and r.json()["text"] == text, f"after restart {fid}: {r.status}")
    say(f"restarted (ready in {took:.2f} s): the {len(ids)} files read before read the same "
        "(data on the volume, root read-only)")


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--gateway", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--origin", required=True)
    p.add_argument("--container", required=True)
    p.add_argument("--shared", required=True)
    ARGS = p.parse_args()
    check_health()
    check_console()
    check_keys_and_request_ids()
    check_cors()
    check_upload_url_and_mcp()
    big = check_big_uploads()
    ids = check_reads()
    ids[big] = ({"file_id": big, "max_chars": 2000}, read({"file_id": big, "max_chars": 2000}).json()["text"])
    check_sse()
    check_sigterm_and_restart(ids)


if __name__ == "__main__":
    main()
