#!/usr/bin/env python3
"""Soak test: one `docreader serve`, 10,000 mixed reads from a few concurrent clients.

Good files (generated text, CSV and PDFs, the Office fixtures, the shared corpus) are mixed
with hostile ones (a zip bomb, billion laughs, truncated PDFs and Office files, executables
and archives, random bytes, empty files) and with bad requests (page ranges past the end,
unknown options, malformed bodies). Every response is counted by HTTP status and error code.

Issue #15 mixes attacks into the same operations (`--attack-share`, 3 % by default): slow
clients (slowloris headers, an upload body that stalls past `--body-timeout-ms`, idle
keep-alive connections), archives disguised as PDFs and images, e-mail attachment bombs
(3,000 attachments, deeply nested and wide nested messages), and a file deleted while a
forced-OCR read of it runs. The server runs with short connection timeouts
(`--header-timeout-ms`, `--body-timeout-ms`, 2 s) so that the slow clients finish in time.

Criteria, each printed PASS or FAIL: no unplanned 5xx; the server never restarts (same PID,
/healthz ok at the end); every attack answered as planned; /healthz (probed from its own
process all along) p99 < 100 ms and max < 1 s; RSS (server + worker processes, sampled every
second) flat: the median of the last quarter after the warm-up (the first 10 % of the reads)
within ±10 % of the first quarter's; `docreader_reads_in_flight` 0 at the end; the tenant's
file count (GET /files) bounded by what the per-read attachment cap allows. Worker restarts
are counted, for information.

Run it through bench/soak/run.sh (which installs aiohttp); see bench/README.md. The exit
status is 1 when a criterion fails or the run could not be made (the server did not start,
or died).
"""
import argparse
import asyncio
import collections
import datetime
import gzip
import http.client
import io
import json
import multiprocessing
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
HEALTHZ_P99_S, HEALTHZ_MAX_S = 0.100, 1.0
FILES_EVERY = 5.0  # seconds between counts of the tenant's files (GET /files)
# Generated hostile inputs may legitimately end in these 5xx codes: `timeout` (504) when
# a read runs out of its deadline, `extraction_crashed` (500) when the worker process that
# read it died and was replaced (the isolation doing its job). On any other input, and any
# other 5xx code (`internal`, `unavailable`, or no JSON code at all), a 5xx is unplanned.
HOSTILE_5XX = frozenset({"timeout", "extraction_crashed"})


def brief(s, limit=160):
    return benchlib.brief(s, limit)


# --------------------------------------------------------------------------- server


class Server(benchlib.Server):
    """benchlib's server, with the connection timeouts of the soak: they go to `serve` as its
    environment variables (DOCREADER_HEADER_READ_TIMEOUT_MS, DOCREADER_BODY_TIMEOUT_MS)."""

    def __init__(self, binary, workdir, workers, header_timeout_ms, body_timeout_ms):
        super().__init__(binary, os.path.join(workdir, "serve-data"), os.path.join(workdir, "serve.log"),
                         workers, probe_timeout=10, brief_limit=160)
        self.env = {"DOCREADER_HEADER_READ_TIMEOUT_MS": str(header_timeout_ms),
                    "DOCREADER_BODY_TIMEOUT_MS": str(body_timeout_ms)}

    def start(self):
        saved = {k: os.environ.get(k) for k in self.env}
        os.environ.update(self.env)
        try:
            return super().start()
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

    def file_count(self):
        """Files the (only) tenant holds, by paging GET /files; None when it failed."""
        n = 0
        while True:
            status, js = self.get(f"/files?limit=1000&offset={n}")
            if status != 200 or not isinstance(js, dict) or not isinstance(js.get("files"), list):
                return None
            n += len(js["files"])
            if len(js["files"]) < 1000:
                return n


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
    corpus = args.corpus or os.environ.get("DOCREADER_CORPUS") or os.path.join(ROOT, "tests", "corpus")
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


# --------------------------------------------------------------------------- attacks (issue #15)

ATTACHMENT_CAP = 64  # `serve --max-attachments-per-read`, the server's default (the soak keeps it)
GIF = (b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00,"
       b"\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")
NESTED_DEPTH, NESTED_PER_LEVEL = 20, 5
WIDE_MESSAGES, WIDE_PER_MESSAGE = 100, 30
MANY_ATTACHMENTS = 3000


def stored_zip(members, comment=b""):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        for name, data in members:
            z.writestr(name, data)
        z.comment = comment
    return buf.getvalue()


def tar_of_members(members):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as t:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def stored_gzip(fname, data):
    """A gzip stream whose FNAME is `fname` and whose deflate blocks are stored (level 0), so
    the member's bytes stand in the file as they are."""
    buf = io.BytesIO()
    with gzip.GzipFile(filename=fname, fileobj=buf, mode="wb", compresslevel=0, mtime=0) as g:
        g.write(data)
    return buf.getvalue()


def disguised_archives(pdf):
    """Archives whose first KiB holds `%PDF-1.4` or `GIF89a` (a member named so, or a stored
    member that starts so), uploaded as .pdf / .png. Each must be refused (415 blocked_type).
    The zips end with a comment holding `startxref` and `%%EOF`, which the sniffer looks for
    in the last KiB before it believes a `%PDF-` that is not at offset 0."""
    pdf14 = b"%PDF-1.4" + pdf[8:] if pdf.startswith(b"%PDF-1.") else b"%PDF-1.4\n" + pdf
    eof = b"startxref\n0\n%%EOF\n"
    return [
        ("zip, member named %PDF-1.4.pdf, as .pdf", "report.pdf", stored_zip([("%PDF-1.4.pdf", pdf14)], eof)),
        ("zip, stored member starting %PDF-1.4, as .pdf", "invoice.pdf", stored_zip([("doc.pdf", pdf14)], eof)),
        ("zip, member named GIF89a.gif, as .png", "photo.png", stored_zip([("GIF89a.gif", GIF)])),
        ("jar, stored member %PDF-1.4 after the manifest, as .pdf", "paper.pdf",
         stored_zip([("META-INF/MANIFEST.MF", b"Manifest-Version: 1.0\r\n\r\n"), ("%PDF-1.4", pdf14)], eof)),
        ("gzip, FNAME %PDF-1.4.pdf, stored PDF, as .pdf", "scan.pdf", stored_gzip("%PDF-1.4.pdf", pdf14)),
        ("gzip, FNAME GIF89a, stored GIF, as .png", "logo.png", stored_gzip("GIF89a", GIF)),
        ("tar, member named %PDF-1.4.pdf (at offset 0), as .pdf", "book.pdf",
         tar_of_members([("%PDF-1.4.pdf", pdf14)])),
        ("tar, member named GIF89a.gif (at offset 0), as .png", "chart.png", tar_of_members([("GIF89a.gif", GIF)])),
    ]


