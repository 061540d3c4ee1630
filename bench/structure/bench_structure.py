"""PDF structure: docreader's Markdown of a PDF against pymupdf4llm, markitdown and docling-rs
(its text-layer mode), side by side, scored on tables, headings, reading order and running
headers/footers, with the time each takes (issue #44).

Corpora (nothing is downloaded; each is a checkout or export passed as an argument):
  (a) docling  `--docling DIR`: docling's PDF test files and the Markdown docling made of
      them: `tests/data/pdf/sources/<name>.pdf` with `tests/data/pdf/groundtruth/<name>.md`
      (newer docling), or `tests/data/pdf/<name>.pdf` with
      `tests/data/groundtruth/docling_v2/<name>.md` (older).
  (b) markitdown  `--markitdown DIR`: the PDFs of packages/markitdown/tests/test_files with
      the Markdown markitdown's tests expect (test_files/expected_outputs/<name>.md, which is
      markitdown's own output, so it scores itself near 1 by construction; an empty one, the
      scan's, is not scored), and the
      assertions of its tests/test_pdf_tables.py run on every tool's output (see CHECKS).
  (c) scanned  `--docling DIR` as well: the PDFs of docling's tests/data/ocr/sources with the
      Markdown of its full-page OCR groundtruth (engine, first found: tesseract, rapidocr,
      easyocr, ocrmac, nemotron_ocr), or older docling's tests/data_scanned/*.pdf with
      tests/data_scanned/groundtruth/docling_v2/<name>.md.
An input that is empty (a Git LFS pointer or a blob missing from a partial copy), or whose
groundtruth is missing, is skipped and listed.

Tools, each file converted in a fresh process (`--timeout` seconds at most):
  - docreader: `docreader read FILE --output markdown --max-chars 50000000 --json`; the text
    is the envelope's `text`; time = the process's wall time (start-up included; the
    envelope's `elapsed_ms` is kept in --json).
  - pymupdf4llm (pymupdf 2.0, which now holds pymupdf4llm; with pymupdf-layout):
    `pymupdf4llm.to_markdown(FILE)`, its defaults.
  - markitdown 0.1.9 [pdf]: `MarkItDown(enable_plugins=False).convert(FILE).text_content`.
  - docling-rs (PyPI `docling-rs`, the PyO3 wheel of docling-project/docling.rs):
    `DocumentConverter(text_layer_only=True).convert(FILE).document.export_to_markdown()`,
    the text-layer mode (its layout/table/OCR models are not fetched here).
  Python tools are timed around the call alone (import and set-up untimed).

Parsing (groundtruth and outputs alike): HTML comments, image links and docreader's page
markers (`--- Page N ---`) are dropped; the Markdown is cut into blocks: headings (`#`..
`######`: level, text), tables (GFM pipe rows, the separator row dropped, `<br>` a space; or
an HTML `<table>`, colspans and rowspans repeated), list items (one block each) and paragraphs (other
lines, joined until a blank line). Text is normalised for every comparison: NFKC, Markdown
emphasis/code marks, HTML tags and backslash escapes removed, lower case, whitespace runs
as one space.

Metrics (micro-averaged over a corpus, i.e. counts summed over files, then the ratio):
  - table cells F1: a cell is (row, column, text) for every non-empty cell. Tables of a file
    are paired greedily by the number of equal cell texts (a groundtruth table with none in
    common stays unpaired). In a pair, the predicted table is shifted by -2..2 rows and
    columns, and the shift with most matches counts: a match is an equal text at the same
    (row, column). TP = matches; precision = TP / predicted cells (all predicted tables of
    the file, paired or not), recall = TP / groundtruth cells. Only files whose
    groundtruth has a table count. `cells (text)` is the same with the positions ignored
    (multisets of cell texts): it tells "table found, grid wrong" from "no table".
  - heading F1: headings matched one to one, greedily, by equal text or rapidfuzz ratio
    >= 90. `text` counts every match; `+level` only matches whose levels are equal once
    each document's levels are shifted so its top level is 1. All files count ("—" when
    the corpus' groundtruth has no heading, as markitdown's, which never writes one).
  - reading order: groundtruth paragraphs and list items of >= 30 letters or digits, whose
    text is not repeated elsewhere in the groundtruth, are looked up
    in the tool's whole text (rapidfuzz partial_ratio_alignment >= 90). The indices of the
    found ones, in the order of where they stand in the tool's text, against the same
    indices sorted: Levenshtein distance / count (0 = same order). Summed over files
    (distance and count). `found` = share of those paragraphs found (text coverage).
  - furniture left out: from the PDF's text layer (pypdfium2), the first two and last two
    lines of each page; a line is furniture when it is a bare page number (`12`, `xi`,
    `Page 3 of 9`, `- 4 -`) or, with its digits masked, stands at the top or bottom of >= 2
    pages, and it is not in the groundtruth's text (normalised, as a substring). Each
    instance (page, line) leaks when the tool's output holds it: a bare number as a line of
    its own, other lines as a substring of the normalised whole text. Score = 1 - leaked /
    instances. Corpora without any furniture show "—".
  - text sim: 1 - Levenshtein / longer length of the normalised whole texts (tables as their
    cell texts), as bench/markdown does.
  - time: median seconds per file, and pages / second over the corpus (pages counted with
    pypdfium2).
  - markitdown checks (corpus b only): the assertions of test_pdf_tables.py, every `assert`
    rewritten to record its outcome and go on; a check is (test, line, message), except in
    test_all_pdfs_table_rows_consistent whose per-row checks count once per assert line.
    A test that raises elsewhere counts one failed check. Tests that expect a scanned PDF
    to come back empty (its names hold `scanned`/`medical_scan`) are left out: they
    penalise OCR. `tests` = tests whose every check passed.

Goals (reported, never enforced): table-cell F1 >= 0.9 and heading F1 >= 0.9 on (a),
reading-order distance <= 0.1.

Output: Markdown on stdout (a table per corpus, rows = tools; then per-file rows);
`--json FILE` writes every number; `--out DIR` keeps each tool's Markdown. Exit status 1
only when the script itself failed or no docreader row could be measured.

    bash bench/structure/run.sh --docling ../docling --markitdown ../markitdown [--per-file] [--json FILE]
"""
import argparse
import ast
import datetime
import html.parser
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
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
from benchlib import Failed, brief, install_note, log, machine  # noqa: E402

