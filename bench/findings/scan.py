#!/usr/bin/env python3
"""Reads every file under the given folders with `docreader read` (PDFs with `--ocr none`,
so a scan's text is its own layer), two at a time, and lists every file whose envelope has
`security` findings, with their kinds and first snippets, for a person to judge. Files of
formats docreader refuses count as not read. Used by bench/findings/run.sh:

    python3 bench/findings/scan.py BINARY DIR...
"""
import concurrent.futures as cf
import json
import os
import subprocess
import sys


def files_under(roots):
    for root in roots:
        for folder, _, names in os.walk(root):
            if "groundtruth" in folder.split(os.sep):
                continue  # docling's expected outputs, not documents
            for name in sorted(names):
                yield os.path.join(folder, name)


def read(binary, path):
    """The envelope of one read (or the error answer), or None when nothing came back."""
    args = [binary, "read", "--json", path, "--max-chars", "2000000"]
    if path.lower().endswith(".pdf"):
        args += ["--ocr", "none"]
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    try:
        out = subprocess.run(args, capture_output=True, timeout=300, env=env)
        return json.loads(out.stdout or b"null")
    except (subprocess.TimeoutExpired, ValueError):
        return None


def main():
    binary, roots = sys.argv[1], sys.argv[2:]
    paths = list(files_under(roots))
    read_ok, flagged = 0, []
    with cf.ThreadPoolExecutor(2) as pool:
        for path, env in zip(paths, pool.map(lambda p: read(binary, p), paths)):
            if not env or env.get("status") != "ok":
                continue
            read_ok += 1
            findings = (env.get("security") or {}).get("findings", [])
            if findings:
                flagged.append((path, findings))
    print(f"files {len(paths)}, read {read_ok}, with findings {len(flagged)}")
    for path, findings in flagged:
        kinds = {}
        for f in findings:
            kinds[f["kind"]] = kinds.get(f["kind"], 0) + 1
        shown = [(f["kind"], f.get("how"), f["snippet"][:100]) for f in findings[:3]]
        print(f"- {path}: {kinds} {shown}")


if __name__ == "__main__":
    main()