def eml_many(n, boundary="XX", subject="many parts"):
    """A message with `n` tiny text attachments, each with its own content."""
    m = [f"From: a@example.com\r\nTo: b@example.com\r\nSubject: {subject}\r\nMIME-Version: 1.0\r\n"
         f"Content-Type: multipart/mixed; boundary=\"{boundary}\"\r\n\r\n--{boundary}\r\n"
         "Content-Type: text/plain\r\n\r\nSee the attachments.\r\n"]
    for i in range(n):
        m.append(f"--{boundary}\r\nContent-Type: text/plain\r\nContent-Disposition: attachment; "
                 f"filename=\"{boundary}-part{i}.txt\"\r\n\r\n{subject}, attachment number {i}\r\n")
    m.append(f"--{boundary}--\r\n")
    return "".join(m).encode()


def eml_with_messages(inner, boundary, subject, per):
    """A message with `per` tiny attachments and then each of `inner` (messages) attached as
    message/rfc822."""
    head = eml_many(per, boundary, subject)
    head = head[: head.rindex(f"--{boundary}--".encode())]
    parts = [head]
    for k, msg in enumerate(inner):
        parts.append(f"--{boundary}\r\nContent-Type: message/rfc822\r\nContent-Disposition: attachment; "
                     f"filename=\"{boundary}-inner{k}.eml\"\r\n\r\n".encode() + msg + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts)


def eml_nested(depth, per):
    """`depth` messages, each attached to the one above it, each with `per` attachments."""
    msg = eml_many(per, "L0", "level 0")
    for d in range(1, depth):
        msg = eml_with_messages([msg], f"L{d}", f"level {d}", per)
    return msg


def eml_wide(n, per):
    """One message with `n` messages attached, each with `per` attachments of its own."""
    return eml_with_messages([eml_many(per, f"W{k}", f"message {k}") for k in range(n)], "WIDE", "wide", 0)


class Attack:
    """One kind of attack mixed into the operations. `run` is one operation of it; it returns
    (passed, outcome, seconds, responses, detail): outcome is a short category for the table,
    seconds the figure the attack is judged on, responses [(status or None, code)] every
    HTTP answer it got (None with code "closed" for a connection the server closed on
    purpose), detail what failed."""

    def __init__(self, label, kind, weight, background=False, data=None, name=None, variants=None):
        self.label, self.kind, self.weight, self.background = label, kind, weight, background
        self.data, self.name, self.variants = data, name, variants
        self.pin_id = None  # the e-mail bombs are uploaded once at the start, like the inputs


def build_attacks(args):
    pdf = read_file(os.path.join(ROOT, "fixtures", "pdf", "three_pages.pdf"))
    ocr_pdf = os.path.join(ROOT, "fixtures", "pdf", "thirty_short.pdf")
    attacks = [
        Attack("slowloris: headers byte by byte, then a stall", "slowloris", 2, background=True),
        Attack("slow upload body: paced chunks, then a pause past --body-timeout-ms", "slow_body", 2,
               background=True),
        Attack("idle keep-alive: 4 connections served once, 1 never used, all held open", "idle", 2,
               background=True),
        Attack("disguised archive: zip/jar/gzip/tar with %PDF-1.4 or GIF89a inside, as .pdf/.png",
               "disguised", 2, variants=disguised_archives(pdf)),
        Attack(f"attachment bomb: .eml with {MANY_ATTACHMENTS:,} tiny attachments", "many", 1,
               data=eml_many(MANY_ATTACHMENTS), name="many-attachments.eml"),
        Attack(f"attachment bomb: .eml nested {NESTED_DEPTH} deep, {NESTED_PER_LEVEL} attachments a level "
               "(each level read in turn)", "nested", 0.5, data=eml_nested(NESTED_DEPTH, NESTED_PER_LEVEL),
               name="nested.eml"),
        Attack(f"attachment bomb: .eml with {WIDE_MESSAGES} attached messages of {WIDE_PER_MESSAGE} "
               "attachments each", "wide", 0.5, data=eml_wide(WIDE_MESSAGES, WIDE_PER_MESSAGE), name="wide.eml"),
    ]
    if os.path.exists(ocr_pdf):
        attacks.append(Attack(f"delete during read: thirty_short.pdf, ocr force, pages {args.ocr_pages}, "
                              f"DELETE after {args.delete_after_ms} ms", "delete", 1,
                              data=read_file(ocr_pdf), name="thirty_short.pdf"))
    return attacks


async def read_until_closed(reader, limit_s):
    """Read until the peer closes; (seconds, bytes, "closed" | "reset" | "still open")."""
    t0 = time.monotonic()
    got = bytearray()
    while True:
        left = limit_s - (time.monotonic() - t0)
        if left <= 0:
            return time.monotonic() - t0, bytes(got), "still open"
        try:
            chunk = await asyncio.wait_for(reader.read(65536), timeout=left)
        except asyncio.TimeoutError:
            return time.monotonic() - t0, bytes(got), "still open"
        except OSError:
            return time.monotonic() - t0, bytes(got), "reset"
        if not chunk:
            return time.monotonic() - t0, bytes(got), "closed"
        got += chunk


