#!/usr/bin/env python3
"""OCR benchmark (issue #5): docreader (CLI and HTTP) side by side with RapidOCR
(rapidocr_onnxruntime 1.4.4, PP-OCRv4 models; docreader runs the same detection and angle models, and PP-OCRv6 tiny recognition) and Tesseract
(Debian tesseract-ocr, OMP_THREAD_LIMIT=1), on generated A4 pages with known text (English
and Chinese, clean PNGs and noisy scans) and on the OCR image rows of the shared corpus.

Run it through bench/ocr/run.sh (which installs the tools, the fonts and the Tesseract
languages); see bench/README.md. Inputs are generated into a temp dir, seeded, so every run
sees the same pages. Every measured run is a fresh child process under GNU time (wall,
peak RSS `%M`, CPU `%U + %S`), except docreader's HTTP server, started once (`--workers 1`)
and measured from /proc. Each tool first runs once untimed on the first page (warm-up),
then --runs timed rounds over all pages; in each round the tools take turns on each page, so
a load spike hits all of them alike.

Per input class and tool it reports median s/page, pages/s, CPU s/page, peak RSS, the
character error rate (Levenshtein over NFKC text with all whitespace removed, divided by
the reference length) and, for English, the share of the word gaps inside a line that the
output keeps as whitespace. Corpus rows have only snippets as reference: "snippets found
k/n". Goals: docreader CLI >= 4x RapidOCR's pages/s and >= 2x Tesseract's; CER <= 0.01 on
scans and <= 0.005 on clean images; English word gaps kept. A missed goal prints `NOT met`;
the exit status is 1 only when a docreader row failed.
"""
import argparse
import datetime
import http.client
import json
import mimetypes
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import unicodedata
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import (Failed, Server, brief, cpu_stat, install_note, log, machine, ncpu,  # noqa: E402
                      proc_status_kib, self_cpu)

HUGE = 50_000_000  # the largest max_chars docreader accepts (src/options.rs)
CHILD_TIMEOUT = 600  # seconds, per child process or HTTP request
MB = 1_000_000  # MB here is 10^6 bytes

SPEED_GOAL_RAPID = 4.0  # docreader CLI pages/s >= 4 x RapidOCR's
SPEED_GOAL_TESS = 2.0  # ... and >= 2 x Tesseract's (OMP_THREAD_LIMIT=1)
CER_GOAL = {"scan": 0.01, "clean": 0.005}
SPACES_GOAL = 0.98  # share of in-line word gaps kept as whitespace, English pages

# Quick mode's corpus rows: one English, one Chinese, one read through Tesseract (Korean).
QUICK_CORPUS = ["image/testOCR.png", "image/chi_sim_image.jpeg", "image/english_and_korean.png"]

try:
    from rapidfuzz.distance import Levenshtein as _rf_lev
except ImportError:  # run.sh installs it; the fallbacks below are slower, same numbers
    _rf_lev = None


# --------------------------------------------------------------------------- text metrics

PAGE_MARKER = re.compile(r"^--- Page \d+ ---$", re.M)
BIDI_AND_SHY = dict.fromkeys([0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E,
                              0x2066, 0x2067, 0x2068, 0x2069, 0x00AD])


def strip_markers(text):
    """docreader marks pages of multi-page inputs (`--- Page N ---`); Tesseract separates
    TIFF pages with form feeds (whitespace, dropped by every metric)."""
    return PAGE_MARKER.sub("", text)


def squeeze(text):
    """NFKC with all whitespace removed: what CER compares."""
    return "".join(unicodedata.normalize("NFKC", text).split())


def levenshtein(a, b):
    if _rf_lev is not None:
        return _rf_lev.distance(a, b)
    if len(a) < len(b):
        a, b = b, a
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def opcodes(a, b):
    if _rf_lev is not None:
        return [(o.tag, o.src_start, o.src_end, o.dest_start, o.dest_end)
                for o in _rf_lev.opcodes(a, b)]
    import difflib
    return difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()


def cer_counts(ref, hyp):
    """(edits, reference length, reference lines lost) over NFKC text without whitespace.
    A line is lost when fewer than half of its characters are matched in the alignment
    (missed by detection, or read as garbage): it tells a dropped line from scattered
    character errors."""
    lines = [squeeze(x) for x in ref.split("\n")]
    r, h = "".join(lines), squeeze(strip_markers(hyp))
    matched = bytearray(len(r))
    for tag, i1, i2, _j1, _j2 in opcodes(r, h):
        if tag == "equal":
            matched[i1:i2] = b"\x01" * (i2 - i1)
    lost = at = 0
    for line in lines:
        if line and sum(matched[at:at + len(line)]) * 2 < len(line):
            lost += 1
        at += len(line)
    return levenshtein(r, h), len(r), lost


def gap_counts(ref, hyp):
    """Word gaps inside a line of the reference (one space between two words) that the
    output keeps as whitespace: (kept, counted). Both texts are NFKC'd with each
    whitespace run made one space and aligned character by character (Levenshtein). A gap
    counts only when the characters on both sides of it are matched in the output (text
    that is missing or misread says nothing about spaces); it is kept when the output has
    whitespace between those two characters. Line breaks of the reference are not counted:
    every engine keeps those (a line is one detection)."""
    ref = unicodedata.normalize("NFKC", ref)
    rs, inline = [], []
    for line in ref.split("\n"):
        words = line.split()
        if not words:
            continue
        if rs:
            rs.append(" ")
            inline.append(False)
        for wi, w in enumerate(words):
            if wi:
                rs.append(" ")
                inline.append(True)
            rs.extend(w)
            inline.extend([False] * len(w))
    r = "".join(rs)
    h = " ".join(unicodedata.normalize("NFKC", strip_markers(hyp)).split())
    where = [-1] * len(r)  # ref index -> hyp index, for matched characters
    for tag, i1, i2, j1, _j2 in opcodes(r, h):
        if tag == "equal":
            for k in range(i2 - i1):
                where[i1 + k] = j1 + k
    kept = counted = 0
    for i, gap in enumerate(inline):
        if not gap or where[i - 1] < 0 or where[i + 1] < 0:
            continue
        counted += 1
        kept += " " in h[where[i - 1] + 1:where[i + 1]]
    return kept, counted


def words_found(ref, hyp):
    """Reference words (whitespace tokens, NFKC) found as whole tokens in the output
    (multiset): (found, total)."""
    from collections import Counter
    rw = unicodedata.normalize("NFKC", ref).split()
    hw = Counter(unicodedata.normalize("NFKC", strip_markers(hyp)).split())
    found = 0
    for w in rw:
        if hw[w] > 0:
            hw[w] -= 1
            found += 1
    return found, len(rw)


def snippet_norm(text):
    """The corpus README's rule for `ocr` rows: NFKC, no bidi controls or soft hyphens, no
    whitespace at all, case-insensitive."""
    t = unicodedata.normalize("NFKC", text).translate(BIDI_AND_SHY)
    return "".join(t.split()).casefold()


def snippets_found(snippets, hyp):
    h = snippet_norm(strip_markers(hyp))
    return [s for s in snippets if snippet_norm(s) in h]


# --------------------------------------------------------------------------- inputs

