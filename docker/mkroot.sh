#!/usr/bin/env bash
# Assemble the container's root filesystem from what docreader actually loads: the binary
# (stripped), the native parts `make native` fetched (PDFium, ONNX Runtime, the PP-OCR
# models and the page layout model), libtesseract with its language data, and the shared-library closure of all of them
# (`ldd`), copied from the installed Debian packages without docs, man pages or locales. Plus a
# shell-less user (uid 10001) and the data volume's mount point. No base image is needed: the
# Containerfile is `FROM scratch`.
#
#   docker/mkroot.sh ROOT BINARY NATIVE_DIR
#
# Used by `make image` (docker/Containerfile, on the host) and by docker/Dockerfile's `root`
# stage (from source, with registry access), so both images have the same contents. Writes
# ROOT/../manifest.tsv: each file, its size and the Debian package it came from.
set -euo pipefail

root=$1 bin=$2 native=$3
arch_dir=/lib/x86_64-linux-gnu
tess_lib=${DOCREADER_TESSERACT_LIB:-$arch_dir/libtesseract.so.5}
tessdata=${DOCREADER_TESSDATA:-/usr/share/tesseract-ocr/5/tessdata}

[ -x "$bin" ] || { echo "mkroot: no binary at $bin (build it first)" >&2; exit 1; }
for f in libpdfium.so libonnxruntime.so ppocr_det.onnx ppocr_det.fused.onnx ppocr_cls.onnx \
    ppocr_rec_v6_tiny.onnx ppocr_rec_v6_tiny.txt layout_cdla.onnx; do
    [ -f "$native/$f" ] || { echo "mkroot: $native/$f missing: run \`make native\`" >&2; exit 1; }
done
[ -f "$tess_lib" ] || { echo "mkroot: $tess_lib missing: run \`make native\` (it installs Debian's libtesseract5)" >&2; exit 1; }
[ -f "$tessdata/eng.traineddata" ] || { echo "mkroot: no Tesseract language data in $tessdata" >&2; exit 1; }

rm -rf "$root" "$(dirname "$root")/data"
mkdir -p "$(dirname "$root")/data"
mkdir -p "$root"/{usr/local/bin,opt/docreader/native,lib64,etc,tmp,var/lib} \
    "$root$arch_dir" "$root/usr/share/tesseract-ocr/5"
chmod 1777 "$root/tmp"

# The binary without its line tables (122 MB → ~40 MB); backtraces keep function names.
strip --strip-debug -o "$root/usr/local/bin/docreader" "$bin"
chmod 755 "$root/usr/local/bin/docreader"

# Native parts: only what is loaded (not the wheels' markers, not a cache of optimised graphs).
for f in libpdfium.so libonnxruntime.so ppocr_det.onnx ppocr_det.fused.onnx ppocr_cls.onnx \
    ppocr_rec_v6_tiny.onnx ppocr_rec_v6_tiny.txt layout_cdla.onnx; do
    install -m 644 "$native/$f" "$root/opt/docreader/native/$f"
done
cp -L "$tess_lib" "$root$arch_dir/libtesseract.so.5"
# Tesseract's language data (every installed language, OSD included) and its configs.
cp -rL "$tessdata" "$root/usr/share/tesseract-ocr/5/tessdata"

# The shared-library closure of everything above, each under its soname where the loader
# looks for it. ld.so itself also at the path the binaries name (/lib64).
closure() {
    ldd "$@" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// && $2 ~ /^\(0x/ {print $1}' | sort -u
}
for lib in $(closure "$bin" "$native/libpdfium.so" "$native/libonnxruntime.so" "$tess_lib"); do
    name=$(basename "$lib")
    case "$name" in ld-linux-x86-64.so.2) ;; *) cp -L "$lib" "$root$arch_dir/$name" ;; esac
done
cp -L /lib64/ld-linux-x86-64.so.2 "$root$arch_dir/ld-linux-x86-64.so.2"
ln -sf "$arch_dir/ld-linux-x86-64.so.2" "$root/lib64/ld-linux-x86-64.so.2"
# A loader cache, so dlopen("libtesseract.so.5") finds it like on any Debian system.
ldconfig -r "$root" 2>/dev/null || true

# A user without a shell or home beyond the data volume; names for uid/gid 10001.
cat >"$root/etc/passwd" <<'EOF'
root:x:0:0:root:/nonexistent:/nonexistent
docreader:x:10001:10001:docreader:/var/lib/docreader:/nonexistent
EOF
cat >"$root/etc/group" <<'EOF'
root:x:0:
docreader:x:10001:
EOF
printf 'hosts: files dns\n' >"$root/etc/nsswitch.conf"
# The data volume's mount point is not in the root: the Containerfile creates it owned by
# uid 10001 (COPY makes what it copies root's unless told otherwise).

# What each part weighs, and which Debian package each library came from.
manifest=$(dirname "$root")/manifest.tsv
{
    printf 'path\tbytes\tpackage\n'
    (cd "$root" && find . -type f -printf '%P\t%s\n') | sort | while IFS=$'\t' read -r p s; do
        pkg=-
        case "$p" in
            lib/x86_64-linux-gnu/*) pkg=$(dpkg -S "$arch_dir/$(basename "$p")" "/usr$arch_dir/$(basename "$p")" 2>/dev/null | head -1 | cut -d: -f1 || true) ;;
            usr/share/tesseract-ocr/*) pkg=$(dpkg -S "/$p" 2>/dev/null | head -1 | cut -d: -f1 || true) ;;
            opt/docreader/native/*) pkg="PyPI wheels (make native)" ;;
            usr/local/bin/docreader) pkg="this repository" ;;
        esac
        printf '%s\t%s\t%s\n' "$p" "$s" "${pkg:--}"
    done
} >"$manifest"
echo "mkroot: $(du -sh --apparent-size "$root" | cut -f1) in $root ($(($(wc -l <"$manifest") - 1)) files; $manifest)"