TOOLS = ["docreader", "pymupdf4llm", "markitdown", "docling-rs"]
PY_TOOLS = {"pymupdf4llm": ("pymupdf", "pymupdf"), "markitdown": ("markitdown", "markitdown"),
            "docling-rs": ("docling_rs", "docling-rs")}  # tool -> (module, distribution)
CORPORA = ["docling", "markitdown", "scanned"]
MAX_CHARS = 50_000_000
OCR_ENGINES = ["tesseract", "rapidocr", "easyocr", "ocrmac", "nemotron_ocr"]
MIN_PARA = 30       # reading order: groundtruth paragraphs shorter than this are not looked up
FOUND_SCORE = 90    # partial_ratio for a paragraph to count as found
HEADING_RATIO = 90  # fuzzy heading match
SHIFT = 2           # table alignment: rows/columns shifted by -SHIFT..SHIFT


# --------------------------------------------------------------------------- conversion
# `--convert TOOL FILE OUT`: one file, in this (fresh) process; writes {"text", "seconds"}.


def convert_in_process(tool, path):
    if tool == "pymupdf4llm":
        import pymupdf4llm
        t = time.perf_counter()
        text = pymupdf4llm.to_markdown(path)
    elif tool == "markitdown":
        from markitdown import MarkItDown
        md = MarkItDown(enable_plugins=False)
        t = time.perf_counter()
        text = md.convert(path).text_content
    elif tool == "docling-rs":
        from docling_rs import DocumentConverter
        conv = DocumentConverter(text_layer_only=True)
        t = time.perf_counter()
        text = conv.convert(path).document.export_to_markdown()
    else:
        raise SystemExit(f"unknown tool {tool}")
    return text, time.perf_counter() - t


def convert_main(tool, path, out):
    real_stdout = os.dup(1)
    os.dup2(2, 1)  # the tools' own prints (pymupdf's messages) go to stderr
    text, secs = convert_in_process(tool, path)
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"text": text, "seconds": secs}, f)
    os.dup2(real_stdout, 1)


def run_tool(tool, path, args, tmp):
    """(text, seconds, extra) or raises Failed."""
    if tool == "docreader":
        cmd = [args.binary, "read", path, "--output", "markdown", "--max-chars", str(MAX_CHARS), "--json"]
        t = time.perf_counter()
        try:
            p = subprocess.run(cmd, capture_output=True, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            raise Failed(f"timeout after {args.timeout} s")
        secs = time.perf_counter() - t
        try:
            env = json.loads(p.stdout)
        except ValueError:
            raise Failed(f"exit {p.returncode}: {brief(p.stderr.decode(errors='replace'), 200)}")
        if env.get("status") != "ok":
            err = env.get("error") or {}
            raise Failed(f"{err.get('code', '?')}: {brief(err.get('message', ''), 160)}")
        extra = {"elapsed_ms": env.get("elapsed_ms"), "ocr_pages": env.get("ocr_pages"),
                 "truncated": env.get("truncated")}
        return env.get("text") or "", secs, extra
    out = os.path.join(tmp, "convert.json")
    if os.path.exists(out):
        os.remove(out)
    cmd = [sys.executable, os.path.abspath(__file__), "--convert", tool, path, out]
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        raise Failed(f"timeout after {args.timeout} s")
    if p.returncode != 0 or not os.path.exists(out):
        lines = [ln for ln in p.stderr.decode(errors="replace").splitlines() if ln.strip()]
        raise Failed(brief(" ".join(lines[-2:]) or f"exit {p.returncode}", 200))
    with open(out, encoding="utf-8") as f:
        r = json.load(f)
    return r["text"], r["seconds"], {}


def tool_status(tool):
    """None when the tool can run, else why not (checked once, in a subprocess)."""
    if tool == "docreader":
        return None
    module, dist = PY_TOOLS[tool]
    p = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True)
    if p.returncode == 0:
        return None
    note = install_note(module)
    last = (p.stderr.strip().splitlines() or ["?"])[-1]
    return f"not measured — {note or brief(last, 160)}"


def tool_version(tool):
    if tool == "docreader":
        return None
    try:
        return importlib.metadata.version(PY_TOOLS[tool][1])
    except importlib.metadata.PackageNotFoundError:
        return None


