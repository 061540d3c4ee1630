"""bench/text: docreader reading large legacy-encoded files, against a plain encoding_rs decode.

Files are generated from a fixed seed: quote tables in GBK and Big5, Japanese lines in
Shift_JIS, French/German/Spanish lines in windows-1252, each about --mb megabytes. For each,
`docreader read FILE --max-chars 1000` runs --runs times; its extraction time is the
envelope's `elapsed_ms` (detection over the whole file, decoding, line splitting, the
budgeted cut). The reference decodes the same bytes once per run, nothing else.
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import tempfile
import time

ROWS = {
    "gbk": ("代码,名称,价格,涨跌幅", ["贵州茅台", "中国平安", "招商银行", "五粮液", "宁德时代", "比亚迪"]),
    "big5": ("代碼,名稱,價格,漲跌幅", ["台積電", "鴻海", "聯發科", "中華電", "富邦金", "國泰金"]),
}
JAPANESE = ["東京都港区の住所と電話番号。", "日本語のテキストです。", "品質管理の報告書、第三四半期。"]
LATIN = "Le cœur de l'été à Genève: déjà les élèves découvrent où naît la forêt. Über die Brücke gehen Mädchen; señor Muñoz prefiere el café."


def make(kind, size, rnd):
    lines = []
    n = 0
    while n < size:
        if kind in ROWS:
            head, names = ROWS[kind]
            line = head if not lines else f"{rnd.randint(600000, 603999)},{rnd.choice(names)},{rnd.uniform(5, 2000):.2f},{rnd.uniform(-10, 10):.2f}%"
        elif kind == "shift_jis":
            line = f"{len(lines)}: {rnd.choice(JAPANESE)}{rnd.choice(JAPANESE)}"
        else:
            line = f"{len(lines)}: {LATIN}"
        lines.append(line)
        n += len(line) * 2
    codec = {"gbk": "gbk", "big5": "big5", "shift_jis": "shift_jis", "windows-1252": "cp1252"}[kind]
    return ("\n".join(lines) + "\n").encode(codec)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--mb", type=float, default=5.0)
    ap.add_argument("--ref", required=True)
    a = ap.parse_args()
    bin_ = os.environ["DOCREADER_BIN"]
    rnd = random.Random(23)
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for kind in ["gbk", "shift_jis", "big5", "windows-1252"]:
            data = make(kind, int(a.mb * 1e6), rnd)
            path = os.path.join(d, f"{kind}.txt")
            open(path, "wb").write(data)
            size = len(data)
            ms, walls, enc = [], [], None
            for _ in range(a.runs + 1):
                t = time.perf_counter()
                out = subprocess.run([bin_, "read", "--json", path, "--max-chars", "1000"], capture_output=True, check=True)
                walls.append(time.perf_counter() - t)
                env = json.loads(out.stdout)
                enc = env["encoding"]
                ms.append(env["elapsed_ms"])
            ms, walls = ms[1:], walls[1:]
            ref = float(subprocess.run([a.ref, path, kind, str(a.runs)], capture_output=True, check=True, text=True).stdout)
            t = time.perf_counter()
            data.decode({"windows-1252": "cp1252"}.get(kind, kind))
            py = (time.perf_counter() - t) * 1000
            rows.append((kind, size, enc, statistics.median(ms), statistics.median(walls) * 1000, ref, py))
    print("| file | MB | detected | docreader extraction ms (median) | MB/s | CLI wall ms | encoding_rs decode ms | Python decode ms | goal ≥ 100 MB/s |")
    print("|---|--:|---|--:|--:|--:|--:|--:|---|")
    for kind, size, enc, ms, wall, ref, py in rows:
        mbs = size / 1e6 / (ms / 1000) if ms else float("inf")
        print(f"| {kind} | {size / 1e6:.1f} | {enc} | {ms:.0f} | {mbs:.0f} | {wall:.0f} | {ref:.1f} | {py:.1f} | {'met' if mbs >= 100 else 'not met'} |")


if __name__ == "__main__":
    main()
