#!/usr/bin/env python3
"""HTTP load benchmark (issue #6): docreader serve on loopback, driven by an asyncio client
(aiohttp), in five parts measured side by side in one run:

1. scaling: pages/s reading a 200-page text PDF whole, 1 worker process vs N (= nproc);
   goal: N workers >= 0.9 x N x the 1-worker pages/s;
2. latency: upload + read of a 1-page PDF at concurrency 1, 8 and 32: p50/p90/p99 and
   operations/s (no goal; for information);
3. upload: server RSS (server + worker processes) while 16 clients upload 50 MB files at
   once; goal: growth < 50 MB;
4. scan: first vs repeated read of the same scanned PDF (OCR, then the document memory);
   goal: repeated >= 20x faster;
5. index: what the search index costs after a read whole of a 52 MB CSV (server CPU, peak
   RSS, index bytes per MB read, 1-page reads while it runs) and on request, side by side
   with --baseline.

Run it through bench/load/run.sh (which installs aiohttp); see bench/README.md. Each part
starts its own `docreader serve` (a free loopback port, a temp data dir) and stops it at the
end of the part. Inputs are generated into a temp dir. Client and server share the
machine's CPUs; the report says how much CPU each used.

A missed goal prints `NOT met`; the exit status is 1 only when docreader failed requests
(an unexpected status, a wrong envelope, a server that would not start).
"""
import argparse
import asyncio
import datetime
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "fixtures"))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from pdfgen import make_pdf, prose_page  # noqa: E402
import benchlib  # noqa: E402
from benchlib import (Failed, brief, cpu_stat, log, machine, metric, ncpu, pct,  # noqa: E402
                      proc_cpu_s, self_cpu)

try:
    import aiohttp
except ImportError:  # run.sh installs it; main() says so when it is missing
    aiohttp = None

CLIENTS = {"lean": "HTTP/1.1 written by hand on a blocking socket, one keep-alive connection and "
                   "one thread a concurrent client", "aiohttp": "aiohttp"}
MB = 1_000_000  # MB here is 10^6 bytes (file sizes, RSS)
HUGE = 50_000_000  # the largest max_chars docreader accepts (src/options.rs)
REQUEST_TIMEOUT = 600  # seconds, per HTTP request
SCALING_GOAL = 0.9  # N workers >= 0.9 x N x 1 worker
UPLOAD_RSS_GOAL_MB = 50
SCAN_GOAL = 20.0


# --------------------------------------------------------------------------- server


class Server(benchlib.Server):
    """One `docreader serve` on a free loopback port with its own data dir."""

    def __init__(self, binary, workdir, label, workers):
        self.label = label
        self.dir = os.path.join(workdir, f"serve-{label}")
        super().__init__(binary, os.path.join(self.dir, "data"), os.path.join(self.dir, "serve.log"),
                         workers, probe_timeout=5)


# --------------------------------------------------------------------------- client


def session(limit):
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=limit, force_close=False),
        timeout=aiohttp.ClientTimeout(total=REQUEST_TIMEOUT))


class LeanConn:
    """The latency part's default client: one keep-alive HTTP/1.1 connection on a blocking
    socket, each request written by hand in one piece, its answer read straight off the
    socket; a thread of its own for each concurrent operation. Its own time a request is
    small beside the server's (~0.23 ms of CPU an upload + read here). aiohttp's (`--client
    aiohttp`, an asyncio event loop) takes ~0.74 ms of CPU and adds ~0.5-0.9 ms to each
    upload + read, on the CPUs the server runs on, alike for every binary measured, which
    draws a ratio of latencies towards 1."""

    def __init__(self, base):
        host, _, port = base.split("//", 1)[1].partition(":")
        self.base, self.host, self.port = base, host, int(port)
        self.sock = self.file = None

    def close(self):
        if self.sock:
            self.file.close()
            self.sock.close()
            self.sock = self.file = None

    def request(self, method, url, body=b"", ctype=None):
        """(status, raw body)."""
        path = url[len(self.base):] if url.startswith(self.base) else url
        if self.sock is None:
            self.sock = socket.create_connection((self.host, self.port))
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.file = self.sock.makefile("rb")
        head = f"{method} {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\nContent-Length: {len(body)}\r\n"
        if ctype:
            head += f"Content-Type: {ctype}\r\n"
        r = self.file
        try:
            self.sock.sendall(head.encode() + b"\r\n" + body)
            status = int(r.readline().split()[1])
            length, chunked, close = 0, False, False
            while True:
                line = r.readline()
                if line in (b"\r\n", b""):
                    break
                k, _, v = line.partition(b":")
                k, v = k.strip().lower(), v.strip().lower()
                if k == b"content-length":
                    length = int(v)
                elif k == b"transfer-encoding" and b"chunked" in v:
                    chunked = True
                elif k == b"connection" and v == b"close":
                    close = True
            if chunked:
                parts = []
                while True:
                    n = int(r.readline().split(b";")[0], 16)
                    if n == 0:
                        r.readline()
                        break
                    parts.append(r.read(n))
                    r.readline()
                raw = b"".join(parts)
            else:
                raw = r.read(length)
                if len(raw) != length:
                    raise ConnectionError(f"{len(raw)} of {length} bytes")
        except (IndexError, ValueError, OSError) as e:
            self.close()
            raise Failed(f"{method} {path}: no whole HTTP answer ({e!r})")
        if close:
            self.close()
        return status, raw

    def call(self, method, url, body=b"", ctype=None, json_body=None):
        """(status, parsed JSON or None, raw bytes)."""
        if json_body is not None:
            body, ctype = json.dumps(json_body).encode(), "application/json"
        status, raw = self.request(method, url, body, ctype)
        return status, parsed(raw), raw


def multipart(name, data, ctype):
    """A multipart/form-data body with one file field: (body, content type)."""
    boundary = "bench" + os.urandom(8).hex()
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n"
            f"Content-Type: {ctype}\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
    return body, f"multipart/form-data; boundary={boundary}"


def parsed(raw):
    """An answer's JSON, or None when it is not JSON."""
    try:
        return json.loads(raw)
    except ValueError:
        return None


async def request(sess, method, url, **kw):
    """(status, parsed JSON or None, raw bytes)."""
    async with sess.request(method, url, **kw) as r:
        raw = await r.read()
        status = r.status
    return status, parsed(raw), raw


def describe(status, js, raw):
    if isinstance(js, dict) and isinstance(js.get("error"), dict):
        return f"HTTP {status} {js['error'].get('code')}: {brief(js['error'].get('message'), 120)}"
    return f"HTTP {status}: {brief(raw[:300].decode(errors='replace'), 120)}"


