#!/usr/bin/env bash
# One-shot reads (issue #46 item 2): `POST /read` with the file in the request, on one
# keep-alive connection, beside in-process peers timed around their library call
# (pypdfium2 for a 1-page PDF, kreuzberg for a PPTX), and beside upload + read.
#
#   bash bench/oneshot/run.sh [--runs 30] [--slides 40] [--baseline OLD_BINARY]
#   DOCREADER_BIN=path/to/docreader bash bench/oneshot/run.sh
#
# Installs what is missing in the pinned bench venv (bench/requirements.txt): python-pptx
# (generates the deck), pypdfium2, kreuzberg. It never builds docreader.
set -euo pipefail

BENCH=bench-oneshot
# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

# A failed install is not fatal: the rows that need the package say why.
pip_install pptx "python-pptx==1.0.2" || true

status=0
"$PYTHON" "$here/bench_oneshot.py" --bin "$DOCREADER_BIN" "$@" || status=$?
exit "$status"
