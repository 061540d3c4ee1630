#!/usr/bin/env bash
# Office and CSV benchmark (see bench/README.md): docreader's CLI side by side with
# python-calamine on a generated 100,000-row x 10-column .xlsx, and with Python's csv module
# (and a plain read() as a floor) on a generated 50 MB CSV.
#
#   bash bench/office/run.sh [--runs 3] [--xlsx-rows 100000] [--csv-bytes 50000000] [--out DIR] [--json FILE]
#   DOCREADER_BIN=path/to/docreader bash bench/office/run.sh
#
# Installs what is missing (idempotent): xlsxwriter (generates the workbook) and
# python-calamine with pip, GNU time (peak RSS) with apt-get. It never builds docreader.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
PYTHON="${PYTHON:-python3}"
export DOCREADER_BIN="${DOCREADER_BIN:-target/release/docreader}"
export PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1 DEBIAN_FRONTEND=noninteractive

if [ ! -x "$DOCREADER_BIN" ]; then
  echo "bench-office: no docreader binary at $DOCREADER_BIN" >&2
  echo "  build it first: cargo build --release   (or set DOCREADER_BIN=/path/to/docreader)" >&2
  exit 2
fi

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
last_lines() { tail -n 3 "$1" | tr '\n' ' ' | sed 's/  */ /g'; }

# pip_install MODULE SPEC: install SPEC unless MODULE imports.
pip_install() {
  if "$PYTHON" -c "import $1" 2>/dev/null; then return 0; fi
  echo "bench-office: installing $2" >&2
  if ! "$PYTHON" -m pip install --quiet "$2" >"$log" 2>&1; then
    echo "bench-office: pip install $2 failed: $(last_lines "$log")" >&2
    return 1
  fi
}
# A failed install is not fatal: the rows that need the package say why.
pip_install xlsxwriter xlsxwriter || true
pip_install python_calamine python-calamine || true

# GNU time for the peak RSS of each child (without it the RSS column reads "?").
if [ ! -x /usr/bin/time ]; then
  sudo=""
  if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"; fi
  if [ "$(id -u)" = 0 ] || [ -n "$sudo" ]; then
    echo "bench-office: installing time (GNU time)" >&2
    $sudo apt-get install -y -qq time >"$log" 2>&1 \
      || { $sudo apt-get update -qq >"$log" 2>&1 || true; $sudo apt-get install -y -qq time >"$log" 2>&1; } \
      || echo "bench-office: apt-get install time failed: $(last_lines "$log"); no peak RSS" >&2
  else
    echo "bench-office: /usr/bin/time missing and apt-get as root not available: no peak RSS" >&2
  fi
fi

exec "$PYTHON" "$here/bench_office.py" "$@"
