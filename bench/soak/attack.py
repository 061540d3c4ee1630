#!/usr/bin/env python3
"""Two tenants and the attacks of issue #41, against one `docreader serve` (a release build).

Tenant A attacks while tenant B works: what B and the probes see is measured, first with no
attack (baseline), then under every attack at once:

1. `/mcp` bombs: tool calls of 62 MB (Content-Length), streamed 20 MB (chunked) and 10 MB
   arrays of small values, sent over and over by two threads;
2. stalled bodies: 2,048 requests to /read, /search, /uploads and /mcp whose headers are
   complete and whose bodies never finish, opened again as the server closes them;
3. one tenant's heavy reads: A's forced-OCR reads of a 30-page PDF (4 at once) and read
   jobs queued 6 at a time, page 500 of a 500-page 16000x16000 TIFF drawn and the TIFF
   read (refused from its headers);
4. heavy searches: A's 166-word searches over its 8 MB text, two at once;
5. DNS rebinding on a second, keyless server: requests with a foreign Host and cross-site
   POSTs (each must be refused: counted).

Each client has a loopback address of its own, as separate machines would: the stalled
bodies 127.0.0.1, B 127.0.0.2, the probes 127.0.0.3, A's reads 127.0.0.4, the MCP bombs
127.0.0.5, A's searches 127.0.0.6.

Measured: /healthz latency (probes from 127.0.0.3 every 20 ms), B's small read (a 2-line
text file, from 127.0.0.2, one after another) and B's read job (submit to done), each as
p50 / p99 / max; the server's peak RSS (VmHWM); answers by status.

    DOCREADER_BIN=target/release/docreader python3 bench/soak/attack.py [--seconds 60] [--json FILE]

Standard library only. Exits 1 when a probe or a B read failed, or healthz p99 under attack
is over 100 ms, or B's read p99 under attack over 2 s.
"""
import argparse
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "fixtures"))
from pdfgen import make_pdf, prose_page  # noqa: E402

ALICE = "alice-key-0123456789"
BOB = "bob-key-0123456789ab"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def connect(port, source="127.0.0.1", timeout=30):
    s = socket.socket()
    s.settimeout(timeout)
    s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    return s


def exchange(port, head, body=b"", source="127.0.0.1", timeout=60):
    """One request on a fresh connection: (status, body bytes); status 0 when the
    connection was refused or cut before an answer."""
    try:
        s = connect(port, source, timeout)
    except OSError:
        return 0, b""
    raw = b""
    try:
        # The body goes out from a thread while this one reads: the server may answer (and
        # close) before it has all of it.
        sender = threading.Thread(target=lambda: _send(s, head.encode() + body), daemon=True)
        sender.start()
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            raw += chunk
    except OSError:
        pass
    finally:
        s.close()
    try:
        status = int(raw.split(b" ", 2)[1])
    except (IndexError, ValueError):
        status = 0
    _, _, rest = raw.partition(b"\r\n\r\n")
    if b"transfer-encoding: chunked" in raw.split(b"\r\n\r\n")[0].lower():
        out, buf = b"", rest
        while buf:
            line, _, buf = buf.partition(b"\r\n")
            n = int(line or b"0", 16)
            if n == 0:
                break
            out, buf = out + buf[:n], buf[n + 2:]
        rest = out
    return status, rest


def _send(s, data):
    try:
        s.sendall(data)
    except OSError:
        pass


def call(port, key, method, path, body=None, source="127.0.0.1", host="127.0.0.1", extra=""):
    data = b"" if body is None else json.dumps(body).encode()
    auth = f"Authorization: Bearer {key}\r\n" if key else ""
    head = (f"{method} {path} HTTP/1.1\r\nHost: {host}\r\n{auth}{extra}Content-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n")
    status, raw = exchange(port, head, data, source)
    try:
        return status, json.loads(raw or b"null")
    except ValueError:
        return status, None