async def upload(sess, base, name, data, ctype="application/octet-stream"):
    """POST /upload of bytes or an open binary file; returns the file id."""
    form = aiohttp.FormData()
    form.add_field("file", data, filename=name, content_type=ctype)
    status, js, raw = await request(sess, "POST", base + "/upload", data=form)
    if status != 200 or not js or not js.get("files"):
        raise Failed(f"POST /upload {name}: {describe(status, js, raw)}")
    return js["files"][0]


async def read(sess, base, body):
    status, js, raw = await request(sess, "POST", base + "/read", json=body)
    if status != 200 or not isinstance(js, dict) or js.get("status") != "ok":
        raise Failed(f"POST /read: {describe(status, js, raw)}")
    return js


async def delete(sess, base, file_id):
    status, js, raw = await request(sess, "DELETE", f"{base}/files/{file_id}")
    if status != 200:
        raise Failed(f"DELETE /files/{file_id}: {describe(status, js, raw)}")


async def metrics(sess, base):
    status, _, raw = await request(sess, "GET", base + "/metrics")
    return raw.decode(errors="replace") if status == 200 else ""


def check_pdf_envelope(env, pages):
    if env.get("truncated") or env.get("pages_read") != pages:
        raise Failed(f"incomplete read: truncated={env.get('truncated')} "
                     f"pages_read={env.get('pages_read')} of {pages}")


# --------------------------------------------------------------------------- 1. scaling


class Config:
    """One server of part 1, its clients' uploads and its running totals."""

    def __init__(self, server):
        self.server = server
        self.ids, self.lat = [], []
        self.pages = self.wall = self.cpu = self.client_cpu = 0.0
        self.error = None


async def scaling_slice(cfg, sess, pages, seconds):
    """All clients read the PDF whole in a loop for `seconds`; adds to cfg's totals."""
    base, body = cfg.server.base, {"max_chars": HUGE}
    cpu0, self0 = cfg.server.cpu_s(), self_cpu()
    t0 = time.perf_counter()
    end = t0 + seconds

    async def client(file_id):
        while time.perf_counter() < end:
            s = time.perf_counter()
            env = await read(sess, base, {**body, "file_id": file_id})
            cfg.lat.append(time.perf_counter() - s)
            check_pdf_envelope(env, pages)
            cfg.pages += env["pages_read"]

    await asyncio.gather(*(client(i) for i in cfg.ids))
    cfg.wall += time.perf_counter() - t0
    cfg.cpu += cfg.server.cpu_s() - cpu0
    cfg.client_cpu += self_cpu() - self0


async def scaling_all(configs, pdf, pages, clients, duration, rounds):
    sessions = [session(clients + 2) for _ in configs]
    try:
        for cfg, sess in zip(configs, sessions):
            base = cfg.server.base
            cfg.ids = [(await upload(sess, base, f"dense-{pages}p-{i}.pdf", pdf, "application/pdf"))["file_id"]
                       for i in range(clients)]
            # Warm-up: one read per client at once (starts the worker processes), untimed.
            for env in await asyncio.gather(*(read(sess, base, {"max_chars": HUGE, "file_id": i})
                                              for i in cfg.ids)):
                check_pdf_envelope(env, pages)
        # Round-robin: the configurations take turns in slices, so that a load spike from
        # outside hits both alike; the idle server's workers wait on their pipes meanwhile.
        for r in range(rounds):
            for cfg, sess in zip(configs, sessions):
                if cfg.error:
                    continue
                log(f"1. scaling: round {r + 1}/{rounds}, {cfg.server.workers} worker(s), "
                    f"{len(cfg.ids)} clients, {duration / rounds:g} s …")
                try:
                    await scaling_slice(cfg, sess, pages, duration / rounds)
                except Failed as e:
                    cfg.error = str(e)
    finally:
        for sess in sessions:
            await sess.close()


def part_scaling(args, binary, workdir):
    n = args.workers
    pages = args.pages
    log(f"1. scaling: generating a {pages}-page PDF …")
    pdf = make_pdf([prose_page(i + 1) for i in range(pages)])
    configs = []
    try:
        for w in ([1, n] if n != 1 else [1]):
            configs.append(Config(Server(binary, workdir, f"scaling-{w}w", w).start()))
        asyncio.run(scaling_all(configs, pdf, pages, args.clients, args.duration, args.rounds))
    finally:
        for cfg in configs:
            cfg.server.stop()
    rows = []
    for cfg in configs:
        row = {"workers": cfg.server.workers, "clients": args.clients}
        if cfg.error or not cfg.lat:
            row["error"] = cfg.error or "no read finished"
        else:
            row.update({"reads": len(cfg.lat), "pages": cfg.pages, "wall_s": cfg.wall,
                        "pages_per_s": cfg.pages / cfg.wall, "read_p50_s": statistics.median(cfg.lat),
                        "read_max_s": max(cfg.lat), "server_cpu_s": cfg.cpu, "client_cpu_s": cfg.client_cpu})
            log(f"   {cfg.server.workers} worker(s): {row['pages_per_s']:,.0f} pages/s")
        rows.append(row)
    return {"pages": pages, "pdf_bytes": len(pdf), "rounds": args.rounds, "rows": rows}


def render_scaling(res, n):
    out = [f"### 1. Throughput: the {res['pages']}-page text PDF read whole, 1 worker vs {n}", "",
           "| server | clients | reads | pages/s | wall s | read latency p50 / max s "
           "| server CPU s (% of 1 CPU) | client CPU s | |",
           "|---|--:|--:|--:|--:|--:|--:|--:|---|"]
    for r in res["rows"]:
        label = f"`--workers {r['workers']}`"
        if "error" in r:
            out.append(f"| {label} | {r['clients']} | — | — | — | — | — | — | failed: {r['error']} |")
            continue
        out.append(f"| {label} | {r['clients']} | {r['reads']} | **{r['pages_per_s']:,.0f}** "
                   f"| {r['wall_s']:.1f} | {r['read_p50_s']:.3f} / {r['read_max_s']:.3f} "
                   f"| {r['server_cpu_s']:.1f} ({r['server_cpu_s'] / r['wall_s']:.0%}) "
                   f"| {r['client_cpu_s']:.1f} | |")
    out.append("")
    out.append(f"Each client uploads the PDF once ({res['pdf_bytes'] / MB:.2f} MB; the uploads dedupe "
               "to one stored copy) and reads it whole (`max_chars` 50000000) in a loop; every read is "
               "checked for `pages_read` = all pages and `truncated` false. Both servers run side by "
               f"side and take turns: {res['rounds']} slice(s) each, alternating. pages/s = pages read ÷ "
               "the slices' wall time, each slice lasting until its last read ends (no read starts after "
               "the slice's time). Server CPU includes its worker processes; the client is this Python "
               "process.")
    ok = [r for r in res["rows"] if "error" not in r]
    one = next((r for r in ok if r["workers"] == 1), None)
    many = next((r for r in ok if r["workers"] == n), None)
    if n == 1:
        out.append("- only 1 CPU here: nothing to compare (goal not applicable)")
    elif one and many:
        ratio = many["pages_per_s"] / one["pages_per_s"]
        need = SCALING_GOAL * n
        out.append(f"- {n} workers ÷ 1 worker, pages/s: **{ratio:.3f}×** (goal ≥ {SCALING_GOAL} × {n} = "
                   f"{need:.1f}×: {'met' if ratio >= need else 'NOT met'}); scaling efficiency "
                   f"{ratio / n:.0%}")
    else:
        out.append("- N workers ÷ 1 worker: cannot compute (a configuration failed)")
    return "\n".join(out)


