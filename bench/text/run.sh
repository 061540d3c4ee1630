#!/usr/bin/env bash
# Legacy-encoded text (issue #23): docreader's whole-file detection + decoding of large
# GBK, Shift_JIS, Big5 and windows-1252 files, beside a plain encoding_rs decode of the same
# bytes (examples/decode_ref.rs) and Python's codec, for reference.
#
#   bash bench/text/run.sh [--runs 5] [--mb 5]
#   DOCREADER_BIN=path/to/docreader bash bench/text/run.sh
#   bash bench/text/run.sh --served 0.05,0.5,5 --runs 7 [--baseline OLD_BINARY]   (whole reads, service-side)
#   bash bench/text/run.sh --accuracy      (chardet's test suite, beside chardetng alone and charset-normalizer: accuracy.py)
#
# It builds the reference with `cargo build --release --example decode_ref` when missing.
set -euo pipefail

BENCH=bench-text
# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

if [ "${1:-}" = --accuracy ]; then
  exec "$PYTHON" "$here/accuracy.py" "$DOCREADER_BIN"
fi
ref="${DECODE_REF_BIN:-target/release/examples/decode_ref}"
if [ ! -x "$ref" ]; then
  cargo build --release --locked --example decode_ref >&2
fi
"$PYTHON" "$here/bench_text.py" --ref "$ref" "$@"
