#!/usr/bin/env bash
# OCR benchmark (see bench/README.md), issue #5: docreader (CLI and HTTP) side by side with
# RapidOCR (Python, rapidocr_onnxruntime==1.4.4: the same PP-OCRv4 models docreader runs)
# and Tesseract (Debian tesseract-ocr, OMP_THREAD_LIMIT=1) on generated A4 pages with known
# text (English and Chinese, clean PNGs and noisy scans) and on the OCR image rows of the
# shared corpus. Reports s/page, pages/s, CPU s/page, peak RSS, CER and word spaces kept.
#
#   bash bench/ocr/run.sh [--quick] [--runs 3] [--out DIR] [--json FILE]
#   DOCREADER_BIN=path/to/docreader bash bench/ocr/run.sh
#
# Installs what is missing (idempotent): the native libraries docreader loads (PDFium,
# ONNX Runtime, OCR models: scripts/fetch_native.py, what `make native` does);
# rapidocr_onnxruntime==1.4.4, rapidfuzz and Pillow with pip; with apt-get tesseract-ocr and
# its chi_sim, kor, jpn (jpn_vert) data, a CJK font (fonts-wqy-zenhei) and the DejaVu fonts
# for the generated pages, and GNU time (peak RSS). It never builds docreader.
# A tool that cannot be installed is not fatal: its rows in the table say why.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
PYTHON="${PYTHON:-python3}"
export DOCREADER_BIN="${DOCREADER_BIN:-target/release/docreader}"
export PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1 DEBIAN_FRONTEND=noninteractive

if [ ! -x "$DOCREADER_BIN" ]; then
  echo "bench-ocr: no docreader binary at $DOCREADER_BIN" >&2
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

# ONNX Runtime and the PP-OCR models for docreader (skipped when already in the cache).
if ! "$PYTHON" scripts/fetch_native.py >"$log" 2>&1; then
  echo "bench-ocr: scripts/fetch_native.py failed; docreader rows will show the error: $(last_lines "$log")" >&2
fi

# pip_install MODULE SPEC: install SPEC unless MODULE imports (at the pinned version, if any).
pip_install() {
  local module="$1" spec="$2" want=""
  case "$spec" in *==*) want="${spec#*==}" ;; esac
  if "$PYTHON" - "$module" "${spec%%==*}" "$want" <<'EOF' 2>/dev/null; then return 0; fi
import importlib, importlib.metadata as m, sys
module, dist, want = sys.argv[1], sys.argv[2], sys.argv[3]
importlib.import_module(module)
sys.exit(1 if want and m.version(dist) != want else 0)
EOF
  echo "bench-ocr: installing $spec" >&2
  if ! "$PYTHON" -m pip install --quiet "$spec" >"$log" 2>&1; then
    echo "bench-ocr: pip install $spec failed: $(last_lines "$log")" >&2
    note "$module" "pip install $spec failed: $(last_lines "$log")"
  fi
}
pip_install PIL Pillow || true                      # generates the pages
pip_install rapidfuzz rapidfuzz || true             # Levenshtein (a slower fallback is built in)
pip_install rapidocr_onnxruntime "rapidocr_onnxruntime==1.4.4" || true

# apt_install PACKAGE TEST TOOL: install the Debian PACKAGE unless TEST (a path, a program
# name looked up on PATH, or `lang:CODE` for installed Tesseract data, or `font:LANG` for a
# font fontconfig knows for that language) is satisfied; TOOL names the rows a failure concerns.
apt_updated=""
have() {
  case "$1" in
    lang:*) command -v tesseract >/dev/null 2>&1 \
              && tesseract --list-langs 2>/dev/null | grep -qx "${1#lang:}" ;;
    font:*) command -v fc-list >/dev/null 2>&1 && [ -n "$(fc-list ":lang=${1#font:}" file 2>/dev/null)" ] ;;
    */*) [ -e "$1" ] ;;
    *) type -P "$1" >/dev/null ;;
  esac
}
apt_install() {
  local pkg="$1" test="$2" tool="$3" sudo=""
  have "$test" && return 0
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"; else sudo="none"; fi
  fi
  if [ "$sudo" = none ] || ! command -v apt-get >/dev/null 2>&1; then
    note "$tool" "$test is missing, and apt-get as root is not available here: install the Debian package $pkg"
    return 0
  fi
  echo "bench-ocr: installing $pkg" >&2
  if $sudo apt-get install -y -qq "$pkg" >"$log" 2>&1; then return 0; fi
  # The package lists may be missing or stale: update once, then try again.
  if [ -z "$apt_updated" ]; then $sudo apt-get update -qq >"$log" 2>&1 || true; apt_updated=1; fi
  if ! $sudo apt-get install -y -qq "$pkg" >"$log" 2>&1; then
    note "$tool" "apt-get install $pkg failed: $(last_lines "$log")"
  fi
}
apt_install time /usr/bin/time time                       # GNU time: peak RSS and CPU of each child
apt_install tesseract-ocr tesseract tesseract
apt_install tesseract-ocr-chi-sim lang:chi_sim tesseract
apt_install tesseract-ocr-kor lang:kor tesseract          # docreader reads `ocr_lang ko` with it too
apt_install tesseract-ocr-jpn lang:jpn_vert tesseract     # holds jpn and jpn_vert
apt_install fontconfig fc-list fonts
apt_install fonts-dejavu-core /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf fonts
apt_install fonts-wqy-zenhei font:zh fonts                # the Chinese pages

status=0
"$PYTHON" "$here/bench_ocr.py" "$@" || status=$?
exit "$status"