# --------------------------------------------------------------------------- 2. latency


def latency_level(server, pdf, conc, ops, warmup, client="lean"):
    """One level: `conc` clients doing upload + read of the 1-page PDF until `ops` are done
    (after `warmup` untimed), then the uploads deleted, untimed."""
    nonce = [0]

    def unique_pdf():
        # A comment after %%EOF: the same one-page document, new bytes (no dedupe).
        nonce[0] += 1
        return pdf + b"%% bench %d %d\n" % (conc, nonce[0])

    run = lean_level if client == "lean" else aiohttp_level
    samples, wall, cpu, client_cpu, workers_cpu = run(server, unique_pdf, conc, ops, warmup)
    total = [s[0] for s in samples]
    return {"concurrency": conc, "client": client, "ops": len(samples), "wall_s": wall,
            "ops_per_s": len(samples) / wall,
            "p50_ms": pct(total, 50) * 1000, "p90_ms": pct(total, 90) * 1000,
            "p99_ms": pct(total, 99) * 1000, "max_ms": max(total) * 1000,
            "upload_p50_ms": pct([s[1] for s in samples], 50) * 1000,
            "read_p50_ms": pct([s[2] for s in samples], 50) * 1000,
            # What is not extraction: the client's latency minus the read's `elapsed_ms`
            # (the executor's time: worker dispatch and extraction; whole milliseconds).
            "extract_mean_ms": statistics.mean(s[3] for s in samples) * 1000,
            "rest_p50_ms": pct([s[0] - s[3] for s in samples], 50) * 1000,
            "server_cpu_s": cpu, "client_cpu_s": client_cpu,
            # Not extraction by the finer measure: latency p50 minus the workers' CPU time an
            # operation (job parsing, extraction, the reply's JSON; the same for any binary
            # whose reads run in worker processes).
            "worker_cpu_mean_ms": workers_cpu / len(samples) * 1000 if workers_cpu is not None else None,
            "rest_workers_p50_ms": (pct(total, 50) - workers_cpu / len(samples)) * 1000
            if workers_cpu is not None else None}


class LevelClock:
    """CPU of the server, its workers and this process over a level's timed part."""

    def __init__(self, server):
        self.server = server
        self.cpu0, self.self0 = server.cpu_s(), self_cpu()
        self.workers0 = {p: proc_cpu_s(p) for p in server.worker_pids()}
        self.t0 = time.perf_counter()

    def stop(self):
        """(wall s, server CPU s, client CPU s, workers' CPU s or None)."""
        wall = time.perf_counter() - self.t0
        cpu, client_cpu = self.server.cpu_s() - self.cpu0, self_cpu() - self.self0
        # The workers' own CPU time (clock ticks, summed over the level): a finer measure of
        # extraction than `elapsed_ms`'s whole milliseconds. A worker replaced meanwhile
        # would make it short: counted only when the same workers ran the whole level.
        workers1 = {p: proc_cpu_s(p) for p in self.server.worker_pids()}
        workers_cpu = (sum(workers1.values()) - sum(self.workers0.values())
                       if self.workers0 and workers1.keys() == self.workers0.keys() else None)
        return wall, cpu, client_cpu, workers_cpu


def lean_level(server, unique_pdf, conc, ops, warmup):
    """The level with `LeanConn`: a thread and a connection for each concurrent client."""
    base = server.base
    lock = threading.Lock()
    counter = [0]
    ids = []
    errors = []
    conns = [LeanConn(base) for _ in range(conc)]

    def call_ok(conn, method, url, **kw):
        status, js, raw = conn.call(method, url, **kw)
        if status != 200 or not isinstance(js, dict) or js.get("status") != "ok":
            raise Failed(f"{method} {url[len(base):]}: {describe(status, js, raw)}")
        return js

    def op(conn):
        with lock:
            data = unique_pdf()
        body, ctype = multipart("one-page.pdf", data, "application/pdf")
        t0 = time.perf_counter()
        rec = call_ok(conn, "POST", base + "/upload", body=body, ctype=ctype)["files"][0]
        t1 = time.perf_counter()
        env = call_ok(conn, "POST", base + "/read", json_body={"file_id": rec["file_id"]})
        t2 = time.perf_counter()
        with lock:
            ids.append(rec["file_id"])
        check_pdf_envelope(env, 1)
        return t2 - t0, t1 - t0, t2 - t1, env["elapsed_ms"] / 1000

    def client(conn, n_ops, sink):
        try:
            while True:
                with lock:
                    if counter[0] >= n_ops or errors:
                        return
                    counter[0] += 1
                sample = op(conn)
                with lock:
                    sink.append(sample)
        except Exception as e:  # noqa: BLE001 — reported below, the level fails
            with lock:
                errors.append(e)

    def run(n_ops, sink):
        counter[0] = 0
        threads = [threading.Thread(target=client, args=(c, n_ops, sink)) for c in conns]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0] if isinstance(errors[0], Failed) else Failed(repr(errors[0]))

    try:
        run(warmup, [])
        samples = []
        clock = LevelClock(server)
        run(ops, samples)
        wall, cpu, client_cpu, workers_cpu = clock.stop()
        # Untimed: forget the uploads.
        for i, file_id in enumerate(ids):
            status, js, raw = conns[i % conc].call("DELETE", f"{base}/files/{file_id}")
            if status != 200:
                raise Failed(f"DELETE /files/{file_id}: {describe(status, js, raw)}")
    finally:
        for c in conns:
            c.close()
    return samples, wall, cpu, client_cpu, workers_cpu


def aiohttp_level(server, unique_pdf, conc, ops, warmup):
    """The level with aiohttp (`--client aiohttp`): one asyncio task a concurrent client."""
    return asyncio.run(aiohttp_level_async(server, unique_pdf, conc, ops, warmup))


