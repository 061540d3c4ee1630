"""Page images: docreader over HTTP against pypdfium2 in-process, the same pages, the same dpi.

For each PDF and dpi, every page is drawn as PNG by
  - docreader: `GET /files/{id}/pages/{n}?dpi=D` on one `docreader serve --workers 1`
    (HTTP, the worker, PDFium, PNG encoding; the document opened for every page, as each
    request stands alone), one client, one request at a time;
  - pypdfium2 (the same PDFium build docreader loads comes from its wheel) rendering the page
    to a bitmap and Pillow saving it as PNG (its default compression), in two ways: the
    document opened once for all pages, and opened again for every page (what a service
    answering one page a request does).
Each figure is the best of `--rounds` runs of all pages (the machine is shared and noisy).
The ratio is pypdfium2's time ÷ docreader's: ≥ 0.9 is the goal (docreader at most ~11 %
slower). Pixel sizes are checked equal within a pixel (pypdfium2 rounds up); PNG bytes are
reported (the encoders differ: zlib level 6 in Pillow, the png crate's balanced level here).
"""
import argparse
import io
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from benchlib import Server, log, machine  # noqa: E402
from search.bench_search import request, upload  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
FILES = ["tests/corpus/pdf/tracemonkey.pdf", "fixtures/pdf/thirty_pages.pdf",
         "tests/corpus/pdf/GeoTopo-komprimiert.pdf"]


def get_png(port, path):
    import http.client
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    conn.request("GET", path)
    r = conn.getresponse()
    data = r.read()
    conn.close()
    if r.status != 200:
        raise SystemExit(f"GET {path}: {r.status} {data[:300]!r}")
    return data


def png_size(data):
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def pdfium_pages(path, pages, dpi, reopen):
    import pypdfium2 as pdfium
    out = []
    doc = None if reopen else pdfium.PdfDocument(path)
    for n in range(pages):
        d = pdfium.PdfDocument(path) if reopen else doc
        page = d[n]
        img = page.render(scale=dpi / 72).to_pil()
        buf = io.BytesIO()
        img.save(buf, format="PNG")
        out.append(buf.getvalue())
        page.close()
        if reopen:
            d.close()
    if doc is not None:
        doc.close()
    return out


def best(fn, rounds):
    times, result = [], None
    for _ in range(rounds):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return min(times), result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--dpi", default="96,150")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json")
    args = ap.parse_args()
    import pypdfium2.version as v
    log(f"machine: {machine()}; pypdfium2 {v.PYPDFIUM_INFO}, PDFium {v.PDFIUM_INFO}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        srv = Server(os.path.abspath(args.bin), os.path.join(tmp, "data"), os.path.join(tmp, "serve.log"), 1).start()
        try:
            for rel in FILES:
                path = os.path.join(ROOT, rel)
                with open(path, "rb") as f:
                    fid = upload(srv.port, os.path.basename(path), f.read())
                status, env = request(srv.port, "POST", "/read",
                                      json.dumps({"file_id": fid, "max_chars": 1, "ocr": "none"}),
                                      {"Content-Type": "application/json"})
                pages = env["total_pages"]
                for dpi in [float(d) for d in args.dpi.split(",")]:
                    ours_t, ours = best(lambda: [get_png(srv.port, f"/files/{fid}/pages/{n}?dpi={dpi:g}")
                                                 for n in range(1, pages + 1)], args.rounds)
                    once_t, once = best(lambda: pdfium_pages(path, pages, dpi, False), args.rounds)
                    each_t, _ = best(lambda: pdfium_pages(path, pages, dpi, True), args.rounds)
                    # pypdfium2 rounds a side up (1754.17 → 1755), docreader to the nearest.
                    same = all(max(abs(x - y) for x, y in zip(png_size(a), png_size(b))) <= 1
                               for a, b in zip(ours, once))
                    row = {"file": rel, "pages": pages, "dpi": dpi,
                           "docreader_s": round(ours_t, 3), "pypdfium2_open_each_s": round(each_t, 3),
                           "pypdfium2_open_once_s": round(once_t, 3),
                           "ratio_open_each": round(each_t / ours_t, 2), "ratio_open_once": round(once_t / ours_t, 2),
                           "docreader_ms_per_page": round(ours_t / pages * 1000, 1),
                           "docreader_png_kb": round(sum(map(len, ours)) / 1024 / pages, 1),
                           "pillow_png_kb": round(sum(map(len, once)) / 1024 / pages, 1),
                           "same_pixel_sizes": same}
                    rows.append(row)
                    log(json.dumps(row))
        finally:
            srv.stop()
    print("| file (pages) | dpi | docreader, HTTP | pypdfium2 + Pillow, open per page | ratio | "
          "pypdfium2 + Pillow, open once | ratio | PNG per page: docreader / Pillow | sizes within 1 px |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|---|")
    for r in rows:
        print(f"| {os.path.basename(r['file'])} ({r['pages']}) | {r['dpi']:g} | {r['docreader_s']:.3f} s "
              f"({r['docreader_ms_per_page']} ms/page) | {r['pypdfium2_open_each_s']:.3f} s | "
              f"{r['ratio_open_each']:.2f}× | {r['pypdfium2_open_once_s']:.3f} s | {r['ratio_open_once']:.2f}× | "
              f"{r['docreader_png_kb']} / {r['pillow_png_kb']} KB | {'yes' if r['same_pixel_sizes'] else 'NO'} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
