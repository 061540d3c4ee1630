#!/usr/bin/env python3
"""Office and CSV benchmark: docreader's CLI side by side with python-calamine on a large
.xlsx, and with Python's csv module (and a plain read() as a floor) on a large CSV.

Run it through bench/office/run.sh (which installs xlsxwriter and python-calamine); see
bench/README.md. Inputs are generated into a temp dir (seeded, so every run sees the same
bytes). Every measured run is a fresh child process under GNU time (peak RSS, `%M`); the
table gives the median wall time of --runs runs, after --warmup untimed rounds, with the
tools of a task taken round-robin so a load spike hits all of them alike.

Goals (from the issue): docreader at least 1.5x the speed of each peer, and docreader's
peak RSS at most 2 x the file size + 50 MB. A missed goal prints `NOT met`; the exit
status is 1 only when a docreader row failed (error, crash, or text that does not hold
the whole input).
"""
import argparse
import csv
import datetime
import hashlib
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHILD_TIMEOUT = 600  # seconds, per child process
MB = 1_000_000  # MB here is 10^6 bytes, for file sizes, RSS and MB/s alike
MAX_CHARS_CAP = 50_000_000  # the largest max_chars docreader accepts (src/options.rs)
SPEED_GOAL = 1.5
RSS_GOAL = "2 x file size + 50 MB"


def rss_goal_bytes(file_bytes):
    return 2 * file_bytes + 50 * MB


# --------------------------------------------------------------------------- children

CALAMINE_CHILD = r"""
import json, sys, time
from python_calamine import CalamineWorkbook
t0 = time.perf_counter()
sheet = CalamineWorkbook.from_path(sys.argv[1]).get_sheet_by_index(0)  # parses the sheet
tl = time.perf_counter()
rows = sheet.to_python()
t1 = time.perf_counter()
print(json.dumps({"core_s": t1 - t0, "load_s": tl - t0, "rows": len(rows),
                  "cells": sum(1 for r in rows for v in r if v != "")}))
"""

CSV_CHILD = r"""
import csv, json, sys, time
t0 = time.perf_counter()
n = fields = 0
for row in csv.reader(open(sys.argv[1], newline='', encoding='utf-8')):
    n += 1
    fields += len(row)
t1 = time.perf_counter()
print(json.dumps({"core_s": t1 - t0, "rows": n, "fields": fields}))
"""

READ_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
s = open(sys.argv[1], encoding='utf-8').read()
t1 = time.perf_counter()
print(json.dumps({"core_s": t1 - t0, "chars": len(s)}))
"""

VERSIONS_CHILD = r"""
import json, importlib.metadata as m
out = {}
for name in ("python-calamine", "xlsxwriter"):
    try:
        out[name] = m.version(name)
    except Exception:
        out[name] = None