async def aiohttp_level_async(server, unique_pdf, conc, ops, warmup):
    base = server.base
    counter = [0]
    async with session(conc + 2) as sess:
        ids = []

        async def op():
            t0 = time.perf_counter()
            rec = await upload(sess, base, "one-page.pdf", unique_pdf(), "application/pdf")
            t1 = time.perf_counter()
            env = await read(sess, base, {"file_id": rec["file_id"]})
            t2 = time.perf_counter()
            ids.append(rec["file_id"])
            check_pdf_envelope(env, 1)
            return t2 - t0, t1 - t0, t2 - t1, env["elapsed_ms"] / 1000

        async def worker(n_ops, sink):
            while counter[0] < n_ops:
                counter[0] += 1
                sink.append(await op())

        counter[0] = 0
        await asyncio.gather(*(worker(warmup, []) for _ in range(conc)))
        samples = []
        counter[0] = 0
        clock = LevelClock(server)
        await asyncio.gather(*(worker(ops, samples) for _ in range(conc)))
        wall, cpu, client_cpu, workers_cpu = clock.stop()
        # Untimed: forget the uploads (8 at a time).
        sem = asyncio.Semaphore(8)

        async def forget(i):
            async with sem:
                await delete(sess, base, i)

        await asyncio.gather(*(forget(i) for i in ids))
    return samples, wall, cpu, client_cpu, workers_cpu


