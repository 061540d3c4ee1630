"""bench/text accuracy: which encoding docreader finds for every file of chardet's own test
suite (tests/<ENCODING>/…, as published in the chardet 5.2.0 sdist on PyPI, sha256-pinned,
fetched once into the cache), beside chardetng alone (examples/chardetng_guess.rs, the
detector docreader builds on, fed each file whole) and charset-normalizer on the same bytes
(issue #43 item 6).

A file counts as right when the encoding found is the directory's, the WHATWG decoder of it
(`WHATWG`: Shift_JIS is windows-31J, GB2312 is read as GBK, TIS-620 as windows-874,
ISO-8859-1 as windows-1252, a BOM's UTF-16/32 byte order), or one that decodes its bytes to
the same text (checked with Python's codecs of both); an encoding Python does not know counts
as wrong.

    bash bench/text/run.sh --accuracy            (or: python3 bench/text/accuracy.py BIN)
"""
import codecs
import collections
import hashlib
import json
import os
import subprocess
import sys
import tarfile
import urllib.request

SDIST = "chardet-5.2.0.tar.gz"
SHA256 = "1b3b6ff479a8c414bc3fa2c0852995695c4a026dcd6d0633b2dd092ca39c1cf7"

# Directory name → Python codec of what the files are in.
CODEC = {
    "Big5": "big5", "CP932": "cp932", "CP949": "cp949", "EUC-JP": "euc_jp", "EUC-KR": "euc_kr",
    "EUC-TW": "euc_tw", "GB2312": "gb2312", "IBM855": "cp855", "IBM866": "cp866", "Johab": "johab",
    "KOI8-R": "koi8_r", "MacCyrillic": "mac_cyrillic", "MacRoman": "mac_roman",
    "SHIFT_JIS": "shift_jis", "TIS-620": "tis_620", "UTF-16": "utf_16", "UTF-16BE": "utf_16_be",
    "UTF-16LE": "utf_16_le", "UTF-32": "utf_32", "UTF-32BE": "utf_32_be", "UTF-32LE": "utf_32_le",
    "ascii": "ascii", "iso-2022-jp": "iso2022_jp", "iso-2022-kr": "iso2022_kr",
    "utf-8": "utf_8", "utf-8-sig": "utf_8_sig", "windows-1252": "cp1252",
}

# A name docreader or charset-normalizer reports → Python codec.
FOUND = {
    "utf-8": "utf_8", "utf_8": "utf_8", "utf-16le": "utf_16_le", "utf-16be": "utf_16_be",
    "utf_16": "utf_16", "utf-32le": "utf_32_le", "utf-32be": "utf_32_be", "utf_32": "utf_32",
    "gbk": "gbk", "gb18030": "gb18030", "gb2312": "gb2312", "big5": "big5", "big5hkscs": "big5hkscs",
    "shift_jis": "cp932", "cp932": "cp932", "euc-jp": "euc_jp", "euc_jp": "euc_jp",
    "euc-kr": "cp949", "euc_kr": "euc_kr", "cp949": "cp949", "iso-2022-jp": "iso2022_jp",
    "iso-2022-kr": "iso2022_kr", "iso2022_jp": "iso2022_jp", "iso2022_kr": "iso2022_kr",
    "koi8-r": "koi8_r", "koi8_r": "koi8_r", "koi8-u": "koi8_u", "koi8_u": "koi8_u",
    "ibm866": "cp866", "cp866": "cp866", "ibm855": "cp855", "cp855": "cp855",
    "x-mac-cyrillic": "mac_cyrillic", "mac_cyrillic": "mac_cyrillic", "macintosh": "mac_roman",
    "mac_roman": "mac_roman", "windows-874": "cp874", "cp874": "cp874", "tis_620": "tis_620",
    "ascii": "ascii", "johab": "johab", "ibm500": "cp500", "ibm037": "cp037",
    # Python has no EUC-TW codec: the name alone is compared (same_text's first test).
    "euc-tw": "euc_tw",
}
for n in range(1250, 1259):
    FOUND[f"windows-{n}"] = FOUND[f"cp{n}"] = f"cp{n}"
for n in range(1, 17):
    FOUND[f"iso-8859-{n}"] = FOUND[f"iso8859_{n}"] = f"iso8859_{n}"
FOUND["latin_1"] = "latin_1"


def codec_of_dir(name):
    if name in CODEC:
        return CODEC[name]
    # iso-8859-2-czech, windows-1250-polish, …
    head = "-".join(name.split("-")[:3]) if name.startswith("iso-8859") else "-".join(name.split("-")[:2])
    return FOUND.get(head.lower())


