"""Markdown quality: docreader's `output: "markdown"` against Microsoft's markitdown, both
scored against docling's groundtruth Markdown (its test data: Word, PowerPoint, workbooks,
HTML and CSV files, each with the Markdown docling makes of it).

Inputs: `--docling DIR`, a checkout (or export) of github.com/docling-project/docling, or
its tests/data folder. Every `tests/data/<fmt>/groundtruth/<name>.md` of the five formats
is paired with its input `tests/data/<fmt>/<name>` (or `<fmt>/sources/<name>`, where newer
docling keeps them); a groundtruth without its input, or an input without its groundtruth,
is skipped and listed in the report. Nothing is downloaded.

For each file:
  - docreader: one `docreader serve --workers 1` for the run; `POST /upload` (untimed),
    then `POST /read` with `output: "markdown"`, `max_chars` 50,000,000 and the format's own
    budget raised so the whole document comes back in one read (docx `max_paragraphs`,
    xlsx/xlsm `max_cells`, csv and html `limit`). Should the answer still carry `next`, the
    script reads on (`next`'s fields over the request's options) and joins the texts, so
    the whole document is always scored; the per-file table then says how many reads it
    took (a workbook's continued reads each start with the sheet overview again). Timed:
    the reads (wall, client side).
    `--output text` leaves `output` out: docreader's plain text, to try the script on a
    binary that has no Markdown output yet (not a measurement).
  - markitdown 0.1.9, in-process: `MarkItDown(enable_plugins=False).convert(path)
    .text_content`, timed around the call (the converter is built once, untimed).
A tool that fails on a file (an error envelope, an exception) scores 0 on it, and the
failure is shown in the per-file table.

Score: both texts and the groundtruth are normalised (HTML comments such as docling's
`<!-- image -->` removed; a table's separator row, `| --- | :-: |`, written `|-|-|` so dash
counts and alignment colons do not matter; every whitespace run made one space; stripped),
then similarity = 1 - Levenshtein(a, b) / max(len(a), len(b)) (rapidfuzz's
`Levenshtein.normalized_similarity`; 1.0 is identical).

Output: Markdown on stdout (a summary per format with the goal "docreader median ≥
markitdown median", then a row per file); `--json FILE` writes every row. A missed goal
prints `NOT met`; the exit status is 1 only when the script itself failed (no data, the
server did not start).

    bash bench/markdown/run.sh --docling ../docling [--formats docx,pptx] [--json FILE]
"""
import argparse
import datetime
import importlib.metadata
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

from rapidfuzz.distance import Levenshtein

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
from benchlib import Failed, Server, brief, install_note, log, machine  # noqa: E402
from search.bench_search import request, upload  # noqa: E402

FORMATS = ["docx", "pptx", "xlsx", "html", "csv"]
# The inputs a format's folder holds (other files there, such as an HTML page's images,
# are neither paired nor listed).
EXTENSIONS = {"docx": (".docx",), "pptx": (".pptx",), "xlsx": (".xlsx", ".xlsm"),
              "html": (".html", ".htm"), "csv": (".csv",)}
MAX_CHARS = 50_000_000  # the largest max_chars docreader accepts
# Per format, the budget that would otherwise cut a document (pptx has none but max_chars).
BUDGET = {"docx": {"max_paragraphs": 1_000_000}, "pptx": {}, "xlsx": {"max_cells": 10_000_000},
          "html": {"limit": 10_000_000}, "csv": {"limit": 10_000_000}}
# Where a read starts and how far it goes: a continuation takes these from `next` only.
POSITIONS = {"offset", "limit", "byte_offset", "byte_length", "paragraph_offset", "pages", "range",
             "sheet", "chapters"}
MAX_READS = 1000  # reads per file at most, following `next`
TRUNCATION_LINE = "\n... (truncated, total "  # how the closing line of a cut text starts


# --------------------------------------------------------------------------- inputs


def data_dir(docling):
    """tests/data of a docling checkout (or the folder itself when it is tests/data)."""
    for d in (os.path.join(docling, "tests", "data"), docling):
        if any(os.path.isdir(os.path.join(d, f, "groundtruth")) for f in FORMATS):
            return d
    raise Failed(f"{docling} holds no docling test data (no tests/data/<fmt>/groundtruth): "
                 "pass a checkout of https://github.com/docling-project/docling")


