#!/usr/bin/env python3
"""Install, once, a pinned npm package set for docreader's tests and print where it is.

    python3 scripts/npmenv.py --name npm-tokens --dir tests/tokens

Copies DIR's package.json and package-lock.json to <cache>/NAME and runs `npm ci` there
(the exact versions of the lock, from the npm registry). <cache> is the one scripts/pyenv.py
uses (never the repo). The lock's sha256 is kept beside it: later runs do nothing while it
matches. Runs at the same time wait for each other. stdout is only the directory; messages
go to stderr.
"""
import argparse
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from pyenv import cache_dir  # noqa: E402  (the same cache, by the same rules)

STAMP = ".lock.sha256"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--name", required=True)
    ap.add_argument("--dir", required=True, help="folder with package.json and package-lock.json")
    args = ap.parse_args()
    src = os.path.abspath(args.dir)
    lock = os.path.join(src, "package-lock.json")
    with open(lock, "rb") as f:
        want = hashlib.sha256(f.read()).hexdigest()
    dest = os.path.join(cache_dir(), args.name)
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    with open(dest + ".lock", "w") as lk:
        fcntl.flock(lk, fcntl.LOCK_EX)
        stamp = os.path.join(dest, STAMP)
        have = open(stamp).read().strip() if os.path.exists(stamp) else ""
        if have != want or not os.path.isdir(os.path.join(dest, "node_modules")):
            if shutil.which("npm") is None:
                sys.exit("npmenv: npm is not installed (Debian: apt-get install npm)")
            print(f"npmenv: installing {args.dir} into {dest}", file=sys.stderr, flush=True)
            shutil.rmtree(dest, ignore_errors=True)
            os.makedirs(dest)
            for f in ("package.json", "package-lock.json"):
                shutil.copy(os.path.join(src, f), dest)
            subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                           cwd=dest, check=True, stdout=sys.stderr)
            with open(stamp, "w") as f:
                f.write(want + "\n")
    print(dest)


if __name__ == "__main__":
    main()
