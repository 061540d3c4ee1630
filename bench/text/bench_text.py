"""bench/text: docreader reading large legacy-encoded files, against a plain encoding_rs decode.

Files are generated from a fixed seed: quote tables in GBK and Big5, Japanese lines in
Shift_JIS, French/German/Spanish lines in windows-1252, each about --mb megabytes. For each,
`docreader read FILE --max-chars 1000` runs --runs times; its extraction time is the
envelope's `elapsed_ms` (detection over the whole file, decoding, line splitting, the
budgeted cut). The reference decodes the same bytes once per run, nothing else.

`--served 0.05,0.5,5` measures instead files of those sizes (MB) read whole through a running
server (issue #46 item 4: small files): each binary (DOCREADER_BIN, and `--baseline BIN`
side by side, interleaved) serves on a free port, every file is uploaded once and read whole
`--runs` times; the service-side time is the growth of `docreader_read_seconds_sum` on
/metrics over the reads (a float, where `elapsed_ms` rounds a 50 KB read to 0 or 1 ms),
beside charset-normalizer's detection + decoding of the same bytes.
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


def served(bins, sizes, runs):
    """Service-side seconds a whole read of each file takes, per binary (median of rounds)."""
    import shutil
    import socket
    import urllib.request
    import uuid

    def free_port():
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return s.getsockname()[1]

    def call(port, method, path, body=None, ctype="application/json"):
        req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body, method=method,
                                     headers={"Content-Type": ctype} if body is not None else {})
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.read()

    def read_seconds(port):
        total = 0.0
        for line in call(port, "GET", "/metrics").decode().splitlines():
            if line.startswith("docreader_read_seconds_sum"):
                total += float(line.rsplit(" ", 1)[1])
        return total

    rnd = random.Random(46)
    files = [(kind, mb, make(kind, int(mb * 1e6), rnd)) for mb in sizes
             for kind in ["gbk", "shift_jis", "big5", "windows-1252"]]
    results = {}
    with tempfile.TemporaryDirectory() as d:
        servers = {}
        for name, bin_ in bins:
            port = free_port()
            data = os.path.join(d, name)
            os.mkdir(data)
            proc = subprocess.Popen([bin_, "serve", "--addr", f"127.0.0.1:{port}", "--data-dir", data,
                                     "--workers", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    env={**os.environ, "DOCREADER_INDEX_READS": "off"})
            for _ in range(200):
                try:
                    call(port, "GET", "/readyz")
                    break
                except Exception:
                    time.sleep(0.05)
            servers[name] = (proc, port)
        try:
            ids = {}
            for name, (_, port) in servers.items():
                for i, (kind, mb, data) in enumerate(files):
                    boundary = uuid.uuid4().hex
                    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{kind}.txt\"\r\n"
                            "Content-Type: application/octet-stream\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
                    up = json.loads(call(port, "POST", "/upload", body, f"multipart/form-data; boundary={boundary}"))
                    ids[(name, i)] = up["files"][0]["file_id"]
            for i, (kind, mb, data) in enumerate(files):
                per = {name: [] for name in servers}
                for _ in range(runs + 1):  # the first round warms the worker
                    for name, (_, port) in servers.items():  # interleaved
                        before = read_seconds(port)
                        env = json.loads(call(port, "POST", "/read", json.dumps(
                            {"file_id": ids[(name, i)], "max_chars": 50_000_000}).encode()))
                        assert not env.get("truncated"), env.get("next")
                        per[name].append((read_seconds(port) - before, env.get("encoding")))
                for name in servers:
                    times = [t for t, _ in per[name][1:]]
                    results[(name, i)] = (statistics.median(times), per[name][-1][1])
        finally:
            for proc, _ in servers.values():
                proc.terminate()
                proc.wait()
    try:
        from charset_normalizer import from_bytes
    except ImportError:
        from_bytes = None
    names = [n for n, _ in bins]
    print("| file | size | " + " | ".join(f"{n}: detected, service-side ms, MB/s" for n in names)
          + " | charset-normalizer ms (MB/s) | goal ≥ 100 MB/s |")
    print("|---|--:|" + "---|" * len(names) + "--:|---|")
    for i, (kind, mb, data) in enumerate(files):
        size = len(data) / 1e6
        cells, first = [], None
        for n in names:
            t, enc = results[(n, i)]
            rate = size / t if t else float("inf")
            first = rate if first is None else first  # the verdict is docreader's, not the baseline's
            cells.append(f"{enc}, {t * 1000:.2f}, {rate:.0f}")
        cn = ""
        if from_bytes:
            ts = []
            for _ in range(runs):
                t0 = time.perf_counter()
                best = from_bytes(data).best()
                str(best) if best else None
                ts.append(time.perf_counter() - t0)
            t = statistics.median(ts)
            cn = f"{t * 1000:.1f} ({size / t:.0f})"
        print(f"| {kind} | {len(data) / 1e3:.0f} KB | " + " | ".join(cells)
              + f" | {cn} | {'met' if first >= 100 else 'not met'} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--mb", type=float, default=5.0)
    ap.add_argument("--ref", required=True)
    ap.add_argument("--served", help="sizes in MB, comma-separated: whole reads through a server")
    ap.add_argument("--baseline", help="a second docreader binary, measured side by side (--served)")
    a = ap.parse_args()
    if a.served:
        bins = [("docreader", os.environ["DOCREADER_BIN"])]
        if a.baseline:
            bins.append(("baseline", a.baseline))
        served(bins, [float(x) for x in a.served.split(",")], a.runs)
        return
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