def page_count(path):
    try:
        import pypdfium2
        pdf = pypdfium2.PdfDocument(path)
        try:
            return len(pdf)
        finally:
            pdf.close()
    except Exception:
        return None


def page_lines(path):
    """[[line, ...] per page] of the PDF's text layer (pypdfium2), or [] when unreadable."""
    try:
        import pypdfium2
        pdf = pypdfium2.PdfDocument(path)
    except Exception:
        return []
    pages = []
    try:
        for page in pdf:
            text = page.get_textpage().get_text_range()
            pages.append([ln.strip() for ln in re.split(r"[\r\n]+", text) if ln.strip()])
    finally:
        pdf.close()
    return pages


# --------------------------------------------------------------------------- corpora


def nonempty(path):
    return os.path.isfile(path) and os.path.getsize(path) > 0


def docling_pairs(docling):
    """(found [(name, pdf, md)], skipped [(name, why)]) for corpus (a)."""
    found, skipped = [], []
    data = os.path.join(docling, "tests", "data")
    layouts = [(os.path.join(data, "pdf", "sources"), os.path.join(data, "pdf", "groundtruth")),
               (os.path.join(data, "pdf"), os.path.join(data, "groundtruth", "docling_v2"))]
    for src, gt in layouts:
        if not (os.path.isdir(src) and os.path.isdir(gt)):
            continue
        for f in sorted(os.listdir(src)):
            if not f.lower().endswith(".pdf"):
                continue
            stem = f[:-4]
            md = next((os.path.join(gt, c) for c in (stem + ".md", f + ".md")
                       if os.path.isfile(os.path.join(gt, c))), None)
            pdf = os.path.join(src, f)
            if md is None:
                skipped.append((f, "no groundtruth Markdown"))
            elif not nonempty(pdf):
                skipped.append((f, "empty file in this copy (a Git LFS pointer or a blob left out)"))
            else:
                found.append((f, pdf, md))
        if found or skipped:
            break
    return found, skipped


def scanned_pairs(docling):
    found, skipped = [], []
    ocr = os.path.join(docling, "tests", "data", "ocr")
    src = os.path.join(ocr, "sources")
    if os.path.isdir(src):
        for f in sorted(os.listdir(src)):
            if not f.lower().endswith(".pdf"):
                continue
            stem, md = f[:-4], None
            for eng in OCR_ENGINES:
                c = os.path.join(ocr, "groundtruth", eng, "full_page", f"{stem}.{eng}.full_page.md")
                if os.path.isfile(c):
                    md = c
                    break
            pdf = os.path.join(src, f)
            if md is None:
                skipped.append((f, "no full-page OCR groundtruth"))
            elif not nonempty(pdf):
                skipped.append((f, "empty file in this copy"))
            else:
                found.append((f, pdf, md))
        return found, skipped
    old = os.path.join(docling, "tests", "data_scanned")
    gt = os.path.join(old, "groundtruth", "docling_v2")
    if os.path.isdir(old):
        for f in sorted(os.listdir(old)):
            if f.lower().endswith(".pdf"):
                md = next((os.path.join(gt, c) for c in (f[:-4] + ".md", f + ".md")
                           if os.path.isfile(os.path.join(gt, c))), None)
                if md and nonempty(os.path.join(old, f)):
                    found.append((f, os.path.join(old, f), md))
                else:
                    skipped.append((f, "no groundtruth or empty file"))
    return found, skipped


def markitdown_tests_dir(markitdown):
    for d in (os.path.join(markitdown, "packages", "markitdown", "tests"), os.path.join(markitdown, "tests"),
              markitdown):
        if os.path.isdir(os.path.join(d, "test_files")):
            return d
    raise Failed(f"{markitdown} holds no packages/markitdown/tests/test_files: "
                 "pass a checkout of https://github.com/microsoft/markitdown")


def markitdown_pairs(markitdown):
    tests = markitdown_tests_dir(markitdown)
    files = os.path.join(tests, "test_files")
    exp = os.path.join(files, "expected_outputs")
    found, skipped = [], []
    for f in sorted(os.listdir(files)):
        if not f.lower().endswith(".pdf"):
            continue
        md = os.path.join(exp, f[:-4] + ".md")
        pdf = os.path.join(files, f)
        if not nonempty(pdf):
            skipped.append((f, "empty file in this copy"))
        else:  # files without expected Markdown still run: the test assertions use them
            has_md = os.path.isfile(md) and os.path.getsize(md) > 0  # MEDRPT's is empty (a scan)
            found.append((f, pdf, md if has_md else None))
    return found, skipped


# --------------------------------------------------------------------------- Markdown -> blocks

COMMENT = re.compile(r"<!--.*?-->", re.S)
IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
PAGE_MARKER = re.compile(r"^\s*--- Page \d+ ---\s*$")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
LIST_ITEM = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+(.*)$")
SEPARATOR = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")
TAG = re.compile(r"<[^>]+>")
BR = re.compile(r"<br\s*/?>", re.I)
HTML_TABLE = re.compile(r"<table\b.*?</table>", re.S | re.I)


def norm(s):
    s = unicodedata.normalize("NFKC", s)
    s = BR.sub(" ", s)
    s = TAG.sub(" ", s)
    s = re.sub(r"\\([\\`*_{}\[\]()#+\-.!|<>~])", r"\1", s)
    s = re.sub(r"[*`]+", "", s)
    s = re.sub(r"(?<!\w)_+|_+(?!\w)", "", s)  # _emphasis_, not snake_case
    return " ".join(s.lower().split())


