#!/usr/bin/env bash
# OCR benchmark (see bench/README.md), issue #5: docreader (CLI and HTTP) side by side with
# RapidOCR (Python, rapidocr_onnxruntime==1.4.4: PP-OCRv4; docreader shares its detection and angle models, and recognises with PP-OCRv6 tiny)
# and Tesseract (Debian tesseract-ocr, OMP_THREAD_LIMIT=1) on generated A4 pages with known
# text (English and Chinese, clean PNGs and noisy scans) and on the OCR image rows of the
# shared corpus. Reports s/page, pages/s, CPU s/page, peak RSS, CER and word spaces kept.
#
#   bash bench/ocr/run.sh [--quick] [--runs 3] [--out DIR] [--json FILE]
#   DOCREADER_BIN=path/to/docreader bash bench/ocr/run.sh
#
# Installs what is missing (idempotent): the native libraries docreader loads (PDFium,
# ONNX Runtime, OCR models: scripts/fetch_native.py, what `make native` does);
# rapidocr_onnxruntime==1.4.4, rapidfuzz and Pillow in the pinned bench venv (bench/requirements.txt, built once by scripts/pyenv.py);
# with apt-get tesseract-ocr and
# its chi_sim, kor, jpn (jpn_vert) data, a CJK font (fonts-wqy-zenhei) and the DejaVu fonts
# for the generated pages, and GNU time (peak RSS). It never builds docreader.
# A tool that cannot be installed is not fatal: its rows in the table say why.
set -euo pipefail

BENCH=bench-ocr
# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

fetch_native   # ONNX Runtime and the PP-OCR models (skipped when already in the cache)
pip_install PIL "Pillow==13.0.0" || true                    # generates the pages
pip_install rapidfuzz "rapidfuzz==3.14.6" || true        # Levenshtein (a slower fallback is built in)
pip_install rapidocr_onnxruntime "rapidocr_onnxruntime==1.4.4" || true
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
