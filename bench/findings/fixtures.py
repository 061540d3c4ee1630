#!/usr/bin/env python3
"""Precision and recall of the hidden-text findings over the fixture set (issue #21).

Each hostile fixture holds the hidden text of its kinds and, beside it, the benign
look-alikes that must not be flagged (an OCR'd scan's text layer, white text on a dark band
or shape, 6 pt small print, a translucent watermark, a line drawn twice for bold, ...). The
findings expected of each file are listed below, by (kind, place); every other finding is a
false positive, every one missing a false negative.

    python3 bench/findings/fixtures.py [BINARY]     (default target/debug/docreader)
"""
import json
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# fixture -> (extra CLI arguments, the findings expected: (kind, place)). A place is
# "page N", "slide N", "sheet NAME", "paragraph N" or "line N" (HTML: where it stands).
EXPECTED = {
    "pdf/hidden_text.pdf": (["--ocr", "none"], {
        ("invisible_render_mode", "page 1"), ("tiny_text", "page 1"), ("off_page", "page 1"),
        ("injection_pattern", "page 1"),
    }),
    "pdf/hidden_layers.pdf": (["--ocr", "none"], {
        ("hidden_layer", "page 1"), ("injection_pattern", "page 1"), ("hidden_layer", "page 2"),
        ("overlapping_different", "page 2"),
    }),
    "pdf/hidden_scan_layer.pdf": ([], {
        ("invisible_text_not_in_image", "page 2"), ("injection_pattern", "page 2"),
    }),
    "pdf/hidden_drawn.pdf": (["--ocr", "none"], {
        ("low_contrast", "page 1"), ("covered", "page 1"), ("overlapping_different", "page 1"),
        ("injection_pattern", "page 1"), ("low_contrast", "page 2"), ("covered", "page 2"),
    }),
    "html/hidden.html": ([], {
        ("hidden_element", "line 4"), ("injection_pattern", "line 4"),
    }),
    "office/hidden.docx": ([], {
        ("hidden_run", "paragraph 1"), ("hidden_run", "paragraph 4"), ("injection_pattern", "line 2"),
    }),
    "office/white_text.docx": ([], {
        ("white_text", "paragraph 0"), ("tiny_text", "paragraph 1"),
        ("alt_text", "paragraph 6"), ("injection_pattern", "paragraph 6"),
    }),
    "office/report.docx": ([], {("comment", "paragraph 16")}),
    "office/comments.pptx": ([], {("comment", "slide 1"), ("comment", "slide 2")}),
    "office/comments.xlsx": ([], {("comment", "sheet Stock")}),
    "office/white_text.xlsx": ([], {
        ("white_text", "sheet Sales"), ("tiny_text", "sheet Sales"), ("injection_pattern", "sheet Sales"),
        ("alt_text", "sheet Sales"),
    }),
    "office/hidden_slide.pptx": ([], {("hidden_slide", "slide 2")}),
    "office/white_text.pptx": ([], {
        ("white_text", "slide 1"), ("tiny_text", "slide 1"), ("injection_pattern", "slide 1"),
        ("alt_text", "slide 1"),
    }),
    "office/book.xlsx": (["--max-cells", "100000"], {("hidden_sheet", "sheet Hidden")}),
    "office/styles.xlsx": ([], {("hidden_row", "sheet Orders"), ("hidden_column", "sheet Orders")}),
    # Inside form XObjects (a stamp form's ordinary words are the look-alike).
    "pdf/hidden_forms.pdf": (["--ocr", "none"], {
        ("invisible_render_mode", "page 1"), ("covered", "page 1"), ("tiny_text", "page 1"),
        ("injection_pattern", "page 1"),
    }),
    # Pages whose text needs a repair (Hebrew in visual order; a font without a Unicode map).
    "pdf/hidden_rtl.pdf": (["--ocr", "none"], {
        ("invisible_render_mode", "page 1"), ("injection_pattern", "page 1"),
    }),
    "pdf/hidden_no_tounicode.pdf": (["--ocr", "none"], {
        ("invisible_render_mode", "page 1"), ("injection_pattern", "page 1"),
    }),
    # OpenDocument: hidden spans, section, fields and paragraph; hidden slides.
    "office/hidden.odt": ([], {("hidden_run", "paragraph 0"), ("injection_pattern", "line 1"),
                               ("hidden_run", "paragraph 1"), ("hidden_run", "paragraph 2"),
                               ("hidden_run", "paragraph 3")}),
    "office/hidden_slide.odp": ([], {("hidden_slide", "slide 2"), ("hidden_slide", "slide 3")}),
    # An e-book chapter's hidden element.
    "office/hidden.epub": ([], {("hidden_element", "chapter 2"), ("injection_pattern", "chapter 2")}),
    # Headers and footers: a picture's description, a hidden run and a white run.
    "office/side_stories.docx": ([], {
        ("alt_text", "paragraph 1"), ("injection_pattern", "paragraph 1"),
        ("hidden_run", "paragraph 4"), ("white_text", "paragraph 5"),
    }),
}


def place(f):
    for k in ("page", "slide", "sheet", "paragraph", "chapter"):
        if k in f:
            return f"{k} {f[k]}"
    return f"line {f.get('line')}"


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target/debug/docreader")
    per_kind = {}  # kind -> [tp, fp, fn]
    wrong = []
    for name, (args, expected) in EXPECTED.items():
        out = subprocess.run([binary, "read", "--json", os.path.join(ROOT, "fixtures", name),
                              "--max-chars", "1000000", *args], capture_output=True, check=False)
        env = json.loads(out.stdout or b"null") or {}
        if env.get("status") != "ok":
            sys.exit(f"bench-findings: {name}: {env.get('error', out.stderr.decode()[-300:])}")
        got = {(f["kind"], place(f)) for f in (env.get("security") or {}).get("findings", [])}
        for kind, _ in got | expected:
            per_kind.setdefault(kind, [0, 0, 0])
        for k in got & expected:
            per_kind[k[0]][0] += 1
        for k in got - expected:
            per_kind[k[0]][1] += 1
            wrong.append(f"false positive: {name} {k}")
        for k in expected - got:
            per_kind[k[0]][2] += 1
            wrong.append(f"missed: {name} {k}")
    print("| kind | found right | flagged wrongly | missed | precision | recall |")
    print("|---|--:|--:|--:|--:|--:|")
    tot = [0, 0, 0]
    for kind in sorted(per_kind):
        tp, fp, fn = per_kind[kind]
        tot = [tot[0] + tp, tot[1] + fp, tot[2] + fn]
        print(f"| `{kind}` | {tp} | {fp} | {fn} | {tp / max(tp + fp, 1):.2f} | {tp / max(tp + fn, 1):.2f} |")
    tp, fp, fn = tot
    print(f"| all | {tp} | {fp} | {fn} | **{tp / max(tp + fp, 1):.2f}** | **{tp / max(tp + fn, 1):.2f}** |")
    print(f"\n{len(EXPECTED)} fixtures; places are counted once per kind (a page's, slide's or "
          "sheet's findings of one kind are one).")
    for w in wrong:
        print(w)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
