#!/usr/bin/env python3
"""Soak test: one `docreader serve`, 10,000 mixed reads from a few concurrent clients.

Good files (generated text, CSV and PDFs, the Office fixtures, the shared corpus) are mixed
with hostile ones (a zip bomb, billion laughs, truncated PDFs and Office files, executables
and archives, random bytes, empty files) and with bad requests (page ranges past the end,
unknown options, malformed bodies). Every response is counted by HTTP status and error code.

Goals (issue #6): no unplanned 5xx, the server never restarts (same PID, /healthz ok at
the end), and its RSS (server + worker processes, sampled every second) stays within ±10 %
after the warm-up (the first 10 % of the reads).

Run it through bench/soak/run.sh (which installs aiohttp); see bench/README.md. A missed
goal prints `NOT met`; the exit status is 1 only when the run could not be made (the server
did not start, or died).
"""
import argparse
import asyncio
import collections
import datetime
import gzip
import io
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "fixtures"))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from pdfgen import make_pdf, prose_page  # noqa: E402
import benchlib  # noqa: E402
from benchlib import Failed, cpu_stat, log, machine, metric, ncpu, pct, self_cpu  # noqa: E402

try:
    import aiohttp
except ImportError:  # run.sh installs it; main() says so when it is missing
    aiohttp = None

MB = 1_000_000
REQUEST_TIMEOUT = 600  # seconds, per HTTP request (the service's own deadline is 120 s)
RSS_BAND = 0.10
# Generated hostile inputs may legitimately end in these 5xx codes: `timeout` (504) when
# a read runs out of its deadline, `extraction_crashed` (500) when the worker process that
# read it died and was replaced (the isolation doing its job). On any other input, and any
# other 5xx code (`internal`, `unavailable`, or no JSON code at all), a 5xx is unplanned.
HOSTILE_5XX = frozenset({"timeout", "extraction_crashed"})


def brief(s, limit=160):
    return benchlib.brief(s, limit)


# --------------------------------------------------------------------------- server


class Server(benchlib.Server):
    def __init__(self, binary, workdir, workers):
        super().__init__(binary, os.path.join(workdir, "serve-data"), os.path.join(workdir, "serve.log"),
                         workers, probe_timeout=10, brief_limit=160)


# --------------------------------------------------------------------------- inputs


class Input:
    """One file (or one bad request) the soak sends, with its weight in the mix."""

    def __init__(self, label, group, name, data, weight, options=None, allow_5xx=frozenset(),
                 pinned=True, raw_body=None, file_id=None, target=None):
        self.label, self.group, self.name, self.data = label, group, name, data
        self.weight = weight
        self.options = options or [{}]  # one set is picked per read
        self.allow_5xx = allow_5xx
        self.pinned = pinned  # uploaded once at the start, then read by id
        self.raw_body = raw_body  # a bad request: sent as-is to /read
        self.file_id = file_id  # for bad requests: a fixed id (e.g. one that does not exist)
        self.target = target  # for bad options: the Input whose upload is read
        self.pin_id = None
        self.refused_at_upload = None  # (status, code) when the upload itself is refused


