"""Table profile cost: a CSV of `--mb` MB (fixed seed: an id, a decimal price, a date, a
ticker, a side, a quantity with 5 % empty, a free-text note; quoted fields with commas),
`--runs` times each, in turns: read whole (`--max-chars` the file's size: every row
returned), read with `--profile true` (every row profiled, the default budget's text
returned), and the default read alone (its first part: decoded only as far as it shows; for
information). Reported: the best `elapsed_ms` (the extraction alone) and the peak RSS of the
process (/usr/bin/time). The goal (issue #20): the profile within 1.5× the time of reading
the CSV, memory bounded.
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
        head = "id,price,day,ticker,side,quantity,note\n"
        f.write(head)
        i, size = 0, len(head)
        while True:
            i += 1
            qty = "" if rnd.random() < 0.05 else str(rnd.randint(1, 10_000))
            note = f'"settled, ref {rnd.randint(0, 10**9)}"' if rnd.random() < 0.3 else "ok"
            line = (f"{i},{rnd.uniform(1, 2000):.2f},2026-{rnd.randint(1, 12):02d}-{rnd.randint(1, 28):02d},"
                    f"{rnd.choice(tickers)},{rnd.choice(('buy', 'sell'))},{qty},{note}\n")
            if size + len(line) > mb * 1_000_000:
                return i - 1
            f.write(line)
            size += len(line)


def run(binary, path, opts):
    cmd = ["/usr/bin/time", "-f", "%M", binary, "read", "--json", path] + opts
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
        whole_opts = ["--max-chars", str(min(size, 50_000_000))]
        whole, prof, budgeted = [], [], []
        profile = None
        for _ in range(args.runs):
            whole.append(run(args.bin, path, whole_opts)[:2])
            ms, rss, profile = run(args.bin, path, ["--profile", "true"])
            prof.append((ms, rss))
            budgeted.append(run(args.bin, path, [])[:2])
        assert profile and profile["rows"] == rows, profile
        best_whole, best_prof, best_budgeted = min(whole), min(prof), min(budgeted)
        print("| CSV | rows | read whole | read with profile | ratio (goal ≤ 1.5) | default read (its first part) "
              "| peak RSS: whole / with profile |")
        print("|---|--:|--:|--:|--:|--:|--:|")
        print(f"| {size / 1e6:.1f} MB | {rows:,} | {best_whole[0]} ms | {best_prof[0]} ms | "
              f"{best_prof[0] / best_whole[0]:.2f}× | {best_budgeted[0]} ms | "
              f"{max(r for _, r in whole) / 1024:.0f} / {max(r for _, r in prof) / 1024:.0f} MB |")
        log("profile: " + json.dumps(profile)[:600])


if __name__ == "__main__":
    main()