def parse_response(raw):
    """(HTTP status, JSON error code) of a raw HTTP/1.1 response; (None, None) when none."""
    if not raw.startswith(b"HTTP/"):
        return None, None
    try:
        status = int(raw.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return None, None
    code = None
    _, _, body = raw.partition(b"\r\n\r\n")
    try:
        js = json.loads(body)
        if isinstance(js, dict) and isinstance(js.get("error"), dict):
            code = js["error"].get("code")
    except ValueError:
        pass
    return status, code


async def read_one_response(reader):
    """One whole response on a keep-alive connection (headers, then Content-Length bytes)."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    return head + await reader.readexactly(length)


def close_writer(w):
    try:
        w.close()
    except Exception:  # noqa: BLE001 (the socket may be gone already)
        pass


async def attack_slowloris(ctx, atk, rnd):
    """Request line and headers one byte every 50 ms, never finished: the server must close
    the connection once --header-read-timeout-ms has passed since it opened."""
    limit = ctx.header_s + ctx.slack_s
    t0 = time.monotonic()
    reader, writer = await asyncio.open_connection(ctx.host, ctx.port)
    msg = b"GET /healthz HTTP/1.1\r\nHost: soak\r\nUser-Agent: slowloris\r\nX-Padding: " + b"a" * 200

    async def trickle():
        try:
            for i in range(len(msg)):
                writer.write(msg[i:i + 1])
                await writer.drain()
                await asyncio.sleep(0.05)
        except OSError:
            pass  # closed by the server: what we wait for

    task = asyncio.create_task(trickle())
    _, raw, how = await read_until_closed(reader, limit + 5)
    took = time.monotonic() - t0
    task.cancel()
    close_writer(writer)
    status, code = parse_response(raw)
    ok = how != "still open" and took <= limit and (status is None or status >= 400)
    outcome = f"closed by the server{'' if status is None else f' after HTTP {status}'}" \
        if how != "still open" else "still open"
    return ok, outcome, took, [(status, code) if status else (None, "closed")], \
        "" if ok else f"{how} after {took:.2f} s (limit {limit:.1f} s), got {brief(raw[:80])}"


async def attack_slow_body(ctx, atk, rnd):
    """An upload whose body comes in chunks paced at half --body-timeout-ms (which must be
    accepted), then stops: 408 request_timeout within --body-timeout-ms (+ slack) of the last
    chunk."""
    reader, writer = await asyncio.open_connection(ctx.host, ctx.port)
    b = "SoakBoundary"
    part = (f"--{b}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"slow.txt\"\r\n"
            "Content-Type: text/plain\r\n\r\n").encode()
    writer.write(f"POST /upload HTTP/1.1\r\nHost: soak\r\nContent-Type: multipart/form-data; boundary={b}\r\n"
                 f"Content-Length: 1000000\r\n\r\n".encode() + part)
    early = None
    t_last = time.monotonic()
    try:
        await writer.drain()
        for k in range(3):
            writer.write(b"slow but steady " * 64)
            await writer.drain()
            t_last = time.monotonic()
            if k == 2:
                break  # the stall: nothing more is sent
            try:  # a pause of half the timeout must not be answered
                early = await asyncio.wait_for(reader.read(65536), timeout=ctx.body_s / 2)
                break
            except asyncio.TimeoutError:
                pass
    except OSError as e:
        early = f"{type(e).__name__}".encode()
    limit = ctx.body_s + ctx.slack_s
    if early is None:
        _, raw, how = await read_until_closed(reader, limit + 5)
    else:
        raw, how = early, "answered during the paced chunks"
    took = time.monotonic() - t_last
    close_writer(writer)
    status, code = parse_response(raw)
    ok = early is None and status == 408 and code == "request_timeout" and took <= limit
    outcome = f"{status} {code}" if status else how
    resp = [(status, code)] if status else [(None, "closed")]
    return ok, outcome, took, resp, \
        "" if ok else f"{how}: HTTP {status} {code} {took:.2f} s after the stall (limit {limit:.1f} s)"


async def attack_idle(ctx, atk, rnd):
    """Four keep-alive connections each served one GET /healthz, and one that never sends a
    byte, all left idle: each must be closed within --header-read-timeout-ms (+ slack)."""
    limit = ctx.header_s + ctx.slack_s

    async def one(send):
        reader, writer = await asyncio.open_connection(ctx.host, ctx.port)
        status = code = None
        if send:
            writer.write(b"GET /healthz HTTP/1.1\r\nHost: soak\r\n\r\n")
            await writer.drain()
            try:
                status, code = parse_response(await asyncio.wait_for(read_one_response(reader), 10))
            except (asyncio.TimeoutError, asyncio.IncompleteReadError, OSError, ValueError):
                status = None
        t0 = time.monotonic()
        _, raw, how = await read_until_closed(reader, limit + 5)
        took = time.monotonic() - t0
        close_writer(writer)
        return send, status, code, took, how, raw

    res = await asyncio.gather(*(one(send) for send in (True, True, True, True, False)))
    responses = [(s, c) for send, s, c, _, _, _ in res if send] + [(None, "closed")] * len(res)
    bad = [r for r in res if (r[0] and r[1] != 200) or r[4] == "still open" or r[3] > limit or r[5]]
    took = max(r[3] for r in res)
    detail = "; ".join(f"{'served' if r[0] else 'unused'}: HTTP {r[1]}, {r[4]} after {r[3]:.2f} s"
                       + (f", then sent {brief(r[5][:60])}" if r[5] else "") for r in bad)
    return not bad, "all closed by the server" if not bad else "not all closed in time", took, responses, detail


async def attack_disguised(ctx, atk, rnd):
    label, name, data = atk.variants[ctx.disguise_next % len(atk.variants)]
    ctx.disguise_next += 1
    t0 = time.perf_counter()
    form = aiohttp.FormData()
    form.add_field("file", data, filename=name, content_type="application/octet-stream")
    s, c, m, js = await request(ctx.sess, "POST", ctx.base + "/upload", data=form)
    took = time.perf_counter() - t0
    resp = [(s, c)]
    if s == 200:  # stored as a document: a defect; do not leave it behind
        fid = js["files"][0]["file_id"]
        ds, dc, _, _ = await request(ctx.sess, "DELETE", f"{ctx.base}/files/{fid}")
        resp.append((ds, dc))
    ok = s == 415 and c == "blocked_type"
    return ok, f"{s} {c or ''}".strip(), took, resp, "" if ok else f"{label} ({name}): HTTP {s} {c} {brief(m)}"


def check_attachments(js, expect_listed=None):
    """'' when the envelope's attachments are capped as they should be, else why not."""
    atts = js.get("attachments") if isinstance(js, dict) else None
    if not isinstance(atts, list):
        return "no attachments list in the envelope", 0, 0
    stored = [a for a in atts if a.get("file_id")]
    unstored = [a for a in atts if not a.get("file_id")]
    why = []
    if expect_listed is not None and len(atts) != expect_listed:
        why.append(f"{len(atts)} listed, expected {expect_listed}")
    if len(stored) > ATTACHMENT_CAP:
        why.append(f"{len(stored)} stored, more than the cap {ATTACHMENT_CAP}")
    if any(not str(a.get("note", "")).startswith("not stored") for a in unstored):
        why.append("an attachment not stored without a `not stored` note")
    return "; ".join(why), len(atts), len(stored)


async def attack_email(ctx, atk, rnd, fresh):
    """Read an attachment bomb (the upload made at the start, or a fresh one deleted after):
    200, every attachment listed, at most ATTACHMENT_CAP stored. The nested one is then read
    level by level through the stored inner messages."""
    t0 = time.perf_counter()
    resp = []
    file_id, uploaded = atk.pin_id, None
    if fresh or file_id is None:
        form = aiohttp.FormData()
        form.add_field("file", atk.data, filename=atk.name, content_type="message/rfc822")
        s, c, m, js = await request(ctx.sess, "POST", ctx.base + "/upload", data=form)
        resp.append((s, c))
        if s != 200:
            return False, f"upload {s} {c}", time.perf_counter() - t0, resp, f"upload: HTTP {s} {c} {brief(m)}"
        file_id = uploaded = js["files"][0]["file_id"]
    expect = {"many": MANY_ATTACHMENTS, "wide": WIDE_MESSAGES, "nested": NESTED_PER_LEVEL + 1}[atk.kind]
    s, c, m, js = await request(ctx.sess, "POST", ctx.base + "/read", json={"file_id": file_id})
    resp.append((s, c))
    why, listed, stored = check_attachments(js, expect) if s == 200 else (f"read: HTTP {s} {c} {brief(m)}", 0, 0)
    outcome = f"200, {listed:,} listed, {stored} stored" if s == 200 else f"{s} {c}"
    if s == 200 and not why and atk.kind == "nested":
        level, cur = 1, js
        while level < NESTED_DEPTH:
            inner = [a for a in cur["attachments"] if a.get("format") == "email" and a.get("file_id")]
            if not inner:
                why = f"level {level}: no stored inner message to read on"
                break
            s, c, m, cur = await request(ctx.sess, "POST", ctx.base + "/read", json={"file_id": inner[0]["file_id"]})
            resp.append((s, c))
            if s != 200:
                why = f"level {level}: HTTP {s} {c} {brief(m)}"
                break
            last = level == NESTED_DEPTH - 1
            w, _, _ = check_attachments(cur, NESTED_PER_LEVEL + (0 if last else 1))
            if w:
                why = f"level {level}: {w}"
                break
            level += 1
        outcome = f"200 at every level, {level} of {NESTED_DEPTH} read" if not why else f"stopped at level {level}"
    if uploaded:
        ds, dc, _, _ = await request(ctx.sess, "DELETE", f"{ctx.base}/files/{uploaded}")
        resp.append((ds, dc))
    return not why, outcome, time.perf_counter() - t0, resp, why


async def attack_delete(ctx, atk, rnd):
    """Upload thirty_short.pdf, start a forced-OCR read of it, DELETE the file while the read
    runs: neither may be a 5xx (or go unanswered)."""
    t0 = time.perf_counter()
    form = aiohttp.FormData()
    form.add_field("file", atk.data, filename=atk.name, content_type="application/pdf")
    s, c, m, js = await request(ctx.sess, "POST", ctx.base + "/upload", data=form)
    if s != 200:
        return False, f"upload {s} {c}", time.perf_counter() - t0, [(s, c)], f"upload: HTTP {s} {c} {brief(m)}"
    fid = js["files"][0]["file_id"]
    read = asyncio.create_task(request(ctx.sess, "POST", ctx.base + "/read",
                                       json={"file_id": fid, "ocr": "force", "pages": ctx.ocr_pages}))
    await asyncio.sleep(ctx.delete_after_s)
    ds, dc, dm, _ = await request(ctx.sess, "DELETE", f"{ctx.base}/files/{fid}")
    rs, rc, rm, rjs = await read
    resp = [(s, c), (rs, rc), (ds, dc)]
    bad = [(what, st, co, me) for what, st, co, me in (("read", rs, rc, rm), ("delete", ds, dc, dm))
           if st is None or st >= 500]
    ran = isinstance(rjs, dict) and isinstance(rjs.get("elapsed_ms"), (int, float)) \
        and rjs["elapsed_ms"] > ctx.delete_after_s * 1000
    ctx.delete_landed_mid_read += int(bool(ran))
    outcome = f"read {rs}{' ' + rc if rc else ''}, delete {ds}{' ' + dc if dc else ''}"
    return not bad, outcome, time.perf_counter() - t0, resp, \
        "; ".join(f"{w}: HTTP {st} {co} {brief(me)}" for w, st, co, me in bad)


ATTACK_RUNNERS = {"slowloris": attack_slowloris, "slow_body": attack_slow_body, "idle": attack_idle,
                  "disguised": attack_disguised, "delete": attack_delete}


async def run_attack(ctx, atk, rnd, fresh):
    if atk.kind in ("many", "nested", "wide"):
        return await attack_email(ctx, atk, rnd, fresh)
    return await ATTACK_RUNNERS[atk.kind](ctx, atk, rnd)


class AttackContext:
    def __init__(self, sess, server, args):
        self.sess, self.base = sess, server.base
        self.host, self.port = "127.0.0.1", server.port
        self.header_s, self.body_s = args.header_timeout_ms / 1000, args.body_timeout_ms / 1000
        self.slack_s = args.slack_ms / 1000
        self.ocr_pages, self.delete_after_s = args.ocr_pages, args.delete_after_ms / 1000
        self.disguise_next = 0
        self.delete_landed_mid_read = 0


def healthz_probe(port, interval, stop, conn):
    """In its own process (so the clients' JSON parsing cannot delay it): GET /healthz on a
    new connection every `interval` s until `stop`; sends back [(t, seconds, status)]."""
    samples = []
    t0 = time.monotonic()
    while not stop.is_set():
        t = time.perf_counter()
        status = None
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            c.request("GET", "/healthz")
            r = c.getresponse()
            r.read()
            status = r.status
            c.close()
        except OSError:
            pass
        samples.append((time.monotonic() - t0, time.perf_counter() - t, status))
        stop.wait(interval)
    conn.send(samples)
    conn.close()


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
        self.attacks = collections.defaultdict(lambda: {"n": 0, "passed": 0, "outcomes": collections.Counter(),
                                                        "secs": [], "failures": []})


def classify(inp, status, code):
    if status is None:
        return "closed" if code == "closed" else "unplanned"  # closed on purpose / no HTTP answer at all
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


def note_unplanned(stats, label, name, opts, stage, status, code, msg):
    stats.unplanned_n += 1
    if status is not None and status < 500:
        stats.no_code_4xx += 1
    if len(stats.unplanned) < 30:
        stats.unplanned.append({"input": label, "file": name, "options": opts, "stage": stage,
                                "status": status, "code": code, "message": msg})


def record_attack(stats, atk, result):
    ok, outcome, secs, responses, detail = result
    row = stats.attacks[atk.label]
    row["n"] += 1
    row["passed"] += int(ok)
    row["outcomes"][outcome] += 1
    row["secs"].append(secs)
    if not ok and len(row["failures"]) < 5:
        row["failures"].append(detail)
    for status, code in responses:
        cls = classify(NO_5XX, status, code)
        stats.by_status[(status, code, cls)] += 1
        if cls == "unplanned":
            note_unplanned(stats, atk.label, atk.name or atk.kind, {}, "attack", status, code, detail)


NO_5XX = Input("attacks", "attack", None, None, 0)  # attacks allow no 5xx at all


def plan_ops(inputs, attacks, args):
    """The sequence of operations, fixed by the seed: inputs drawn by weight, then a share
    (--attack-share) of the positions given to attacks, each kind at least once."""
    rnd = random.Random(args.seed + 1)
    weights = [i.weight for i in inputs]
    plan = []
    for _ in range(args.reads):
        inp = rnd.choices(inputs, weights)[0]
        opts = rnd.choice(inp.options)
        raw = rnd.choice(inp.raw_body) if inp.raw_body else None
        plan.append((inp, opts, rnd.random() < args.upload_share, raw))
    n = round(args.reads * args.attack_share) if attacks else 0
    if n:
        arnd = random.Random(args.seed + 2)
        total = sum(a.weight for a in attacks)
        kinds = []
        for a in attacks:
            kinds += [a] * max(1, round(n * a.weight / total))
        arnd.shuffle(kinds)
        for pos, atk in zip(sorted(arnd.sample(range(args.reads), min(len(kinds), args.reads))), kinds):
            plan[pos] = (atk, {}, arnd.random() < args.upload_share, None)
    return plan


async def prime_ocr(sess, base, workers):
    """Load the OCR models into every worker before the run (one forced-OCR read each, at
    once), so that a worker's first OCR read does not show as growth; the uploads are
    deleted after."""
    p = os.path.join(ROOT, "fixtures", "pdf", "scan_page.pdf")
    if not os.path.exists(p) or workers < 1:
        return
    data = read_file(p)
    ids = []
    for _ in range(workers):
        form = aiohttp.FormData()
        form.add_field("file", data, filename="prime.pdf", content_type="application/pdf")
        s, _, _, js = await request(sess, "POST", base + "/upload", data=form)
        if s == 200:
            ids.append(js["files"][0]["file_id"])
    await asyncio.gather(*(request(sess, "POST", base + "/read", json={"file_id": i, "ocr": "force"}) for i in ids))
    for i in ids:
        await request(sess, "DELETE", f"{base}/files/{i}")


async def soak(server, inputs, attacks, args, stats, progress, on_pinned):
    base = server.base
    # The client drops an idle pooled connection before the server's header-read timeout
    # would close it under a request being sent (aiohttp does not retry a POST).
    keepalive = min(15.0, args.header_timeout_ms / 2000)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=args.clients + 2,
                                                                    keepalive_timeout=keepalive),
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
        for atk in attacks:
            if atk.kind in ("many", "nested", "wide"):
                form = aiohttp.FormData()
                form.add_field("file", atk.data, filename=atk.name, content_type="message/rfc822")
                s, c, m, js = await request(sess, "POST", base + "/upload", data=form)
                if s == 200:
                    atk.pin_id = js["files"][0]["file_id"]
        if any(a.kind == "delete" for a in attacks):
            await prime_ocr(sess, base, args.workers)
        on_pinned()
        plan = plan_ops(inputs, attacks, args)
        next_op = [0]
        ctx = AttackContext(sess, server, args)
        stats.attack_ctx = ctx
        background = set()
        slots = asyncio.Semaphore(args.slow_clients)

        async def attack(atk, fresh):
            rnd = random.Random()
            try:
                result = await run_attack(ctx, atk, rnd, fresh)
            except (OSError, asyncio.TimeoutError, aiohttp.ClientError, ValueError, KeyError) as e:
                result = (False, f"client error {type(e).__name__}", 0.0, [],
                          f"{type(e).__name__}: {brief(str(e))}")
            record_attack(stats, atk, result)
            stats.done += 1
            progress()

        async def slow(atk, fresh):
            try:
                await attack(atk, fresh)
            finally:
                slots.release()

        async def client():
            while next_op[0] < len(plan):
                inp, opts, fresh, raw = plan[next_op[0]]
                next_op[0] += 1
                if isinstance(inp, Attack):
                    if inp.background:  # a slow client holds its connection while the reads go on
                        await slots.acquire()
                        task = asyncio.create_task(slow(inp, fresh))
                        background.add(task)
                        task.add_done_callback(background.discard)
                    else:
                        await attack(inp, fresh)
                    continue
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
                    note_unplanned(stats, inp.label, (inp.target or inp).name,
                                   raw.decode(errors="replace") if raw else opts, stage, status, code, msg)
                if inp.group == "good" and cls != "ok":
                    stats.good_refused[(inp.label, (inp.target or inp).name, code or str(status))] += 1
                stats.done += 1
                progress()

        await asyncio.gather(*(client() for _ in range(args.clients)))
        while background:
            await asyncio.gather(*list(background))


