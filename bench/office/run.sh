#!/usr/bin/env bash
# Office and CSV benchmark (see bench/README.md): docreader's CLI side by side with
# python-calamine on a generated 100,000-row x 10-column .xlsx, and with Python's csv module
# (and a plain read() as a floor) on a generated 50 MB CSV.
#
#   bash bench/office/run.sh [--runs 3] [--xlsx-rows 100000] [--csv-bytes 50000000] [--out DIR] [--json FILE]
#   DOCREADER_BIN=path/to/docreader bash bench/office/run.sh
#
# Installs what is missing (idempotent): xlsxwriter (generates the workbook) and
# python-calamine in the pinned bench venv (bench/requirements.txt, built once by scripts/pyenv.py),
# GNU time (peak RSS) with apt-get. It never builds docreader.
set -euo pipefail

BENCH=bench-office
# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

# A failed install is not fatal: the rows that need the package say why.
pip_install xlsxwriter "xlsxwriter==3.3.1" || true
pip_install python_calamine "python-calamine==0.9.1" || true
apt_install time /usr/bin/time time   # GNU time: peak RSS (without it the RSS column reads "?")

status=0
"$PYTHON" "$here/bench_office.py" "$@" || status=$?
exit "$status"
