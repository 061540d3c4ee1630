#!/usr/bin/env python3
"""Writes a dense Japanese PDF for timing the CJK text path: `python3 bench/pdf/make_cjk_pdf.py
PAGES OUT.pdf [--identity]`.

Each page holds 45 lines of 40 kanji and kana from a fixed seed, drawn with a non-embedded
Type0 font of Adobe-Japan1 and no /ToUnicode (the CIDs' text comes from the collection's
table). By default the font is written with the predefined `UniJIS-UCS2-H` CMap (the code is
UCS-2); `--identity` writes it with `Identity-H` (the code is the CID), which `cid.rs` reads
from the content streams, and puts CID 13706 (𠮷) on every line.
"""
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "fixtures"))
from make_cid_fixtures import serialize, stream  # noqa: E402

# (character, Adobe-Japan1 CID) of common kanji and kana.
CHARS = [("の", 550), ("に", 548), ("は", 552), ("を", 587), ("た", 536), ("が", 517),
         ("吉", 1634), ("田", 3134), ("野", 3834), ("家", 1352), ("日", 3049), ("本", 3746),
         ("人", 2367), ("大", 2705), ("年", 3255), ("中", 2882), ("国", 2077), ("会", 1393)]


def main():
    pages = int(sys.argv[1])
    out_path = sys.argv[2]
    identity = "--identity" in sys.argv
    rng = random.Random(1)
    objs = {1: b"<< /Type /Catalog /Pages 2 0 R >>"}
    kids = []
    font = 3
    objs[font] = (b"<< /Type /Font /Subtype /Type0 /BaseFont /KozMinPr6N-Regular /Encoding /"
                  + (b"Identity-H" if identity else b"UniJIS-UCS2-H")
                  + b" /DescendantFonts [4 0 R] >>")
    objs[4] = (b"<< /Type /Font /Subtype /CIDFontType0 /BaseFont /KozMinPr6N-Regular "
               b"/CIDSystemInfo << /Registry (Adobe) /Ordering (Japan1) /Supplement 6 >> "
               b"/FontDescriptor 5 0 R /DW 1000 >>")
    objs[5] = (b"<< /Type /FontDescriptor /FontName /KozMinPr6N-Regular /Flags 6 "
               b"/FontBBox [-437 -340 1147 1317] /ItalicAngle 0 /Ascent 880 /Descent -120 "
               b"/CapHeight 742 /StemV 80 >>")
    n = 6
    for _ in range(pages):
        lines = []
        for k in range(45):
            picked = [rng.choice(CHARS) for _ in range(40)]
            if identity:
                codes = "".join(f"{c:04X}" for _, c in picked) + "358A"
            else:
                codes = "".join(f"{ord(ch):04X}" for ch, _ in picked)
            lines.append(f"1 0 0 1 40 {800 - 16 * k} Tm <{codes}> Tj")
        content = ("BT /C0 12 Tf " + " ".join(lines) + " ET").encode()
        page, contents = n, n + 1
        n += 2
        objs[page] = (f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents {contents} 0 R "
                      f"/Resources << /Font << /C0 {font} 0 R >> >> >>").encode()
        objs[contents] = stream(content, level=6)
        kids.append(page)
    objs[2] = f"<< /Type /Pages /Count {pages} /Kids [{' '.join(f'{k} 0 R' for k in kids)}] >>".encode()
    out = serialize(objs, head=b"%PDF-1.4\n")
    with open(out_path, "wb") as f:
        f.write(out)


if __name__ == "__main__":
    main()