def split_row(line):
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    return [c.strip() for c in re.split(r"(?<!\\)\|", line)]


class _TableParser(html.parser.HTMLParser):
    """An HTML table as a grid: a cell over several columns or rows is repeated in each place
    it covers (as docling's groundtruth writes spanning cells)."""

    def __init__(self):
        super().__init__()
        self.rows, self.cell, self.span, self.down = [], None, 1, 1
        self.pending = {}  # column -> (text, rows left) from a rowspan above

    def _fill(self):
        row = self.rows[-1]
        while len(row) in self.pending:
            c = len(row)
            text, left = self.pending.pop(c)
            row.append(text)
            if left > 1:
                self.pending[c] = (text, left - 1)

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            a = dict(attrs)
            self.cell, self.span, self.down = [], int(a.get("colspan") or 1), int(a.get("rowspan") or 1)
        elif tag == "br" and self.cell is not None:
            self.cell.append(" ")

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            if not self.rows:
                self.rows.append([])
            self._fill()
            text = "".join(self.cell)
            for _ in range(max(1, min(self.span, 50))):
                if self.down > 1:
                    self.pending[len(self.rows[-1])] = (text, min(self.down, 500) - 1)
                self.rows[-1].append(text)
                self._fill()
            self.cell = None
        elif tag == "tr" and self.rows:
            self._fill()

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


def html_table(src):
    p = _TableParser()
    p.feed(src)
    return [r for r in p.rows if r]


def blocks(md):
    """[("h", level, text) | ("t", rows) | ("p", text) | ("li", text)] of a Markdown text."""
    md = COMMENT.sub("\n", md or "")
    tables = []

    def keep_html_table(m):
        tables.append(html_table(m.group(0)))
        return f"\n\n\x00TABLE{len(tables) - 1}\x00\n\n"
    md = HTML_TABLE.sub(keep_html_table, md)
    md = IMAGE.sub(" ", md)
    out, para, rows, fence = [], [], [], False

    def flush():
        nonlocal para, rows
        if para:
            out.append(("p", " ".join(para)))
            para = []
        if rows:
            out.append(("t", rows))
            rows = []
    for raw in md.splitlines():
        line = raw.strip()
        if line.startswith("```") or line.startswith("~~~"):
            fence = not fence
            continue
        if fence:
            if line:
                para.append(line)
            continue
        if PAGE_MARKER.match(line):
            flush()
            continue
        if not line:
            flush()
            continue
        m = re.fullmatch(r"\x00TABLE(\d+)\x00", line)
        if m:
            flush()
            out.append(("t", tables[int(m.group(1))]))
            continue
        if line.startswith("|"):
            if para:
                out.append(("p", " ".join(para)))
                para = []
            if not SEPARATOR.match(line):
                rows.append([BR.sub(" ", c) for c in split_row(line)])
            continue
        if rows:
            out.append(("t", rows))
            rows = []
        h = HEADING.match(line)
        if h:
            flush()
            out.append(("h", len(h.group(1)), h.group(2)))
            continue
        li = LIST_ITEM.match(line)
        if li:
            flush()
            out.append(("li", li.group(1)))
            continue
        para.append(line)
    flush()
    return out


def full_text(bl):
    parts = []
    for b in bl:
        if b[0] == "t":
            parts.extend(" ".join(r) for r in b[1])
        else:
            parts.append(b[-1])
    return norm(" \n ".join(parts))


def own_lines(md):
    """The normalised lines of a Markdown text, each table cell a line too."""
    lines = set()
    for ln in (md or "").splitlines():
        lines.add(norm(ln.strip().lstrip("#")))
        if "|" in ln:
            lines.update(norm(c) for c in split_row(ln))
    return lines


# --------------------------------------------------------------------------- metrics


def cells(table):
    return [(r, c, norm(t)) for r, row in enumerate(table) for c, t in enumerate(row) if norm(t)]


def table_counts(gt_tables, pred_tables):
    """{tp, pred, gt, tp_text} for one file."""
    from collections import Counter
    g = [cells(t) for t in gt_tables]
    p = [cells(t) for t in pred_tables]
    res = {"gt": sum(map(len, g)), "pred": sum(map(len, p)), "tp": 0, "tp_text": 0}
    # text-only: multisets over the whole file
    gc = Counter(x[2] for t in g for x in t)
    pc = Counter(x[2] for t in p for x in t)
    res["tp_text"] = sum((gc & pc).values())
    # pairs, greedily by common texts
    cand = []
    for i, gt in enumerate(g):
        gtc = Counter(x[2] for x in gt)
        for j, pt in enumerate(p):
            common = sum((gtc & Counter(x[2] for x in pt)).values())
            if common:
                cand.append((common, i, j))
    used_g, used_p = set(), set()
    for _, i, j in sorted(cand, reverse=True):
        if i in used_g or j in used_p:
            continue
        used_g.add(i)
        used_p.add(j)
        gset = {(r, c, t) for r, c, t in g[i]}
        best = 0
        for dr in range(-SHIFT, SHIFT + 1):
            for dc in range(-SHIFT, SHIFT + 1):
                best = max(best, sum(1 for r, c, t in p[j] if (r + dr, c + dc, t) in gset))
        res["tp"] += best
    return res