print(json.dumps(out))
"""

GNU_TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None


class Failed(Exception):
    pass


def brief(s, limit=300):
    s = " ".join(str(s or "").split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def run_child(cmd, workdir):
    """Run cmd in a fresh process; return (wall_s, maxrss_kib or None, stdout_path).

    Peak RSS comes from GNU time (`%M`), which forks the command from its own small
    process: wait4()/RUSAGE_CHILDREN straight from this script would not do, since a child
    forked from a Python process keeps the parent's RSS high-water mark through exec, and
    this script holds the generated data. stdout goes to a file (docreader's envelope can
    be 100 MB), which the caller reads when it needs to.
    """
    out_path = os.path.join(workdir, "child.out")
    err_path = os.path.join(workdir, "child.err")
    rss_path = os.path.join(workdir, "child.rss")
    full = [GNU_TIME, "-f", "%M", "-o", rss_path, *cmd] if GNU_TIME else cmd
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(full, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        # A blocking wait with a timer thread for the timeout (Popen.wait(timeout) polls
        # with sleeps of up to 50 ms, which would round wall times up).
        killer = threading.Timer(CHILD_TIMEOUT, p.kill)
        killer.start()
        try:
            p.wait()
        finally:
            killer.cancel()
        wall = time.perf_counter() - t0
    if wall >= CHILD_TIMEOUT:
        raise Failed(f"timed out after {CHILD_TIMEOUT} s")
    rss = None
    if GNU_TIME:
        try:
            with open(rss_path) as f:
                rss = int(f.read().split()[-1])
        except (OSError, ValueError, IndexError):
            rss = None
    if p.returncode != 0:
        with open(err_path, "rb") as f:
            err_text = f.read().decode(errors="replace")
        with open(out_path, "rb") as f:
            out_text = f.read(4000).decode(errors="replace")
        raise Failed(f"exit {p.returncode}: {brief(out_text or err_text)}"
                     f"{' | stderr: ' + brief(err_text) if err_text and out_text else ''}")
    return wall, rss, out_path


class Sample:
    def __init__(self, wall, rss_kib, core=None, units=None, json_bytes=None, note=None):
        self.wall, self.rss_kib, self.core = wall, rss_kib, core
        self.units, self.json_bytes, self.note = units, json_bytes, note
        self.load = None


# --------------------------------------------------------------------------- inputs

FIRST = ["Anna", "Ben", "Chloé", "Dmitri", "Eva", "Farid", "Greta", "Hiro", "Inés", "Jonas",
         "Kaito", "Lena", "Małgorzata", "Nils", "Olga", "Pedro", "Quinn", "Rosa", "Søren",
         "Tomás", "Uma", "Viktor", "Wen", "Xavier", "Yusuf", "Zoë", "李", "Ngozi"]
LAST = ["Müller", "Smith", "García", "Rossi", "Nowak", "Dubois", "Tanaka", "O'Brien",
        "Jensen", "Kowalski", "Silva", "Novák", "Ivanova", "Andersson", "Papadopoulos"]
CITIES = ["Berlin", "São Paulo", "Zürich", "København", "New York, NY", "Kraków", "東京",
          "Lyon", "Oslo", "Toronto", "Austin, TX", "Reykjavík", "Madrid", "Cape Town"]
CATEGORIES = ["hardware", "software", "services", "support", "training", "licences",
              "travel", "office", "marketing", "research", "logistics", "other"]
WORDS = ("the order was shipped late because the warehouse ran out of boxes and the "
         "customer asked for a partial refund on the second invoice which finance approved "
         "after a short review of the contract terms and delivery notes").split()


def make_xlsx(path, rows, seed=1):
    """rows data rows x 10 columns under a header row: ints, floats, dates, date-times,
    booleans, repeated strings (shared-string table) and a unique string per row."""
    import xlsxwriter

    rnd = random.Random(seed)
    wb = xlsxwriter.Workbook(path)  # default mode: shared strings, as Excel writes them
    ws = wb.add_worksheet("Orders")
    date_fmt = wb.add_format({"num_format": "yyyy-mm-dd"})
    dt_fmt = wb.add_format({"num_format": "yyyy-mm-dd hh:mm:ss"})
    money_fmt = wb.add_format({"num_format": "#,##0.00"})
    header = ["id", "customer", "amount", "order_date", "quantity", "category", "ratio",
              "updated_at", "paid", "note"]
    for c, h in enumerate(header):
        ws.write_string(0, c, h)
    base = datetime.datetime(2020, 1, 1)
    names = [f"{rnd.choice(FIRST)} {rnd.choice(LAST)}" for _ in range(500)]
    for i in range(1, rows + 1):
        ws.write_number(i, 0, i)
        ws.write_string(i, 1, rnd.choice(names))
        ws.write_number(i, 2, round(rnd.uniform(1, 100000), 2), money_fmt)
        ws.write_datetime(i, 3, base + datetime.timedelta(days=rnd.randrange(2000)), date_fmt)
        ws.write_number(i, 4, rnd.randrange(1, 500))
        ws.write_string(i, 5, rnd.choice(CATEGORIES))
        ws.write_number(i, 6, rnd.random())
        ws.write_datetime(i, 7, base + datetime.timedelta(seconds=rnd.randrange(170_000_000)), dt_fmt)
        ws.write_boolean(i, 8, rnd.random() < 0.5)
        ws.write_string(i, 9, f"order {i}: " + " ".join(rnd.choice(WORDS) for _ in range(rnd.randrange(3, 9))))
    wb.close()


class _Sink:
    """A file-like object for csv.writer that keeps each row's text separately."""

    def __init__(self):
        self.last = ""

    def write(self, s):
        self.last = s


