#!/usr/bin/env bash
# `make image`: package a release build of docreader as an OCI image with podman, from
# docker/Containerfile and the root docker/mkroot.sh assembles (no base image, no registry).
#
#   docker/build-image.sh [IMAGE]     (default localhost/docreader:latest)
#
# Needs the release binary (`cargo build --release`), the native parts (`make native`) and, as
# root, installs podman, runc and binutils from Debian when they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."
image=${1:-localhost/docreader:latest}
target=${CARGO_TARGET_DIR:-target}
source docker/podman.sh
need_tools podman runc strip:binutils

stage=$target/image
bash docker/mkroot.sh "$stage/root" "$target/release/docreader" "$(python3 scripts/fetch_native.py --print-dir)"
$PODMAN build --quiet --format docker --tag "$image" -f docker/Containerfile "$stage" >/dev/null
size=$($PODMAN image inspect --format '{{.Size}}' "$image")
echo "image: $image, $((size / 1000000)) MB uncompressed ($size bytes)"