def heading_counts(gt_h, pred_h):
    """{gt, pred, tp, tp_level}; headings are (level, text)."""
    from rapidfuzz import fuzz

    def shift(hs):
        if not hs:
            return []
        top = min(level for level, _ in hs)
        return [(level - top + 1, norm(t)) for level, t in hs]
    g, p = shift(gt_h), shift(pred_h)
    used, tp, tpl = set(), 0, 0
    for pl, pt in p:
        best = None
        for i, (gl, gt) in enumerate(g):
            if i in used:
                continue
            if gt == pt:
                best = i
                break
            if best is None and fuzz.ratio(gt, pt) >= HEADING_RATIO:
                best = i
        if best is not None:
            used.add(best)
            tp += 1
            tpl += g[best][0] == pl
    return {"gt": len(g), "pred": len(p), "tp": tp, "tp_level": tpl}


def order_counts(gt_blocks, pred_text):
    """{paras, found, dist}: groundtruth paragraphs looked up in the tool's normalised text."""
    from rapidfuzz import fuzz
    from rapidfuzz.distance import Levenshtein
    paras = [norm(b[-1]) for b in gt_blocks if b[0] in ("p", "li")]
    from collections import Counter
    twice = Counter(paras)
    paras = [p for p in paras if len(re.sub(r"\W", "", p)) >= MIN_PARA and twice[p] == 1]
    pos = []
    for i, para in enumerate(paras):
        if not pred_text:
            break
        al = fuzz.partial_ratio_alignment(para, pred_text, score_cutoff=FOUND_SCORE)
        if al is not None:
            pos.append((al.dest_start, i))
    seq = [i for _, i in sorted(pos)]
    dist = Levenshtein.distance(sorted(seq), seq) if seq else 0
    return {"paras": len(paras), "found": len(seq), "dist": dist}


BARE_NUMBER = re.compile(r"^(?:page\s+)?[-–—(\[]?\s*(\d{1,4}|[ivxlcdm]{1,7})\s*[-–—)\]]?(?:\s+of\s+\d+)?$", re.I)


def furniture(pdf_pages, gt_text):
    """[(page, line, bare)] furniture instances of a PDF (see the module's docstring)."""
    from collections import Counter
    edges = []
    for pi, lines in enumerate(pdf_pages):
        picked = lines[:2] + lines[-2:] if len(lines) > 4 else lines
        for ln in dict.fromkeys(picked):
            edges.append((pi, ln))
    masked = Counter()
    for pi, ln in set((pi, re.sub(r"\d+", "#", norm(ln))) for pi, ln in edges):
        masked[ln] += 1
    out = []
    for pi, ln in edges:
        n = norm(ln)
        if not n:
            continue
        bare = bool(BARE_NUMBER.match(n))
        repeated = masked[re.sub(r"\d+", "#", n)] >= 2 and len(n) <= 120
        if (bare or repeated) and (bare or n not in gt_text):
            out.append((pi, n, bare))
    return out


def furniture_counts(instances, pred_md, pred_text):
    lines = own_lines(pred_md)
    leaked = sum(1 for _, n, bare in instances if (n in lines if bare else n in pred_text))
    return {"instances": len(instances), "leaked": leaked}


def text_similarity(a, b):
    from rapidfuzz.distance import Levenshtein
    return Levenshtein.normalized_similarity(a, b)


# --------------------------------------------------------------------------- markitdown's checks


class _Recorder(ast.NodeTransformer):
    """`assert X, M` -> `_bench_check(lambda: X, lambda: M, LINE)`."""

    def visit_Assert(self, node):
        msg = node.msg if node.msg is not None else ast.Constant("")
        call = ast.Call(func=ast.Name("_bench_check", ast.Load()),
                        args=[ast.Lambda(ast.arguments([], [], None, [], [], None, []), node.test),
                              ast.Lambda(ast.arguments([], [], None, [], [], None, []), msg),
                              ast.Constant(node.lineno)], keywords=[])
        return ast.copy_location(ast.Expr(call), node)


class _Skip(Exception):
    pass


def _pytest_stub():
    import types
    m = types.ModuleType("pytest")
    m.fixture = lambda *a, **k: (a[0] if a and callable(a[0]) else (lambda f: f))

    def skip(msg=""):
        raise _Skip(msg)
    m.skip = skip
    m.mark = types.SimpleNamespace(parametrize=lambda *a, **k: (lambda f: f),
                                   skipif=lambda *a, **k: (lambda f: f))
    return m


EXCLUDED_TESTS = ("scanned", "medical_scan")
COLLAPSED_TESTS = ("test_all_pdfs_table_rows_consistent",)