def docling_commit(docling, data):
    """The checkout's commit, or "export" when `docling` is not a git checkout of that data
    (an export, or a folder inside some other repository)."""
    def git(*argv):
        try:
            p = subprocess.run(["git", "-C", docling, *argv], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return ""
        return p.stdout.strip() if p.returncode == 0 else ""
    top = git("rev-parse", "--show-toplevel")
    tests_data = os.path.join(top, "tests", "data")
    if top and os.path.isdir(tests_data) and os.path.samefile(tests_data, data):
        return git("rev-parse", "HEAD") or "export"
    return "export"


def pairs(data, formats):
    """([(fmt, name, input path, groundtruth path)], [(fmt, name, why skipped)])."""
    found, skipped = [], []
    for fmt in formats:
        gt_dir = os.path.join(data, fmt, "groundtruth")
        if not os.path.isdir(gt_dir):
            skipped.append((fmt, "*", f"no {fmt}/groundtruth folder"))
            continue
        gts = sorted(f[:-3] for f in os.listdir(gt_dir) if f.endswith(".md"))
        inputs = {}  # name -> path; `<fmt>/<name>` wins over `<fmt>/sources/<name>`
        for sub in ("sources", ""):
            d = os.path.join(data, fmt, sub)
            if os.path.isdir(d):
                for f in os.listdir(d):
                    if f.lower().endswith(EXTENSIONS[fmt]) and os.path.isfile(os.path.join(d, f)):
                        inputs[f] = os.path.join(d, f)
        for name in gts:
            if name in inputs:
                found.append((fmt, name, inputs[name], os.path.join(gt_dir, name + ".md")))
            else:
                skipped.append((fmt, name, "groundtruth without its input"))
        for name in sorted(set(inputs) - set(gts)):
            skipped.append((fmt, name, "input without groundtruth"))
    return found, skipped


# --------------------------------------------------------------------------- scoring

COMMENT = re.compile(r"<!--.*?-->", re.S)
# A table's separator row: cells of dashes with optional alignment colons, at least one pipe.
SEPARATOR = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")


def normalise(md):
    md = COMMENT.sub(" ", md)
    lines = []
    for line in md.splitlines():
        if "|" in line and SEPARATOR.match(line):
            cells = [c for c in line.strip().strip("|").split("|")]
            line = "|" + "-|" * len(cells)
        lines.append(line)
    return " ".join(" ".join(lines).split())


def score(text, truth):
    return Levenshtein.normalized_similarity(normalise(text), normalise(truth))


# --------------------------------------------------------------------------- tools


class ReadError(Failed):
    """docreader answered an error envelope: `code` is its error code."""

    def __init__(self, code, message):
        super().__init__(f"{code}: {message}")
        self.code = code


def error_of(js):
    """The ReadError of an error answer (`{"status":"error","error":{code, message}}`), else None."""
    if not isinstance(js, dict):
        return ReadError("not_json", brief(js, 120))
    if js.get("status") != "error":
        return None
    err = js.get("error") if isinstance(js.get("error"), dict) else js
    return ReadError(err.get("code", "?"), brief(err.get("message", ""), 160))


def docreader_read(srv, fmt, path, output):
    """(markdown, seconds, reads); raises ReadError on an error answer, Failed when the
    upload is refused or `next` does not end.

    One read should return the whole document; should it not, the script reads on with
    `next` over the first read's options (as the API says), but for the positions: those
    come from `next` alone (`limit` or an `offset` would clash with a `byte_offset` it
    carries), and joins the texts, each without its closing `... (truncated, …)` line."""
    with open(path, "rb") as f:
        fid = upload(srv.port, os.path.basename(path), f.read())
    if fid is None:
        raise Failed(f"upload refused: {srv.log_tail()}")
    body = {"file_id": fid, "max_chars": MAX_CHARS, **BUDGET[fmt]}
    if output != "text":
        body["output"] = output
    texts, seen, elapsed = [], set(), 0.0
    while True:
        t = time.perf_counter()
        status, js = request(srv.port, "POST", "/read", json.dumps(body), {"Content-Type": "application/json"})
        elapsed += time.perf_counter() - t
        err = error_of(js)
        if err or status != 200:
            raise err or ReadError(f"http_{status}", brief(json.dumps(js), 160))
        text = js.get("text") or ""
        if js.get("truncated") and TRUNCATION_LINE in text:
            text = text[:text.rindex(TRUNCATION_LINE)]
        nxt = js.get("next")
        # `next` with a budget: not even one block (slide, paragraph…) fit, and what came back
        # is its start; the next read returns that block whole.
        if not (nxt and "max_chars" in nxt):
            texts.append(text)
        if not nxt:
            return "".join(texts), elapsed, len(seen) + 1
        key = json.dumps(nxt, sort_keys=True)
        if key in seen or len(seen) + 1 >= MAX_READS:
            raise Failed(f"`next` does not end after {len(seen) + 1} reads: {brief(key, 160)}")
        seen.add(key)
        body = {k: v for k, v in body.items() if k not in POSITIONS}
        body.update(nxt)


class MarkItDownTool:
    def __init__(self):
        self.version, self.error = None, None
        try:
            from markitdown import MarkItDown
            self.md = MarkItDown(enable_plugins=False)
            self.version = importlib.metadata.version("markitdown")
        except Exception as e:  # not installed, or it does not start: every row says why
            note = install_note("markitdown")
            self.error = f"not available: {note or brief(repr(e), 160)}"

    def convert(self, path):
        if self.error:
            raise Failed(self.error)
        t = time.perf_counter()
        text = self.md.convert(path).text_content
        return text, time.perf_counter() - t


# --------------------------------------------------------------------------- report


def fmt_score(v):
    return "—" if v is None else f"{v:.3f}"


def fmt_ms(v):
    if v is None:
        return "—"
    return f"{v * 1000:.1f}" if v < 0.01 else f"{v * 1000:.0f}"


def summary(rows):
    """One line per format, then all formats together."""
    groups = [(fmt, [r for r in rows if r["format"] == fmt]) for fmt in FORMATS]
    groups = [(f, g) for f, g in groups if g] + [("all", rows)]
    out = ["| format | files | docreader median | markitdown median | docreader mean | markitdown mean "
           "| failed: docreader / markitdown | median ms: docreader / markitdown "
           "| goal: docreader median ≥ markitdown median |",
           "|---|--:|--:|--:|--:|--:|--:|--:|---|"]
    for fmt, g in groups:
        d = [r["docreader"]["score"] for r in g]
        m = [r["markitdown"]["score"] for r in g]
        dt = [r["docreader"]["seconds"] for r in g if r["docreader"]["seconds"] is not None]
        mt = [r["markitdown"]["seconds"] for r in g if r["markitdown"]["seconds"] is not None]
        dmed, mmed = statistics.median(d), statistics.median(m)
        out.append(f"| {fmt} | {len(g)} | {dmed:.3f} | {mmed:.3f} | {statistics.mean(d):.3f} | "
                   f"{statistics.mean(m):.3f} | {sum(1 for r in g if r['docreader']['error'])} / "
                   f"{sum(1 for r in g if r['markitdown']['error'])} | "
                   f"{fmt_ms(statistics.median(dt) if dt else None)} / {fmt_ms(statistics.median(mt) if mt else None)} | "
                   f"{'met' if dmed >= mmed else 'NOT met'} |")
    return out


def per_file(rows):
    out = ["| format | file | docreader | markitdown | ms: docreader / markitdown | failures, notes |",
           "|---|---|--:|--:|--:|---|"]
    for r in rows:
        d, m = r["docreader"], r["markitdown"]
        notes = [f"{tool}: {x['error']}" for tool, x in (("docreader", d), ("markitdown", m)) if x["error"]]
        if (d.get("reads") or 1) > 1:
            notes.insert(0, f"docreader: {d['reads']} reads (followed `next`)")
        fails = "; ".join(notes).replace("|", "\\|")  # a pipe would end the table cell
        out.append(f"| {r['format']} | {r['file']} | {fmt_score(d['score'])} | {fmt_score(m['score'])} | "
                   f"{fmt_ms(d['seconds'])} / {fmt_ms(m['seconds'])} | {fails} |")
    return out


# --------------------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True, help="the docreader binary (relative paths from the repo root)")
    ap.add_argument("--docling", required=True,
                    help="a checkout of https://github.com/docling-project/docling (or its tests/data)")
    ap.add_argument("--formats", default=",".join(FORMATS), help=f"comma-separated, of {','.join(FORMATS)}")
    ap.add_argument("--output", default="markdown", choices=["markdown", "text"],
                    help="docreader's output option; `text` leaves it out (docreader's plain text)")
    ap.add_argument("--out", help="keep each tool's text and the server log in this folder")
    ap.add_argument("--json", help="write every row as JSON to this file")
    args = ap.parse_args()
    started = time.perf_counter()
    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        raise Failed(f"--formats: unknown {','.join(unknown) or '(none)'}; known: {','.join(FORMATS)}")
    binary = os.path.abspath(os.path.join(ROOT, args.bin))
    docling = os.path.abspath(args.docling)
    data = data_dir(docling)
    commit = docling_commit(docling, data)
    found, skipped = pairs(data, formats)
    if not found:
        raise Failed(f"no input with its groundtruth under {data} for {','.join(formats)}")
    log(f"machine: {machine()}; {len(found)} files, {len(skipped)} skipped; docling {commit}")

    mid = MarkItDownTool()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-markdown-") as tmp:
        work = os.path.abspath(args.out) if args.out else tmp
        os.makedirs(work, exist_ok=True)
        srv = Server(binary, os.path.join(work, "data"), os.path.join(work, "serve.log"), 1).start()
        try:
            for fmt, name, path, gt in found:
                with open(gt, encoding="utf-8") as f:
                    truth = f.read()
                row = {"format": fmt, "file": name, "input": os.path.relpath(path, data)}
                for tool in ("docreader", "markitdown"):
                    res = {"score": 0.0, "seconds": None, "chars": None, "error": None, "code": None}
                    try:
                        if tool == "docreader":
                            text, secs, reads = docreader_read(srv, fmt, path, args.output)
                            res["reads"] = reads
                        else:
                            text, secs = mid.convert(path)
                        res.update(score=score(text, truth), seconds=secs, chars=len(text))
                        if args.out:
                            with open(os.path.join(work, f"{fmt}-{name}.{tool}.md"), "w", encoding="utf-8") as f:
                                f.write(text)
                    except Failed as e:
                        res["error"], res["code"] = str(e), getattr(e, "code", None)
                    except Exception as e:  # a tool's crash on one file is that file's failure
                        res["error"] = brief(f"{type(e).__name__}: {e}", 200)
                    row[tool] = res
                rows.append(row)
                log(f"{fmt}/{name}: docreader {fmt_score(row['docreader']['score'])}"
                    f"{' (' + row['docreader']['error'] + ')' if row['docreader']['error'] else ''}, "
                    f"markitdown {fmt_score(row['markitdown']['score'])}"
                    f"{' (' + row['markitdown']['error'] + ')' if row['markitdown']['error'] else ''}")
        finally:
            srv.stop()

    cmd = shlex.join([os.path.relpath(os.path.abspath(sys.argv[0]), ROOT)] + sys.argv[1:])
    print("# Markdown quality: docreader and markitdown against docling's groundtruth\n")
    print(f"- machine: {machine()}")
    print(f"- date: {datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}")
    print(f"- docling: {commit}")
    print(f"- docreader: `{args.bin}`, output `{args.output}`"
          + (" (the `output` option left out: plain text, a try-out of the script, not a measurement)"
             if args.output == "text" else ""))
    print(f"- markitdown: {mid.version or mid.error}")
    print(f"- command: `{cmd}`")
    print("- score: 1 − Levenshtein ÷ longer length, after normalising (HTML comments out, table "
          "separator rows as `|-|`, whitespace runs as one space); a failure scores 0")
    print(f"- run time: {time.perf_counter() - started:.0f} s\n")
    print("\n".join(summary(rows)))
    print()
    print("\n".join(per_file(rows)))
    if skipped:
        print(f"\nSkipped ({len(skipped)}):\n")
        for fmt, name, why in skipped:
            print(f"- {fmt}/{name}: {why}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"docling": commit, "output": args.output, "markitdown": mid.version,
                       "rows": rows, "skipped": [dict(zip(("format", "file", "why"), s)) for s in skipped]},
                      f, indent=1, ensure_ascii=False)


if __name__ == "__main__":
    try:
        main()
    except Failed as e:
        log(f"bench-markdown: {e}")
        sys.exit(1)