def zip_bomb(mb):
    """A .docx whose word/document.xml inflates to `mb` MiB of 'A' (a few MB on disk), as
    tests/integration/office.rs builds it."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        with z.open("word/document.xml", "w", force_zip64=True) as f:
            f.write(b"<w:document><w:body><w:p><w:r><w:t>")
            chunk = b"A" * (1 << 20)
            for _ in range(mb):
                f.write(chunk)
            f.write(b"</w:t></w:r></w:p></w:body></w:document>")
    return buf.getvalue()


def read_file(path):
    with open(path, "rb") as f:
        return f.read()


def text_file(rnd, n_bytes):
    words = ("the quick brown fox jumps over the lazy dog while seven wizards quietly hex "
             "Zürich Kraków naïve café 東京 Ελλάδα").split()
    lines, size = [], 0
    while size < n_bytes:
        line = " ".join(rnd.choice(words) for _ in range(rnd.randrange(6, 16))) + "\n"
        lines.append(line)
        size += len(line.encode())
    return "".join(lines).encode()


def csv_file(rnd, rows):
    out = ["id,name,city,amount,note\r\n"]
    for i in range(1, rows + 1):
        out.append(f'{i},"{rnd.choice(["Anna", "Ben", "Chloé", "Dmitri"])} {i}",'
                   f'"{rnd.choice(["Berlin", "New York, NY", "Kraków"])}",{rnd.uniform(1, 1e5):.2f},'
                   f'"said ""hi"" on row {i}"\r\n')
    return "".join(out).encode()


def tar_of(name, data):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        info = tarfile.TarInfo(name)
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def zip_of(name, data):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(name, data)
    return buf.getvalue()


def corpus_rows(corpus):
    path = os.path.join(corpus, "MANIFEST.tsv")
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    header = lines[0].split("\t")
    cp, cf, ce = header.index("path"), header.index("format"), header.index("expected")
    rows = []
    for line in lines[1:]:
        if not line.strip():
            continue
        v = line.split("\t")
        rows.append((v[cp], v[cf], v[ce]))
    return rows


IMAGE_FORMATS = {"png", "jpeg", "tiff", "gif", "bmp", "webp"}


def build_inputs(args, workdir):
    rnd = random.Random(args.seed)
    fx = os.path.join(ROOT, "fixtures")
    inputs = []
    add = inputs.append

    # ---- good: generated and fixtures (weights are relative; see the README)
    text = text_file(rnd, 60_000)
    csv_data = csv_file(rnd, 2000)
    pdf1 = make_pdf([prose_page(1)])
    pdf20 = make_pdf([prose_page(i + 1) for i in range(20)])
    pdf200 = make_pdf([prose_page(i + 1) for i in range(200)])
    add(Input("text, generated (60 KB)", "good", "notes.txt", text, 5,
              [{}, {"offset": 100, "limit": 50}, {"query": "wizards"}, {"max_chars": 500}]))
    add(Input("CSV, generated (2,000 rows)", "good", "orders.csv", csv_data, 5,
              [{}, {"offset": 1000, "limit": 20}, {"query": "Kraków"}]))
    add(Input("PDF, generated, 1 page", "good", "one.pdf", pdf1, 5, [{}, {"query": "fox"}]))
    add(Input("PDF, generated, 20 pages", "good", "twenty.pdf", pdf20, 3,
              [{}, {"pages": "2-4"}, {"pages": "20"}, {"max_chars": 50_000_000}]))
    add(Input("PDF, generated, 200 pages", "good", "two-hundred.pdf", pdf200, 1,
              [{}, {"pages": "150-160"}]))
    for name, w, opts in [("pdf/three_pages.pdf", 3, [{}, {"query": "needle"}, {"pages": "2"}]),
                          ("pdf/thirty_pages.pdf", 1, [{}, {"pages": "10-12"}]),
                          ("office/report.docx", 3, [{}, {"max_paragraphs": 3}]),
                          ("office/long.docx", 2, [{}, {"paragraph_offset": 10}]),
                          ("office/book.xlsx", 3, [{}, {"max_cells": 20}]),
                          ("office/deck.pptx", 2, [{}]),
                          ("text/gbk.csv", 1, [{}]), ("text/shift_jis.txt", 1, [{}])]:
        p = os.path.join(fx, name)
        if os.path.exists(p):
            add(Input(f"fixture {name}", "good", os.path.basename(p), read_file(p), w, opts))

    # ---- the shared corpus: rows with text are good, rows expecting an error are refusals.
    corpus = args.corpus or os.environ.get("DOCREADER_CORPUS") or os.path.join(ROOT, "..", "shared", "corpus")
    corpus_note = "not used (--no-corpus)" if args.no_corpus else f"not found at {corpus}"
    if not args.no_corpus and os.path.exists(os.path.join(corpus, "MANIFEST.tsv")):
        rows = corpus_rows(corpus)
        good = [r for r in rows if (r[2].startswith("text:") or r[2].startswith("empty"))
                and r[1] not in IMAGE_FORMATS]
        refused = [r for r in rows if r[2].startswith("error:")]
        skipped = len(rows) - len(good) - len(refused)
        for path, fmt, expected in good:
            add(Input(f"corpus {fmt}", "good", os.path.basename(path),
                      read_file(os.path.join(corpus, path)), args.corpus_weight / len(good)))
        for path, fmt, expected in refused:
            add(Input(f"corpus {expected} ({fmt})", "refused", os.path.basename(path),
                      read_file(os.path.join(corpus, path)), args.refused_weight / len(refused)))
        corpus_note = (f"{os.path.abspath(corpus)}: {len(good)} rows with text (weight "
                       f"{args.corpus_weight:g} in all), {len(refused)} expecting an error (weight "
                       f"{args.refused_weight:g}); {skipped} OCR and image rows left out (seconds each)")

    # ---- hostile, generated
    log(f"soak: generating a zip bomb of {args.bomb_mb} MiB …")
    bomb = zip_bomb(args.bomb_mb)
    add(Input(f"zip bomb .docx ({args.bomb_mb} MiB of 'A' deflated to {len(bomb) / MB:.1f} MB)",
              "hostile", "bomb.docx", bomb, 2, allow_5xx=HOSTILE_5XX))
    p = os.path.join(fx, "office", "billion_laughs.docx")
    if os.path.exists(p):
        add(Input("billion laughs .docx (fixture)", "hostile", "billion_laughs.docx", read_file(p), 2,
                  allow_5xx=HOSTILE_5XX))
    half = lambda b: b[: len(b) // 2]  # noqa: E731
    add(Input("truncated PDF (generated 20 pages, first half)", "hostile", "cut20.pdf", half(pdf20), 2,
              allow_5xx=HOSTILE_5XX))
    add(Input("truncated PDF (generated 200 pages, first half)", "hostile", "cut200.pdf", half(pdf200), 1,
              allow_5xx=HOSTILE_5XX))
    real_pdf = os.path.join(corpus, "pdf", "tracemonkey.pdf")
    if os.path.exists(real_pdf):
        add(Input("truncated PDF (corpus tracemonkey.pdf, first half)", "hostile", "cut-tracemonkey.pdf",
                  half(read_file(real_pdf)), 2, allow_5xx=HOSTILE_5XX))
    for name in ("office/report.docx", "office/book.xlsx"):
        p = os.path.join(fx, name)
        if os.path.exists(p):
            add(Input(f"truncated {os.path.splitext(name)[1]} ({name}, first half)", "hostile",
                      "cut-" + os.path.basename(name), half(read_file(p)), 1, allow_5xx=HOSTILE_5XX))
    elf = shutil.which("true") or "/bin/true"
    elf_data = read_file(os.path.realpath(elf))
    add(Input(f"ELF executable ({elf})", "hostile", "true", elf_data, 1, allow_5xx=HOSTILE_5XX))
    add(Input("ELF executable named report.pdf", "hostile", "report.pdf", elf_data, 1, allow_5xx=HOSTILE_5XX))
    add(Input(".tar of a text file", "hostile", "notes.tar", tar_of("notes.txt", text), 1, allow_5xx=HOSTILE_5XX))
    add(Input(".zip of a text file", "hostile", "notes.zip", zip_of("notes.txt", text), 1, allow_5xx=HOSTILE_5XX))
    add(Input(".gz of a text file", "hostile", "notes.txt.gz", gzip.compress(text, mtime=0), 1,
              allow_5xx=HOSTILE_5XX))
    noise = rnd.randbytes(64 * 1024)
    add(Input("random bytes (64 KiB)", "hostile", "random.bin", noise, 1, allow_5xx=HOSTILE_5XX))
    add(Input("random bytes named .pdf", "hostile", "random.pdf", noise, 1, allow_5xx=HOSTILE_5XX))
    add(Input("%PDF header + random bytes", "hostile", "fake.pdf", b"%PDF-1.7\n" + noise, 1,
              allow_5xx=HOSTILE_5XX))
    flipped = bytearray(pdf20)
    for k in range(len(flipped) // 3, 2 * len(flipped) // 3, 7):
        flipped[k] ^= 0x55
    add(Input("PDF with bytes flipped in its middle third", "hostile", "flipped.pdf", bytes(flipped), 1,
              allow_5xx=HOSTILE_5XX))
    add(Input("empty file (.txt)", "hostile", "empty.txt", b"", 1, allow_5xx=HOSTILE_5XX))
    add(Input("empty file (.pdf)", "hostile", "empty.pdf", b"", 1, allow_5xx=HOSTILE_5XX))

    # ---- bad requests against good uploads
    by_name = {i.name: i for i in inputs}
    pdf3 = by_name.get("three_pages.pdf") or by_name["twenty.pdf"]
    xlsx = by_name.get("book.xlsx")
    add(Input("bad option: pages past the end", "bad request", None, None, 2,
              [{"pages": "9999"}, {"pages": "4-9"}], target=pdf3))
    add(Input("bad option: unknown option", "bad request", None, None, 2,
              [{"bogus_option": True}, {"max_char": 10}], target=by_name["notes.txt"]))
    add(Input("bad option: invalid values", "bad request", None, None, 2,
              [{"max_chars": 0}, {"pages": "abc"}, {"pages": "3-1"}, {"max_chars": "many"},
               {"ocr": "sometimes"}, {"deadline_ms": -5}], target=pdf3))
    add(Input("bad option: option of another format", "bad request", None, None, 1,
              [{"sheet": "Sheet1"}, {"max_paragraphs": 2}], target=pdf3))
    if xlsx:
        add(Input("bad option: sheet that does not exist", "bad request", None, None, 1,
                  [{"sheet": "No such sheet"}, {"range": "ZZZ1:A"}], target=xlsx))
    add(Input("bad option: offset past the end", "bad request", None, None, 1,
              [{"offset": 10_000_000}], target=by_name["notes.txt"]))
    add(Input("bad option: deadline_ms 1 on 200 pages", "bad request", None, None, 1,
              [{"deadline_ms": 1, "max_chars": 50_000_000}], allow_5xx=frozenset({"timeout"}),
              target=by_name["two-hundred.pdf"]))
    add(Input("bad request: unknown file id", "bad request", None, None, 1,
              file_id="f_00000000000000000000000000000000"))
    add(Input("bad request: body not JSON / not an object / no id", "bad request", None, None, 1,
              [{}], raw_body=[b"{not json", b"[1, 2, 3]", b"{}", b'{"file_id": 42}']))
    return inputs, corpus_note


# --------------------------------------------------------------------------- client


async def request(sess, method, url, **kw):
    """(status or None when there was no HTTP answer, error code or None, message, JSON)."""
    try:
        async with sess.request(method, url, **kw) as r:
            raw = await r.read()
            status = r.status
    except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as e:
        return None, None, f"{type(e).__name__}: {brief(str(e))}", None
    try:
        js = json.loads(raw)
    except ValueError:
        js = None
    code = msg = None
    if isinstance(js, dict) and isinstance(js.get("error"), dict):
        code, msg = js["error"].get("code"), js["error"].get("message")
    elif status >= 400:
        msg = brief(raw[:300].decode(errors="replace"))
    return status, code, msg, js


async def upload(sess, base, inp):
    form = aiohttp.FormData()
    form.add_field("file", inp.data, filename=inp.name, content_type="application/octet-stream")
    return await request(sess, "POST", base + "/upload", data=form)


class Stats:
    def __init__(self):
        self.by_label = collections.defaultdict(lambda: {"n": 0, "ok": 0, "planned": collections.Counter(),
                                                         "expected5xx": collections.Counter(),
                                                         "unplanned": collections.Counter(), "lat": []})
        self.by_status = collections.Counter()  # (status, code, class)
        self.unplanned = []  # details of the first ones
        self.unplanned_n = 0
        self.no_code_4xx = 0
        self.good_refused = collections.Counter()  # (label, code)
        self.delete_failed = 0
        self.done = 0


def classify(inp, status, code):
    if status is None:
        return "unplanned"  # no HTTP answer at all
    if status < 300:
        return "ok"
    if status < 500:
        return "planned" if code else "unplanned"
    return "expected5xx" if code in inp.allow_5xx else "unplanned"


async def one_op(sess, base, inp, opts, fresh, raw_body):
    """Run one operation; returns (status, code, message, stage)."""
    if inp.raw_body is not None:
        s, c, m, _ = await request(sess, "POST", base + "/read", data=raw_body,
                                   headers={"Content-Type": "application/json"})
        return s, c, m, "read"
    if inp.file_id:
        s, c, m, _ = await request(sess, "POST", base + "/read", json={"file_id": inp.file_id, **opts})
        return s, c, m, "read"
    target = inp.target or inp
    file_id, uploaded = target.pin_id, None
    if fresh or file_id is None:
        s, c, m, js = await upload(sess, base, target)
        if s != 200:
            return s, c, m, "upload"
        file_id = uploaded = js["files"][0]["file_id"]
    s, c, m, _ = await request(sess, "POST", base + "/read", json={"file_id": file_id, **opts})
    if uploaded:
        ds, _, _, _ = await request(sess, "DELETE", f"{base}/files/{uploaded}")
        if ds != 200:
            return s, c, m, "read+delete-failed"
    return s, c, m, "read"


async def soak(server, inputs, args, stats, progress):
    base = server.base
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=args.clients + 2),
                                     timeout=aiohttp.ClientTimeout(total=REQUEST_TIMEOUT)) as sess:
        # Pin: upload every file once (not counted); a file refused at upload is sent
        # through the upload in every one of its operations.
        for inp in inputs:
            if inp.data is None:
                continue
            s, c, m, js = await upload(sess, base, inp)
            if s == 200:
                inp.pin_id = js["files"][0]["file_id"]
            else:
                inp.refused_at_upload = (s, c)
        # The sequence of operations, fixed by the seed.
        rnd = random.Random(args.seed + 1)
        weights = [i.weight for i in inputs]
        plan = []
        for _ in range(args.reads):
            inp = rnd.choices(inputs, weights)[0]
            opts = rnd.choice(inp.options)
            raw = rnd.choice(inp.raw_body) if inp.raw_body else None
            plan.append((inp, opts, rnd.random() < args.upload_share, raw))
        next_op = [0]

        async def client():
            while next_op[0] < len(plan):
                inp, opts, fresh, raw = plan[next_op[0]]
                next_op[0] += 1
                t0 = time.perf_counter()
                status, code, msg, stage = await one_op(sess, base, inp, opts, fresh, raw)
                dt = time.perf_counter() - t0
                cls = classify(inp, status, code)
                row = stats.by_label[inp.label]
                row["n"] += 1
                row["lat"].append(dt)
                if cls == "ok":
                    row["ok"] += 1
                else:
                    row[cls][code or str(status)] += 1
                stats.by_status[(status, code, cls)] += 1
                if stage == "read+delete-failed":
                    stats.delete_failed += 1
                if cls == "unplanned":
                    stats.unplanned_n += 1
                    if status is not None and status < 500:
                        stats.no_code_4xx += 1
                    if len(stats.unplanned) < 30:
                        stats.unplanned.append({"input": inp.label, "file": (inp.target or inp).name,
                                                "options": raw.decode(errors="replace") if raw else opts,
                                                "stage": stage, "status": status, "code": code,
                                                "message": msg})
                if inp.group == "good" and cls != "ok":
                    stats.good_refused[(inp.label, (inp.target or inp).name, code or str(status))] += 1
                stats.done += 1
                progress()

        await asyncio.gather(*(client() for _ in range(args.clients)))


class Sampler(threading.Thread):
    def __init__(self, server, stats, interval):
        super().__init__(daemon=True)
        self.server, self.stats, self.interval = server, stats, interval
        self.samples = []  # (t, reads done, server KiB, workers KiB, workers)
        self.halt = threading.Event()
        self.t0 = time.monotonic()

    def run(self):
        while not self.halt.is_set():
            s, w, n = self.server.rss_kib()
            self.samples.append((time.monotonic() - self.t0, self.stats.done, s, w, n))
            self.halt.wait(self.interval)

    def stop(self):
        self.halt.set()
        self.join()


# --------------------------------------------------------------------------- report


def codes(counter):
    return ", ".join(f"{k} {v}" for k, v in sorted(counter.items(), key=lambda kv: -kv[1])) or ""


def rss_summary(samples, warm_reads):
    post = [s for s in samples if s[1] >= warm_reads]
    if len(post) < 2:
        return None
    total = [(s[2] + s[3]) * 1024 for s in post]
    server = [s[2] * 1024 for s in post]
    base = statistics.median(total)
    return {"samples": len(post), "min": min(total), "max": max(total), "median": base,
            "low": min(total) / base - 1, "high": max(total) / base - 1,
            "within": min(total) >= (1 - RSS_BAND) * base and max(total) <= (1 + RSS_BAND) * base,
            "server_min": min(server), "server_max": max(server), "server_median": statistics.median(server),
            "server_within": min(server) >= (1 - RSS_BAND) * statistics.median(server)
            and max(server) <= (1 + RSS_BAND) * statistics.median(server),
            "workers_min": min(s[4] for s in post), "workers_max": max(s[4] for s in post),
            "tenths": tenths(post)}


def tenths(post):
    """The post-warm-up samples in (up to) ten consecutive slices: reads, RSS min/median/max."""
    n = min(10, len(post))
    out = []
    for i in range(n):
        part = post[i * len(post) // n:(i + 1) * len(post) // n]
        total = [(s[2] + s[3]) * 1024 for s in part]
        out.append({"reads_from": part[0][1], "reads_to": part[-1][1], "samples": len(part),
                    "min": min(total), "median": statistics.median(total), "max": max(total),
                    "server": statistics.median(s[2] * 1024 for s in part),
                    "workers": max(s[4] for s in part)})
    return out


def render(res, inputs, stats):
    out = []
    g = res["goals"]
    out.append("### Goals")
    out.append("")
    out.append(f"- unplanned 5xx (and requests without an HTTP answer): **{g['unplanned_5xx']}** "
               f"(goal 0: {'met' if g['unplanned_5xx'] == 0 else 'NOT met'})")
    out.append(f"- server restarts: **{'none' if g['same_process'] else 'the server process is gone'}** — "
               f"PID {res['pid']} {'still running' if g['same_process'] else 'not running'} at the end, "
               f"`/healthz` {g['healthz']} (goal: same PID, healthz ok: "
               f"{'met' if g['same_process'] and g['healthz'] == 'ok' else 'NOT met'})")
    r = res["rss"]
    if r:
        out.append(f"- RSS after warm-up (server + workers): {r['min'] / MB:.1f}–{r['max'] / MB:.1f} MB, median "
                   f"{r['median'] / MB:.1f} MB ({r['low']:+.1%} / {r['high']:+.1%}) (goal within "
                   f"±{RSS_BAND:.0%} of the median: {'met' if r['within'] else 'NOT met'})")
        meds = [t["median"] for t in r["tenths"] if t["samples"]]
        if meds:
            lo, hi = min(meds) / r["median"] - 1, max(meds) / r["median"] - 1
            out.append(f"- for information, the level (median of each tenth of the run, which one read in "
                       f"flight does not move): {meds[0] / MB:.1f} → {meds[-1] / MB:.1f} MB, within "
                       f"{lo:+.1%} / {hi:+.1%} of the overall median")
    else:
        out.append("- RSS: too few samples after the warm-up to judge (run more reads)")
    out.append("")
    if r:
        out += ["| RSS after warm-up, MB | min | median | max |", "|---|--:|--:|--:|",
                f"| server + workers | {r['min'] / MB:.1f} | {r['median'] / MB:.1f} | {r['max'] / MB:.1f} |",
                f"| server alone | {r['server_min'] / MB:.1f} | {r['server_median'] / MB:.1f} "
                f"| {r['server_max'] / MB:.1f} |",
                "",
                f"{r['samples']} samples, one every {res['interval']:g} s, after the first "
                f"{res['warm_reads']:,} reads (10 %); before the first read: {res['rss_start'] / MB:.1f} MB. "
                f"Worker processes alive: {r['workers_min']}–{r['workers_max']}. The server alone "
                f"{'stays' if r['server_within'] else 'does not stay'} within ±{RSS_BAND:.0%} of its median "
                "(for information). Over the run, in tenths (a leak shows as a rising minimum; a heavy "
                "read in a worker as a single high maximum):", "",
                "| reads | samples | server + workers MB: min | median | max | server MB, median | workers |",
                "|---|--:|--:|--:|--:|--:|--:|"]
        for t in r["tenths"]:
            out.append(f"| {t['reads_from']:,}–{t['reads_to']:,} | {t['samples']} | {t['min'] / MB:.1f} "
                       f"| {t['median'] / MB:.1f} | {t['max'] / MB:.1f} | {t['server'] / MB:.1f} | {t['workers']} |")
        out.append("")
    out.append(f"Worker processes replaced (`docreader_worker_restarts_total`): {res['worker_restarts']}; "
               f"distinct worker PIDs seen: {res['worker_pids_seen']}. Reads in flight at the end: "
               f"{res['in_flight']}.")
    out.append("")

    out.append("### Responses by status and code")
    out.append("")
    out += ["| HTTP status | code | responses | counted as |", "|--:|---|--:|---|"]
    names = {"ok": "ok", "planned": "planned (4xx with a JSON code)",
             "expected5xx": "expected 5xx (hostile input, or `deadline_ms` 1)", "unplanned": "**unplanned**"}
    for (status, code, cls), n in sorted(stats.by_status.items(), key=lambda kv: (kv[0][0] or 0, kv[0][1] or "")):
        out.append(f"| {status if status is not None else 'no answer'} | {code or '—'} | {n:,} | {names[cls]} |")
    out.append("")

    out.append("### By input")
    out.append("")
    out += ["| input | group | reads | ok | planned errors | expected 5xx | unplanned | p50 ms | p99 ms | max ms |",
            "|---|---|--:|--:|---|---|---|--:|--:|--:|"]
    order = {"good": 0, "refused": 1, "hostile": 2, "bad request": 3}
    labels = {}
    for i in inputs:
        labels.setdefault(i.label, i.group)
    for label, group in sorted(labels.items(), key=lambda kv: (order[kv[1]], kv[0])):
        row = stats.by_label.get(label)
        if not row or not row["n"]:
            continue
        lat = row["lat"]
        out.append(f"| {label} | {group} | {row['n']:,} | {row['ok']:,} | {codes(row['planned'])} "
                   f"| {codes(row['expected5xx'])} | {('**' + codes(row['unplanned']) + '**') if row['unplanned'] else ''} "
                   f"| {pct(lat, 50) * 1000:.0f} | {pct(lat, 99) * 1000:.0f} | {max(lat) * 1000:.0f} |")
    out.append("")
    out.append("Groups: *good* files should read (`ok`); *refused* are corpus rows whose manifest expects an "
               "error; *hostile* are generated attacks and junk; *bad request* are wrong options or bodies "
               "on good uploads. Planned = a 4xx with a JSON error code. Expected 5xx = `timeout` or "
               "`extraction_crashed` on a hostile input (or `timeout` for `deadline_ms` 1). Anything else "
               f"with 5xx, or no answer, is unplanned. Latency is per operation: {res['upload_share']:.0%} "
               "of the operations on uploadable files upload afresh, read and delete (the rest read an upload "
               "made once at the start), so it includes the upload when there was one.")
    if stats.good_refused:
        out.append("")
        out.append("Good files that did not read (no goal; worth a look):")
        for (label, name, code), n in sorted(stats.good_refused.items(), key=lambda kv: -kv[1]):
            out.append(f"- {name} ({label}): {code} × {n}")
    if stats.unplanned:
        out.append("")
        out.append(f"Unplanned responses (first {len(stats.unplanned)} of {stats.unplanned_n}):")
        for u in stats.unplanned:
            out.append(f"- {u['file']} ({u['input']}), options `{json.dumps(u['options'], ensure_ascii=False)}`, "
                       f"{u['stage']}: HTTP {u['status']} {u['code'] or ''} — {brief(u['message'], 200)}")
    if stats.delete_failed:
        out.append(f"- DELETE of a fresh upload failed {stats.delete_failed} times")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.environ.get("DOCREADER_BIN", "target/release/docreader"),
                    help="docreader binary (default: $DOCREADER_BIN, else target/release/docreader)")
    ap.add_argument("--reads", type=int, help="operations in all (default 10000; quick 1000)")
    ap.add_argument("--quick", action="store_true", help="a small run to try the script: 1000 reads, "
                                                        "a 300 MiB zip bomb; explicit options still win")
    ap.add_argument("--clients", type=int, default=4, help="concurrent clients (default 4)")
    ap.add_argument("--workers", type=int, default=ncpu(), help="worker processes (default: nproc)")
    ap.add_argument("--upload-share", type=float, default=0.25,
                    help="share of operations on uploadable files that upload afresh (default 0.25)")
    ap.add_argument("--bomb-mb", type=int, help="MiB of 'A' in the zip bomb's document.xml (default 1536; quick 300)")
    ap.add_argument("--corpus", help="the shared corpus (default $DOCREADER_CORPUS, else ../shared/corpus)")
    ap.add_argument("--no-corpus", action="store_true", help="generated files and fixtures only")
    ap.add_argument("--corpus-weight", type=float, default=25.0, help="weight of all corpus text rows together")
    ap.add_argument("--refused-weight", type=float, default=8.0,
                    help="weight of all corpus rows that expect an error together")
    ap.add_argument("--interval", type=float, default=1.0, help="seconds between RSS samples")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", help="keep the server log and data dir here (default: a temp dir, removed)")
    ap.add_argument("--json", help="also write the results as JSON to this path")
    args = ap.parse_args()
    if args.reads is None:
        args.reads = 1000 if args.quick else 10_000
    if args.bomb_mb is None:
        args.bomb_mb = 300 if args.quick else 1536
    if aiohttp is None:
        sys.exit("bench-soak: the Python package aiohttp is missing: python3 -m pip install aiohttp "
                 "(bench/soak/run.sh does it)")
    binary = os.path.abspath(args.bin if os.path.isabs(args.bin) else os.path.join(ROOT, args.bin))
    if not os.access(binary, os.X_OK):
        sys.exit(f"bench-soak: no docreader binary at {binary}\n"
                 f"  build it first: cargo build --release   (or set DOCREADER_BIN)")

    workdir = os.path.abspath(args.out) if args.out else tempfile.mkdtemp(prefix="docreader-bench-soak-")
    os.makedirs(workdir, exist_ok=True)
    cpus = ncpu()
    ver = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip()
    server = None
    try:
        inputs, corpus_note = build_inputs(args, workdir)
        started = datetime.datetime.now().astimezone()
        load = os.getloadavg()
        print("## Soak test")
        print()
        print(f"- date: {started.strftime('%Y-%m-%d %H:%M %Z')}")
        print(f"- machine: {machine()}")
        print(f"- load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
        print(f"- docreader: {binary} ({ver or '?'}, built "
              f"{datetime.datetime.fromtimestamp(os.path.getmtime(binary)).strftime('%Y-%m-%d %H:%M')}); "
              f"one `docreader serve --workers {args.workers}` on 127.0.0.1")
        print(f"- {args.reads:,} operations from {args.clients} concurrent clients (Python "
              f"{platform.python_version()}, aiohttp {aiohttp.__version__}), seed {args.seed}; "
              f"{len(inputs)} inputs"
              + ("; quick run: too short to judge RSS" if args.quick else ""))
        print(f"- corpus: {corpus_note}")
        print(f"- work dir: {workdir}")
        print(flush=True)

        server = Server(binary, workdir, args.workers).start()
        s, w, _ = server.rss_kib()
        rss_start = (s + w) * 1024
        stats = Stats()
        sampler = Sampler(server, stats, args.interval)
        step = max(1, args.reads // 10)
        t_start = time.monotonic()

        def progress():
            if stats.done % step == 0:
                s, w, n = server.rss_kib()
                log(f"soak: {stats.done:,}/{args.reads:,} reads, {time.monotonic() - t_start:.0f} s, "
                    f"RSS {(s + w) * 1024 / MB:.1f} MB ({n} workers), unplanned {stats.unplanned_n}")

        b0, _, st0 = cpu_stat()
        self0 = self_cpu()
        sampler.start()
        try:
            asyncio.run(soak(server, inputs, args, stats, progress))
        finally:
            sampler.stop()
        wall = time.monotonic() - t_start
        same = server.same_process()
        hz_status, hz = server.get("/healthz")
        healthz = "ok" if hz_status == 200 and isinstance(hz, dict) and hz.get("status") == "ok" else \
            f"failed ({hz_status})"
        _, metrics_text = server.get("/metrics")
        warm_reads = args.reads // 10
        res = {
            "reads": args.reads, "clients": args.clients, "workers": args.workers, "wall_s": wall,
            "pid": server.pid, "warm_reads": warm_reads, "upload_share": args.upload_share,
            "interval": args.interval,
            "rss_start": rss_start, "rss": rss_summary(sampler.samples, warm_reads),
            "worker_restarts": (lambda v: int(v) if v is not None else "?")(
                metric(metrics_text if isinstance(metrics_text, str) else "", "docreader_worker_restarts_total")),
            "in_flight": (lambda v: int(v) if v is not None else "?")(
                metric(metrics_text if isinstance(metrics_text, str) else "", "docreader_reads_in_flight")),
            "worker_pids_seen": len(server.seen_workers),
            "goals": {"unplanned_5xx": sum(n for (s, c, cls), n in stats.by_status.items()
                                           if cls == "unplanned" and (s is None or s >= 500)),
                      "same_process": same, "healthz": healthz},
        }
        server.stop()
        b1, _, st1 = cpu_stat()
        print(render(res, inputs, stats))
        print()
        others = max(0.0, (b1 - b0) - (self_cpu() - self0) - server.cpu_at_stop)
        steal = st1 - st0
        print(f"run took {wall:.0f} s ({args.reads / wall:.0f} operations/s); CPU used by other processes "
              f"meanwhile: {others:.1f} s ({others / (wall * cpus):.0%} of {cpus} CPUs), stolen by the "
              f"hypervisor: {steal:.1f} s")
        if args.json:
            res["by_status"] = [{"status": s, "code": c, "class": cls, "n": n}
                                for (s, c, cls), n in stats.by_status.items()]
            res["by_input"] = {k: {"n": v["n"], "ok": v["ok"], "planned": dict(v["planned"]),
                                   "expected5xx": dict(v["expected5xx"]), "unplanned": dict(v["unplanned"]),
                                   "p50_ms": pct(v["lat"], 50) * 1000, "max_ms": max(v["lat"]) * 1000}
                               for k, v in stats.by_label.items()}
            res["unplanned"] = stats.unplanned
            res["rss_samples"] = sampler.samples
            with open(args.json, "w") as f:
                json.dump(res, f, indent=2, default=str)
        return 0 if same else 1
    except Failed as e:
        print(f"bench-soak: {e}", file=sys.stderr)
        return 1
    finally:
        if server:
            server.stop()
        if not args.out:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
