#!/usr/bin/env python3
"""One-shot reads (issue #46 item 2), side by side in one run.

docreader: `docreader serve` on loopback (a fresh data dir), the file sent in `POST /read`
(multipart: the file and an `options` part; nothing kept), on one keep-alive connection,
the client's wall time per request; and, for reference, upload + read + (untimed) delete.
Peers in this Python process, warm, a timer around the library call only: pypdfium2 (a
1-page PDF: open, every page's text) and kreuzberg (`extract_bytes_sync`, cache off).

Goals: 1-page PDF one-shot >= 0.8 x pypdfium2's in-process pages/s; PPTX one-shot >=
kreuzberg's in-process MB/s. Inputs are generated: fixtures/pdfgen.py's prose page, and a
python-pptx deck of --slides slides (a title and five bullet lines each).
"""
import argparse
import http.client
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "fixtures"))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from pdfgen import make_pdf, prose_page  # noqa: E402
import benchlib  # noqa: E402

MB = 1_000_000


def make_pptx(slides):
    from pptx import Presentation
    deck = Presentation()
    for i in range(slides):
        s = deck.slides.add_slide(deck.slide_layouts[1])
        s.shapes.title.text = f"Quarterly review, part {i + 1}"
        body = s.placeholders[1].text_frame
        body.text = f"Revenue grew {i % 17 + 3} percent against the plan for region {i % 7}"
        for k in range(4):
            body.add_paragraph().text = (f"Item {k + 1}: the shipment of order {i * 10 + k} "
                                         "arrived on time and was invoiced the same week")
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


class Server(benchlib.Server):
    """`docreader serve` (benchlib's: a free loopback port, a fresh data dir, ready when
    /readyz says so) with one keep-alive connection for the timed requests."""

    def __init__(self, binary, workdir):
        d = os.path.join(workdir, "serve")
        super().__init__(binary, os.path.join(d, "data"), os.path.join(d, "serve.log"), benchlib.ncpu())

    def start(self):
        super().start()
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        return self

    def call(self, method, path, body=b"", ctype=None):
        self.conn.request(method, path, body, {"Content-Type": ctype} if ctype else {})
        r = self.conn.getresponse()
        return r.status, r.read()

    def stop(self):
        if getattr(self, "conn", None):
            self.conn.close()
        super().stop()


def form(name, data, options=None):
    b = "bench" + uuid.uuid4().hex
    body = (f"--{b}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n").encode() + data + b"\r\n"
    if options is not None:
        body += (f"--{b}\r\nContent-Disposition: form-data; name=\"options\"\r\n\r\n"
                 f"{json.dumps(options)}\r\n").encode()
    return body + f"--{b}--\r\n".encode(), f"multipart/form-data; boundary={b}"


def one_shot(server, name, data):
    body, ctype = form(name, data, {"max_chars": 50_000_000})
    t0 = time.perf_counter()
    status, raw = server.call("POST", "/read", body, ctype)
    wall = time.perf_counter() - t0
    env = json.loads(raw)
    if status != 200 or env.get("status") != "ok" or env.get("file_id"):
        raise SystemExit(f"bench-oneshot: one-shot read of {name}: HTTP {status} {raw[:300]!r}")
    return wall, env


def upload_read(server, name, data):
    body, ctype = form(name, data)
    t0 = time.perf_counter()
    status, raw = server.call("POST", "/upload", body, ctype)
    fid = json.loads(raw)["files"][0]["file_id"]
    status, raw = server.call("POST", "/read", json.dumps({"file_id": fid, "max_chars": 50_000_000}).encode(),
                              "application/json")
    wall = time.perf_counter() - t0
    env = json.loads(raw)
    server.call("DELETE", f"/files/{fid}")
    if status != 200 or env.get("status") != "ok":
        raise SystemExit(f"bench-oneshot: upload + read of {name}: HTTP {status} {raw[:300]!r}")
    return wall, env


def pdfium_read(data):
    import pypdfium2
    t0 = time.perf_counter()
    pdf = pypdfium2.PdfDocument(data)
    text = "".join(pdf[i].get_textpage().get_text_range() for i in range(len(pdf)))
    pdf.close()
    return time.perf_counter() - t0, text


def kreuzberg_read(data, mime):
    from kreuzberg import ExtractionConfig, extract_bytes_sync
    config = ExtractionConfig(use_cache=False)
    t0 = time.perf_counter()
    result = extract_bytes_sync(data, mime, config=config)
    return time.perf_counter() - t0, result.content