def upload(port, key, name, data):
    b = "BeNcHbOuNdArY"
    form = (f"--{b}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n\r\n").encode() + data + f"\r\n--{b}--\r\n".encode()
    head = (f"POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n"
            f"Content-Type: multipart/form-data; boundary={b}\r\nContent-Length: {len(form)}\r\nConnection: close\r\n\r\n")
    status, raw = exchange(port, head, form)
    assert status == 200, raw[:300]
    return json.loads(raw)["files"][0]["file_id"]


def big_tiff(pages, side):
    """A TIFF of `pages` pages, each side x side 1-bit and blank, PackBits-compressed; every
    page's IFD points at the same strip, so the file stays small (about 0.5 MB) whatever the
    pages' number."""
    row_bytes = (side + 7) // 8
    packed_row = b""
    left = row_bytes
    while left:
        n = min(128, left)
        packed_row += bytes([(257 - n) & 0xFF, 0]) if n > 1 else b"\x00\x00"
        left -= n
    strip = packed_row * side
    out = bytearray(b"II*\x00" + struct.pack("<I", 8 + len(strip)))
    out += strip
    for i in range(pages):
        pos = len(out)
        tags = [
            (256, 4, 1, side), (257, 4, 1, side), (258, 3, 1, 1), (259, 3, 1, 32773),
            (262, 3, 1, 0), (273, 4, 1, 8), (277, 3, 1, 1), (278, 4, 1, side),
            (279, 4, 1, len(strip)),
        ]
        size = 2 + len(tags) * 12 + 4
        nxt = pos + size if i + 1 < pages else 0
        ifd = struct.pack("<H", len(tags))
        for tag, typ, cnt, val in tags:
            ifd += struct.pack("<HHI", tag, typ, cnt) + (struct.pack("<HH", val, 0) if typ == 3 else struct.pack("<I", val))
        ifd += struct.pack("<I", nxt)
        out += ifd
    return bytes(out)


def pct(xs, p):
    if not xs:
        return None
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p / 100))]


def summary(xs):
    return {"n": len(xs), "p50_ms": round(pct(xs, 50) * 1000, 1) if xs else None,
            "p99_ms": round(pct(xs, 99) * 1000, 1) if xs else None,
            "max_ms": round(max(xs) * 1000, 1) if xs else None}


