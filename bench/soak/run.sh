#!/usr/bin/env bash
# Soak test (see bench/README.md), issues #6 and #15: one docreader serve, 10,000 mixed reads
# from a few concurrent clients (good files, a zip bomb, billion laughs, truncated PDFs, blocked
# types, random bytes, empty files, bad options), counted by status and error code, with
# attacks mixed in (slowloris, stalled upload bodies, idle keep-alive connections, archives
# disguised as PDFs and images, e-mail attachment bombs, a delete during a long OCR read), the
# server's RSS sampled every second and /healthz probed all along. Prints PASS or FAIL per
# criterion and exits 1 when one fails.
#
#   bash bench/soak/run.sh [--reads 10000] [--clients 4] [--quick] [--attack-share 0.03] [--json FILE]
#   DOCREADER_BIN=path/to/docreader bash bench/soak/run.sh
#
# Installs what is missing (idempotent): aiohttp==3.14.5 in the pinned bench venv (bench/requirements.txt, built once by scripts/pyenv.py),
# and the native libraries
# docreader loads (PDFium, ONNX Runtime, OCR models: scripts/fetch_native.py, what
# `make native` does). It never builds docreader.
set -euo pipefail

BENCH=bench-soak
# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

fetch_native   # PDFium and the OCR engine (skipped when already in the cache)
pip_install aiohttp "aiohttp==3.14.5" || exit 2   # the client: nothing runs without it

status=0
"$PYTHON" "$here/bench_soak.py" "$@" || status=$?
exit "$status"
