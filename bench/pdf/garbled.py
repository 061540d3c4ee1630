#!/usr/bin/env python3
"""False OCR on ordinary PDFs (issue #43): how many pages of documents with a good text
layer the verdict sends to OCR as `garbled_text`. Every PDF under the given directories is
read with `ocr: none` (the verdict is reported without running OCR); the pages flagged
`garbled_text` are counted and listed for a person to judge.

    python3 bench/pdf/garbled.py target/release/docreader DIR...
    bash bench/pdf/garbled.sh            # Debian's texlive-latex-recommended-doc manuals
"""
import json
import pathlib
import subprocess
import sys


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    binary, dirs = sys.argv[1], sys.argv[2:]
    files = sorted(p for d in dirs for p in pathlib.Path(d).rglob("*.pdf"))
    pages = flagged = 0
    listed = []
    for f in files:
        out = subprocess.run(
            [binary, "read", "--json", "--ocr", "none", "--max-chars", "50000000", str(f)],
            capture_output=True,
            text=True,
        )
        try:
            env = json.loads(out.stdout)
        except json.JSONDecodeError:
            continue
        if env.get("status") != "ok":
            continue
        pages += env.get("total_pages", 0)
        garbled = [p["page"] for p in env.get("pages_ocr") or [] if p.get("reason") == "garbled_text"]
        flagged += len(garbled)
        if garbled:
            listed.append((f, garbled))
    for f, g in listed:
        print(f"{f.name}: pages {','.join(map(str, g[:20]))}{' …' if len(g) > 20 else ''}")
    share = 100.0 * flagged / pages if pages else 0.0
    print(f"{len(files)} PDFs, {pages} pages: {flagged} flagged garbled_text ({share:.2f} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