def part_latency(args, binary, workdir):
    """With --baseline, the same levels against both binaries, taking turns level by level."""
    pdf = make_pdf([prose_page(1)])
    binaries = [("docreader", binary)] + ([("baseline", args.baseline)] if args.baseline else [])
    servers = []
    rows = []
    try:
        for label, b in binaries:
            servers.append((label, Server(b, workdir, f"latency-{label}", args.workers).start()))
        for conc in args.concurrency:
            for label, server in servers:
                log(f"2. latency ({label}): concurrency {conc}, {args.ops} operations …")
                try:
                    row = latency_level(server, pdf, conc, args.ops, max(conc, args.ops // 20), args.client)
                    log(f"   p50 {row['p50_ms']:.1f} ms (not extraction {row['rest_p50_ms']:.1f} ms), "
                        f"p99 {row['p99_ms']:.1f} ms, {row['ops_per_s']:.0f} ops/s")
                except Failed as e:
                    row = {"concurrency": conc, "error": str(e)}
                row["binary"] = label
                rows.append(row)
    finally:
        for _, server in servers:
            server.stop()
    return {"workers": args.workers, "pdf_bytes": len(pdf), "rows": rows,
            "baseline": args.baseline, "client": args.client}


def fmt_ms(v):
    return "—" if v is None else f"{v:.2f}"


def render_latency(res, cpus):
    out = [f"### 2. Upload + read latency: a 1-page PDF, `--workers {res['workers']}`", "",
           "| binary | concurrency | operations | operations/s | p50 ms | p90 ms | p99 ms | max ms "
           "| upload p50 ms | read p50 ms | extraction mean ms | not extraction p50 ms "
           "| workers' CPU an operation, ms | p50 minus it, ms "
           "| server CPU (% of 1 CPU) | client CPU (% of 1 CPU) | |",
           "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|"]
    for r in res["rows"]:
        if "error" in r:
            out.append(f"| {r.get('binary', '')} | {r['concurrency']} | — | — | — | — | — | — | — | — | — | — | — | — | — | — "
                       f"| failed: {r['error']} |")
            continue
        out.append(f"| {r.get('binary', 'docreader')} | {r['concurrency']} | {r['ops']} | {r['ops_per_s']:.0f} "
                   f"| {r['p50_ms']:.1f} | {r['p90_ms']:.1f} | **{r['p99_ms']:.1f}** | {r['max_ms']:.1f} "
                   f"| {r['upload_p50_ms']:.1f} | {r['read_p50_ms']:.1f} "
                   f"| {r['extract_mean_ms']:.2f} | {r['rest_p50_ms']:.2f} "
                   f"| {fmt_ms(r.get('worker_cpu_mean_ms'))} | {fmt_ms(r.get('rest_workers_p50_ms'))} "
                   f"| {r['server_cpu_s'] / r['wall_s']:.0%} | {r['client_cpu_s'] / r['wall_s']:.0%} | |")
    out.append("")
    if res.get("baseline"):
        def row(label, conc):
            return next((r for r in res["rows"] if r.get("binary") == label
                         and r["concurrency"] == conc and "error" not in r), None)
        out.append(f"Baseline: `{res['baseline']}`, run in the same process, level by level in turns "
                   "with docreader.")
        out.append("")
        for conc, key, goal, what in [(1, "rest_p50_ms", 0.5, "not-extraction p50 at concurrency 1, "
                                       "docreader ÷ baseline (goal ≤ 0.5)"),
                                      (8, "ops_per_s", 1.5, "operations/s at concurrency 8, docreader ÷ "
                                       "baseline (goal ≥ 1.5)")]:
            a, b = row("docreader", conc), row("baseline", conc)
            if a and b:
                ratio = a[key] / b[key]
                met = ratio <= goal if key == "rest_p50_ms" else ratio >= goal
                out.append(f"- {what}: **{ratio:.2f}** ({a[key]:.2f} vs {b[key]:.2f}): "
                           f"{'met' if met else 'NOT met'}")
        a, b = row("docreader", 1), row("baseline", 1)
        if a and b and a.get("rest_workers_p50_ms") and b.get("rest_workers_p50_ms"):
            out.append(f"- for information, not the goal's measure: latency p50 at concurrency 1 minus "
                       f"the workers' CPU time an operation (`elapsed_ms` is whole milliseconds, "
                       f"truncated, of the order of the extraction itself), docreader ÷ baseline: "
                       f"{a['rest_workers_p50_ms'] / b['rest_workers_p50_ms']:.2f} "
                       f"({a['rest_workers_p50_ms']:.2f} vs {b['rest_workers_p50_ms']:.2f})")
        out.append("")
    out.append(f"One operation = `POST /upload` (multipart, {res['pdf_bytes']:,} bytes) then `POST /read` "
               "of the returned id (default options), timed together on the client. Every upload is "
               "made unique by a comment after `%%EOF` (same page, new bytes), so none dedupes: each "
               "one is streamed to disk, hashed, sniffed and stored as a new blob. The uploads are "
               "deleted after each level, untimed. Each level starts with untimed warm-up operations. "
               f"**The client (this Python process, {CLIENTS[res.get('client', 'aiohttp')]}) and the "
               f"server share the {cpus} CPUs**: at high concurrency the client's own CPU use is part "
               "of the latency.")
    return "\n".join(out)


# --------------------------------------------------------------------------- 3. upload RSS


def make_big_files(workdir, count, size):
    """count different CSV files of size bytes each (reused when present)."""
    rows = []
    cities = ["Berlin", "São Paulo", "Zürich", "Kraków", "東京", "Lyon", "Oslo", "Austin, TX"]
    for i in range(20000):
        rows.append(f'{i},"{cities[i % len(cities)]}",{(i * 7919) % 100000 / 100:.2f},'
                    f'note for row {i}: the order shipped on time\r\n')
    block = "".join(rows).encode()
    paths = []
    for k in range(count):
        path = os.path.join(workdir, f"big-{k:02d}-{size}.csv")
        paths.append(path)
        if os.path.exists(path) and os.path.getsize(path) == size:
            continue
        head = f"file_{k},city,amount,note\r\n".encode()  # a different first line per file
        with open(path, "wb") as f:
            f.write(head)
            left = size - len(head)
            while left > 0:
                chunk = block[:left]
                f.write(chunk)
                left -= len(chunk)
    return paths


class Sampler(threading.Thread):
    """Samples the server's RSS (server, workers) every `interval` seconds."""

    def __init__(self, server, interval):
        super().__init__(daemon=True)
        self.server, self.interval = server, interval
        self.samples = []  # (t, server KiB, workers KiB, workers)
        self.halt = threading.Event()

    def run(self):
        while not self.halt.is_set():
            s, w, n = self.server.rss_kib()
            self.samples.append((time.monotonic(), s, w, n))
            self.halt.wait(self.interval)

    def stop(self):
        self.halt.set()
        self.join()


async def upload_all(server, paths):
    base = server.base
    async with session(len(paths) + 2) as sess:
        # Warm-up, before the baseline: one small upload, so the baseline is a server that
        # has already served a request.
        rec = await upload(sess, base, "warm.txt", b"warm up\n", "text/plain")
        await delete(sess, base, rec["file_id"])
        await asyncio.sleep(0.5)
        base_samples = []
        for _ in range(10):
            base_samples.append(server.rss_kib())
            await asyncio.sleep(0.05)
        sampler = Sampler(server, 0.01)
        sampler.start()
        files = [open(p, "rb") for p in paths]
        t0 = time.perf_counter()
        try:
            recs = await asyncio.gather(*(upload(sess, base, os.path.basename(p), f, "text/csv")
                                          for p, f in zip(paths, files)))
        finally:
            wall = time.perf_counter() - t0
            sampler.stop()
            for f in files:
                f.close()
        for p, r in zip(paths, recs):
            if r.get("size") != os.path.getsize(p):
                raise Failed(f"{os.path.basename(p)}: stored size {r.get('size')} != {os.path.getsize(p)}")
        await asyncio.sleep(0.5)
        after = server.rss_kib()
        for r in recs:
            await delete(sess, base, r["file_id"])
    return base_samples, sampler.samples, after, wall, recs


def part_upload(args, binary, workdir):
    log(f"3. upload: generating {args.big_files} files of {args.big_mb} MB …")
    size = int(args.big_mb * MB)
    paths = make_big_files(workdir, args.big_files, size)
    server = Server(binary, workdir, "upload", args.workers).start()
    try:
        log(f"3. upload: {args.big_files} clients upload {args.big_mb} MB each at once …")
        base, during, after, wall, recs = asyncio.run(upload_all(server, paths))
    except Failed as e:
        return {"files": args.big_files, "file_bytes": size, "error": str(e)}
    finally:
        server.stop()
    kib = 1024
    before_server = max(s for s, _, _ in base) * kib
    before_total = max(s + w for s, w, _ in base) * kib
    peak_server = max(s for _, s, _, _ in during) * kib
    peak_total = max(s + w for _, s, w, _ in during) * kib
    return {"files": len(paths), "file_bytes": size, "wall_s": wall,
            "mb_per_s": len(paths) * size / MB / wall, "samples": len(during),
            "before_server": before_server, "before_total": before_total,
            "before_workers": max(n for _, _, n in base),
            "peak_server": peak_server, "peak_total": peak_total,
            "peak_workers": max(n for _, _, _, n in during),
            "after_server": after[0] * kib, "after_total": (after[0] + after[1]) * kib,
            "growth_server": peak_server - before_server, "growth_total": peak_total - before_total,
            "formats": sorted({r.get("format") for r in recs})}


def render_upload(res):
    n, size = res["files"], res["file_bytes"]
    out = [f"### 3. Server RSS while {n} clients upload {size / MB:g} MB files at once", ""]
    if "error" in res:
        out.append(f"failed: {res['error']}")
        return "\n".join(out)

    def mb(b):
        return f"{b / MB:.1f}"

    out += ["| RSS, MB | server | server + workers |", "|---|--:|--:|",
            f"| before (idle, after one small upload) | {mb(res['before_server'])} | {mb(res['before_total'])} |",
            f"| peak during the uploads | {mb(res['peak_server'])} | {mb(res['peak_total'])} |",
            f"| after (uploads done) | {mb(res['after_server'])} | {mb(res['after_total'])} |",
            f"| **growth** (peak − before) | {mb(res['growth_server'])} | **{mb(res['growth_total'])}** |",
            "",
            f"{n} different CSV files ({n} × {size / MB:g} MB = {n * size / MB:,.0f} MB) uploaded in one "
            f"multipart request each, all at once, streamed from disk by the client; {res['wall_s']:.1f} s "
            f"in all ({res['mb_per_s']:.0f} MB/s); all stored with their full size (format "
            f"{', '.join(map(str, res['formats']))}), then deleted. RSS = `VmRSS` of the server and of "
            f"its worker processes ({res['before_workers']} before, at most {res['peak_workers']} during; "
            f"uploads do not use workers), sampled every 10 ms ({res['samples']} samples).",
            f"- RSS growth during the uploads: **{mb(res['growth_total'])} MB** "
            f"(goal < {UPLOAD_RSS_GOAL_MB} MB: "
            f"{'met' if res['growth_total'] < UPLOAD_RSS_GOAL_MB * MB else 'NOT met'})"]
    return "\n".join(out)


# --------------------------------------------------------------------------- 4. scan


def find_scan(args, workdir):
    if args.scan:
        path = args.scan if os.path.isabs(args.scan) else os.path.join(ROOT, args.scan)
        return path, "given with --scan"
    corpus = os.environ.get("DOCREADER_CORPUS") or os.path.join(ROOT, "tests", "corpus")
    path = os.path.join(corpus, "pdf", "testOCR.pdf")
    if os.path.exists(path):
        return os.path.abspath(path), "the shared corpus's pdf/testOCR.pdf: one scanned page, no text layer"
    path = os.path.join(workdir, "image-only.pdf")
    with open(path, "wb") as f:
        f.write(make_pdf([[("image",)]]))
    return path, ("generated with fixtures/pdfgen.py: one page holding only an 8×8 gray image "
                  "(the corpus's pdf/testOCR.pdf was not found)")


async def scan_runs(server, data, runs, repeats):
    base = server.base
    async with session(server.workers + 2) as sess:
        # Warm-up: as many reads at once as there are workers, so that every worker has
        # loaded the OCR models; then delete (which forgets the document memory).
        rec = await upload(sess, base, "scan.pdf", data, "application/pdf")
        await asyncio.gather(*(read(sess, base, {"file_id": rec["file_id"]}) for _ in range(server.workers)))
        await delete(sess, base, rec["file_id"])
        firsts, repeated, pages = [], [], None
        for _ in range(runs):
            rec = await upload(sess, base, "scan.pdf", data, "application/pdf")
            t0 = time.perf_counter()
            env = await read(sess, base, {"file_id": rec["file_id"]})
            first = time.perf_counter() - t0
            if env.get("cached"):
                raise Failed("the first read of a fresh upload says cached: true")
            pages = env.get("ocr_pages")
            firsts.append((first, env["elapsed_ms"], env.get("ocr_pages")))
            for _ in range(repeats):
                t0 = time.perf_counter()
                again = await read(sess, base, {"file_id": rec["file_id"]})
                dt = time.perf_counter() - t0
                if not again.get("cached"):
                    raise Failed(f"a repeated read says cached: {again.get('cached')} "
                                 f"(ocr_pages_from_memory={again.get('ocr_pages_from_memory')})")
                if again.get("text") != env.get("text"):
                    raise Failed("a repeated read returned other text than the first")
                repeated.append((dt, again["elapsed_ms"]))
            # Deleting the last upload of the bytes forgets them: the next run reads afresh.
            await delete(sess, base, rec["file_id"])
        hits = metric(await metrics(sess, base), "docreader_cache_hits_total")
        text = env.get("text", "")
    return firsts, repeated, pages, hits, text


def part_scan(args, binary, workdir):
    path, origin = find_scan(args, workdir)
    with open(path, "rb") as f:
        data = f.read()
    server = Server(binary, workdir, "scan", args.workers).start()
    res = {"file": path, "origin": origin, "bytes": len(data), "runs": args.scan_runs,
           "repeats": args.repeats, "ocr_engine": (server.ready.get("engines") or {}).get("ocr")}
    try:
        log(f"4. scan: {args.scan_runs} × (first read + {args.repeats} repeated) of {os.path.basename(path)} …")
        firsts, repeated, pages, hits, text = asyncio.run(scan_runs(server, data, args.scan_runs, args.repeats))
    except Failed as e:
        res["error"] = str(e)
        return res
    finally:
        server.stop()
    res.update({
        "first_s": statistics.median(f[0] for f in firsts), "first_min_s": min(f[0] for f in firsts),
        "first_max_s": max(f[0] for f in firsts),
        "first_elapsed_ms": statistics.median(f[1] for f in firsts),
        "repeat_s": statistics.median(r[0] for r in repeated), "repeat_min_s": min(r[0] for r in repeated),
        "repeat_max_s": max(r[0] for r in repeated),
        "repeat_elapsed_ms": statistics.median(r[1] for r in repeated),
        "ocr_pages": pages, "cache_hits": hits, "text_chars": len(text), "text_head": text[:80]})
    res["ratio"] = res["first_s"] / res["repeat_s"] if res["repeat_s"] > 0 else None
    return res


def render_scan(res):
    out = ["### 4. Scanned PDF: first read (OCR) vs repeated reads (document memory)", "",
           f"File: `{os.path.basename(res['file'])}` ({res['bytes']:,} bytes), {res['origin']}. "
           f"OCR engine: {res.get('ocr_engine') or 'none reported by /readyz'}.", ""]
    if "error" in res:
        out.append(f"failed: {res['error']}")
        return "\n".join(out)
    out += ["| read | reads | wall s, median (min–max) | server `elapsed_ms`, median | `cached` |",
            "|---|--:|--:|--:|---|",
            f"| first (after upload) | {res['runs']} | {res['first_s']:.3f} ({res['first_min_s']:.3f}–"
            f"{res['first_max_s']:.3f}) | {res['first_elapsed_ms']:.0f} | false |",
            f"| repeated (same upload) | {res['runs'] * res['repeats']} | {res['repeat_s']:.4f} "
            f"({res['repeat_min_s']:.4f}–{res['repeat_max_s']:.4f}) | {res['repeat_elapsed_ms']:.0f} | true |",
            "",
            f"Each run uploads the file, reads it (`ocr_pages` {res['ocr_pages']}), reads it again "
            f"{res['repeats']} times (each checked for `cached: true` and the same text), then deletes "
            "it, which forgets its pages, so every run's first read OCRs afresh. Untimed before the "
            "runs: one read per worker at once, so each worker has loaded the OCR models. "
            f"`docreader_cache_hits_total` at the end: {res['cache_hits']:.0f}. Text read: "
            f"{res['text_chars']} characters, starting `{brief(res['text_head'], 60)}`."]
    if res["ratio"] is not None:
        out.append(f"- first ÷ repeated read, wall time: **{res['ratio']:.0f}×** (goal ≥ {SCAN_GOAL:g}×: "
                   f"{'met' if res['ratio'] >= SCAN_GOAL else 'NOT met'})")
    return "\n".join(out)



# --------------------------------------------------------------------------- 5. index


def dir_bytes(path, prefix):
    """Bytes of the files in `path` whose names start with `prefix` (search.db, -wal, -shm)."""
    try:
        return sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path) if f.startswith(prefix))
    except OSError:
        return 0


