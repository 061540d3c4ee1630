#!/usr/bin/env python3
"""Search quality and latency (issue #19), through a real `docreader serve`.

Quality: every document of tests/corpus whose MANIFEST row expects text is uploaded and
indexed whole (POST /files/{id}/index); then the questions of bench/search/questions.json
(written before any tuning) are searched, and a question is answered when its file is among
the first three distinct files of the hits.

Latency: more copies of those documents (but the images, whose OCR would only slow the
loading) are uploaded under other names and read once (every read indexes what it
returned) until the tenant has --docs documents; then every
question is searched --rounds times at concurrency 1, and p50/p99 of the client-side time
are reported.

    python3 bench/search/bench_search.py [--bin target/release/docreader] [--docs 1000]
"""
import argparse
import http.client
import json
import os
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
from benchlib import Server, pct  # noqa: E402


def request(port, method, path, body=None, headers=None, timeout=600):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    conn.request(method, path, body=body, headers=headers or {})
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp.status, json.loads(data) if data else None


def upload(port, name, data):
    boundary = uuid.uuid4().hex
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
    status, js = request(port, "POST", "/upload", body,
                         {"Content-Type": f"multipart/form-data; boundary={boundary}"})
    return js["files"][0]["file_id"] if status == 200 else None


def search(port, query, limit=10):
    t = time.perf_counter()
    status, js = request(port, "POST", "/search", json.dumps({"query": query, "limit": limit}),
                         {"Content-Type": "application/json"})
    elapsed = time.perf_counter() - t
    if status != 200:
        raise SystemExit(f"search {query!r}: HTTP {status} {js}")
    return js["hits"], elapsed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.environ.get("DOCREADER_BIN", "target/release/docreader"))
    ap.add_argument("--corpus", default=os.path.join(ROOT, "tests", "corpus"))
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    questions = json.load(open(os.path.join(HERE, "questions.json")))["questions"]
    rows = [line.rstrip("\n").split("\t") for line in open(os.path.join(args.corpus, "MANIFEST.tsv"))][1:]
    texts = [r[0] for r in rows if not r[6].startswith("error")]
    work = tempfile.mkdtemp(prefix="bench-search-")
    srv = Server(args.bin, os.path.join(work, "data"), os.path.join(work, "serve.log"), workers=0).start()
    try:
        port = srv.port
        ids = {}
        t0 = time.perf_counter()
        for rel in texts:
            data = open(os.path.join(args.corpus, rel), "rb").read()
            fid = upload(port, os.path.basename(rel), data)
            if fid is None:
                continue
            status, _ = request(port, "POST", f"/files/{fid}/index")
            if status == 200:
                ids[fid] = rel
        index_s = time.perf_counter() - t0
        answered, misses = 0, []
        for q in questions:
            hits, _ = search(port, q["q"], limit=30)
            files = []
            for h in hits:
                rel = ids.get(h["file_id"])
                if rel not in files:
                    files.append(rel)
            if q["file"] in files[:3]:
                answered += 1
            else:
                misses.append((q["q"], q["file"], files[:3]))
        print(f"quality: {answered}/{len(questions)} questions with the right document in the top 3 "
              f"({100 * answered / len(questions):.0f} %), over {len(ids)} documents indexed whole in {index_s:.1f} s")
        for q, want, got in misses:
            print(f"  miss: {q!r}: want {want}, top 3 {got}")
        # Latency over --docs documents: copies read once (each read indexes what it returned).
        n, copy = len(ids), 0
        copies = [rel for rel in texts if not rel.startswith("image/")]
        t0 = time.perf_counter()
        while n < args.docs:
            copy += 1
            for rel in copies:
                if n >= args.docs:
                    break
                data = open(os.path.join(args.corpus, rel), "rb").read()
                fid = upload(port, f"copy{copy}-{os.path.basename(rel)}", data)
                if fid and request(port, "POST", "/read", json.dumps({"file_id": fid}),
                                   {"Content-Type": "application/json"})[0] == 200:
                    n += 1
        load_s = time.perf_counter() - t0
        times = []
        for _ in range(args.rounds):
            for q in questions:
                _, s = search(port, q["q"])
                times.append(s * 1000)
        print(f"latency over {n} documents ({load_s:.0f} s to load): {len(times)} searches, "
              f"p50 {pct(times, 50):.1f} ms, p99 {pct(times, 99):.1f} ms, max {max(times):.1f} ms")
    finally:
        srv.stop()


if __name__ == "__main__":
    main()