def make_csv(path, target_bytes, seed=2):
    """Rows of mixed columns until the next row would pass target_bytes. RFC 4180 style
    (CRLF, quotes where needed); about 1 row in 8 has a quoted field (commas, quotes) and
    1 in 2000 a line break inside a quoted field; some text is not ASCII, so the file has
    fewer characters than bytes. Returns (bytes, rows including the header)."""
    rnd = random.Random(seed)
    sink = _Sink()
    w = csv.writer(sink)  # lineterminator \r\n
    size = rows = 0
    base = datetime.date(2020, 1, 1)
    with open(path, "w", encoding="utf-8", newline="") as f:
        def put(row):
            nonlocal size, rows
            w.writerow(row)
            n = len(sink.last.encode("utf-8"))
            if size + n > target_bytes:
                return False
            f.write(sink.last)
            size += n
            rows += 1
            return True

        put(["id", "date", "customer", "city", "amount", "quantity", "paid", "category",
             "discount", "comment"])
        i = 0
        while True:
            i += 1
            r = rnd.random()
            if r < 0.0005:
                comment = "line one\nline two, with \"quotes\""
            elif r < 0.125:
                comment = "said \"" + " ".join(rnd.choice(WORDS) for _ in range(4)) + "\", then left"
            else:
                comment = " ".join(rnd.choice(WORDS) for _ in range(rnd.randrange(1, 5)))
            row = [i, (base + datetime.timedelta(days=rnd.randrange(2000))).isoformat(),
                   f"{rnd.choice(FIRST)} {rnd.choice(LAST)}", rnd.choice(CITIES),
                   f"{rnd.uniform(1, 100000):.2f}", rnd.randrange(1, 500),
                   "true" if rnd.random() < 0.5 else "false", rnd.choice(CATEGORIES),
                   f"{rnd.random():.4f}", comment]
            if not put(row):
                break
    return size, rows


# --------------------------------------------------------------------------- tools


def read_envelope(out_path):
    size = os.path.getsize(out_path)
    with open(out_path, "rb") as f:
        raw = f.read()
    return json.loads(raw), size


def envelope_error(env):
    if env.get("status") == "ok":
        return None
    return brief(json.dumps(env.get("error", env), ensure_ascii=False))


class Tool:
    name = "?"
    diagnostic = False  # shown in the table, never part of a goal
    floor = False  # a lower bound for reference, not a peer the goal applies to

    def run(self, path, workdir):
        raise NotImplementedError


class DocreaderXlsx(Tool):
    def __init__(self, binary, data_rows, args, name, check=True):
        self.binary, self.data_rows, self.args = binary, data_rows, args
        self.name, self.check = name, check
        self.diagnostic = not check

    def run(self, path, workdir):
        wall, rss, out = run_child([self.binary, "read", "--json", path, *self.args], workdir)
        env, size = read_envelope(out)
        err = envelope_error(env)
        if err:
            raise Failed(f"docreader answered {err}")
        note = None
        if self.check:
            note = check_xlsx_text(env, self.data_rows)
        return Sample(wall, rss, env.get("elapsed_ms", 0) / 1000.0, self.data_rows,
                      size, note)


