#!/usr/bin/env bash
# HTTP load benchmark (see bench/README.md), issue #6: docreader serve on loopback, driven by
# an asyncio client (aiohttp). Four parts side by side in one run: pages/s of a 200-page PDF
# with 1 worker vs N, upload + read latency at concurrency 1/8/32, server RSS while 16
# clients upload 50 MB files at once, and a scanned PDF's first vs repeated read.
#
#   bash bench/load/run.sh [--quick] [--parts scaling,latency,upload,scan] [--json FILE]
#   DOCREADER_BIN=path/to/docreader bash bench/load/run.sh
#
# Installs what is missing (idempotent): aiohttp==3.14.5 in the pinned bench venv (bench/requirements.txt, built once by scripts/pyenv.py),
# and the native libraries
# docreader loads (PDFium, ONNX Runtime, OCR models: scripts/fetch_native.py, what
# `make native` does). It never builds docreader.
set -euo pipefail

BENCH=bench-load
# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

fetch_native   # PDFium and the OCR engine (skipped when already in the cache)
pip_install aiohttp "aiohttp==3.14.5" || exit 2   # the client: nothing runs without it

status=0
"$PYTHON" "$here/bench_load.py" "$@" || status=$?
exit "$status"
