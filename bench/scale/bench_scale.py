#!/usr/bin/env python3
"""Many replicas (issue #22), measured: Postgres + S3 (SeaweedFS) against SQLite + local
disk, and one replica against two, side by side in one run on this machine. The parts that
start Postgres, SeaweedFS and the replicas are tests/scale/check.py's.

1. memory: a scanned page read again (its OCR from document memory), 60 times one after
   another: p50/p99 embedded vs shared; the goal is ≤ 15 % more with Postgres + S3.
2. upload: upload + first read of a 1 MB PDF (the corpus's tracemonkey.pdf, made unique
   each time); shared: uploaded on one replica, read on another (which fetches it from S3).
3. replicas: pages/s and p50/p99 reading a 200-page text PDF whole, 4 clients for 20 s,
   against one replica, then two (the clients alternate).

Standard library only; prints a Markdown table per part (and --json FILE writes them).
"""

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
import uuid

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "scale"))
sys.path.insert(0, os.path.join(ROOT, "fixtures"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import check  # noqa: E402  (tests/scale/check.py)
from check import BUCKET, KEYS, Postgres, Replica, S3_KEY, S3_SECRET, Seaweed  # noqa: E402
from pdfgen import make_pdf, prose_page  # noqa: E402
from benchlib import pct, machine  # noqa: E402


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def timed(fn):
    t = time.perf_counter()
    r = fn()
    return (time.perf_counter() - t) * 1000, r


def ok(r, what):
    if r.status != 200:
        raise SystemExit(f"{what}: {r.status} {r.body[:300]!r}")
    return r


def part_memory(emb, shared, n):
    rows = {}
    scan = open(os.path.join(ROOT, "fixtures", "pdf", "scan_page.pdf"), "rb").read()
    for name, r in (("SQLite + local disk", emb), ("Postgres + S3", shared)):
        fid = check.upload_ok(r.port, "scan.pdf", scan)["file_id"]
        ok(check.read(r.port, fid), "first read")
        for _ in range(5):
            check.read(r.port, fid)
        times = []
        for _ in range(n):
            ms, a = timed(lambda: check.read(r.port, fid))
            ok(a, "memory read")
            if not a.json().get("ocr_pages_from_memory"):
                raise SystemExit(f"{name}: the read did not come from document memory")
            times.append(ms)
        rows[name] = {"p50_ms": pct(times, 50), "p99_ms": pct(times, 99),
                      "mean_ms": statistics.mean(times)}
        log(f"memory {name}: {rows[name]}")
    return rows


def part_upload(emb, shared, other, n):
    pdf = open(os.path.join(ROOT, "tests", "corpus", "pdf", "tracemonkey.pdf"), "rb").read()
    rows = {}
    for name, up, rd in (("SQLite + local disk", emb, emb), ("Postgres + S3", shared, other)):
        ups, reads = [], []
        for i in range(n):
            data = pdf + f"\n% {uuid.uuid4()}\n".encode()
            ms, a = timed(lambda: check.upload(up.port, "tracemonkey.pdf", data))
            ok(a, "upload")
            fid = a.json()["files"][0]["file_id"]
            ups.append(ms)
            ms, a = timed(lambda: check.read(rd.port, fid))
            ok(a, "first read")
            reads.append(ms)
        rows[name] = {"upload_p50_ms": pct(ups, 50), "first_read_p50_ms": pct(reads, 50),
                      "total_p50_ms": pct([u + r for u, r in zip(ups, reads)], 50),
                      "bytes": len(pdf)}
        log(f"upload {name}: {rows[name]}")
    return rows


def part_replicas(replicas, clients, seconds, pages):
    pdf = make_pdf([prose_page(i + 1) for i in range(pages)])
    ids = {r.n: check.upload_ok(r.port, "long.pdf", pdf)["file_id"] for r in replicas}
    # The upload on one replica is the same file on the other: one id does for both.
    fid = ids[replicas[0].n]
    rows = {}
    for label, group in (("1 replica", replicas[:1]), ("2 replicas", replicas)):
        for r in group:
            ok(check.read(r.port, fid), "warm-up")
        lock = threading.Lock()
        times, done = [], [0]
        end = time.time() + seconds

        def client(k):
            i = k
            while time.time() < end:
                r = group[i % len(group)]
                i += 1
                ms, a = timed(lambda: check.read(r.port, fid))
                ok(a, "read")
                with lock:
                    times.append(ms)
                    done[0] += 1
        t0 = time.time()
        ts = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        wall = time.time() - t0
        rows[label] = {"pages_per_s": done[0] * pages / wall, "p50_ms": pct(times, 50),
                       "p99_ms": pct(times, 99), "reads": done[0]}
        log(f"replicas {label}: {rows[label]}")
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--weed", required=True)
    ap.add_argument("--pg-bindir", required=True)
    ap.add_argument("--reads", type=int, default=60)
    ap.add_argument("--uploads", type=int, default=10)
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--pages", type=int, default=200)
    ap.add_argument("--json")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="docreader-bench-scale-")
    os.chmod(work, 0o755)
    started, replicas = [], []
    try:
        pg = Postgres(work, args.pg_bindir)
        pg.start()
        started.append(pg)
        weed = Seaweed(work, args.weed)
        weed.start()
        started.append(weed)
        base = dict(os.environ, DOCREADER_API_KEYS=",".join(f"{k}:{t}" for t, k in KEYS.items()))
        shared_env = dict(base, DOCREADER_DATABASE_URL=pg.url,
                          DOCREADER_BLOB_STORE=f"s3://{BUCKET}/bench",
                          AWS_ENDPOINT_URL=f"http://127.0.0.1:{weed.s3}",
                          AWS_ACCESS_KEY_ID=S3_KEY, AWS_SECRET_ACCESS_KEY=S3_SECRET,
                          AWS_REGION="us-east-1")
        emb = Replica(0, work, args.bin, base)
        s1 = Replica(1, work, args.bin, shared_env)
        s2 = Replica(2, work, args.bin, shared_env)
        replicas = [emb, s1, s2]
        for r in replicas:
            r.start()
        out = {"machine": machine(), "memory": part_memory(emb, s1, args.reads)}
        out["upload"] = part_upload(emb, s1, s2, args.uploads)
        emb.stop()  # part 3 is the shared replicas' alone
        out["replicas"] = part_replicas([s1, s2], 4, args.seconds, args.pages)
        m = out["memory"]
        out["memory_overhead"] = m["Postgres + S3"]["p50_ms"] / m["SQLite + local disk"]["p50_ms"] - 1
        print(json.dumps(out, indent=2))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(out, f, indent=2)
    finally:
        for r in replicas:
            r.stop()
        for s in reversed(started):
            s.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