def check_xlsx_text(env, data_rows):
    """None when the envelope holds the whole sheet; else exactly what came back."""
    problems = []
    sheets = env.get("sheets") or []
    want_rows = data_rows + 1  # the header row
    if not sheets:
        problems.append("no `sheets` in the envelope")
    else:
        s = sheets[0]
        if s.get("read") != "full" or s.get("rows") != want_rows or s.get("cols") != 10:
            problems.append(f"sheet {json.dumps(s, ensure_ascii=False)} (wanted rows={want_rows}, "
                            f"cols=10, read=full)")
    if env.get("truncated"):
        problems.append(f"truncated=true, next={json.dumps(env.get('next'), ensure_ascii=False)}")
    text = env.get("text", "")
    marker = "--- Sheet: "
    at = text.find(marker)
    if at < 0:
        problems.append("no `--- Sheet:` heading in the text")
    else:
        body = text[at:].split("\n")[1:]
        if body and body[-1] == "":
            body.pop()
        ids = []
        for line in body[1:]:  # after the header row
            head = line.split("\t", 1)[0]
            ids.append(int(head) if head.isdigit() else None)
        if ids != list(range(1, data_rows + 1)):
            got = sum(1 for x in ids if x is not None)
            last = next((x for x in reversed(ids) if x is not None), None)
            problems.append(f"text holds {len(body)} lines after the heading, {got} with a row "
                            f"id (last id {last}); wanted ids 1..{data_rows} in order")
    if not problems:
        return None
    extra = {k: env.get(k) for k in ("char_count", "truncated", "next", "warnings")}
    extra["text_chars"] = len(text)
    return "; ".join(problems) + f" | envelope: {json.dumps(extra, ensure_ascii=False)}"


class DocreaderCsv(Tool):
    def __init__(self, binary, expect, max_chars, name, check=True):
        self.binary, self.expect, self.max_chars, self.name = binary, expect, max_chars, name
        self.check = check
        self.diagnostic = not check

    def run(self, path, workdir):
        wall, rss, out = run_child([self.binary, "read", "--json", path, "--max-chars", str(self.max_chars)],
                                   workdir)
        env, size = read_envelope(out)
        err = envelope_error(env)
        if err:
            raise Failed(f"docreader answered {err}")
        note = check_csv_text(env, self.expect) if self.check else None
        return Sample(wall, rss, env.get("elapsed_ms", 0) / 1000.0, None, size, note)


def check_csv_text(env, expect):
    """expect: (decoded length in characters, sha256 of the decoded text)."""
    chars, digest = expect
    text = env.get("text", "")
    problems = []
    if env.get("char_count") != chars:
        problems.append(f"char_count {env.get('char_count')} != decoded length {chars}")
    if env.get("truncated"):
        problems.append(f"truncated=true, next={json.dumps(env.get('next'))}")
    if len(text) != chars:
        problems.append(f"text has {len(text)} characters, the file decodes to {chars}")
    elif hashlib.sha256(text.encode("utf-8")).hexdigest() != digest:
        problems.append("text differs from the decoded file")
    if not problems:
        return None
    extra = {k: env.get(k) for k in ("char_count", "truncated", "next", "warnings",
                                     "total_lines", "encoding")}
    return "; ".join(problems) + f" | envelope: {json.dumps(extra)}"


class PythonTool(Tool):
    def __init__(self, name, code, check, floor=False):
        self.name, self.code, self.check_fn, self.floor = name, code, check, floor

    def run(self, path, workdir):
        wall, rss, out = run_child([sys.executable, "-c", self.code, path], workdir)
        with open(out, encoding="utf-8") as f:
            r = json.loads(f.read().strip().splitlines()[-1])
        s = Sample(wall, rss, r["core_s"], None, None, self.check_fn(r))
        s.load = r.get("load_s")
        return s


# --------------------------------------------------------------------------- measuring


class Row:
    def __init__(self, task, tool):
        self.task, self.tool = task, tool
        self.samples, self.error, self.notes = [], None, []

    @property
    def ok(self):
        return self.error is None and self.samples

    def median(self, attr):
        vals = [getattr(s, attr) for s in self.samples if getattr(s, attr) is not None]
        return statistics.median(vals) if vals else None

    def peak_rss_kib(self):
        vals = [s.rss_kib for s in self.samples if s.rss_kib is not None]
        return max(vals) if vals else None


