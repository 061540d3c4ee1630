#!/usr/bin/env bash
# Markdown quality: docreader's `output: "markdown"` against Microsoft's markitdown
# (markitdown[docx,pptx,xlsx]==0.1.9, in-process), both scored against docling's groundtruth
# Markdown for its Word, PowerPoint, workbook, HTML and CSV test files (normalised
# Levenshtein similarity; time per file beside it). See bench/markdown/bench_markdown.py.
#
#   git clone https://github.com/docling-project/docling ../docling
#   bash bench/markdown/run.sh --docling ../docling [--formats docx,pptx] [--json FILE]
#   DOCREADER_BIN=path/to/docreader bash bench/markdown/run.sh --docling ../docling --output text
#
# markitdown and rapidfuzz come from the pinned bench venv (bench/requirements.txt). Nothing
# is downloaded at run time; it never builds docreader.
set -euo pipefail

BENCH=bench-markdown
# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

# markitdown[docx,pptx,xlsx]: the converter and what its three extras bring (pip_install
# checks a distribution's version, which an extra has not). Without them its rows say why.
pip_install markitdown "markitdown==0.1.9" || true
pip_install mammoth "mammoth==1.13.0" || true         # docx
pip_install pptx "python-pptx==1.0.2" || true         # pptx
pip_install openpyxl "openpyxl==3.1.5" || true        # xlsx (with pandas)
pip_install pandas "pandas==3.1.1" || true
pip_install rapidfuzz "rapidfuzz==3.14.6" || exit 2   # the scores: nothing is measured without it
"$PYTHON" "$here/bench_markdown.py" --bin "$DOCREADER_BIN" "$@"
