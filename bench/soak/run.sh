#!/usr/bin/env bash
# Soak test (see bench/README.md), issue #6: one docreader serve, 10,000 mixed reads from a
# few concurrent clients (good files, a zip bomb, billion laughs, truncated PDFs, blocked
# types, random bytes, empty files, bad options), counted by status and error code, with
# the server's RSS sampled every second.
#
#   bash bench/soak/run.sh [--reads 10000] [--clients 4] [--quick] [--json FILE]
#   DOCREADER_BIN=path/to/docreader bash bench/soak/run.sh
#
# Installs what is missing (idempotent): aiohttp with pip, and the native libraries
# docreader loads (PDFium, ONNX Runtime, OCR models: scripts/fetch_native.py, what
# `make native` does). It never builds docreader.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
PYTHON="${PYTHON:-python3}"
export DOCREADER_BIN="${DOCREADER_BIN:-target/release/docreader}"
export PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1

if [ ! -x "$DOCREADER_BIN" ]; then
  echo "bench-soak: no docreader binary at $DOCREADER_BIN" >&2
  echo "  build it first: cargo build --release   (or set DOCREADER_BIN=/path/to/docreader)" >&2
  exit 2
fi

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
last_lines() { tail -n 3 "$1" | tr '\n' ' ' | sed 's/  */ /g'; }

# PDFium and the OCR engine for docreader (skipped when already in ~/.cache/docreader/native).
if ! "$PYTHON" scripts/fetch_native.py >"$log" 2>&1; then
  echo "bench-soak: scripts/fetch_native.py failed; PDF reads will fail: $(last_lines "$log")" >&2
fi

# pip_install MODULE SPEC: install SPEC unless MODULE imports.
pip_install() {
  if "$PYTHON" -c "import $1" 2>/dev/null; then return 0; fi
  echo "bench-soak: installing $2" >&2
  if ! "$PYTHON" -m pip install --quiet "$2" >"$log" 2>&1; then
    echo "bench-soak: pip install $2 failed: $(last_lines "$log")" >&2
    return 1
  fi
}
pip_install aiohttp aiohttp || exit 2   # the client: nothing runs without it

exec "$PYTHON" "$here/bench_soak.py" "$@"