def cpu_snapshot():
    """(machine busy seconds, machine total seconds, our children's CPU seconds)."""
    import resource
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    tick = os.sysconf("SC_CLK_TCK")
    total = sum(v[:8]) / tick  # guest time is already counted in user
    idle = (v[3] + v[4]) / tick
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    me = resource.getrusage(resource.RUSAGE_SELF)
    return total - idle, total, ru.ru_utime + ru.ru_stime + me.ru_utime + me.ru_stime


def measure(task, tools, path, runs, warmup, workdir, log):
    rows = [Row(task, t) for t in tools]
    for rnd in range(warmup + runs):
        timed = rnd >= warmup
        for row in rows:
            if row.error:
                continue
            try:
                s = row.tool.run(path, workdir)
            except Failed as e:
                row.error = str(e)
                log(f"  {row.tool.name}: FAILED: {e}")
                continue
            if s.note and s.note not in row.notes:
                row.notes.append(s.note)
            if timed:
                row.samples.append(s)
            log(f"  {'run' if timed else 'warm-up'} {rnd - warmup + 1 if timed else rnd + 1}: "
                f"{row.tool.name}: {s.wall:.3f} s, peak RSS "
                f"{'?' if s.rss_kib is None else f'{s.rss_kib * 1024 / MB:.0f} MB'}")
    return rows


# --------------------------------------------------------------------------- report


def machine():
    model = ""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
        for line in out.splitlines():
            if line.strip().startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
                break
    except (OSError, subprocess.SubprocessError):
        pass
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            mem = f"{int(f.readline().split()[1]) / 1024 / 1024:.1f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    return f"nproc {os.cpu_count()}, {model or platform.processor()}, {mem}, Linux {platform.release()}"


def fmt_s(row):
    if not row.samples:
        return "—"
    walls = [s.wall for s in row.samples]
    med = statistics.median(walls)
    return f"{med:.3f} ({min(walls):.3f}–{max(walls):.3f})"


def table(rows, sizes, units):
    lines = ["| task | tool | seconds, median (min–max) | throughput | peak RSS MB | "
             "docreader speed ÷ tool | notes |",
             "|---|---|---|---|---|---|---|"]
    by_task = {}
    for r in rows:
        by_task.setdefault(r.task, []).append(r)
    for task, trs in by_task.items():
        ref = next((r for r in trs if isinstance(r.tool, (DocreaderXlsx, DocreaderCsv))
                    and not r.tool.diagnostic), None)
        ref_t = ref.median("wall") if ref and ref.ok else None
        for r in trs:
            if not r.samples:
                lines.append(f"| {task} | {r.tool.name} | failed | | | | {r.error or ''} |")
                continue
            t = r.median("wall")
            size = sizes[task]
            thr = f"{size / MB / t:.1f} MB/s"
            if units.get(task):
                n, what = units[task]
                thr += f", {n / t:,.0f} {what}/s"
            rss = r.peak_rss_kib()
            rss_s = "?" if rss is None else f"{rss * 1024 / MB:.0f}"
            if r is ref:
                ratio = "1.00 (reference)"
            elif ref_t:
                ratio = f"{t / ref_t:.2f}"
            else:
                ratio = "—"
            notes = []
            core = r.median("core")
            if isinstance(r.tool, (DocreaderXlsx, DocreaderCsv)):
                notes.append(f"`{' '.join(docreader_args(r.tool))}`")
                if core is not None:
                    notes.append(f"extraction (`elapsed_ms`) {core:.3f} s")
                jb = r.median("json_bytes")
                if jb is not None:
                    notes.append(f"envelope {jb / MB:.1f} MB")
            elif core is not None:
                load = r.median("load")
                notes.append(f"in-process {core:.3f} s"
                             + (f" (open + parse {load:.3f} s, to_python {core - load:.3f} s)"
                                if load is not None else ""))
            if r.tool.diagnostic:
                notes.append("diagnostic, no goal")
            if r.tool.floor:
                notes.append("floor, no goal")
            if r.error:
                notes.append(f"FAILED in a later run: {r.error}")
            for n in r.notes:
                notes.append(f"**INCOMPLETE**: {n}")
            lines.append(f"| {task} | {r.tool.name} | {fmt_s(r)} | {thr} | {rss_s} | {ratio} | "
                         f"{'; '.join(notes).replace('|', '/')} |")
    return "\n".join(lines)


