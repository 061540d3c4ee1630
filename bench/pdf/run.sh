#!/usr/bin/env bash
# PDF text-extraction benchmark (see bench/README.md): docreader's CLI and HTTP server side
# by side with pypdfium2, pdftotext and kreuzberg on generated 1-, 20- and 200-page PDFs.
#
#   bash bench/pdf/run.sh [--runs 5] [--pages 1,20,200] [--out DIR] [--json FILE]
#   DOCREADER_BIN=path/to/docreader bash bench/pdf/run.sh
#
# Installs what is missing (idempotent): PDFium for docreader (scripts/fetch_native.py),
# pypdfium2==5.15.2 and kreuzberg==4.10.4 in the pinned bench venv (bench/requirements.txt, built once by scripts/pyenv.py),
# pdftotext (poppler-utils) and GNU time
# (peak RSS) with apt-get.
# A tool that cannot be installed is not fatal: its rows in the table say why.
set -euo pipefail

BENCH=bench-pdf
# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

fetch_native   # PDFium for docreader itself (`make bench-pdf` already did it through `make native`)
pip_install pypdfium2 "pypdfium2==5.15.2" || true
pip_install kreuzberg "kreuzberg==4.10.4" || true
apt_install poppler-utils pdftotext pdftotext
apt_install time /usr/bin/time time   # GNU time: peak RSS of each child process

status=0
"$PYTHON" "$here/bench_pdf.py" "$@" || status=$?
exit "$status"
