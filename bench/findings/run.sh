#!/usr/bin/env bash
# False positives of the hidden-text findings (issue #21): every file of tests/corpus,
# of a docling checkout's tests/data (when given) and the PDF manuals of Debian's
# texlive-latex-recommended-doc (fetched with apt-get download into a temp dir, unpacked,
# never installed) read with `docreader read`, and every file with a finding listed for a
# person to judge.
#
#   bash bench/findings/run.sh [--docling DIR]
#   DOCREADER_BIN=target/release/docreader bash bench/findings/run.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
bin="${DOCREADER_BIN:-target/debug/docreader}"
[ -x "$bin" ] || { echo "bench-findings: no docreader binary at $bin (cargo build first)" >&2; exit 2; }
dirs=("$root/tests/corpus")
if [ "${1:-}" = "--docling" ]; then dirs+=("$2/tests/data"); fi
work="$(mktemp -d "${TMPDIR:-/tmp}/docreader-findings.XXXXXX")"
trap 'rm -rf "$work"' EXIT
if (cd "$work" && apt-get download texlive-latex-recommended-doc >/dev/null 2>&1); then
  dpkg-deb -x "$work"/texlive-latex-recommended-doc_*.deb "$work/deb"
  dirs+=("$work/deb")
else
  echo "bench-findings: apt-get download texlive-latex-recommended-doc failed; its PDFs are left out" >&2
fi
python3 bench/findings/scan.py "$bin" "${dirs[@]}"