def docreader_args(tool):
    if isinstance(tool, DocreaderXlsx):
        return ["read", "--json", "FILE", *tool.args]
    return ["read", "--json", "FILE", "--max-chars", str(tool.max_chars)]


def goals(rows, sizes):
    out = []
    by_task = {}
    for r in rows:
        by_task.setdefault(r.task, []).append(r)
    for task, trs in by_task.items():
        ref = next((r for r in trs if isinstance(r.tool, (DocreaderXlsx, DocreaderCsv))
                    and not r.tool.diagnostic), None)
        if not ref or not ref.ok:
            out.append(f"- {task}: docreader failed ({ref.error if ref else 'no row'}), no goal can be judged")
            continue
        if ref.notes:
            out.append(f"- {task}: docreader did not return the whole input, so its numbers "
                       f"are for a partial read: {'; '.join(ref.notes)}")
        t_ref = ref.median("wall")
        for r in trs:
            if r is ref or r.tool.diagnostic:
                continue
            if not r.samples:
                out.append(f"- {task}: vs {r.tool.name}: no numbers ({r.error})")
                continue
            ratio = r.median("wall") / t_ref
            if r.tool.floor:
                out.append(f"- {task}: docreader is {ratio:.2f}x the speed of {r.tool.name} "
                           f"({t_ref:.3f} s vs {r.median('wall'):.3f} s), for information: "
                           f"a floor, not a peer")
                continue
            verdict = "met" if ratio >= SPEED_GOAL else "NOT met"
            out.append(f"- {task}: speed vs {r.tool.name}: docreader {t_ref:.3f} s vs "
                       f"{r.median('wall'):.3f} s = **{ratio:.2f}x** (goal ≥ {SPEED_GOAL}x): **{verdict}**")
        rss = ref.peak_rss_kib()
        if rss is None:
            out.append(f"- {task}: peak RSS unknown (GNU time missing)")
        else:
            limit = rss_goal_bytes(sizes[task])
            verdict = "met" if rss * 1024 <= limit else "NOT met"
            out.append(f"- {task}: docreader peak RSS {rss * 1024 / MB:.0f} MB vs {RSS_GOAL} = "
                       f"{limit / MB:.0f} MB (file {sizes[task] / MB:.1f} MB; "
                       f"{rss * 1024 / sizes[task]:.1f}x the file): **{verdict}**")
    return "\n".join(out)