def markitdown_checks(tests_dir, outputs):
    """{test: {"checks": {key: ok}, "error": str|None}} of test_pdf_tables.py run on `outputs`
    ({basename: markdown}); None when the file is missing."""
    import types
    path = os.path.join(tests_dir, "test_pdf_tables.py")
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as f:
        tree = _Recorder().visit(ast.parse(f.read(), path))
    ast.fix_missing_locations(tree)
    saved = sys.modules.get("pytest")
    sys.modules["pytest"] = _pytest_stub()
    current = {}

    def check(test, msg, line):
        try:
            ok = bool(test())
        except Exception:
            ok = False
        name = current["test"]
        if name in COLLAPSED_TESTS:
            key = f"line {line}"
            ok = ok and current["checks"].get(key, True)
        else:
            try:
                key = f"line {line}: {msg()}"
            except Exception:
                key = f"line {line}"
        current["checks"][key] = ok
    mod = {"__name__": "markitdown_test_pdf_tables", "__file__": path, "_bench_check": check}
    try:
        exec(compile(tree, path, "exec"), mod)
    finally:
        if saved is not None:
            sys.modules["pytest"] = saved
        else:
            sys.modules.pop("pytest", None)

    class FakeConverter:
        def convert(self, p):
            name = os.path.basename(str(p))
            if name not in outputs:
                raise Failed(f"no output for {name}")
            return types.SimpleNamespace(text_content=outputs[name], markdown=outputs[name])
    results = {}
    for cname, cls in list(mod.items()):
        if not (isinstance(cls, type) and cname.startswith("Test")):
            continue
        for tname in sorted(vars(cls)):
            if not tname.startswith("test_") or any(x in tname for x in EXCLUDED_TESTS):
                continue
            current.clear()
            current.update(test=tname, checks={})
            err = None
            try:
                getattr(cls(), tname)(FakeConverter())
            except _Skip:
                continue
            except Exception as e:
                err = brief(f"{type(e).__name__}: {e}", 160)
                current["checks"]["(raised)"] = False
            results[f"{cname}.{tname}"] = {"checks": dict(current["checks"]), "error": err}
    return results


# --------------------------------------------------------------------------- scoring a file


def score_file(truth_md, text, pdf_pages):
    gt_bl, pr_bl = blocks(truth_md), blocks(text)
    gt_text, pr_text = full_text(gt_bl), full_text(pr_bl)
    gt_tables = [b[1] for b in gt_bl if b[0] == "t"]
    pr_tables = [b[1] for b in pr_bl if b[0] == "t"]
    s = {
        "tables": table_counts(gt_tables, pr_tables) if gt_tables else None,
        "pred_tables": len(pr_tables),
        "headings": heading_counts([(b[1], b[2]) for b in gt_bl if b[0] == "h"],
                                   [(b[1], b[2]) for b in pr_bl if b[0] == "h"]),
        "order": order_counts(gt_bl, pr_text),
        "furniture": furniture_counts(furniture(pdf_pages, gt_text), text, pr_text),
        "text_sim": text_similarity(pr_text, gt_text),
    }
    return s


def f1(tp, pred, gt):
    if gt == 0:  # nothing to find: precision alone would say little
        return None
    p = tp / pred if pred else 0.0
    r = tp / gt if gt else 0.0
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


def aggregate(rows):
    """Micro sums over a corpus' rows of one tool (rows without an error)."""
    ok = [r for r in rows if r.get("score")]
    failed = sum(1 for r in rows if r.get("error"))
    sc = [r["score"] for r in ok]
    t = [s["tables"] for s in sc if s["tables"]]
    h = [s["headings"] for s in sc]
    o = [s["order"] for s in sc]
    fu = [s["furniture"] for s in sc]
    secs = [r["seconds"] for r in ok if r["seconds"] is not None]
    pages = sum(r["pages"] or 0 for r in ok if r["seconds"] is not None)
    agg = {
        "files": len(ok) + failed, "failed": failed,
        "cells_f1": f1(sum(x["tp"] for x in t), sum(x["pred"] for x in t), sum(x["gt"] for x in t)) if t else None,
        "cells_text_f1": f1(sum(x["tp_text"] for x in t), sum(x["pred"] for x in t),
                            sum(x["gt"] for x in t)) if t else None,
        "heading_f1": f1(sum(x["tp"] for x in h), sum(x["pred"] for x in h), sum(x["gt"] for x in h)),
        "heading_level_f1": f1(sum(x["tp_level"] for x in h), sum(x["pred"] for x in h),
                               sum(x["gt"] for x in h)),
        "order_dist": (sum(x["dist"] for x in o) / sum(x["found"] for x in o)) if sum(x["found"] for x in o) else None,
        "found": (sum(x["found"] for x in o) / sum(x["paras"] for x in o)) if sum(x["paras"] for x in o) else None,
        "furniture_out": (1 - sum(x["leaked"] for x in fu) / sum(x["instances"] for x in fu))
        if sum(x["instances"] for x in fu) else None,
        "furniture_instances": sum(x["instances"] for x in fu),
        "text_sim": statistics.mean(s["text_sim"] for s in sc) if sc else None,
        "median_s": statistics.median(secs) if secs else None,
        "pages_per_s": pages / sum(secs) if secs and sum(secs) > 0 else None,
    }
    return agg


# --------------------------------------------------------------------------- report


def fnum(v, d=3):
    return "—" if v is None else f"{v:.{d}f}"


def fsec(v):
    if v is None:
        return "—"
    return f"{v * 1000:.0f} ms" if v < 1 else f"{v:.2f} s"


def goal(v, target, higher=True):
    if v is None:
        return ""
    return " ✓" if (v >= target if higher else v <= target) else " ✗"