def vmhwm(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def start(bin_, flags, env=None):
    port = free_port()
    d = tempfile.mkdtemp(prefix="docreader-attack-")
    p = subprocess.Popen([bin_, "serve", "--addr", f"127.0.0.1:{port}", "--data-dir", os.path.join(d, "data")] + flags,
                         stdout=subprocess.DEVNULL, stderr=open(os.path.join(d, "serve.log"), "w"),
                         env={**os.environ, "OMP_THREAD_LIMIT": "1", **(env or {})})
    for _ in range(300):
        try:
            if call(port, "", "GET", "/healthz")[0] == 200:
                return p, port, d
        except OSError:
            pass
        time.sleep(0.05)
    raise SystemExit("the server did not start: see " + d)


class Measure:
    def __init__(self):
        self.lock = threading.Lock()
        self.health, self.bread, self.bjob = [], [], []
        self.failures = []

    def add(self, name, v):
        with self.lock:
            getattr(self, name).append(v)


def probes(port, m, stop):
    while not stop.is_set():
        t = time.monotonic()
        try:
            st, _ = exchange(port, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
                             source="127.0.0.3", timeout=10)
        except OSError as e:
            st = f"error {e}"
        if st != 200:
            m.failures.append(f"healthz {st}")
        m.add("health", time.monotonic() - t)
        time.sleep(0.02)


def b_reads(port, small, m, stop):
    while not stop.is_set():
        t = time.monotonic()
        st, env = call(port, BOB, "POST", "/read", {"file_id": small}, source="127.0.0.2")
        if st != 200 or (env or {}).get("text") != "a small note\nof two lines\n":
            m.failures.append(f"B read {st}")
        m.add("bread", time.monotonic() - t)
        time.sleep(0.05)


def b_jobs(port, small, m, stop):
    while not stop.is_set():
        t = time.monotonic()
        st, job = call(port, BOB, "POST", "/read", {"file_id": small, "async": True}, source="127.0.0.2")
        if st != 202:
            m.failures.append(f"B job submit {st}")
            time.sleep(0.5)
            continue
        while not stop.is_set():
            st, j = call(port, BOB, "GET", f"/jobs/{job['job_id']}", source="127.0.0.2")
            if j and j.get("state") == "done":
                m.add("bjob", time.monotonic() - t)
                break
            if j and j.get("state") in ("failed", "cancelled"):
                m.failures.append(f"B job {j.get('state')}")
                break
            time.sleep(0.05)
        time.sleep(0.2)


def phase(port, small, seconds, attackers):
    m = Measure()
    stop = threading.Event()
    threads = [threading.Thread(target=f, args=(port, m, stop), daemon=True) for f in [probes]]
    threads += [threading.Thread(target=f, args=(port, small, m, stop), daemon=True) for f in [b_reads, b_jobs]]
    threads += [threading.Thread(target=a, args=(stop,), daemon=True) for a in attackers]
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join(timeout=60)
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--json")
    args = ap.parse_args()
    bin_ = os.environ.get("DOCREADER_BIN", os.path.join(ROOT, "target/release/docreader"))
    proc, port, d = start(bin_, ["--workers", "2", "--api-keys", f"{ALICE}:alice,{BOB}:bob",
                                 "--body-timeout-ms", "5000"])
    counts = {}
    clock = threading.Lock()

    def count(k):
        with clock:
            counts[k] = counts.get(k, 0) + 1

    try:
        pdf = make_pdf([prose_page(n) for n in range(1, 31)])
        heavy = upload(port, ALICE, "thirty.pdf", pdf)
        tiff = upload(port, ALICE, "wall.tif", big_tiff(500, 16000))
        text = "".join(f"line {i} alpha beta gamma delta w{i % 997} more words here\n" for i in range(130_000)).encode()
        big = upload(port, ALICE, "big.txt", text)
        call(port, ALICE, "POST", f"/files/{big}/index")
        small = upload(port, BOB, "note.txt", b"a small note\nof two lines\n")

        base = phase(port, small, max(10, args.seconds // 3), [])

        def mcp_bombs(stop):
            call62 = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_document","arguments":{"file_ids":[' + b'"f_0000000000000000",' * 2_900_000 + b'"x"]}}}'
            arr = b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_documents","arguments":{"x":[' + b"1," * 5_000_000 + b'1]}}}'
            h = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + ALICE + "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            while not stop.is_set():
                st, _ = exchange(port, h + f"Content-Length: {len(call62)}\r\n\r\n", b"", source="127.0.0.5")
                count(f"mcp 62 MB: {st}")
                pieces = [call62[i:i + (1 << 20)] for i in range(0, 20 << 20, 1 << 20)]
                chunked = b"".join(b"%x\r\n" % len(c) + c + b"\r\n" for c in pieces) + b"0\r\n\r\n"
                st, _ = exchange(port, h + "Transfer-Encoding: chunked\r\n\r\n", chunked, source="127.0.0.5")
                count(f"mcp 20 MB chunked: {st}")
                st, _ = exchange(port, h + f"Content-Length: {len(arr)}\r\n\r\n", arr, source="127.0.0.5")
                count(f"mcp 10 MB array: {st}")

        def stalled(stop):
            paths = ["/read", "/search", "/uploads", "/mcp"]
            socks = []
            i = 0
            while not stop.is_set():
                while len(socks) < 2048 and not stop.is_set():
                    try:
                        s = connect(port, timeout=0.5)
                        s.sendall((f"POST {paths[i % 4]} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {ALICE}\r\n"
                                   "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"file_id\": ").encode())
                        socks.append(s)
                        i += 1
                    except OSError:
                        count("stalled: connect refused")
                        break
                keep = []
                for s in socks:
                    s.setblocking(False)
                    try:
                        got = s.recv(64)
                        if got == b"" or got:
                            count("stalled: ended " + (got.split(b" ")[1].decode() if got.startswith(b"HTTP") else "closed"))
                            s.close()
                            continue
                    except BlockingIOError:
                        keep.append(s)
                        continue
                    except OSError:
                        count("stalled: ended reset")
                        s.close()
                        continue
                socks = keep
                time.sleep(0.2)
            for s in socks:
                s.close()

        def heavy_reads(stop):
            def one(pages):
                while not stop.is_set():
                    st, _ = call(port, ALICE, "POST", "/read", {"file_id": heavy, "ocr": "force", "pages": pages, "max_chars": 100}, source="127.0.0.4")
                    count(f"A heavy read: {st}")
            ts = [threading.Thread(target=one, args=(p,), daemon=True) for p in ["1-4", "5-8", "9-12", "13-16"]]
            for t in ts:
                t.start()
            n = 0
            while not stop.is_set():
                for _ in range(6):
                    n += 1
                    first = 1 + (n * 2) % 28
                    st, _ = call(port, ALICE, "POST", "/read", {"file_id": heavy, "ocr": "force", "pages": f"{first}-{first + 1}", "async": True}, source="127.0.0.4")
                    count(f"A job: {st}")
                st, _ = call(port, ALICE, "GET", f"/files/{tiff}/pages/500?width=200", source="127.0.0.4")
                count(f"A TIFF page 500: {st}")
                st, _ = call(port, ALICE, "POST", "/read", {"file_id": tiff}, source="127.0.0.4")
                count(f"A TIFF read: {st}")
                stop.wait(5)
            for t in ts:
                t.join(timeout=60)

        def heavy_searches(stop):
            q = " ".join(f"w{n}" for n in range(166))

            def one():
                while not stop.is_set():
                    st, _ = call(port, ALICE, "POST", "/search", {"query": q, "limit": 100}, source="127.0.0.6")
                    count(f"A search: {st}")
            ts = [threading.Thread(target=one, daemon=True) for _ in range(2)]
            for t in ts:
                t.start()
            for t in ts:
                t.join(timeout=60)

        under = phase(port, small, args.seconds, [mcp_bombs, stalled, heavy_reads, heavy_searches])
        peak = vmhwm(proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=200)
        shutil.rmtree(d, ignore_errors=True)

    # Item 5 on the keyless default.
    kproc, kport, kdir = start(bin_, ["--workers", "0"])
    try:
        rebinding = {}
        for host in ["attacker.example", "attacker.example:8080", "127.0.0.1.nip.io"]:
            for method, path, body in [("GET", "/files", None), ("POST", "/read", {"file_id": "f_x"}), ("POST", "/search", {"query": "x"})]:
                st, _ = call(kport, "", method, path, body, host=host)
                rebinding[st] = rebinding.get(st, 0) + 1
        for extra in ["Sec-Fetch-Site: cross-site\r\n", "Origin: https://attacker.example\r\n", "Origin: null\r\n"]:
            st, _ = call(kport, "", "POST", "/read", {"file_id": "f_x"}, extra=extra)
            rebinding[st] = rebinding.get(st, 0) + 1
    finally:
        kproc.terminate()
        kproc.wait(timeout=60)
        shutil.rmtree(kdir, ignore_errors=True)

    result = {
        "baseline": {"healthz": summary(base.health), "b_read": summary(base.bread), "b_job": summary(base.bjob)},
        "under_attack": {"healthz": summary(under.health), "b_read": summary(under.bread), "b_job": summary(under.bjob)},
        "failures": base.failures + under.failures,
        "attack_answers": dict(sorted(counts.items())),
        "rebinding_answers": {str(k): v for k, v in rebinding.items()},
        "server_peak_rss_mb": round(peak / 2**20),
        "seconds": args.seconds,
    }
    print(json.dumps(result, indent=2))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
    ok = (not result["failures"]
          and (under.health and pct(under.health, 99) < 0.1)
          and (under.bread and pct(under.bread, 99) < 2.0)
          and set(rebinding) == {403})
    print("PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
