"""Table profile cost: a CSV of `--mb` MB (fixed seed: an id, a decimal price, a date, a
ticker, a side, a quantity with 5 % empty, a free-text note; quoted fields with commas) read
by `docreader read FILE` with and without `--profile true`, `--runs` times each, alternating.
Reported: the best `elapsed_ms` (the extraction alone: decoding, lines, the budgeted cut, and
with the option the profile of every row) and the peak RSS of the process (/usr/bin/time).
The goal (issue #20): the profile within 1.5× the time of the read, memory bounded.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from benchlib import log, machine  # noqa: E402


def make_csv(path, mb):
    rnd = random.Random(20261202)
    tickers = ["ACME", "GLOBX", "INITECH", "UMBRL", "HOOLI", "STARK", "WAYNE", "TYRELL"]
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write("id,price,day,ticker,side,quantity,note\n")
        i, size = 0, 0
        while size < mb * 1_000_000:
            i += 1
            qty = "" if rnd.random() < 0.05 else str(rnd.randint(1, 10_000))
            note = f'"settled, ref {rnd.randint(0, 10**9)}"' if rnd.random() < 0.3 else "ok"
            line = (f"{i},{rnd.uniform(1, 2000):.2f},2026-{rnd.randint(1, 12):02d}-{rnd.randint(1, 28):02d},"
                    f"{rnd.choice(tickers)},{rnd.choice(('buy', 'sell'))},{qty},{note}\n")
            f.write(line)
            size += len(line)
    return i


def run(binary, path, profile):
    cmd = ["/usr/bin/time", "-f", "%M", binary, "read", path] + (["--profile", "true"] if profile else [])
    p = subprocess.run(cmd, capture_output=True, text=True, check=True)
    env = json.loads(p.stdout)
    rss_kb = int(p.stderr.strip().splitlines()[-1])
    return env["elapsed_ms"], rss_kb, env.get("profile")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--mb", type=int, default=50)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    log(f"machine: {machine()}")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trades.csv")
        rows = make_csv(path, args.mb)
        size = os.path.getsize(path)
        plain, prof = [], []
        profile = None
        for _ in range(args.runs):
            plain.append(run(args.bin, path, False)[:2])
            ms, rss, profile = run(args.bin, path, True)
            prof.append((ms, rss))
        assert profile and profile["rows"] == rows, profile
        best_plain, best_prof = min(plain), min(prof)
        print(f"| CSV | rows | read | read with profile | ratio | peak RSS: read / with profile |")
        print(f"|---|--:|--:|--:|--:|--:|")
        print(f"| {size / 1e6:.1f} MB | {rows:,} | {best_plain[0]} ms | {best_prof[0]} ms | "
              f"{best_prof[0] / best_plain[0]:.2f}× | {max(r for _, r in plain) / 1024:.0f} / "
              f"{max(r for _, r in prof) / 1024:.0f} MB |")
        log("profile: " + json.dumps(profile)[:600])


if __name__ == "__main__":
    main()