class Sampler(threading.Thread):
    def __init__(self, server, stats, interval):
        super().__init__(daemon=True)
        self.server, self.stats, self.interval = server, stats, interval
        self.samples = []  # (t, reads done, server KiB, workers KiB, workers)
        self.file_counts = []  # (t, reads done, files the tenant holds), every FILES_EVERY s
        self.halt = threading.Event()
        self.t0 = time.monotonic()

    def run(self):
        next_files = 0.0
        while not self.halt.is_set():
            s, w, n = self.server.rss_kib()
            t = time.monotonic() - self.t0
            self.samples.append((t, self.stats.done, s, w, n))
            if t >= next_files:
                self.file_counts.append((t, self.stats.done, self.server.file_count()))
                next_files = t + FILES_EVERY
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
            "quarters": quarters(post), "tenths": tenths(post)}


def quarters(post):
    """Median RSS of the first and of the last quarter of the post-warm-up samples (server +
    workers, and server alone), and the change between them; None below 8 samples."""
    if len(post) < 8:
        return None
    q = len(post) // 4
    first, last = post[:q], post[-q:]
    tot = lambda part: statistics.median((x[2] + x[3]) * 1024 for x in part)  # noqa: E731
    srv = lambda part: statistics.median(x[2] * 1024 for x in part)  # noqa: E731
    return {"samples_each": q, "first": tot(first), "last": tot(last), "change": tot(last) / tot(first) - 1,
            "server_first": srv(first), "server_last": srv(last),
            "server_change": srv(last) / srv(first) - 1}


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


