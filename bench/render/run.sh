#!/usr/bin/env bash
# Page images (issue #20): docreader's GET /files/{id}/pages/{n} against pypdfium2 rendering
# the same pages at the same dpi and encoding them as PNG with Pillow, side by side in one
# run. See bench/render/bench_render.py.
#
#   bash bench/render/run.sh [--dpi 96,150] [--rounds 3]
#   DOCREADER_BIN=path/to/docreader bash bench/render/run.sh
set -euo pipefail

BENCH=bench-render
# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

fetch_native
"$PYTHON" "$here/bench_render.py" --bin "$DOCREADER_BIN" "$@"