def summary_table(corpus, tools, results, status, checks):
    head = ("| tool | files (failed) | cells F1 | cells (text) F1 | heading F1 text | heading F1 +level "
            "| order dist | paragraphs found | furniture left out | text sim | median s/file | pages/s |")
    if corpus == "markitdown":
        head += " markitdown checks | tests passed |"
    out = [head, "|" + "---|" * (head.count("|") - 1)]
    for tool in tools:
        if status.get(tool):
            out.append(f"| {tool} | {status[tool]} |")
            continue
        rows = [r[tool] for r in results]
        a = aggregate(rows)
        a_goal = corpus == "docling"
        line = (f"| {tool} | {a['files']} ({a['failed']}) | {fnum(a['cells_f1'])}{goal(a['cells_f1'], 0.9) if a_goal else ''} "
                f"| {fnum(a['cells_text_f1'])} | {fnum(a['heading_f1'])}{goal(a['heading_f1'], 0.9) if a_goal else ''} "
                f"| {fnum(a['heading_level_f1'])} | {fnum(a['order_dist'])}{goal(a['order_dist'], 0.1, False)} "
                f"| {fnum(a['found'], 2)} | {fnum(a['furniture_out'], 2)} | {fnum(a['text_sim'])} "
                f"| {fsec(a['median_s'])} | {fnum(a['pages_per_s'], 1)} |")
        if corpus == "markitdown":
            c = checks.get(tool)
            if c:
                n = sum(len(v["checks"]) for v in c.values())
                okn = sum(sum(v["checks"].values()) for v in c.values())
                tp = sum(1 for v in c.values() if v["checks"] and all(v["checks"].values()))
                line += f" {okn}/{n} | {tp}/{len(c)} |"
            else:
                line += " — | — |"
        out.append(line)
    return out


def per_file_table(results, tools, status):
    out = ["| file | pages | tool | cells tp/pred/gt | headings tp/pred/gt (+level) | order dist/found/paras "
           "| furniture leaked/instances | text sim | time | notes |",
           "|---|--:|---|--:|--:|--:|--:|--:|--:|---|"]
    for r in results:
        for tool in tools:
            if status.get(tool):
                continue
            x = r[tool]
            if x.get("error"):
                out.append(f"| {r['file']} | {r['pages'] or '?'} | {tool} | | | | | | | failed: "
                           f"{x['error'].replace('|', '/')} |")
                continue
            s = x["score"]
            if not s:
                out.append(f"| {r['file']} | {r['pages'] or '?'} | {tool} | | | | | | {fsec(x['seconds'])} "
                           "| no groundtruth Markdown (test assertions only) |")
                continue
            t, h, o, fu = s["tables"], s["headings"], s["order"], s["furniture"]
            notes = []
            if x.get("extra", {}).get("ocr_pages"):
                notes.append(f"OCR {x['extra']['ocr_pages']} p.")
            if s["pred_tables"] and not t:
                notes.append(f"{s['pred_tables']} tables (none in groundtruth)")
            cells_note = f"{t['tp']}/{t['pred']}/{t['gt']} (text {t['tp_text']})" if t else "—"
            out.append(f"| {r['file']} | {r['pages'] or '?'} | {tool} | "
                       f"{cells_note} | "
                       f"{h['tp']}/{h['pred']}/{h['gt']} ({h['tp_level']}) | {o['dist']}/{o['found']}/{o['paras']} | "
                       f"{fu['leaked']}/{fu['instances']} | {s['text_sim']:.3f} | {fsec(x['seconds'])} | {'; '.join(notes)} |")
    return out


# --------------------------------------------------------------------------- main