async def small_reads(sess, base, file_id, n):
    """Wall seconds of n reads, one after another, of an already-read upload."""
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        await read(sess, base, {"file_id": file_id, "pages": "1"})
        out.append(time.perf_counter() - t0)
    return out


async def index_runs(server, path, small_pdf, probes):
    """What the search index costs after a read whole of a big file, and on request."""
    base = server.base
    res = {}
    async with session(4) as sess:
        small = (await upload(sess, base, "small.pdf", small_pdf, "application/pdf"))["file_id"]
        await small_reads(sess, base, small, 3)  # warm: the worker, the page cache
        res["idle_small_s"] = statistics.median(await small_reads(sess, base, small, probes))
        await asyncio.sleep(0.3)
        with open(path, "rb") as f:
            rec = await upload(sess, base, os.path.basename(path), f, "text/csv")
        await asyncio.sleep(0.3)
        rss0 = server.rss_kib()[0]
        db0 = dir_bytes(server.data_dir, "search.db")
        cpu0 = server.cpu_s()
        sampler = Sampler(server, 0.01)
        sampler.start()
        t0 = time.perf_counter()
        env = await read(sess, base, {"file_id": rec["file_id"], "max_chars": HUGE})
        res["read_s"] = time.perf_counter() - t0
        res["text_bytes"] = len(env["text"].encode())
        del env
        # Small reads while the big read's indexing runs (it starts when the read answers).
        during = await small_reads(sess, base, small, probes)
        res["during_small_s"] = statistics.median(during)
        # A search waits for the indexing under way: then it is all written.
        status, js, raw = await request(sess, "POST", base + "/search", json={"query": "shipped"})
        if status != 200:
            raise Failed(f"POST /search: {describe(status, js, raw)}")
        res["settled_s"] = time.perf_counter() - t0
        sampler.stop()
        res["cpu_s"] = server.cpu_s() - cpu0
        res["peak_rss"] = max(x[1] for x in sampler.samples) * 1024
        res["rss_before"] = rss0 * 1024
        await asyncio.sleep(1.0)
        res["rss_after"] = server.rss_kib()[0] * 1024
        res["index_bytes"] = dir_bytes(server.data_dir, "search.db") - db0
        hits = (js or {}).get("hits") or []
        res["coverage"] = hits[0].get("coverage") if hits else None
        # The whole file on request (`POST /files/{id}/index`).
        cpu0 = server.cpu_s()
        sampler = Sampler(server, 0.01)
        sampler.start()
        t0 = time.perf_counter()
        status, js, raw = await request(sess, "POST", f"{base}/files/{rec['file_id']}/index")
        if status != 200:
            raise Failed(f"POST /files/{{id}}/index: {describe(status, js, raw)}")
        res["whole_s"] = time.perf_counter() - t0
        sampler.stop()
        res["whole_cpu_s"] = server.cpu_s() - cpu0
        res["whole_peak_rss"] = max(x[1] for x in sampler.samples) * 1024
        res["whole_index_bytes"] = dir_bytes(server.data_dir, "search.db") - db0
    return res


