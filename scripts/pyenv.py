#!/usr/bin/env python3
"""Create, once, the pinned Python environment for docreader's tests and print its python.

    python3 scripts/pyenv.py                 # <cache>/venv from tests/python/requirements.txt
    PY="$(python3 scripts/pyenv.py)"         # stdout is only the venv's python path
    python3 scripts/pyenv.py --name venv-bench --requirements bench/requirements.txt

<cache> is the parent of the native dir scripts/fetch_native.py uses: the parent of
$DOCREADER_NATIVE_DIR, else $XDG_CACHE_HOME/docreader, else ~/.cache/docreader. The venv
is never in the repo.

The requirements file pins every package, dependencies included, with `==`; it is installed
with --no-deps and then `pip check`ed, so nothing unpinned slips in. The file's sha256 is
kept in the venv: the next run does nothing while it matches, and rebuilds the venv from
scratch when the file changed (or when the venv is broken or half built). Runs at the same
time wait for each other (a lock next to the venv). Messages go to stderr.
"""
import argparse
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from fetch_native import native_dir  # noqa: E402  (the same cache, by the same rules)

STAMP = ".requirements.sha256"


def log(msg):
    print(f"pyenv: {msg}", file=sys.stderr, flush=True)


def cache_dir():
    return os.path.dirname(os.path.normpath(native_dir()))


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def shown(path):
    rel = os.path.relpath(path, ROOT)
    return path if rel.startswith("..") else rel


def venv_python(venv):
    return os.path.join(venv, "bin", "python")


def up_to_date(venv, want):
    stamp = os.path.join(venv, STAMP)
    try:
        with open(stamp) as f:
            if f.read().strip() != want:
                return False
    except OSError:
        return False
    # The interpreter the venv was made from may have gone (a Python upgrade): rebuild then.
    ok = subprocess.run([venv_python(venv), "-c", ""], stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL).returncode == 0
    if not ok:
        log(f"{venv_python(venv)} does not run any more; rebuilding")
    return ok


def build(venv, requirements, want):
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    env.pop("PYTHONPATH", None)
    env.pop("PIP_USER", None)
    if os.path.exists(venv):
        log(f"{shown(requirements)} changed (or the venv is incomplete): rebuilding {venv}")
        shutil.rmtree(venv)
    else:
        log(f"creating {venv} (Python {sys.version.split()[0]})")
    if sys.version_info[:2] != (3, 11):
        log(f"note: the pins were chosen for Python 3.11; this is {sys.version.split()[0]}")
    subprocess.run([sys.executable, "-m", "venv", venv], check=True, env=env)
    py = venv_python(venv)
    log(f"installing {shown(requirements)}")
    subprocess.run([py, "-m", "pip", "install", "--quiet", "--no-deps", "--require-virtualenv",
                    "-r", requirements], check=True, env=env, stdout=sys.stderr)
    check = subprocess.run([py, "-m", "pip", "check"], env=env, capture_output=True, text=True)
    if check.returncode != 0:
        sys.stderr.write(check.stdout + check.stderr)
        sys.exit(f"pyenv: {shown(requirements)} is not a complete, consistent set of pins "
                 "(pip check above); add the missing dependencies with their == versions")
    # Written last: a build cut short has no stamp and is redone next time.
    with open(os.path.join(venv, STAMP), "w") as f:
        f.write(want + "\n")
    log(f"ready: {py}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requirements", default=os.path.join(ROOT, "tests", "python", "requirements.txt"),
                    help="pinned requirements (default: tests/python/requirements.txt)")
    ap.add_argument("--name", default="venv", help="the venv's folder name in the cache (default: venv)")
    args = ap.parse_args()
    if os.sep in args.name or args.name in ("", ".", "..", "native"):
        sys.exit(f"pyenv: --name must be a plain folder name, not {args.name!r}")
    requirements = os.path.abspath(args.requirements)
    if not os.path.isfile(requirements):
        sys.exit(f"pyenv: no requirements file at {requirements}")

    cache = cache_dir()
    os.makedirs(cache, exist_ok=True)
    venv = os.path.join(cache, args.name)
    want = sha256(requirements)
    with open(os.path.join(cache, f".{args.name}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not up_to_date(venv, want):
            try:
                build(venv, requirements, want)
            except subprocess.CalledProcessError as e:
                sys.exit(f"pyenv: {' '.join(map(str, e.cmd))} failed (exit {e.returncode})")
    print(venv_python(venv))


if __name__ == "__main__":
    main()