EN_SUBJECTS = ["The committee", "Our small team", "The city council", "A young engineer", "The old library",
               "Every student", "The research group", "The harbour office", "Most visitors", "The new manager",
               "A local farmer", "The museum", "Her brother", "The train company", "Nobody in the village",
               "The quiet neighbour", "The weather service", "A careful reader", "The bakery", "The council"]
EN_VERBS = ["reviewed", "described", "repaired", "questioned", "painted", "measured", "delivered", "ignored",
            "published", "welcomed", "postponed", "compared", "collected", "explained", "replaced",
            "discovered", "recorded", "approved", "rejected", "borrowed"]
EN_OBJECTS = ["the annual report", "a broken window", "the winter schedule", "several letters", "the river bridge",
              "an unusual proposal", "the garden fence", "two hundred books", "the morning lecture",
              "a detailed map", "the budget plan", "the wooden boat", "an old photograph", "the survey results",
              "the kitchen roof", "a long list of names", "the station clock", "the final draft"]
EN_TAILS = ["before the end of the month", "without much discussion", "after a long delay", "in the early morning",
            "with great care", "during the spring festival", "for the third time this year",
            "because the roads were closed", "while the others waited outside", "at a cost of 4,250 dollars",
            "on Tuesday, 14 March", "near the northern gate", "in less than two hours", "as planned",
            "despite the heavy rain", "under the supervision of Dr. Miller", "(see section 7.2)",
            "by a margin of 18 percent"]
EN_CONNECT = ["However,", "Later that week,", "In the end,", "Meanwhile,", "As a result,", "Surprisingly,",
              "According to the minutes,", "Two days later,", "For this reason,", "At first,"]

ZH_ADV = ["在过去的几年里", "今天上午", "根据最新的数据", "为了提高效率", "经过长时间的讨论", "在各方的支持下",
          "从明年开始", "随着经济的发展", "在这次会议上", "由于天气原因", "按照原定计划", "在专家的指导下"]
ZH_SUBJ = ["市政府", "研究人员", "这家公司", "学校的老师们", "图书馆", "当地居民", "工程师们", "交通部门",
           "年轻的作家", "博物馆", "医院", "农业合作社", "我们的团队", "出版社"]
ZH_VERB = ["完成了", "发布了", "讨论了", "改进了", "提出了", "修建了", "调查了", "整理了", "推广了", "审查了",
           "启动了", "总结了"]
ZH_OBJ = ["新的城市规划", "年度工作报告", "公共交通系统", "环境保护方案", "社区服务中心", "历史文献资料",
          "农村教育项目", "水资源管理办法", "科技创新计划", "传统文化展览", "道路安全措施", "医疗保障制度"]
ZH_TAIL = ["受到了广泛的欢迎", "取得了明显的效果", "引起了社会的关注", "得到了居民的支持", "预计将在年底完成",
           "参与人数超过三千人", "总投资约为两亿元", "为今后的工作打下了基础", "还需要进一步的研究",
           "提高了服务质量"]


def en_sentence(rng):
    s = f"{rng.choice(EN_SUBJECTS)} {rng.choice(EN_VERBS)} {rng.choice(EN_OBJECTS)} {rng.choice(EN_TAILS)}."
    if rng.random() < 0.3:
        s = f"{rng.choice(EN_CONNECT)} {s[0].lower()}{s[1:]}"
    return s


def zh_sentence(rng):
    return (f"{rng.choice(ZH_ADV)}，{rng.choice(ZH_SUBJ)}{rng.choice(ZH_VERB)}{rng.choice(ZH_OBJ)}，"
            f"{rng.choice(ZH_TAIL)}。")


def wrap_words(sentences, font, width):
    """Greedy word wrap of the sentences (words joined by one space) into lines of at
    most `width` pixels."""
    lines, cur = [], ""
    for word in " ".join(sentences).split(" "):
        cand = f"{cur} {word}" if cur else word
        if cur and font.getlength(cand) > width:
            lines.append(cur)
            cur = word
        else:
            cur = cand
    if cur:
        lines.append(cur)
    return lines


def wrap_chars(text, font, width):
    lines, cur = [], ""
    for ch in text:
        if cur and font.getlength(cur + ch) > width:
            lines.append(cur)
            cur = ch
        else:
            cur += ch
    if cur:
        lines.append(cur)
    return lines


# Page layout in points: A4, 12 pt type on 18 pt leading, 1-inch margins: 38 lines.
A4_PT = (595.276, 841.89)
FONT_PT, LEADING_PT, MARGIN_PT = 12, 18, 72