def part_index(args, binary, workdir):
    size = int(args.index_mb * MB)
    path = make_big_files(workdir, 1, size)[0]
    small_pdf = make_pdf([prose_page(1)])
    rows = []
    for label, b in [("this", binary)] + ([("baseline", args.baseline)] if args.baseline else []):
        for run in range(args.index_runs):
            server = Server(b, workdir, f"index-{label}-{run}", args.workers).start()
            try:
                log(f"5. index: {label} run {run + 1}: read whole of a {args.index_mb:g} MB CSV, then its indexing …")
                r = asyncio.run(index_runs(server, path, small_pdf, args.index_probes))
            except Failed as e:
                r = {"error": str(e)}
            finally:
                server.stop()
            r.update({"binary": label, "run": run + 1})
            rows.append(r)
    return {"file_bytes": size, "rows": rows, "probes": args.index_probes}


def render_index(res):
    size = res["file_bytes"]
    out = [f"### 5. The search index after a read whole of a {size / MB:g} MB CSV (issue #46 item 1)", "",
           "| binary | read s | read + indexing settled s | server CPU s | server peak RSS MB (before → peak → 1 s after) "
           "| index MB (per MB read) | 1-page reads during indexing, median ms (idle) | hits' coverage "
           "| on request: s, CPU s, peak RSS MB, index MB |",
           "|---|--:|--:|--:|---|---|---|---|---|"]
    for r in res["rows"]:
        if "error" in r:
            out.append(f"| {r['binary']} #{r['run']} | failed: {r['error']} | | | | | | | |")
            continue
        mb_read = r["text_bytes"] / MB
        cov = r.get("coverage") or {}
        out.append(
            f"| {r['binary']} #{r['run']} | {r['read_s']:.2f} | {r['settled_s']:.2f} | {r['cpu_s']:.1f} "
            f"| {r['rss_before'] / MB:.0f} → {r['peak_rss'] / MB:.0f} → {r['rss_after'] / MB:.0f} "
            f"| {r['index_bytes'] / MB:.1f} ({r['index_bytes'] / MB / mb_read:.2f}) "
            f"| {r['during_small_s'] * 1000:.0f} ({r['idle_small_s'] * 1000:.0f}) "
            f"| {'whole' if cov.get('whole') else 'not whole'} "
            f"| {r['whole_s']:.1f}, {r['whole_cpu_s']:.1f}, {r['whole_peak_rss'] / MB:.0f}, "
            f"{r['whole_index_bytes'] / MB:.1f} |")
    out += ["",
            "Each run is a fresh server (default settings, `DOCREADER_INDEX_READS=all`). The CSV is "
            "uploaded, then read whole (`max_chars` 50,000,000); as soon as the read answers, "
            f"{res['probes']} reads of page 1 of an already-read 1-page PDF run one after another "
            "(their median, beside the same reads on the idle server before), then a search, which "
            "waits for the indexing under way. Server CPU counts from the read's start to the "
            "search's answer (server and workers); RSS is the server process's `VmRSS` sampled every "
            "10 ms (the workers extract; the server indexes). Index MB is the growth of "
            "`search.db` with its WAL. Then `POST /files/{id}/index` indexes the file whole."]
    return "\n".join(out)


# --------------------------------------------------------------------------- main


