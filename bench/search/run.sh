#!/usr/bin/env bash
# Search quality (40 questions over the corpus, right document in the top 3) and latency
# (p50/p99 over 1,000 documents), issue #19. See bench/search/bench_search.py.
#
#   bash bench/search/run.sh [--docs 1000] [--rounds 5]
#   DOCREADER_BIN=path/to/docreader bash bench/search/run.sh
set -euo pipefail

BENCH=bench-search
# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

fetch_native   # PDF and OCR reads of the corpus need PDFium and the OCR engine
"$PYTHON" "$here/bench_search.py" --bin "$DOCREADER_BIN" "$@"