def verdicts(res, stats, attacks):
    """[(criterion, figure, "PASS" | "FAIL" | "not judged")], in the order they print."""
    out = []
    pf = lambda ok: "PASS" if ok else "FAIL"  # noqa: E731
    g = res["goals"]
    out.append(("unplanned 5xx (and requests without an HTTP answer) = 0", f"{g['unplanned_5xx']}",
                pf(g["unplanned_5xx"] == 0)))
    out.append(("no server restart: same PID at the end, `/healthz` ok",
                f"PID {res['pid']} {'still running' if g['same_process'] else 'gone'}, /healthz {g['healthz']}",
                pf(g["same_process"] and g["healthz"] == "ok")))
    for atk in attacks:
        row = stats.attacks.get(atk.label)
        if not row or not row["n"]:
            out.append((f"attack: {atk.label}", "not run", "not judged"))
            continue
        outcomes = ", ".join(f"{k} × {v:,}" for k, v in row["outcomes"].most_common(3))
        out.append((f"attack: {atk.label}", f"{row['passed']:,}/{row['n']:,} as planned ({outcomes})",
                    pf(row["passed"] == row["n"])))
    h = res["healthz"]
    if h["n"]:
        out.append((f"`/healthz` p99 < {HEALTHZ_P99_S * 1000:.0f} ms",
                    f"{h['p99'] * 1000:.1f} ms ({h['n']:,} probes, p50 {h['p50'] * 1000:.1f} ms)",
                    pf(h["p99"] < HEALTHZ_P99_S)))
        out.append((f"`/healthz` max < {HEALTHZ_MAX_S:.0f} s, every probe answered 200",
                    f"{h['max'] * 1000:.1f} ms, {h['failed']} not 200",
                    pf(h["max"] < HEALTHZ_MAX_S and not h["failed"])))
    else:
        out.append(("`/healthz` latency", "no probes", "FAIL"))
    q = res["rss"]["quarters"] if res["rss"] else None
    if q and res["quick"]:
        out.append(("RSS flat", f"{q['first'] / MB:.1f} → {q['last'] / MB:.1f} MB ({q['change']:+.1%}), "
                    f"{q['samples_each']} samples a quarter", "not judged (quick run: too short)"))
    elif q:
        out.append((f"RSS flat, server process: median of the last quarter after warm-up within ±{RSS_BAND:.0%} "
                    "of the first quarter's",
                    f"{q['server_first'] / MB:.1f} → {q['server_last'] / MB:.1f} MB ({q['server_change']:+.1%}), "
                    f"{q['samples_each']} samples a quarter", pf(abs(q["server_change"]) <= RSS_BAND)))
        out.append((f"RSS flat, server + workers: the same, ±{RSS_BAND:.0%}",
                    f"{q['first'] / MB:.1f} → {q['last'] / MB:.1f} MB ({q['change']:+.1%})",
                    pf(abs(q["change"]) <= RSS_BAND)))
    else:
        out.append(("RSS flat", "fewer than 8 samples after the warm-up", "not judged"))
    out.append(("`docreader_reads_in_flight` 0 at the end", f"{res['in_flight']} ({res['in_flight_note']})",
                pf(res["in_flight"] == 0)))
    f = res["files"]
    out.append(("the tenant's files (GET /files) stay within the attachment cap's bound",
                f"{f['after_pin']} after the first uploads, at most {f['max']} during the run, {f['end']} at the "
                f"end; bound {f['bound']}", pf(f["max"] is not None and f["max"] <= f["bound"]
                                               and f["end"] is not None and f["end"] <= f["bound"])))
    return out


