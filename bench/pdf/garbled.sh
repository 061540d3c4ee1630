#!/usr/bin/env bash
# False OCR on ordinary PDFs (issue #43): the manuals of Debian's
# texlive-latex-recommended-doc (fetched with apt-get download into a temp dir, unpacked,
# never installed) and tests/corpus through bench/pdf/garbled.py.
#
#   DOCREADER_BIN=target/release/docreader bash bench/pdf/garbled.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
bin="${DOCREADER_BIN:-target/release/docreader}"
[ -x "$bin" ] || { echo "bench-garbled: no docreader binary at $bin (cargo build --release first)" >&2; exit 2; }
work="$(mktemp -d "${TMPDIR:-/tmp}/docreader-garbled.XXXXXX")"
trap 'rm -rf "$work"' EXIT
dirs=("$root/tests/corpus")
if (cd "$work" && apt-get download texlive-latex-recommended-doc >/dev/null 2>&1); then
  dpkg-deb -x "$work"/texlive-latex-recommended-doc_*.deb "$work/deb"
  dirs+=("$work/deb")
else
  echo "bench-garbled: apt-get download texlive-latex-recommended-doc failed; its PDFs are left out" >&2
fi
python3 bench/pdf/garbled.py "$bin" "${dirs[@]}"