def nonws(s):
    return sum(1 for c in s if not c.isspace())


def timed(fn, runs, warmup=3):
    for _ in range(warmup):
        fn()
    out = [fn() for _ in range(runs)]
    return statistics.median(w for w, _ in out), out[-1][1]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.environ.get("DOCREADER_BIN", "target/release/docreader"))
    ap.add_argument("--runs", type=int, default=30, help="timed runs per tool and file (median)")
    ap.add_argument("--slides", type=int, default=40, help="slides of the generated deck")
    ap.add_argument("--baseline", help="another docreader binary, measured beside --bin in the same run "
                    "(its rows named `baseline`)")
    args = ap.parse_args()
    binary = os.path.abspath(args.bin)
    baseline = os.path.abspath(args.baseline) if args.baseline else None
    workdir = tempfile.mkdtemp(prefix="docreader-bench-oneshot-")
    pdf = make_pdf([prose_page(1)])
    pptx = make_pptx(args.slides)
    pptx_mime = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
    ver = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip()
    print("## One-shot reads (issue #46 item 2)\n")
    print(f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; docreader: {ver}; "
          f"{os.cpu_count()} CPUs; client: Python http.client, one keep-alive connection")
    print(f"- inputs: a 1-page PDF ({len(pdf):,} bytes, fixtures/pdfgen.py), a {args.slides}-slide "
          f"PPTX ({len(pptx):,} bytes, python-pptx); {args.runs} timed runs each (median) after 3 warm-up\n")
    if baseline:
        bver = subprocess.run([baseline, "--version"], capture_output=True, text=True).stdout.strip()
        print(f"- baseline: {bver} (`--baseline`), its server beside this one, the two timed in turn\n")
    rows = []
    servers = []
    try:
        for who, b in [("docreader", binary), ("baseline", baseline)]:
            if b:
                servers.append((who, Server(b, os.path.join(workdir, who)).start()))
    except benchlib.Failed as e:
        for _, srv in servers:
            srv.stop()
        raise SystemExit(f"bench-oneshot: {e}")
    try:
        for label, name, data in [("1-page PDF", "one.pdf", pdf), (f"{args.slides}-slide PPTX", "deck.pptx", pptx)]:
            for how, fn in [("one-shot", one_shot), ("upload + read", upload_read)]:
                for who, srv in servers:
                    w, env = timed(lambda: fn(srv, name, data), args.runs)
                    rows.append((label, f"{who} {how}", w, len(data), nonws(env["text"])))
    finally:
        for _, srv in servers:
            srv.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    peers = [("1-page PDF", "pypdfium2 (in-process)", lambda: pdfium_read(pdf), len(pdf)),
             ("1-page PDF", "kreuzberg (in-process)", lambda: kreuzberg_read(pdf, "application/pdf"), len(pdf)),
             (f"{args.slides}-slide PPTX", "kreuzberg (in-process)", lambda: kreuzberg_read(pptx, pptx_mime), len(pptx))]
    for label, tool, fn, size in peers:
        try:
            w, text = timed(fn, args.runs)
            rows.append((label, tool, w, size, nonws(text)))
        except ImportError as e:
            rows.append((label, tool, None, size, f"not installed ({e})"))
    print("| file | tool | ms, median | pages/s or MB/s | text (non-space chars) |")
    print("|---|---|--:|--:|--:|")
    for label, tool, w, size, chars in rows:
        if w is None:
            print(f"| {label} | {tool} | — | — | {chars} |")
            continue
        rate = f"{1 / w:,.0f} pages/s" if "PDF" in label else f"{size / MB / w:.1f} MB/s"
        print(f"| {label} | {tool} | {w * 1000:.2f} | {rate} | {chars:,} |")
    get = {(r[0], r[1]): r[2] for r in rows}
    print()
    status = 0
    for label, peer, goal in [("1-page PDF", "pypdfium2 (in-process)", 0.8),
                              (f"{args.slides}-slide PPTX", "kreuzberg (in-process)", 1.0)]:
        ours, theirs = get.get((label, "docreader one-shot")), get.get((label, peer))
        if ours and theirs:
            r = theirs / ours
            print(f"- {label}: one-shot ÷ {peer}: **{r:.2f}×** (goal ≥ {goal}: {'met' if r >= goal else 'NOT met'})")
        else:
            print(f"- {label}: one-shot ÷ {peer}: cannot compute")
    return status


if __name__ == "__main__":
    sys.exit(main())