def render(res, inputs, stats, attacks):
    out = []
    out.append("### Verdicts")
    out.append("")
    out += ["| criterion | figure | verdict |", "|---|---|---|"]
    for name, fig, v in res["verdicts"]:
        out.append(f"| {name} | {fig} | {'**FAIL**' if v == 'FAIL' else v} |")
    out.append("")
    out.append(f"Worker processes replaced (`docreader_worker_restarts_total`, no goal): {res['worker_restarts']}; "
               f"distinct worker PIDs seen: {res['worker_pids_seen']}.")
    out.append("")
    r = res["rss"]
    if r:
        out.append(f"For information, the strict band of the issue #6 runs: every RSS sample after warm-up "
                   f"(server + workers) {r['min'] / MB:.1f}–{r['max'] / MB:.1f} MB, median {r['median'] / MB:.1f} MB "
                   f"({r['low']:+.1%} / {r['high']:+.1%}; within ±{RSS_BAND:.0%}: {'yes' if r['within'] else 'no'}).")
        out.append("")
    h = res["healthz"]
    if h["n"]:
        out.append(f"`/healthz`, a new connection every {res['healthz_interval']:g} s from its own process "
                   f"throughout the run: p50 {h['p50'] * 1000:.1f} ms, p90 {h['p90'] * 1000:.1f}, p99 "
                   f"{h['p99'] * 1000:.1f}, max {h['max'] * 1000:.1f} ms; {h['over_100ms']} of {h['n']:,} "
                   f"probes over 100 ms.")
        out.append("")

    out.append("### Attacks")
    out.append("")
    out += ["| attack | runs | as planned | outcomes | p50 s | max s |", "|---|--:|--:|---|--:|--:|"]
    for atk in attacks:
        row = stats.attacks.get(atk.label)
        if not row or not row["n"]:
            continue
        out.append(f"| {atk.label} | {row['n']:,} | {row['passed']:,} | {codes(row['outcomes'])} "
                   f"| {pct(row['secs'], 50):.2f} | {max(row['secs']):.2f} |")
    out.append("")
    ctx = res["attack_ctx"]
    out.append(f"Seconds: slowloris from connecting to the close, slow body from its last chunk to the 408, idle "
               f"keep-alive from the response to the close (the longest of five), the others the whole "
               f"operation. Server timeouts {res['header_timeout_ms']} ms (headers, idle) and "
               f"{res['body_timeout_ms']} ms (body); a close may come {res['slack_ms']} ms late. "
               f"Deletes that landed while the OCR read was still running (its `elapsed_ms` past the "
               f"delay): {ctx['delete_landed_mid_read']}.")
    fails = [(atk.label, d) for atk in attacks for d in stats.attacks.get(atk.label, {}).get("failures", [])]
    if fails:
        out.append("")
        out.append("Attacks not answered as planned (first 5 of each):")
        for label, d in fails:
            out.append(f"- {label}: {d}")
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
    f = res["files"]
    out.append(f"Files of the tenant (GET /files, every {FILES_EVERY:g} s): {f['after_pin']} after the first "
               f"uploads, at most {f['max']}, {f['end']} at the end. Bound: those {f['after_pin']} + "
               f"{ATTACHMENT_CAP} (the per-read attachment cap) × {f['emails']} e-mails whose reads may store "
               f"attachments (inputs named .eml/.msg, the attack e-mails, and the {NESTED_DEPTH - 1} levels "
               f"inside the nested one) + {f['in_flight_uploads']} fresh uploads in flight.")
    out.append("")

    out.append("### Responses by status and code")
    out.append("")
    out += ["| HTTP status | code | responses | counted as |", "|--:|---|--:|---|"]
    names = {"ok": "ok", "planned": "planned (4xx with a JSON code)",
             "expected5xx": "expected 5xx (hostile input, or `deadline_ms` 1)", "unplanned": "**unplanned**",
             "closed": "closed by the server (slow or idle client, as planned)"}
    for (status, code, cls), n in sorted(stats.by_status.items(), key=lambda kv: (kv[0][0] or 0, kv[0][1] or "")):
        out.append(f"| {status if status is not None else 'no answer'} | {code or '—'} | {n:,} | {names[cls]} |")
    out.append("")
    out.append("Every HTTP answer an attack got is counted here too (an attack may make several requests); "
               "connections the server closed without an answer, as it should for a slow or idle client, "
               "are `closed`.")
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
    ap.add_argument("--corpus", help="the shared corpus (default $DOCREADER_CORPUS, else tests/corpus)")
    ap.add_argument("--no-corpus", action="store_true", help="generated files and fixtures only")
    ap.add_argument("--corpus-weight", type=float, default=25.0, help="weight of all corpus text rows together")
    ap.add_argument("--refused-weight", type=float, default=8.0,
                    help="weight of all corpus rows that expect an error together")
    ap.add_argument("--interval", type=float, default=1.0, help="seconds between RSS samples")
    ap.add_argument("--attack-share", type=float, default=0.03,
                    help="share of the operations that are attacks (issue #15; default 0.03, 0 for none)")
    ap.add_argument("--header-timeout-ms", type=int, default=2000,
                    help="the server's --header-read-timeout-ms for the run (default 2000)")
    ap.add_argument("--body-timeout-ms", type=int, default=2000,
                    help="the server's --body-timeout-ms for the run (default 2000)")
    ap.add_argument("--slack-ms", type=int, default=2000,
                    help="how late past its timeout the server may close a slow client (default 2000)")
    ap.add_argument("--slow-clients", type=int, default=16,
                    help="slow-client attacks held open at once, at most (default 16)")
    ap.add_argument("--ocr-pages", default="1-6",
                    help="pages of thirty_short.pdf the delete-during-read attack OCRs (default 1-6)")
    ap.add_argument("--delete-after-ms", type=int, default=500,
                    help="how long after the read starts the delete is sent (default 500)")
    ap.add_argument("--healthz-interval", type=float, default=0.25, help="seconds between /healthz probes")
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
        attacks = build_attacks(args) if args.attack_share > 0 else []
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
        print(f"- attacks: {args.attack_share:.0%} of the operations ({len(attacks)} kinds; see Attacks); "
              f"server `--header-read-timeout-ms {args.header_timeout_ms} --body-timeout-ms "
              f"{args.body_timeout_ms}` (as environment variables)")
        print(f"- corpus: {corpus_note}")
        print(f"- work dir: {workdir}")
        print(flush=True)

        server = Server(binary, workdir, args.workers, args.header_timeout_ms, args.body_timeout_ms).start()
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

        files_after_pin = [None]

        def on_pinned():
            files_after_pin[0] = server.file_count()
            sampler.start()

        mp = multiprocessing.get_context("spawn")
        probe_stop = mp.Event()
        probe_rx, probe_tx = mp.Pipe(duplex=False)
        probe = mp.Process(target=healthz_probe, args=(server.port, args.healthz_interval, probe_stop, probe_tx),
                           daemon=True)
        b0, _, st0 = cpu_stat()
        self0 = self_cpu()
        probe.start()
        try:
            asyncio.run(soak(server, inputs, attacks, args, stats, progress, on_pinned))
        finally:
            if sampler.is_alive():
                sampler.stop()
            probe_stop.set()
            hz_samples = probe_rx.recv() if probe_rx.poll(30) else []
            probe.join(10)
        wall = time.monotonic() - t_start
        same = server.same_process()
        # No read may be left counted in flight: give the last answers a moment to be counted.
        in_flight, in_flight_note, t_wait = "?", "no /metrics", time.monotonic()
        metrics_text = ""
        while True:
            _, metrics_text = server.get("/metrics")
            v = metric(metrics_text if isinstance(metrics_text, str) else "", "docreader_reads_in_flight")
            in_flight = int(v) if v is not None else "?"
            waited = time.monotonic() - t_wait
            if in_flight == 0 or waited > 5:
                in_flight_note = f"read {waited:.1f} s after the last operation"
                break
            time.sleep(0.25)
        files_end = server.file_count()
        hz_status, hz = server.get("/healthz")
        healthz = "ok" if hz_status == 200 and isinstance(hz, dict) and hz.get("status") == "ok" else \
            f"failed ({hz_status})"
        warm_reads = args.reads // 10
        lat = [x[1] for x in hz_samples]
        emails = sum(1 for i in inputs if i.name and i.name.lower().endswith((".eml", ".msg"))) + \
            sum(1 for a in attacks if a.kind in ("many", "nested", "wide")) + \
            (NESTED_DEPTH - 1 if any(a.kind == "nested" for a in attacks) else 0)
        counts = [c for _, _, c in sampler.file_counts if c is not None] + \
            [c for c in (files_after_pin[0], files_end) if c is not None]
        in_flight_uploads = args.clients + 2
        res = {
            "reads": args.reads, "clients": args.clients, "workers": args.workers, "wall_s": wall,
            "pid": server.pid, "warm_reads": warm_reads, "upload_share": args.upload_share,
            "interval": args.interval,
            "rss_start": rss_start, "rss": rss_summary(sampler.samples, warm_reads),
            "worker_restarts": (lambda v: int(v) if v is not None else "?")(
                metric(metrics_text if isinstance(metrics_text, str) else "", "docreader_worker_restarts_total")),
            "in_flight": in_flight, "in_flight_note": in_flight_note,
            "healthz_interval": args.healthz_interval, "quick": args.quick,
            "healthz": {"n": len(lat), "p50": pct(lat, 50), "p90": pct(lat, 90), "p99": pct(lat, 99),
                        "max": max(lat) if lat else None, "failed": sum(1 for x in hz_samples if x[2] != 200),
                        "over_100ms": sum(1 for x in lat if x > 0.1)},
            "files": {"after_pin": files_after_pin[0], "max": max(counts) if counts else None, "end": files_end,
                      "emails": emails, "in_flight_uploads": in_flight_uploads,
                      "bound": (files_after_pin[0] or 0) + ATTACHMENT_CAP * emails + in_flight_uploads},
            "header_timeout_ms": args.header_timeout_ms, "body_timeout_ms": args.body_timeout_ms,
            "slack_ms": args.slack_ms,
            "attack_ctx": {"delete_landed_mid_read": getattr(getattr(stats, "attack_ctx", None),
                                                             "delete_landed_mid_read", 0)},
            "worker_pids_seen": len(server.seen_workers),
            "goals": {"unplanned_5xx": sum(n for (s, c, cls), n in stats.by_status.items()
                                           if cls == "unplanned" and (s is None or s >= 500)),
                      "same_process": same, "healthz": healthz},
        }
        res["verdicts"] = verdicts(res, stats, attacks)
        failed = [name for name, _, v in res["verdicts"] if v == "FAIL"]
        server.stop()
        b1, _, st1 = cpu_stat()
        print(render(res, inputs, stats, attacks))
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
            res["file_counts"] = sampler.file_counts
            res["healthz_samples"] = hz_samples
            res["attacks"] = {k: {"n": v["n"], "passed": v["passed"], "outcomes": dict(v["outcomes"]),
                                  "p50_s": pct(v["secs"], 50), "max_s": max(v["secs"]), "failures": v["failures"]}
                              for k, v in stats.attacks.items()}
            with open(args.json, "w") as f:
                json.dump(res, f, indent=2, default=str)
        print()
        print(f"verdict: {'FAIL (' + '; '.join(failed) + ')' if failed else 'PASS'}")
        return 1 if failed or not same else 0
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
