#!/usr/bin/env bash
# PDF text-extraction benchmark (see bench/README.md): docreader's CLI and HTTP server side
# by side with pypdfium2, pdftotext and kreuzberg on generated 1-, 20- and 200-page PDFs.
#
#   bash bench/pdf/run.sh [--runs 5] [--pages 1,20,200] [--out DIR] [--json FILE]
#   DOCREADER_BIN=path/to/docreader bash bench/pdf/run.sh
#
# Installs what is missing (idempotent): PDFium for docreader (scripts/fetch_native.py),
# pypdfium2==5.15.2 and kreuzberg with pip, pdftotext (poppler-utils) and GNU time
# (peak RSS) with apt-get.
# A tool that cannot be installed is not fatal: its rows in the table say why.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
PYTHON="${PYTHON:-python3}"
export DOCREADER_BIN="${DOCREADER_BIN:-target/release/docreader}"
export PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1 DEBIAN_FRONTEND=noninteractive

if [ ! -x "$DOCREADER_BIN" ]; then
  echo "bench-pdf: no docreader binary at $DOCREADER_BIN" >&2
  echo "  build it first: cargo build --release   (or set DOCREADER_BIN=/path/to/docreader)" >&2
  exit 2
fi

notes="$(mktemp)"
log="$(mktemp)"
trap 'rm -f "$notes" "$log"' EXIT
export DOCREADER_BENCH_INSTALL_NOTES="$notes"

# note TOOL MESSAGE: why TOOL is missing, shown in its table rows.
note() { printf '%s: %s\n' "$1" "$2" >>"$notes"; }
last_lines() { tail -n 3 "$1" | tr '\n' ' ' | sed 's/  */ /g'; }

# PDFium for docreader itself (`make bench-pdf` already did this through `make native`).
if ! "$PYTHON" scripts/fetch_native.py >"$log" 2>&1; then
  echo "bench-pdf: scripts/fetch_native.py failed; docreader rows will show the error: $(last_lines "$log")" >&2
fi

# pip_install MODULE SPEC: install SPEC unless MODULE imports (at the pinned version, if any).
pip_install() {
  local module="$1" spec="$2" want=""
  case "$spec" in *==*) want="${spec#*==}" ;; esac
  if "$PYTHON" - "$module" "$want" <<'EOF' 2>/dev/null; then return 0; fi
import importlib, importlib.metadata as m, sys
module, want = sys.argv[1], sys.argv[2]
importlib.import_module(module)
sys.exit(1 if want and m.version(module) != want else 0)
EOF
  echo "bench-pdf: installing $spec" >&2
  if ! "$PYTHON" -m pip install --quiet "$spec" >"$log" 2>&1; then
    echo "bench-pdf: pip install $spec failed: $(last_lines "$log")" >&2
    note "$module" "pip install $spec failed: $(last_lines "$log")"
  fi
}
pip_install pypdfium2 "pypdfium2==5.15.2"
pip_install kreuzberg "kreuzberg"

# apt_install PACKAGE FILE TOOL: install the Debian PACKAGE unless FILE (a path, or a
# program name looked up on PATH) is there; TOOL names the rows that a failure concerns.
apt_updated=""
apt_install() {
  local pkg="$1" file="$2" tool="$3" sudo=""
  case "$file" in
    */*) [ -x "$file" ] && return 0 ;;
    *) type -P "$file" >/dev/null && return 0 ;;
  esac
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"; else sudo="none"; fi
  fi
  if [ "$sudo" = none ] || ! command -v apt-get >/dev/null 2>&1; then
    note "$tool" "$file is missing, and apt-get as root is not available here: install the Debian package $pkg"
    return 0
  fi
  echo "bench-pdf: installing $pkg" >&2
  if $sudo apt-get install -y -qq "$pkg" >"$log" 2>&1; then return 0; fi
  # The package lists may be missing or stale: update once, then try again.
  if [ -z "$apt_updated" ]; then $sudo apt-get update -qq >"$log" 2>&1 || true; apt_updated=1; fi
  if ! $sudo apt-get install -y -qq "$pkg" >"$log" 2>&1; then
    note "$tool" "apt-get install $pkg failed: $(last_lines "$log")"
  fi
}
apt_install poppler-utils pdftotext pdftotext
apt_install time /usr/bin/time time   # GNU time: peak RSS of each child process

status=0
"$PYTHON" "$here/bench_pdf.py" "$@" || status=$?
exit "$status"
