#!/usr/bin/env bash
# PDF structure (issue #44): docreader's Markdown of a PDF side by side with pymupdf4llm
# (pymupdf==2.0), markitdown[pdf]==0.1.9 and docling-rs==2.52.7 (its text-layer mode), scored
# on table cells, headings, reading order and running headers/footers left out, with the
# time per file and pages/s. Corpora: docling's PDF tests and their groundtruth Markdown,
# markitdown's PDF table tests (expected Markdown and test assertions), docling's scanned
# (OCR) tests. See bench/structure/bench_structure.py for every rule.
#
#   git clone https://github.com/docling-project/docling ../docling
#   git clone https://github.com/microsoft/markitdown ../markitdown
#   bash bench/structure/run.sh --docling ../docling --markitdown ../markitdown [--per-file] [--json FILE]
#   DOCREADER_BIN=path/to/docreader bash bench/structure/run.sh --docling ../docling --tools docreader,pymupdf4llm
#
# The peers come from the pinned bench venv (bench/requirements.txt); a peer that is missing
# is not dropped: its rows say "not measured — why". Nothing is downloaded at run time;
# it never builds docreader.
set -euo pipefail

BENCH=bench-structure
# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

fetch_native                                          # PDFium (and OCR models) for docreader
pip_install pymupdf "pymupdf==2.0" || true            # holds pymupdf4llm since 2.0
pip_install pymupdf4llm "pymupdf4llm==2.0" || true    # the 2.x shim; older pymupdf needs 1.x
pip_install pymupdf.layout "pymupdf-layout==2.0" || true
pip_install markitdown "markitdown==0.1.9" || true
pip_install pdfminer "pdfminer.six==20260107" || true # markitdown[pdf]
pip_install pdfplumber "pdfplumber==0.11.11" || true
pip_install docling_rs "docling-rs==2.52.7" || true
pip_install pypdfium2 "pypdfium2==5.15.2" || exit 2   # page counts and the furniture lines
pip_install rapidfuzz "rapidfuzz==3.14.6" || exit 2   # the scores
"$PYTHON" "$here/bench_structure.py" --bin "$DOCREADER_BIN" "$@"