def page_lines(lang, font, dpi, rng):
    px = dpi / 72.0
    width = (A4_PT[0] - 2 * MARGIN_PT) * px
    n_lines = int((A4_PT[1] - 2 * MARGIN_PT) // LEADING_PT)
    lines = []
    while len(lines) < n_lines:
        if lang == "en":
            para = [en_sentence(rng) for _ in range(rng.randrange(3, 6))]
            lines += wrap_words(para, font, width)
        else:
            para = "".join(zh_sentence(rng) for _ in range(rng.randrange(2, 4)))
            lines += wrap_chars(para, font, width)
    return lines[:n_lines]


def render_page(lines, font, dpi):
    from PIL import Image, ImageDraw
    px = dpi / 72.0
    w, h = round(A4_PT[0] * px), round(A4_PT[1] * px)
    img = Image.new("L", (w, h), 255)
    d = ImageDraw.Draw(img)
    x, y = MARGIN_PT * px, MARGIN_PT * px
    for line in lines:
        d.text((x, y), line, font=font, fill=0)
        y += LEADING_PT * px
    return img


def scan_effects(img, rng, seed):
    """A noisy scan of a clean page: grey paper and ink, a slight uneven light, a small
    rotation (±0.3–1°), blur, gaussian noise, JPEG compression (done by the caller).
    Returns (image, description)."""
    from PIL import Image, ImageFilter
    paper, ink = rng.randrange(212, 232), rng.randrange(25, 60)
    img = img.point(lambda v: round(ink + (paper - ink) * v / 255))
    angle = rng.uniform(0.3, 1.0) * rng.choice([-1, 1])
    img = img.rotate(angle, resample=Image.BICUBIC, expand=False, fillcolor=paper)
    blur = rng.uniform(0.5, 0.9)
    img = img.filter(ImageFilter.GaussianBlur(blur))
    sigma = rng.uniform(8, 14)
    w, h = img.size
    try:
        import numpy as np
        g = np.random.default_rng(seed)
        a = np.asarray(img, dtype=np.float32)
        # uneven light: up to -8 % towards one side
        ramp = np.linspace(1.0, 0.92, w, dtype=np.float32)[None, :]
        a = a * ramp + g.normal(0.0, sigma, a.shape).astype(np.float32)
        img = Image.fromarray(np.clip(a, 0, 255).astype(np.uint8), "L")
        how = "numpy"
    except ImportError:  # pure Python: slower (a few seconds a page), other random numbers
        r = random.Random(seed)
        src = img.tobytes()
        out = bytearray(len(src))
        for i, v in enumerate(src):
            x = i % w
            out[i] = max(0, min(255, round(v * (1 - 0.08 * x / w) + r.gauss(0, sigma))))
        img = Image.frombytes("L", (w, h), bytes(out))
        how = "python random"
    return img, (f"paper {paper}, ink {ink}, rotated {angle:+.2f}°, blur {blur:.2f} px, "
                 f"noise σ {sigma:.1f} ({how}), light −8 % across")


def fc_fonts(pattern):
    try:
        out = subprocess.run(["fc-list", pattern, "-f", "%{file}|%{index}|%{family}\n"],
                             capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    fonts = []
    for line in out.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[0]:
            try:
                fonts.append((parts[0], int(parts[1] or 0), parts[2]))
            except ValueError:
                pass
    return sorted(fonts)


def latin_fonts():
    """(path, index, family) of up to two Latin fonts: DejaVu Sans and DejaVu Serif when
    present (pages alternate between them), else whatever fontconfig has."""
    want = ["/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
            "/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf"]
    got = [(p, 0, os.path.basename(p)[:-4]) for p in want if os.path.exists(p)]
    if got:
        return got
    for path, index, family in fc_fonts(":lang=en:style=Regular") or fc_fonts(":lang=en"):
        if path.lower().endswith((".ttf", ".otf", ".ttc")):
            return [(path, index, family.split(",")[0])]
    return []


def cjk_font():
    fonts = fc_fonts(":lang=zh-cn")
    if not fonts:
        return None

    def rank(f):
        fam = f[2].lower()
        return (0 if "zen hei" in fam or " sc" in fam or "cn" in fam else 1, f[0], f[1])
    fonts.sort(key=rank)
    path, index, family = fonts[0]
    return path, index, family.split(",")[0]


class Input:
    def __init__(self, name, path, klass, pages=1, ref=None, snippets=None, lang="en",
                 desc=""):
        self.name, self.path, self.klass, self.pages = name, path, klass, pages
        self.ref, self.snippets, self.lang, self.desc = ref, snippets, lang, desc


CLASSES = {
    "en-clean": "English, clean PNG",
    "en-scan": "English, noisy scan (JPEG)",
    "zh-clean": "Chinese, clean PNG",
    "zh-scan": "Chinese, noisy scan (JPEG)",
}


def make_inputs(workdir, counts, seed):
    """The generated pages, each with its reference text. Returns (inputs, notes)."""
    from PIL import ImageFont
    inputs, notes = [], []
    latin = latin_fonts()
    cjk = cjk_font()
    if counts["en-clean"] + counts["en-scan"] and not latin:
        notes.append("no Latin TrueType font found (Debian fonts-dejavu-core): English pages skipped")
    if counts["zh-clean"] + counts["zh-scan"] and not cjk:
        notes.append("no Chinese font found (`fc-list :lang=zh-cn` is empty; Debian fonts-wqy-zenhei): "
                     "Chinese pages skipped")
    plan = []
    clean_dpis = [300, 150]
    for i in range(counts["en-scan"] if latin else 0):
        plan.append(("en-scan", i, "en", 200, latin[i % len(latin)]))
    for i in range(counts["en-clean"] if latin else 0):
        plan.append(("en-clean", i, "en", clean_dpis[i % 2], latin[i % len(latin)]))
    for i in range(counts["zh-clean"] if cjk else 0):
        plan.append(("zh-clean", i, "zh", 200, cjk))
    for i in range(counts["zh-scan"] if cjk else 0):
        plan.append(("zh-scan", i, "zh", 200, cjk))
    for k, (klass, i, lang, dpi, (fpath, findex, family)) in enumerate(plan):
        page_seed = seed * 1000 + sum(map(ord, klass)) * 10 + i
        rng = random.Random(page_seed)
        font = ImageFont.truetype(fpath, round(FONT_PT * dpi / 72), index=findex)
        lines = page_lines(lang, font, dpi, rng)
        img = render_page(lines, font, dpi)
        ref = "\n".join(lines)
        if klass.endswith("scan"):
            img, how = scan_effects(img, rng, page_seed)
            quality = rng.randrange(60, 76)
            name = f"{klass}-{i + 1}-{dpi}dpi.jpg"
            path = os.path.join(workdir, name)
            img.save(path, "JPEG", quality=quality, dpi=(dpi, dpi))
            desc = f"{how}, JPEG q{quality}"
        else:
            name = f"{klass}-{i + 1}-{dpi}dpi.png"
            path = os.path.join(workdir, name)
            img.save(path, "PNG", dpi=(dpi, dpi))
            desc = "black on white"
        chars = len(squeeze(ref))
        inputs.append(Input(name, path, klass, 1, ref=ref, lang=lang,
                            desc=f"{family} {FONT_PT} pt, {dpi} dpi, {img.size[0]}×{img.size[1]} px, "
                                 f"{len(lines)} lines, {chars:,} non-space chars; {desc}; "
                                 f"{os.path.getsize(path) / 1000:,.0f} kB"))
    return inputs, notes


def corpus_inputs(corpus, only=None):
    """Rows of MANIFEST.tsv that expect `ocr:` and are images (image/*)."""
    from PIL import Image
    manifest = os.path.join(corpus, "MANIFEST.tsv")
    out = []
    with open(manifest, encoding="utf-8") as f:
        header = f.readline().rstrip("\n").split("\t")
        col = {name: i for i, name in enumerate(header)}
        for line in f:
            v = line.rstrip("\n").split("\t")
            if len(v) < len(header):
                continue
            path, expected, notes = v[col["path"]], v[col["expected"]], v[col["notes"]]
            if not expected.startswith("ocr:") or not path.startswith("image/"):
                continue
            if only is not None and path not in only:
                continue
            full = os.path.join(corpus, path)
            if not os.path.exists(full):
                continue
            snippets = [s.strip() for s in expected.split(":", 1)[1].split("||") if s.strip()]
            lang = "en"
            if "needs kor model" in notes:
                lang = "ko"
            elif "needs jpn_vert model" in notes:
                lang = "ja-vert"
            elif "needs chi_sim model" in notes:
                lang = "zh"
            try:
                with Image.open(full) as im:
                    pages = getattr(im, "n_frames", 1)
            except Exception:  # noqa: BLE001 - counted as one page; the tools will say more
                pages = 1
            out.append(Input(path, full, "corpus", pages, snippets=snippets, lang=lang, desc=notes))
    return out


# --------------------------------------------------------------------------- children

GNU_TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None


class Sample:
    def __init__(self, wall, rss_kib=None, cpu=None, core=None, text="", load=None, note=None):
        self.wall, self.rss_kib, self.cpu, self.core = wall, rss_kib, cpu, core
        self.text, self.load, self.note = text, load, note


def run_child(cmd, workdir, env=None):
    """Run cmd in a fresh process under GNU time; return (wall_s, maxrss_kib, cpu_s,
    stdout bytes). Peak RSS and CPU come from GNU time (`%M`, `%U + %S`): a child forked
    straight from this script would inherit its RSS high-water mark through exec."""
    out_path = os.path.join(workdir, "child.out")
    err_path = os.path.join(workdir, "child.err")
    res_path = os.path.join(workdir, "child.time")
    full = [GNU_TIME, "-f", "%M %U %S", "-o", res_path, *cmd] if GNU_TIME else cmd
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(full, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env)
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
    with open(out_path, "rb") as f:
        stdout = f.read()
    if p.returncode != 0:
        with open(err_path, "rb") as f:
            err_text = f.read().decode(errors="replace")
        lines = [x for x in (err_text or stdout.decode(errors="replace")).splitlines() if x.strip()]
        raise Failed(f"exit {p.returncode}: {brief(lines[-1] if lines else '')}")
    rss = cpu = None
    if GNU_TIME:
        try:
            with open(res_path) as f:
                m, u, s = f.read().strip().splitlines()[-1].split()
            rss, cpu = int(m), float(u) + float(s)
        except (OSError, ValueError, IndexError):
            pass
    return wall, rss, cpu, stdout


RAPIDOCR_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
from rapidocr_onnxruntime import RapidOCR
engine = RapidOCR()
t1 = time.perf_counter()
from PIL import Image, ImageSequence
path = sys.argv[1]
with Image.open(path) as im:
    frames = getattr(im, "n_frames", 1)
texts = []
t2 = time.perf_counter()
if frames == 1:
    result, _ = engine(path)
    texts.append("\n".join(r[1] for r in result or []))
else:  # RapidOCR reads the first frame of a path only: pass every frame
    with Image.open(path) as im:
        for frame in ImageSequence.Iterator(im):
            result, _ = engine(frame.convert("RGB"))
            texts.append("\n".join(r[1] for r in result or []))
t3 = time.perf_counter()
print(json.dumps({"load_s": t1 - t0, "core_s": t3 - t2, "text": "\n".join(texts)}))
"""

VERSIONS_CHILD = r"""
import json, importlib.metadata as m
out = {}
for name in ("rapidocr_onnxruntime", "onnxruntime", "numpy", "Pillow", "rapidfuzz"):
    try:
        out[name] = m.version(name)
    except Exception:
        out[name] = None
print(json.dumps(out))
"""


# --------------------------------------------------------------------------- tools


def docreader_lang(inp):
    return {"ko": "ko", "ja-vert": "ja-vert"}.get(inp.lang)


class Tool:
    name = "?"
    rss_note = "the process (GNU time %M)"
    docreader = False

    def setup(self, workdir):
        """None when usable, else why not."""
        return None

    def cannot(self, inp):
        """None when the tool can read inp, else why not (shown in the table)."""
        return None

    def run(self, inp, workdir):
        raise NotImplementedError

    def close(self):
        pass


def check_envelope(env):
    if env.get("status") != "ok":
        raise Failed(f"docreader answered {brief(json.dumps(env.get('error', env), ensure_ascii=False))}")
    if env.get("truncated"):
        raise Failed(f"truncated (char_count {env.get('char_count')})")
    return env


class DocreaderCli(Tool):
    name = "docreader CLI"
    docreader = True

    def __init__(self, binary):
        self.binary = binary

    def args(self, inp):
        lang = docreader_lang(inp)
        return ["--max-chars", str(HUGE)] + (["--ocr-lang", lang] if lang else [])

    def run(self, inp, workdir):
        wall, rss, cpu, out = run_child([self.binary, "read", "--json", inp.path, *self.args(inp)], workdir)
        env = check_envelope(json.loads(out))
        return Sample(wall, rss, cpu, env.get("elapsed_ms", 0) / 1000.0, env.get("text", ""),
                      note=env.get("ocr_engine"))


class DocreaderHttp(Tool):
    """One `docreader serve --workers 1`; per run POST /upload + POST /read (timed), then
    DELETE /files/{id} (untimed), which also forgets the remembered OCR result, so every
    run is a fresh upload and a first read (the envelope must say `cached: false`)."""

    name = "docreader HTTP"
    rss_note = "server + worker: VmHWM of each, reset before every run, summed"
    docreader = True

    def __init__(self, binary):
        self.binary = binary
        self.server = None
        self.cpu_total = 0.0

    def setup(self, workdir):
        d = os.path.join(workdir, "serve")
        try:
            self.server = Server(self.binary, os.path.join(d, "data"), os.path.join(d, "serve.log"),
                                 workers=1).start()
        except Failed as e:
            return str(e)
        return None

    def request(self, method, path, body=None, headers=None, conn=None):
        own = conn is None
        if own:
            conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=CHILD_TIMEOUT)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            resp = conn.getresponse()
            return resp.status, resp.read()
        finally:
            if own:
                conn.close()

    def pids(self):
        return [self.server.pid] + self.server.worker_pids()

    def run(self, inp, workdir):
        if not self.server.same_process():
            raise Failed(f"docreader serve exited or was replaced: {self.server.log_tail()}")
        with open(inp.path, "rb") as f:
            data = f.read()
        name = os.path.basename(inp.path)
        ctype = mimetypes.guess_type(name)[0] or "application/octet-stream"
        boundary = "bench" + uuid.uuid4().hex
        body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n"
                f"Content-Type: {ctype}\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
        read = {"file_id": None, "max_chars": HUGE}
        lang = docreader_lang(inp)
        if lang:
            read["ocr_lang"] = lang
        for pid in self.pids():  # peak RSS of this run: reset each process's high-water mark
            try:
                with open(f"/proc/{pid}/clear_refs", "w") as f:
                    f.write("5")
            except OSError:
                pass
        cpu0 = self.server.cpu_s()
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=CHILD_TIMEOUT)
        try:
            t0 = time.perf_counter()
            status, raw = self.request("POST", "/upload", body,
                                       {"Content-Type": f"multipart/form-data; boundary={boundary}"}, conn)
            if status != 200:
                raise Failed(f"POST /upload: HTTP {status}: {brief(raw.decode(errors='replace'))}")
            file_id = json.loads(raw)["files"][0]["file_id"]
            read["file_id"] = file_id
            status, raw = self.request("POST", "/read", json.dumps(read).encode(),
                                       {"Content-Type": "application/json"}, conn)
            wall = time.perf_counter() - t0
        finally:
            conn.close()
        cpu = self.server.cpu_s() - cpu0
        self.cpu_total += cpu
        rss = sum(proc_status_kib(p, "VmHWM") or 0 for p in self.pids())
        # Untimed: forget the upload (and with it the remembered OCR result).
        self.request("DELETE", f"/files/{file_id}")
        if status != 200:
            raise Failed(f"POST /read: HTTP {status}: {brief(raw.decode(errors='replace'))}")
        env = check_envelope(json.loads(raw))
        if env.get("cached"):
            raise Failed("the read says cached: true (a remembered result, not a fresh OCR)")
        return Sample(wall, rss, cpu, env.get("elapsed_ms", 0) / 1000.0, env.get("text", ""),
                      note=env.get("ocr_engine"))

    def close(self):
        if self.server:
            self.server.stop()
            self.server = None


class RapidOcr(Tool):
    name = "RapidOCR"
    rss_note = "the Python process (GNU time %M)"

    def setup(self, workdir):
        try:
            subprocess.run([sys.executable, "-c", "import rapidocr_onnxruntime"], check=True,
                           capture_output=True, timeout=120)
        except subprocess.CalledProcessError as e:
            lines = [x for x in e.stderr.decode(errors="replace").splitlines() if x.strip()]
            note = install_note("rapidocr_onnxruntime")
            return f"not importable: {brief(lines[-1] if lines else '')}" + (f"; {note}" if note else "")
        return None

    def cannot(self, inp):
        if inp.lang in ("ko", "ja-vert"):
            return ("cannot: its PP-OCR `ch` models read Chinese and Latin script only "
                    f"({'Korean' if inp.lang == 'ko' else 'vertical Japanese'} needs another model)")
        return None

    def run(self, inp, workdir):
        wall, rss, cpu, out = run_child([sys.executable, "-c", RAPIDOCR_CHILD, inp.path], workdir)
        r = json.loads(out.decode().strip().splitlines()[-1])
        return Sample(wall, rss, cpu, r["core_s"], r["text"], load=r["load_s"])


def tess_lang(inp):
    return {"en": "eng", "zh": "chi_sim", "ko": "kor+eng", "ja-vert": "jpn_vert"}[inp.lang]


class Tesseract(Tool):
    def __init__(self, threads_limited=True):
        self.limited = threads_limited
        self.name = "Tesseract" if threads_limited else "Tesseract, default threads"

    def setup(self, workdir):
        self.exe = shutil.which("tesseract")
        if not self.exe:
            note = install_note("tesseract")
            return "tesseract not found (Debian tesseract-ocr)" + (f"; {note}" if note else "")
        out = subprocess.run([self.exe, "--list-langs"], capture_output=True, text=True)
        self.langs = set((out.stdout + out.stderr).split())
        return None

    def cannot(self, inp):
        missing = [x for x in tess_lang(inp).split("+") if x not in self.langs]
        if missing:
            pkgs = {"chi_sim": "tesseract-ocr-chi-sim", "kor": "tesseract-ocr-kor",
                    "jpn_vert": "tesseract-ocr-jpn", "eng": "tesseract-ocr-eng"}
            return (f"no Tesseract data for {'+'.join(missing)} (Debian "
                    f"{', '.join(pkgs.get(m, 'tesseract-ocr-' + m) for m in missing)})")
        return None

    def run(self, inp, workdir):
        env = dict(os.environ)
        if self.limited:
            env["OMP_THREAD_LIMIT"] = "1"
        else:
            env.pop("OMP_THREAD_LIMIT", None)
        wall, rss, cpu, out = run_child([self.exe, inp.path, "-", "-l", tess_lang(inp)], workdir, env)
        return Sample(wall, rss, cpu, None, out.decode("utf-8", errors="replace"))


# --------------------------------------------------------------------------- measuring


class Cell:
    """One (input, tool): its timed samples, the text of the first, or why none."""

    def __init__(self, inp, tool):
        self.inp, self.tool = inp, tool
        self.samples, self.error, self.text, self.varies = [], None, None, False
        self.engine = None


def measure(inputs, tools, runs, warmup, workdir, cells):
    """`warmup` untimed rounds on the first input (file and library caches: every run is a
    fresh process anyway), then `runs` timed rounds over all inputs, tools in turn."""
    for rnd in range(warmup + runs):
        timed = rnd >= warmup
        label = f"run {rnd - warmup + 1}/{runs}" if timed else f"warm-up {rnd + 1}"
        for inp in (inputs if timed else inputs[:1]):
            for tool in tools:
                c = cells[(inp.name, tool.name)]
                if c.error:
                    continue
                try:
                    s = tool.run(inp, workdir)
                except Failed as e:
                    c.error = f"failed: {e}"
                    log(f"  {label}: {inp.name}: {tool.name}: FAILED: {e}")
                    continue
                except Exception as e:  # noqa: BLE001 - report, do not crash the table
                    c.error = f"failed: {type(e).__name__}: {brief(str(e))}"
                    log(f"  {label}: {inp.name}: {tool.name}: FAILED: {c.error}")
                    continue
                if s.note:
                    c.engine = s.note
                if timed:
                    if c.text is None:
                        c.text = s.text
                    elif s.text != c.text:
                        c.varies = True
                    c.samples.append(s)
                log(f"  {label}: {inp.name}: {tool.name}: {s.wall:.2f} s"
                    + (f", CPU {s.cpu:.2f} s" if s.cpu is not None else "")
                    + (f", peak RSS {s.rss_kib * 1024 / MB:.0f} MB" if s.rss_kib else ""))


def med(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def summarize(cells, inputs, tool):
    """Numbers for one tool over a list of inputs: per-page medians and error rates."""
    cs = [cells[(i.name, tool.name)] for i in inputs]
    errs = [c for c in cs if c.error]
    samples = [(c.inp, s) for c in cs if not c.error for s in c.samples]
    if errs or not samples:
        return {"error": errs[0].error if errs else "no samples"}
    spp = [s.wall / i.pages for i, s in samples]
    out = {
        "s_per_page": med(spp), "s_per_page_min": min(spp), "s_per_page_max": max(spp),
        "cpu_per_page": med([s.cpu / i.pages if s.cpu is not None else None for i, s in samples]),
        "core_per_page": med([s.core / i.pages if s.core is not None else None for i, s in samples]),
        "load_s": med([s.load for _, s in samples]),
        "peak_rss_mb": (max(s.rss_kib for _, s in samples if s.rss_kib) * 1024 / MB
                        if any(s.rss_kib for _, s in samples) else None),
        "samples": len(samples),
        "varies": [c.inp.name for c in cs if c.varies],
        "engines": sorted({c.engine for c in cs if c.engine}),
    }
    if all(i.ref is not None for i in inputs):
        e = n = lost = total_lines = 0
        for c in cs:
            de, dn, dl = cer_counts(c.inp.ref, c.text)
            e, n, lost = e + de, n + dn, lost + dl
            total_lines += sum(1 for x in c.inp.ref.split("\n") if x.strip())
        out["cer"] = e / n if n else None
        out["cer_edits"], out["cer_chars"] = e, n
        out["lines_lost"], out["lines"] = lost, total_lines
        if all(i.lang == "en" for i in inputs):
            k = t = f = w = 0
            for c in cs:
                dk, dt = gap_counts(c.inp.ref, c.text)
                df, dw = words_found(c.inp.ref, c.text)
                k, t, f, w = k + dk, t + dt, f + df, w + dw
            out["gaps_kept"] = k / t if t else None
            out["gaps"] = (k, t)
            out["words_found"] = f / w if w else None
    return out


# --------------------------------------------------------------------------- report


def versions(binary):
    out = {}
    try:
        out["docreader"] = (subprocess.run([binary, "--version"], capture_output=True, text=True,
                                           timeout=30).stdout.strip().splitlines() or ["?"])[0]
    except OSError as e:
        out["docreader"] = f"? ({e})"
    try:
        r = subprocess.run([sys.executable, "-c", VERSIONS_CHILD], capture_output=True, text=True, timeout=60)
        out.update(json.loads(r.stdout))
    except Exception:  # noqa: BLE001 - informational
        pass
    exe = shutil.which("tesseract")
    if exe:
        r = subprocess.run([exe, "--version"], capture_output=True, text=True)
        first = (r.stdout or r.stderr).strip().splitlines()
        out["tesseract"] = first[0].replace("tesseract ", "") if first else "?"
    return out


def f2(x, nd=2):
    return "—" if x is None else f"{x:.{nd}f}"


def rate(spp):
    if not spp:
        return "—"
    r = 1 / spp
    return f"{r:.2f}" if r < 10 else f"{r:.1f}"


def pct(x):
    return "—" if x is None else f"{100 * x:.1f} %"


def cer_cell(d):
    if d.get("cer") is None:
        return "—"
    lost = f"; {d['lines_lost']} of {d['lines']} lines lost" if d.get("lines_lost") else ""
    return f"{d['cer']:.4f} ({d['cer_edits']}/{d['cer_chars']:,}{lost})"


def main_table(classes, tools, summ, cells, unavailable):
    lines = ["| input class (pages) | tool | s/page, median (min–max) | pages/s | in-process s/page "
             "| CPU s/page | peak RSS MB | CER (edits/chars) | word gaps kept (words found) | notes |",
             "|---|---|--:|--:|--:|--:|--:|--:|--:|---|"]
    for klass, ins in classes:
        label = f"{CLASSES[klass]} ({len(ins)})"
        for t in tools:
            if t.name in unavailable:
                lines.append(f"| {label} | {t.name} | — | — | — | — | — | — | — | not available: "
                             f"{unavailable[t.name]} |")
                continue
            d = summ[(klass, t.name)]
            if "error" in d:
                lines.append(f"| {label} | {t.name} | — | — | — | — | — | — | — | {d['error']} |")
                continue
            notes = []
            if isinstance(t, DocreaderCli):
                notes.append("in-process = `elapsed_ms` (model load included)")
            elif isinstance(t, DocreaderHttp):
                notes.append("in-process = `elapsed_ms`; the worker keeps the models loaded "
                             "after its first read")
            if isinstance(t, (DocreaderCli, DocreaderHttp)):
                if d["engines"]:
                    notes.append("engine " + ", ".join(d["engines"]))
            elif isinstance(t, RapidOcr):
                notes.append(f"in-process = the `engine(path)` call; import + model load "
                             f"{f2(d['load_s'])} s more per process")
            elif isinstance(t, Tesseract):
                notes.append("OMP_THREAD_LIMIT=1" if t.limited else "default OpenMP threads")
            if d["varies"]:
                notes.append(f"output differs between runs on {', '.join(d['varies'])} (first run scored)")
            gaps = "—"
            if d.get("gaps_kept") is not None:
                gaps = f"{pct(d['gaps_kept'])} ({pct(d['words_found'])})"
            lines.append(
                f"| {label} | {t.name} | {f2(d['s_per_page'])} ({f2(d['s_per_page_min'])}–"
                f"{f2(d['s_per_page_max'])}) | {rate(d['s_per_page'])} | {f2(d['core_per_page'])} "
                f"| {f2(d['cpu_per_page'])} | {f2(d['peak_rss_mb'], 0)} | {cer_cell(d)} | {gaps} "
                f"| {'; '.join(notes)} |")
    return "\n".join(lines)


def goal_lines(classes, summ, tools):
    names = {t.name for t in tools}
    out = []
    cli = "docreader CLI"
    if cli not in names:
        return "- docreader CLI not measured: no goal can be judged"
    for klass, ins in classes:
        d = summ.get((klass, cli), {"error": "not measured"})
        label = CLASSES[klass]
        if "error" in d:
            out.append(f"- {label}: docreader CLI {d['error']}: no goal can be judged")
            continue
        for peer, goal in (("RapidOCR", SPEED_GOAL_RAPID), ("Tesseract", SPEED_GOAL_TESS)):
            p = summ.get((klass, peer))
            if p is None or "error" in p:
                out.append(f"- {label}: speed vs {peer}: no numbers ({(p or {}).get('error', 'not measured')})")
                continue
            r = p["s_per_page"] / d["s_per_page"]
            extra = ""
            if d.get("core_per_page") and p.get("core_per_page"):
                extra = (f"; in-process {p['core_per_page'] / d['core_per_page']:.2f}× "
                         f"(docreader's includes its model load, RapidOCR's does not)")
            if d.get("cpu_per_page") and p.get("cpu_per_page"):
                extra += f"; CPU time per page {p['cpu_per_page'] / d['cpu_per_page']:.2f}×"
            out.append(f"- {label}: docreader CLI pages/s ÷ {peer}: {1 / d['s_per_page']:.2f} vs "
                       f"{1 / p['s_per_page']:.2f} = **{r:.2f}×** (goal ≥ {goal:g}×): "
                       f"**{'met' if r >= goal else 'NOT met'}**{extra}")
        kind = "scan" if klass.endswith("scan") else "clean"
        if d.get("cer") is not None:
            g = CER_GOAL[kind]
            out.append(f"- {label}: docreader CLI CER {d['cer']:.4f} (goal ≤ {g}): "
                       f"**{'met' if d['cer'] <= g else 'NOT met'}**")
        if d.get("gaps_kept") is not None:
            k, t = d["gaps"]
            out.append(f"- {label}: word spaces kept: {k}/{t} word gaps = {pct(d['gaps_kept'])} "
                       f"(goal ≥ {SPACES_GOAL:.0%}): **{'met' if d['gaps_kept'] >= SPACES_GOAL else 'NOT met'}**")
        h = summ.get((klass, "docreader HTTP"))
        if h and "error" not in h:
            out.append(f"- {label}: docreader HTTP ÷ CLI pages/s: {d['s_per_page'] / h['s_per_page']:.2f} "
                       f"(for information)")
    return "\n".join(out)


def corpus_tables(corpus, tools, cells, unavailable):
    lines = ["| file (pages) | read as | " + " | ".join(t.name for t in tools) + " |",
             "|---|---|" + "---|" * len(tools)]
    missing = []
    for inp in corpus:
        how = {"en": "default", "zh": "default; Tesseract chi_sim",
               "ko": "docreader `ocr_lang ko`; Tesseract kor+eng",
               "ja-vert": "docreader `ocr_lang ja-vert`; Tesseract jpn_vert"}[inp.lang]
        row = [f"{inp.name} ({inp.pages})", how]
        for t in tools:
            if t.name in unavailable:
                row.append("not available")
                continue
            c = cells[(inp.name, t.name)]
            if c.error:
                row.append(brief(c.error, 120))
                continue
            found = snippets_found(inp.snippets, c.text)
            wall = med([s.wall for s in c.samples])
            row.append(f"{len(found)}/{len(inp.snippets)} · {wall / inp.pages:.2f} s/page")
            for s in inp.snippets:
                if s not in found:
                    missing.append(f"{inp.name}, {t.name}: “{s}”")
        lines.append("| " + " | ".join(x.replace("|", "/") for x in row) + " |")
    summary = ["| tool | snippets found | files with every snippet | s/page, median | CPU s/page "
               "| peak RSS MB | not read |", "|---|--:|--:|--:|--:|--:|---|"]
    for t in tools:
        if t.name in unavailable:
            summary.append(f"| {t.name} | — | — | — | — | — | not available: {unavailable[t.name]} |")
            continue
        k = n = full = files = 0
        spp, cpp, rss, skipped = [], [], [], []
        for inp in corpus:
            c = cells[(inp.name, t.name)]
            if c.error:
                skipped.append(inp.name)
                continue
            found = snippets_found(inp.snippets, c.text)
            k, n, files = k + len(found), n + len(inp.snippets), files + 1
            full += len(found) == len(inp.snippets)
            spp += [s.wall / inp.pages for s in c.samples]
            cpp += [s.cpu / inp.pages for s in c.samples if s.cpu is not None]
            rss += [s.rss_kib for s in c.samples if s.rss_kib]
        summary.append(f"| {t.name} | {k}/{n} | {full}/{files} | {f2(med(spp))} | {f2(med(cpp))} | "
                       f"{f2(max(rss) * 1024 / MB, 0) if rss else '—'} | "
                       f"{', '.join(skipped) if skipped else ''} |")
    return "\n".join(lines), "\n".join(summary), missing


# --------------------------------------------------------------------------- main


def main():
    # RapidOCR's onnxruntime wheel (1.29 on) would record usage events for upload to
    # Microsoft; every child inherits the opt-out (docreader sets it for itself anyway).
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.environ.get("DOCREADER_BIN", "target/release/docreader"),
                    help="docreader binary (default: $DOCREADER_BIN, else target/release/docreader)")
    ap.add_argument("--quick", action="store_true",
                    help="one English scan, one clean English page (300 dpi), one clean Chinese page, "
                         "1 timed run, no warm-up, 3 corpus rows: a try-out, not a measurement "
                         "(explicit options still win)")
    ap.add_argument("--runs", type=int, help="timed rounds over the generated pages (default 3; quick 1)")
    ap.add_argument("--warmup", type=int, help="untimed runs of each tool on the first page first (default 1; quick 0)")
    ap.add_argument("--en-scans", type=int, help="noisy English A4 scans, 200 dpi JPEG (default 5; quick 1)")
    ap.add_argument("--en-clean", type=int, help="clean English A4 PNGs, 300 and 150 dpi alternately "
                                                 "(default 2; quick 1)")
    ap.add_argument("--zh-clean", type=int, help="clean Chinese A4 PNGs, 200 dpi (default 1)")
    ap.add_argument("--zh-scans", type=int, help="noisy Chinese A4 scans, 200 dpi JPEG (default 1; quick 0)")
    ap.add_argument("--corpus", default=os.environ.get("DOCREADER_CORPUS",
                                                       os.path.join(ROOT, "tests", "corpus")))
    ap.add_argument("--no-corpus", action="store_true")
    ap.add_argument("--corpus-runs", type=int,
                    help="timed runs per corpus file, after the generated pages (default 1)")
    ap.add_argument("--tools", default="",
                    help="comma-separated subset of: docreader CLI, docreader HTTP, RapidOCR, Tesseract, "
                         "'Tesseract, default threads' (that last one only when named); quote the list")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", help="keep the generated pages, outputs and the server log here")
    ap.add_argument("--json", help="also write the numbers here")
    args = ap.parse_args()

    q = args.quick
    defaults = {"runs": 1 if q else 3, "warmup": 0 if q else 1, "en_scans": 1 if q else 5,
                "en_clean": 1 if q else 2, "zh_clean": 1, "zh_scans": 0 if q else 1, "corpus_runs": 1}
    for k, v in defaults.items():
        if getattr(args, k) is None:
            setattr(args, k, v)
    if args.runs < 1:
        sys.exit("bench-ocr: --runs must be at least 1")

    binary = os.path.abspath(args.bin if os.path.isabs(args.bin) else os.path.join(ROOT, args.bin))
    if not os.access(binary, os.X_OK):
        sys.exit(f"bench-ocr: no docreader binary at {binary}\n"
                 f"  build it first: cargo build --release   (or set DOCREADER_BIN)")
    try:
        import PIL  # noqa: F401
    except ImportError:
        sys.exit("bench-ocr: Pillow is needed to generate the pages (python3 -m pip install Pillow; "
                 "run.sh does it)")

    tools = [DocreaderCli(binary), DocreaderHttp(binary), RapidOcr(), Tesseract(True)]
    if args.tools:
        every = tools + [Tesseract(False)]
        want = [x.strip() for x in re.split(r",(?! default)", args.tools) if x.strip()]
        unknown = set(want) - {t.name for t in every}
        if unknown:
            sys.exit(f"bench-ocr: unknown tool(s) {sorted(unknown)}; known: {[t.name for t in every]}")
        tools = [t for t in every if t.name in want]

    workdir = os.path.abspath(args.out) if args.out else tempfile.mkdtemp(prefix="docreader-bench-ocr-")
    os.makedirs(workdir, exist_ok=True)
    busy0, _, steal0 = cpu_stat()
    own0, wall0 = self_cpu(waited=True), time.monotonic()
    status = 0
    http_cpu = 0.0
    try:
        status, report = bench(args, binary, tools, workdir)
        busy1, _, steal1 = cpu_stat()
        own1 = self_cpu(waited=True)
        for t in tools:
            if isinstance(t, DocreaderHttp) and t.server:
                http_cpu = t.server.cpu_s()  # the server and its worker, before they go
    finally:
        for t in tools:
            t.close()
        if not args.out:
            shutil.rmtree(workdir, ignore_errors=True)
    wall = time.monotonic() - wall0
    # Whatever else ran meanwhile: machine-wide busy CPU minus our own (the tools are
    # waited-for children) and the HTTP server's, plus what the hypervisor stole.
    others = max(0.0, (busy1 - busy0) - (own1 - own0) - http_cpu)
    steal = steal1 - steal0
    n = ncpu()
    tail = (f"run took {wall:.0f} s; CPU used by other processes meanwhile: {others:.1f} s "
            f"({others / (wall * n):.0%} of {n} CPUs), stolen by the hypervisor: {steal:.1f} s")
    print()
    print(tail)
    if others / (wall * n) > 0.1 or steal / (wall * n) > 0.05:
        print("warning: other work competed for the CPUs during the run; the numbers are skewed "
              "(RapidOCR most: it runs as many threads as there are cores)")
    if args.json:
        report["others_cpu_s"], report["wall_s"], report["steal_s"] = others, wall, steal
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1, ensure_ascii=False)
    return status


def bench(args, binary, tools, workdir):
    n = ncpu()
    b0, i0, _ = cpu_stat()
    time.sleep(1.0)
    b1, i1, _ = cpu_stat()
    busy_before = (b1 - b0) / max((b1 - b0) + (i1 - i0), 1e-9)
    load = os.getloadavg()
    ver = versions(binary)
    started = datetime.datetime.now().astimezone()
    print("# OCR benchmark" + (" (--quick: a try-out, not a measurement)" if args.quick else ""))
    print()
    print(f"- date: {started.strftime('%Y-%m-%d %H:%M %Z')}")
    print(f"- machine: {machine()}")
    print(f"- load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; CPU busy in the second "
          f"before: {busy_before:.0%}" + ("  **(busy: another job is running; numbers are skewed)**"
                                            if busy_before > 0.2 or load[0] > 0.5 * n else ""))
    print(f"- docreader: {binary} ({ver.get('docreader', '?')}, built "
          f"{datetime.datetime.fromtimestamp(os.path.getmtime(binary)).strftime('%Y-%m-%d %H:%M')}); "
          f"OCR threads: {os.environ.get('DOCREADER_OCR_THREADS') or f'{n} (nproc)'}; "
          f"HTTP: `docreader serve --workers 1`")
    print(f"- RapidOCR: rapidocr_onnxruntime {ver.get('rapidocr_onnxruntime')}, onnxruntime "
          f"{ver.get('onnxruntime')} (its default threads); Tesseract {ver.get('tesseract', '—')}; "
          f"Pillow {ver.get('Pillow')}, numpy {ver.get('numpy')}, rapidfuzz {ver.get('rapidfuzz')}"
          + ("" if _rf_lev else " (**missing: pure-Python Levenshtein, difflib alignment**)"))
    print(f"- {args.runs} timed round(s) over the generated pages, tools in turn on each page, after "
          f"{args.warmup} untimed warm-up run(s) of each tool on the first page; {args.corpus_runs} timed run(s) per corpus file; every run a "
          f"fresh process under GNU time"
          + ("" if GNU_TIME else " (**GNU time missing: no peak RSS or CPU for child processes**)"))
    print(f"- work dir: {workdir}", flush=True)

    log("generating the pages …")
    t0 = time.perf_counter()
    counts = {"en-scan": args.en_scans, "en-clean": args.en_clean, "zh-clean": args.zh_clean,
              "zh-scan": args.zh_scans}
    gen, gen_notes = make_inputs(workdir, counts, args.seed)
    log(f"  {len(gen)} pages in {time.perf_counter() - t0:.1f} s")
    corpus = []
    corpus_note = None
    if not args.no_corpus:
        if os.path.exists(os.path.join(args.corpus, "MANIFEST.tsv")):
            corpus = corpus_inputs(args.corpus, QUICK_CORPUS if args.quick else None)
        else:
            corpus_note = f"no corpus at {args.corpus} (`--corpus DIR` or $DOCREADER_CORPUS): its rows are skipped"

    unavailable = {}
    for t in tools:
        why = t.setup(workdir)
        if why:
            unavailable[t.name] = why
            log(f"note: {t.name}: {why}")
    live = [t for t in tools if t.name not in unavailable]

    cells = {}
    for inp in gen + corpus:
        for t in tools:
            c = cells[(inp.name, t.name)] = Cell(inp, t)
            if t.name in unavailable:
                c.error = f"not available: {unavailable[t.name]}"
            else:
                why = t.cannot(inp)
                if why:
                    c.error = why

    log(f"measuring {len(gen)} generated pages × {len(live)} tools")
    measure(gen, live, args.runs, args.warmup, workdir, cells)
    if corpus:
        log(f"measuring {len(corpus)} corpus files × {len(live)} tools")
        measure(corpus, live, args.corpus_runs, 0, workdir, cells)

    classes = [(k, [i for i in gen if i.klass == k]) for k in CLASSES]
    classes = [(k, ins) for k, ins in classes if ins]
    summ = {}
    for klass, ins in classes:
        for t in tools:
            if t.name not in unavailable:
                summ[(klass, t.name)] = summarize(cells, ins, t)

    print()
    print("Inputs (generated, seeded; A4, English prose from a seeded sentence generator, Chinese "
          "likewise):")
    print()
    for inp in gen:
        print(f"- `{inp.name}`: {inp.desc}")
    for note in gen_notes:
        print(f"- **{note}**")
    if corpus:
        print(f"- corpus: {len(corpus)} image rows of {os.path.join(args.corpus, 'MANIFEST.tsv')} expecting "
              f"`ocr:` ({sum(i.pages for i in corpus)} pages){' (quick: a subset)' if args.quick else ''}")
    elif corpus_note:
        print(f"- **{corpus_note}**")
    print()
    if classes:
        print(main_table(classes, tools, summ, cells, unavailable))
        print()
        print("s/page: wall time of a fresh process (Python start, import and model load included for "
              "RapidOCR; model load included for docreader CLI and Tesseract), or upload + first read "
              "for HTTP. In-process: docreader's `elapsed_ms`, or RapidOCR's `engine()` call alone. "
              "CPU: user + system (GNU time; /proc for the HTTP server and its worker), which shows "
              "what a multi-threaded tool costs that its wall time hides. CER: Levenshtein distance "
              "over NFKC text with all whitespace removed ÷ reference length, summed over the class's "
              "pages. Word gaps kept: spaces between two words on a reference line that the output "
              "also has (any whitespace), by character alignment; words found: reference words found "
              "whole in the output.")
        print()
        print("Goals (issue #5):")
        print()
        print(goal_lines(classes, summ, tools))
    missing = []
    if corpus:
        t1, t2, missing = corpus_tables(corpus, tools, cells, unavailable)
        print()
        print("Corpus OCR rows (reference: snippets only, matched as the corpus README says: NFKC, "
              "no whitespace, case-insensitive; cells: snippets found · s/page):")
        print()
        print(t1)
        print()
        print(t2)
        if missing:
            print()
            print("Snippets not found: " + "; ".join(missing))
    sys.stdout.flush()

    if args.out:
        for (name, tool), c in cells.items():
            if c.text is not None:
                safe = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{name}.{tool}.txt")
                with open(os.path.join(workdir, safe), "w", encoding="utf-8") as f:
                    f.write(c.text)
        for inp in gen:
            with open(inp.path + ".ref.txt", "w", encoding="utf-8") as f:
                f.write(inp.ref)

    report = {
        "date": started.isoformat(), "machine": machine(), "versions": ver, "quick": args.quick,
        "runs": args.runs, "warmup": args.warmup, "corpus_runs": args.corpus_runs,
        "load_avg_start": load, "busy_before": busy_before,
        "unavailable": unavailable,
        "inputs": [{"name": i.name, "class": i.klass, "pages": i.pages, "lang": i.lang, "desc": i.desc,
                    "snippets": i.snippets} for i in gen + corpus],
        "classes": {f"{k} | {t}": v for (k, t), v in summ.items()},
        "cells": [{
            "input": c.inp.name, "tool": c.tool.name, "error": c.error, "engine": c.engine,
            "wall_s": [s.wall for s in c.samples], "cpu_s": [s.cpu for s in c.samples],
            "in_process_s": [s.core for s in c.samples], "load_s": [s.load for s in c.samples],
            "peak_rss_kib": [s.rss_kib for s in c.samples],
            "cer": (lambda e: e[0] / e[1] if e[1] else None)(cer_counts(c.inp.ref, c.text)[:2])
            if c.inp.ref is not None and c.text is not None else None,
            "snippets_found": snippets_found(c.inp.snippets, c.text)
            if c.inp.snippets is not None and c.text is not None else None,
        } for c in cells.values()],
    }
    broken = [c for c in cells.values() if c.tool.docreader and c.error and c.tool.name not in unavailable]
    broken += [c for c in cells.values() if c.tool.docreader and c.tool.name in unavailable]
    return (1 if broken else 0), report


if __name__ == "__main__":
    sys.exit(main())