def run_corpus(name, pairs, tools, status, args, tmp, work):
    results = []
    for fname, pdf, md in pairs:
        truth = ""
        if md:
            with open(md, encoding="utf-8") as f:
                truth = f.read()
        pages = page_count(pdf)
        pdf_pages = page_lines(pdf)
        row = {"file": fname, "pages": pages, "groundtruth": bool(md)}
        for tool in tools:
            if status.get(tool):
                continue
            res = {"seconds": None, "error": None, "score": None, "extra": {}, "text": None, "pages": pages}
            try:
                text, secs, extra = run_tool(tool, pdf, args, tmp)
                res.update(seconds=secs, extra=extra, text=text)
                if md:
                    res["score"] = score_file(truth, text, pdf_pages)
                if work:
                    with open(os.path.join(work, f"{name}--{fname}.{tool}.md"), "w", encoding="utf-8") as f:
                        f.write(text)
            except Failed as e:
                res["error"] = str(e)
            except Exception as e:
                res["error"] = brief(f"{type(e).__name__}: {e}", 200)
            row[tool] = res
            log(f"{name}/{fname} {tool}: " + (res["error"] or f"{fsec(res['seconds'])}"))
        results.append(row)
    return results


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--convert":
        convert_main(sys.argv[2], sys.argv[3], sys.argv[4])
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True, help="the docreader binary (relative paths from the repo root)")
    ap.add_argument("--docling", help="a checkout of https://github.com/docling-project/docling: corpora (a), (c)")
    ap.add_argument("--markitdown", help="a checkout of https://github.com/microsoft/markitdown: corpus (b)")
    ap.add_argument("--tools", default=",".join(TOOLS), help=f"comma-separated, of {','.join(TOOLS)}")
    ap.add_argument("--corpora", default=",".join(CORPORA), help=f"comma-separated, of {','.join(CORPORA)}")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per file and tool (default 600)")
    ap.add_argument("--per-file", action="store_true", help="also print a row per file and tool")
    ap.add_argument("--out", help="keep each tool's Markdown in this folder")
    ap.add_argument("--json", help="write every number to this file")
    args = ap.parse_args()
    started = time.perf_counter()
    args.binary = os.path.abspath(os.path.join(ROOT, args.bin))
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    corpora = [c.strip() for c in args.corpora.split(",") if c.strip()]
    bad = [t for t in tools if t not in TOOLS] + [c for c in corpora if c not in CORPORA]
    if bad or "docreader" not in tools:
        raise Failed(f"unknown --tools/--corpora {','.join(bad)}; docreader must be one of the tools")
    if not os.path.isfile(args.binary):
        raise Failed(f"no docreader binary at {args.binary}")
    status = {t: tool_status(t) for t in tools}
    for t, s in status.items():
        if s:
            log(f"{t}: {s}")

    todo, skipped = [], {}
    if args.docling:
        d = os.path.abspath(args.docling)
        if "docling" in corpora:
            found, sk = docling_pairs(d)
            todo.append(("docling", found))
            skipped["docling"] = sk
        if "scanned" in corpora:
            found, sk = scanned_pairs(d)
            todo.append(("scanned", found))
            skipped["scanned"] = sk
    if args.markitdown and "markitdown" in corpora:
        found, sk = markitdown_pairs(os.path.abspath(args.markitdown))
        todo.append(("markitdown", found))
        skipped["markitdown"] = sk
    todo = [(c, p) for c, p in todo if p]
    if not todo:
        raise Failed("no input: pass --docling DIR and/or --markitdown DIR (checkouts with their test data)")
    log(f"machine: {machine()}; " + ", ".join(f"{c}: {len(p)} files" for c, p in todo))

    all_results, checks = {}, {}
    with tempfile.TemporaryDirectory(prefix="bench-structure-") as tmp:
        work = os.path.abspath(args.out) if args.out else None
        if work:
            os.makedirs(work, exist_ok=True)
        for corpus, pairs in todo:
            all_results[corpus] = run_corpus(corpus, pairs, tools, status, args, tmp, work)
            if corpus == "markitdown":
                tests_dir = markitdown_tests_dir(os.path.abspath(args.markitdown))
                for tool in tools:
                    if status.get(tool):
                        continue
                    outputs = {r["file"]: r[tool]["text"] for r in all_results[corpus]
                               if r[tool].get("text") is not None}
                    checks[tool] = markitdown_checks(tests_dir, outputs)

    cmd = shlex.join([os.path.relpath(os.path.abspath(sys.argv[0]), ROOT)] + sys.argv[1:])
    print("# PDF structure: docreader, pymupdf4llm, markitdown and docling-rs\n")
    print(f"- machine: {machine()}")
    print(f"- date: {datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}")
    print(f"- docreader: `{args.bin}`; " + "; ".join(
        f"{t} {tool_version(t) or ''}".strip() for t in tools if t != "docreader" and not status.get(t)))
    print(f"- command: `{cmd}`")
    print("- metrics: see bench/structure/bench_structure.py's docstring; goals on (a): cells F1 ≥ 0.9, "
          "heading F1 ≥ 0.9, order distance ≤ 0.1 (✓/✗)")
    print(f"- run time: {time.perf_counter() - started:.0f} s")
    titles = {"docling": "(a) docling's PDF tests, against its groundtruth Markdown",
              "markitdown": "(b) markitdown's PDF table tests, against its expected Markdown and test assertions",
              "scanned": "(c) scanned pages (docling's OCR tests), against its full-page OCR groundtruth"}
    for corpus, results in all_results.items():
        print(f"\n## {titles[corpus]}\n")
        print("\n".join(summary_table(corpus, tools, results, status, checks)))
        if skipped.get(corpus):
            print("\nSkipped: " + "; ".join(f"{n} ({why})" for n, why in skipped[corpus]))
        if corpus == "markitdown":
            for tool, c in checks.items():
                failed = [f"{t.split('.')[-1]}: {k}" for t, v in (c or {}).items()
                          for k, ok in v["checks"].items() if not ok]
                if failed:
                    print(f"\n{tool}: failed markitdown checks ({len(failed)}): "
                          + "; ".join(brief(x, 90) for x in failed[:25]) + (" …" if len(failed) > 25 else ""))
        if args.per_file:
            print()
            print("\n".join(per_file_table(results, tools, status)))
    if args.json:
        for results in all_results.values():
            for r in results:
                for t in tools:
                    if isinstance(r.get(t), dict):
                        r[t].pop("text", None)
        with open(args.json, "w") as f:
            json.dump({"tools": {t: {"version": tool_version(t), "status": status.get(t)} for t in tools},
                       "summary": {c: {t: aggregate([r[t] for r in res]) for t in tools if not status.get(t)}
                                   for c, res in all_results.items()},
                       "results": all_results, "markitdown_checks": checks,
                       "skipped": {c: [dict(file=n, why=w) for n, w in s] for c, s in skipped.items()}},
                      f, indent=1, ensure_ascii=False)
    dr = [r["docreader"] for res in all_results.values() for r in res]
    if dr and all(x.get("error") for x in dr):
        sys.exit(1)


if __name__ == "__main__":
    try:
        main()
    except Failed as e:
        log(f"bench-structure: {e}")
        sys.exit(1)