PARTS = ["scaling", "latency", "upload", "scan", "index"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.environ.get("DOCREADER_BIN", "target/release/docreader"),
                    help="docreader binary (default: $DOCREADER_BIN, else target/release/docreader)")
    ap.add_argument("--parts", default=",".join(PARTS), help=f"subset of {','.join(PARTS)}")
    ap.add_argument("--quick", action="store_true",
                    help="a small run to try the script (seconds per part); explicit options still win")
    ap.add_argument("--workers", type=int, default=ncpu(), help="N: worker processes (default: nproc)")
    ap.add_argument("--pages", type=int, help="1. pages of the text PDF (default 200)")
    ap.add_argument("--clients", type=int, help="1. concurrent clients (default 2 x N)")
    ap.add_argument("--duration", type=float, help="1. seconds per configuration (default 20; quick 3)")
    ap.add_argument("--rounds", type=int, help="1. slices each configuration's time is cut into, taken "
                                               "in turns (default 4; quick 1)")
    ap.add_argument("--concurrency", help="2. levels (default 1,8,32)")
    ap.add_argument("--ops", type=int, help="2. timed operations per level (default 1000; quick 40)")
    ap.add_argument("--client", choices=sorted(CLIENTS), default="lean",
                    help="2. the HTTP client: lean (requests written by hand on blocking sockets, a "
                         "thread a client; the default) or aiohttp (the client of the runs before "
                         "2026-12-03 18:14 UTC)")
    ap.add_argument("--baseline", help="2. and 5. another docreader binary (e.g. an earlier build) "
                                       "measured side by side in the latency and index parts")
    ap.add_argument("--big-files", type=int, help="3. concurrent uploads (default 16; quick 4)")
    ap.add_argument("--big-mb", type=float, help="3. MB per file (default 50; quick 5)")
    ap.add_argument("--scan", help="4. the scanned PDF (default: the corpus's pdf/testOCR.pdf)")
    ap.add_argument("--scan-runs", type=int, help="4. fresh uploads, each read first then repeatedly "
                                                  "(default 3; quick 1)")
    ap.add_argument("--repeats", type=int, help="4. repeated reads per upload (default 5; quick 3)")
    ap.add_argument("--index-mb", type=float, help="5. MB of the CSV read whole (default 52; quick 5)")
    ap.add_argument("--index-runs", type=int, help="5. runs per binary (default 2; quick 1)")
    ap.add_argument("--index-probes", type=int, help="5. 1-page reads timed during the indexing (default 20)")
    ap.add_argument("--out", help="keep the inputs, server logs and data dirs here (default: a temp dir, removed)")
    ap.add_argument("--json", help="also write the results as JSON to this path")
    args = ap.parse_args()

    quick = args.quick
    defaults = {"pages": 200, "clients": 2 * args.workers, "duration": 3 if quick else 20,
                "rounds": 1 if quick else 4,
                "concurrency": "1,8,32", "ops": 40 if quick else 1000, "big_files": 4 if quick else 16,
                "big_mb": 5 if quick else 50, "scan_runs": 1 if quick else 3, "repeats": 3 if quick else 5,
                "index_mb": 5 if quick else 52, "index_runs": 1 if quick else 2, "index_probes": 20}
    for k, v in defaults.items():
        if getattr(args, k) is None:
            setattr(args, k, v)
    args.concurrency = [int(x) for x in str(args.concurrency).split(",") if x.strip()]
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    unknown = set(parts) - set(PARTS)
    if unknown:
        sys.exit(f"bench-load: unknown part(s) {sorted(unknown)}; known: {PARTS}")
    if aiohttp is None:
        sys.exit("bench-load: the Python package aiohttp is missing: python3 -m pip install aiohttp "
                 "(bench/load/run.sh does it)")
    binary = os.path.abspath(args.bin if os.path.isabs(args.bin) else os.path.join(ROOT, args.bin))
    if not os.access(binary, os.X_OK):
        sys.exit(f"bench-load: no docreader binary at {binary}\n"
                 f"  build it first: cargo build --release   (or set DOCREADER_BIN)")
    if args.baseline:
        args.baseline = os.path.abspath(args.baseline)
        if not os.access(args.baseline, os.X_OK):
            sys.exit(f"bench-load: no baseline binary at {args.baseline}")
    if args.workers < 1:
        sys.exit("bench-load: --workers must be ≥ 1")

    workdir = os.path.abspath(args.out) if args.out else tempfile.mkdtemp(prefix="docreader-bench-load-")
    os.makedirs(workdir, exist_ok=True)
    cpus = ncpu()
    b0, i0, _ = cpu_stat()
    time.sleep(1.0)
    b1, i1, _ = cpu_stat()
    busy_before = (b1 - b0) / max((b1 - b0) + (i1 - i0), 1e-9)
    ver = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip()
    started = datetime.datetime.now().astimezone()
    print("## HTTP load benchmark")
    print()
    print(f"- date: {started.strftime('%Y-%m-%d %H:%M %Z')}")
    print(f"- machine: {machine()}")
    print(f"- docreader: {binary} ({ver or '?'}, built "
          f"{datetime.datetime.fromtimestamp(os.path.getmtime(binary)).strftime('%Y-%m-%d %H:%M')}); "
          f"`docreader serve` on 127.0.0.1, a fresh server and data dir per part")
    print(f"- client: Python {platform.python_version()}, aiohttp {aiohttp.__version__}, one asyncio "
          f"process; **it shares the {cpus} CPUs with the server**")
    print(f"- N = {args.workers} worker processes{' (nproc)' if args.workers == cpus else ''}"
          + ("; quick run (small sizes): not a measurement" if quick else ""))
    print(f"- CPU busy in the second before the start: {busy_before:.0%}"
          + ("  **(busy: another job is running; numbers are skewed)**" if busy_before > 0.2 else ""))
    print(f"- work dir: {workdir}")
    print(flush=True)

    bb0, _, st0 = cpu_stat()
    self0, wall0 = self_cpu(), time.monotonic()
    results = {"machine": machine(), "docreader": ver, "workers": args.workers, "quick": quick}
    failed = False
    try:
        for part, fn, render in [("scaling", part_scaling, lambda r: render_scaling(r, args.workers)),
                                 ("latency", part_latency, lambda r: render_latency(r, cpus)),
                                 ("upload", part_upload, render_upload),
                                 ("scan", part_scan, render_scan),
                                 ("index", part_index, render_index)]:
            if part not in parts:
                continue
            try:
                res = fn(args, binary, workdir)
            except Failed as e:
                res = {"error": str(e)}
            results[part] = res
            if "error" in res or any("error" in r for r in res.get("rows", [])):
                failed = True
            if "error" in res and part in ("scaling", "latency"):
                text = f"### {part}\n\nfailed: {res['error']}"
            else:
                text = render(res)
            print(text)
            print(flush=True)
    finally:
        if not args.out:
            shutil.rmtree(workdir, ignore_errors=True)
    bb1, _, st1 = cpu_stat()
    wall = time.monotonic() - wall0
    ours = (self_cpu() - self0) + Server.cpu_spent
    others = max(0.0, (bb1 - bb0) - ours)
    steal = st1 - st0
    print(f"run took {wall:.0f} s; CPU used by other processes meanwhile: {others:.1f} s "
          f"({others / (wall * cpus):.0%} of {cpus} CPUs), stolen by the hypervisor: {steal:.1f} s")
    if others / (wall * cpus) > 0.1 or steal / (wall * cpus) > 0.05:
        print("warning: other work competed for the CPUs during the run; numbers are noisy")
    results["others_cpu_share"] = others / (wall * cpus)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