# What the WHATWG names for a directory's encoding (browsers decode these labels so; Python's
# codec may refuse a byte the WHATWG decoder maps): a found name among them is right.
WHATWG = {
    "SHIFT_JIS": {"cp932"}, "CP932": {"cp932"}, "GB2312": {"gbk", "gb18030"}, "TIS-620": {"cp874"},
    "EUC-KR": {"cp949"}, "CP949": {"cp949"}, "UTF-16": {"utf_16_le", "utf_16_be"},
    "UTF-32": {"utf_32_le", "utf_32_be"}, "utf-8-sig": {"utf_8"}, "iso-8859-1": {"cp1252"},
    "ascii": {"utf_8", "cp1252"},
}


def codec(name):
    """A reported name as a Python codec: the table above, else Python's own lookup
    (charset-normalizer reports Python codec names: `utf_16_le`, `euc_jis_2004`, …)."""
    name = (name or "").lower()
    if name in FOUND:
        return FOUND[name]
    try:
        return codecs.lookup(name).name.replace("-", "_")
    except LookupError:
        return None


def right(data, d, want, found):
    return found in WHATWG.get(d, ()) or same_text(data, want, found)


def same_text(data, want, found):
    if want is None or found is None:
        return False
    if want == found:
        return True
    try:
        return data.decode(want) == data.decode(found)
    except (UnicodeDecodeError, LookupError):
        return False


def tests_dir():
    cache = os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")),
                         "docreader", "chardet-tests")
    root = os.path.join(cache, "chardet-5.2.0", "tests")
    if os.path.isdir(root):
        return root
    os.makedirs(cache, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
                    "chardet==5.2.0", "-d", cache], check=True)
    path = os.path.join(cache, SDIST)
    with open(path, "rb") as f:
        got = hashlib.sha256(f.read()).hexdigest()
    if got != SHA256:
        sys.exit(f"accuracy: {SDIST} has sha256 {got}, not the pinned {SHA256}")
    with tarfile.open(path) as t:
        t.extractall(cache, members=[m for m in t.getmembers() if m.name.startswith("chardet-5.2.0/tests/")],
                     filter="data")
    return root


def chardetng_guesses(root):
    """chardetng alone on every file (examples/chardetng_guess.rs, built here when missing):
    path → the encoding it names."""
    ref = os.environ.get("CHARDETNG_BIN", "target/debug/examples/chardetng_guess")
    if not os.path.exists(ref):
        subprocess.run(["cargo", "build", "--locked", "--example", "chardetng_guess"], check=True)
    paths = [os.path.join(root, d, f) for d in sorted(os.listdir(root)) if os.path.isdir(os.path.join(root, d))
             for f in sorted(os.listdir(os.path.join(root, d)))]
    out = subprocess.run([ref] + paths, capture_output=True, text=True, check=True).stdout
    return dict(line.split("\t", 1) for line in out.splitlines())


def main():
    bin_ = sys.argv[1] if len(sys.argv) > 1 else os.environ["DOCREADER_BIN"]
    root = tests_dir()
    ng = chardetng_guesses(root)
    try:
        from charset_normalizer import from_bytes
    except ImportError:
        from_bytes = None
    rows = collections.OrderedDict()
    wrong = []
    for d in sorted(os.listdir(root)):
        full = os.path.join(root, d)
        if not os.path.isdir(full):
            continue
        want = codec_of_dir(d)
        n = ours = theirs = plain = 0
        for f in sorted(os.listdir(full)):
            path = os.path.join(full, f)
            data = open(path, "rb").read()
            out = subprocess.run([bin_, "read", "--json", path, "--max-chars", "10"], capture_output=True)
            try:
                found = json.loads(out.stdout).get("encoding")
            except ValueError:
                found = None
            n += 1
            ok = right(data, d, want, codec(found))
            ours += ok
            if not ok:
                wrong.append((d, f, found))
            plain += right(data, d, want, codec(ng.get(path)))
            if from_bytes:
                best = from_bytes(data).best()
                theirs += right(data, d, want, codec(best.encoding if best else None))
        rows[d] = (n, ours, plain, theirs)
    total = [sum(r[i] for r in rows.values()) for i in range(4)]
    print("| chardet test directory | files | docreader right | chardetng alone right | charset-normalizer right |")
    print("|---|--:|--:|--:|--:|")
    for d, (n, ours, plain, theirs) in rows.items():
        print(f"| {d} | {n} | {ours} | {plain} | {theirs if from_bytes else '—'} |")
    pct = lambda k: f"{total[k]} ({100 * total[k] / total[0]:.1f} %)"  # noqa: E731
    print(f"| **all** | {total[0]} | {pct(1)} | {pct(2)} | {pct(3)} |")
    print()
    print("docreader's misses: " + "; ".join(f"{d}/{f} → {found}" for d, f, found in wrong))


if __name__ == "__main__":
    main()
