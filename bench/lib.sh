# Shared set-up of the bench/*/run.sh scripts; source it after setting BENCH (the name used
# in messages), from the script's own folder:
#
#   BENCH=bench-pdf; source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
#
# It moves to the repo root, checks DOCREADER_BIN (it never builds docreader), and gives
# the installers every script uses, each idempotent and never fatal on its own:
#   fetch_native                      scripts/fetch_native.py (what `make native` does)
#   pip_install MODULE SPEC           check that MODULE imports (at SPEC's ==version); with
#                                     PYTHON set by the caller, pip SPEC into it when not
#   apt_install PACKAGE TEST TOOL     a Debian package unless TEST holds: a path, a program
#                                     on PATH, `lang:CODE` (Tesseract data) or `font:LANG`
# A failed install is written to $DOCREADER_BENCH_INSTALL_NOTES as "TOOL: why" (the
# scripts show it in that tool's rows) and to stderr; pip_install then returns 1.
#
# The Python tools run in the pinned bench venv: scripts/pyenv.py builds <cache>/venv-bench
# from bench/requirements.txt once (again only when that file changes) and PYTHON is its
# interpreter. PYTHON=... on the command line uses that interpreter instead, with the old
# ad-hoc `pip install` of what is missing. If the venv cannot be built, python3 is used
# that way too.

here="$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
export DOCREADER_BIN="${DOCREADER_BIN:-target/release/docreader}"
export PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1 DEBIAN_FRONTEND=noninteractive

if [ ! -x "$DOCREADER_BIN" ]; then
  echo "$BENCH: no docreader binary at $DOCREADER_BIN" >&2
  echo "  build it first: cargo build --release   (or set DOCREADER_BIN=/path/to/docreader)" >&2
  exit 2
fi

base_python="${PYTHON:-python3}"   # runs scripts/*.py, as `make` does
bench_venv=""
if [ -z "${PYTHON:-}" ]; then
  if PYTHON="$(python3 scripts/pyenv.py --name venv-bench --requirements bench/requirements.txt)"; then
    bench_venv=1
  else
    echo "$BENCH: the pinned bench venv (scripts/pyenv.py, bench/requirements.txt) could not be built;" \
         "using python3 and installing what is missing with pip" >&2
    PYTHON=python3
  fi
fi

notes="$(mktemp)"
log="$(mktemp)"
trap 'rm -f "$notes" "$log"' EXIT
export DOCREADER_BENCH_INSTALL_NOTES="$notes"

last_lines() { tail -n 3 "$1" | tr '\n' ' ' | sed 's/  */ /g'; }
# note TOOL MESSAGE: why TOOL is missing, shown in its table rows.
note() {
  printf '%s: %s\n' "$1" "$2" >>"$notes"
  echo "$BENCH: $1: $2" >&2
}

fetch_native() {
  if ! "$base_python" scripts/fetch_native.py >"$log" 2>&1; then
    echo "$BENCH: scripts/fetch_native.py failed; docreader's PDF and OCR reads will fail: $(last_lines "$log")" >&2
  fi
}

pip_install() {
  local module="$1" spec="$2" want=""
  case "$spec" in *==*) want="${spec#*==}" ;; esac
  if "$PYTHON" - "$module" "${spec%%==*}" "$want" <<'PY' 2>/dev/null; then return 0; fi
import importlib, importlib.metadata as m, sys
module, dist, want = sys.argv[1], sys.argv[2], sys.argv[3]
importlib.import_module(module)
sys.exit(1 if want and m.version(dist) != want else 0)
PY
  if [ -n "$bench_venv" ]; then
    note "$module" "$spec is not in bench/requirements.txt (the pinned bench venv, $PYTHON)"
    return 1
  fi
  echo "$BENCH: installing $spec" >&2
  if ! "$PYTHON" -m pip install --quiet "$spec" >"$log" 2>&1; then
    note "$module" "pip install $spec failed: $(last_lines "$log")"
    return 1
  fi
}

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
  echo "$BENCH: installing $pkg" >&2
  if $sudo apt-get install -y -qq "$pkg" >"$log" 2>&1; then return 0; fi
  # The package lists may be missing or stale: update once, then try again.
  if [ -z "$apt_updated" ]; then $sudo apt-get update -qq >"$log" 2>&1 || true; apt_updated=1; fi
  if ! $sudo apt-get install -y -qq "$pkg" >"$log" 2>&1; then
    note "$tool" "apt-get install $pkg failed: $(last_lines "$log")"
  fi
}