# --------------------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.environ.get("DOCREADER_BIN", "target/release/docreader"))
    ap.add_argument("--xlsx-rows", type=int, default=100_000, help="data rows (plus a header row)")
    ap.add_argument("--csv-bytes", type=int, default=50_000_000, help="CSV size (≤ this many bytes)")
    ap.add_argument("--csv-max-chars", type=int, default=100_000_000,
                    help="max_chars asked of docreader for the CSV (falls back to its maximum, "
                         f"{MAX_CHARS_CAP}, when refused)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--tasks", default="xlsx,csv")
    ap.add_argument("--no-diagnostics", action="store_true",
                    help="skip the docreader rows with a small max_chars")
    ap.add_argument("--out", help="keep the generated files here (reused when present)")
    ap.add_argument("--json", help="write the numbers here too")
    args = ap.parse_args()

    binary = args.bin if os.path.isabs(args.bin) else os.path.join(ROOT, args.bin)
    if not os.access(binary, os.X_OK):
        print(f"bench-office: no docreader binary at {binary}", file=sys.stderr)
        return 2
    tasks = [t.strip() for t in args.tasks.split(",") if t.strip()]

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    workdir = args.out or tempfile.mkdtemp(prefix="bench-office-")
    os.makedirs(workdir, exist_ok=True)
    try:
        versions = json.loads(subprocess.run([sys.executable, "-c", VERSIONS_CHILD],
                                             capture_output=True, text=True).stdout or "{}")
        ver = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip()
        load = os.getloadavg()
        started = datetime.datetime.now().astimezone()
        header = [
            "# Office and CSV benchmark",
            "",
            f"- date: {started.strftime('%Y-%m-%d %H:%M %Z')}",
            f"- machine: {machine()}",
            f"- load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
            + ("  **(high: another job is running; numbers are skewed)**"
               if load[0] > 0.5 * (os.cpu_count() or 1) else ""),
            f"- docreader: {binary} ({ver or '?'}, built "
            f"{datetime.datetime.fromtimestamp(os.path.getmtime(binary)).strftime('%Y-%m-%d %H:%M')})",
            f"- Python {platform.python_version()}, python-calamine {versions.get('python-calamine')}, "
            f"xlsxwriter {versions.get('xlsxwriter')}",
            f"- {args.runs} timed runs per tool (median), after {args.warmup} untimed warm-up "
            f"round(s); every run a fresh process; peak RSS = max over the timed runs of GNU time `%M`"
            + ("" if GNU_TIME else " (**GNU time missing: no RSS**)"),
        ]
        rows, sizes, units, inputs = [], {}, {}, []
        others = []  # (busy s, total s, ours s) per measured task
        exit_status = 0

        if "xlsx" in tasks:
            task = f"xlsx {args.xlsx_rows:,} rows × 10 cols"
            path = os.path.join(workdir, f"orders-{args.xlsx_rows}.xlsx")
            if not os.path.exists(path):
                log(f"generating {path} …")
                t0 = time.perf_counter()
                try:
                    make_xlsx(path, args.xlsx_rows)
                except ImportError as e:
                    print(f"bench-office: cannot generate the workbook ({e}); "
                          f"install xlsxwriter (pip) or run with --tasks csv", file=sys.stderr)
                    return 2
                log(f"  {time.perf_counter() - t0:.1f} s")
            sizes[task] = os.path.getsize(path)
            units[task] = (args.xlsx_rows, "rows")
            inputs.append(f"- xlsx: {args.xlsx_rows:,} data rows + a header row × 10 columns "
                          f"(ints, floats, dates, date-times, booleans, 500 repeated names, a unique "
                          f"note per row; shared strings), written by xlsxwriter: "
                          f"{sizes[task] / MB:.1f} MB")
            expect_rows = args.xlsx_rows + 1

            def calamine_check(r):
                if r["rows"] != expect_rows:
                    return f"python-calamine returned {r['rows']} rows, wanted {expect_rows}"
                return None

            tools = [DocreaderXlsx(binary, args.xlsx_rows,
                                   ["--max-cells", "1000000000", "--max-chars", "50000000"],
                                   "docreader CLI")]
            if not args.no_diagnostics:
                # Where the time goes: a tiny output (the workbook is still loaded, checked,
                # and every row rendered once to count char_count), and a one-row window
                # (loaded and checked, one row rendered).
                tools.append(DocreaderXlsx(binary, args.xlsx_rows,
                                           ["--max-cells", "1000000000", "--max-chars", "1000"],
                                           "docreader CLI, --max-chars 1000", check=False))
                tools.append(DocreaderXlsx(binary, args.xlsx_rows, ["--range", "A1:J1"],
                                           "docreader CLI, --range A1:J1", check=False))
            tools.append(PythonTool("python-calamine to_python()", CALAMINE_CHILD, calamine_check))
            log(f"measuring {task}")
            c0 = cpu_snapshot()
            rows += measure(task, tools, path, args.runs, args.warmup, workdir, log)
            others.append((c0, cpu_snapshot()))

        if "csv" in tasks:
            path = os.path.join(workdir, f"orders-{args.csv_bytes}.csv")
            if not os.path.exists(path):
                log(f"generating {path} …")
                t0 = time.perf_counter()
                make_csv(path, args.csv_bytes)
                log(f"  {time.perf_counter() - t0:.1f} s")
            size = os.path.getsize(path)
            with open(path, encoding="utf-8", newline="") as f:
                decoded = f.read()
            chars = len(decoded)
            digest = hashlib.sha256(decoded.encode("utf-8")).hexdigest()
            with open(path, newline="", encoding="utf-8") as f:
                csv_rows = sum(1 for _ in csv.reader(f))
            del decoded
            task = f"csv {size / MB:.0f} MB"
            sizes[task] = size
            units[task] = (csv_rows, "rows")
            inputs.append(f"- csv: {csv_rows:,} rows (header included) × 10 columns, RFC 4180 "
                          f"(CRLF, quoted fields, some line breaks inside quotes, non-ASCII names "
                          f"and cities): {size:,} bytes, {chars:,} characters")

            # docreader caps max_chars: ask for what the issue asks, say what it answered.
            max_chars = args.csv_max_chars
            try:
                _, _, out = run_child([binary, "read", "--json", path, "--max-chars", str(max_chars)], workdir)
                env, _ = read_envelope(out)
                err = envelope_error(env)
            except Failed as e:
                err = str(e)
            if err:
                inputs.append(f"- docreader refused `--max-chars {max_chars}`: {err}; the CSV rows "
                              f"use `--max-chars {MAX_CHARS_CAP}` (its maximum; the file has "
                              f"{chars:,} characters, so it still fits in one envelope)")
                max_chars = MAX_CHARS_CAP

            def csv_check(r):
                if r["rows"] != csv_rows:
                    return f"csv.reader saw {r['rows']} rows, wanted {csv_rows}"
                return None

            def read_check(r):
                return None  # newline translation: \r\n reads as \n, so fewer characters

            tools = [DocreaderCsv(binary, (chars, digest), max_chars, "docreader CLI")]
            if not args.no_diagnostics:
                tools.append(DocreaderCsv(binary, None, 1000, "docreader CLI, --max-chars 1000",
                                          check=False))
            tools.append(PythonTool("Python csv.reader, every row", CSV_CHILD, csv_check))
            tools.append(PythonTool("Python open().read()", READ_CHILD, read_check, floor=True))
            log(f"measuring {task}")
            c0 = cpu_snapshot()
            rows += measure(task, tools, path, args.runs, args.warmup, workdir, log)
            others.append((c0, cpu_snapshot()))

        if others:
            busy = sum(b[0] - a[0] for a, b in others)
            total = sum(b[1] - a[1] for a, b in others)
            ours = sum(b[2] - a[2] for a, b in others)
            other = max(0.0, busy - ours) / total if total else 0.0
            header.append(f"- CPU used by other processes while measuring: {other:.0%} of the machine "
                          f"({os.cpu_count()} CPUs)"
                          + ("  **(contended: numbers are skewed)**" if other > 0.1 else ""))

        for r in rows:
            if isinstance(r.tool, (DocreaderXlsx, DocreaderCsv)) and (r.error or r.notes) \
                    and not r.tool.diagnostic:
                exit_status = 1

        report = "\n".join(header + ["", "Inputs:", ""] + inputs + ["", table(rows, sizes, units),
                                                                    "", "Goals:", "",
                                                                    goals(rows, sizes)])
        print(report)
        if args.json:
            data = {
                "date": started.isoformat(), "machine": machine(), "binary": binary,
                "versions": versions, "sizes": sizes,
                "rows": [{
                    "task": r.task, "tool": r.tool.name, "error": r.error, "notes": r.notes,
                    "wall_s": [s.wall for s in r.samples],
                    "core_s": [s.core for s in r.samples],
                    "load_s": [s.load for s in r.samples],
                    "peak_rss_kib": [s.rss_kib for s in r.samples],
                    "envelope_bytes": [s.json_bytes for s in r.samples],
                } for r in rows],
            }
            with open(args.json, "w") as f:
                json.dump(data, f, indent=1)
        return exit_status
    finally:
        if not args.out:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
