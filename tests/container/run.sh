#!/usr/bin/env bash
# `make test-container`: the image as users run it. Builds it (`make image`, reusing what is
# built), starts it read-only with a data volume and an API key, puts nginx (Debian's, with
# docker/nginx.conf) in front on loopback, and runs tests/container/check.py through the
# gateway: uploads (50 MB; over the limit), reads (text PDF, scanned PDF with OCR, xlsx, .msg),
# a blocked executable, SSE event by event, request ids, keys, CORS, a restart (nothing lost)
# and SIGTERM during a long OCR read (it completes, the container exits 0).
#
# Needs root (podman, nginx from Debian: installed when missing) and the repository's tests/corpus.
set -euo pipefail
cd "$(dirname "$0")/../.."
source docker/podman.sh
need_tools podman runc nginx:nginx-light curl

image=${IMAGE:-localhost/docreader:latest}
if [ "${SKIP_IMAGE_BUILD:-}" != 1 ]; then  # `make test-container` built it already
    make --no-print-directory image IMAGE="$image"
fi

name=docreader-test-$$
volume=docreader-test-data-$$
work=$(mktemp -d)
chmod 755 "$work"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
svc_port=$(free_port)
gw_port=$(free_port)
key=ci-container-key-0123456789
origin=https://app.example.test

cleanup() {
    set +e
    [ -f "$work/gateway/logs/nginx.pid" ] && nginx -p "$work/gateway" -c "$work/nginx.conf" -s stop 2>/dev/null
    $PODMAN logs "$name" >"$work/container.log" 2>&1
    $PODMAN rm -f -t 0 "$name" >/dev/null 2>&1
    $PODMAN volume rm -f "$volume" >/dev/null 2>&1
    if [ "${ok:-0}" != 1 ]; then
        echo "--- container log (last 40 lines) ---"
        grep -v systemd "$work/container.log" | tail -40
        echo "--- nginx error log ---"
        tail -20 "$work/gateway/logs/error.log" 2>/dev/null
    fi
    rm -rf "$work"
}
trap cleanup EXIT

size=$($PODMAN image inspect --format '{{.Size}}' "$image")
echo "container: image $image is $((size / 1000000)) MB uncompressed"
[ "$size" -lt 250000000 ] || { echo "FAIL: the image is over 250 MB" >&2; exit 1; }
user=$($PODMAN image inspect --format '{{.Config.User}}' "$image")
[ "$user" = "10001:10001" ] || { echo "FAIL: the image runs as '$user', not 10001" >&2; exit 1; }
$PODMAN image inspect --format '{{json .Config.Healthcheck}}' "$image" | grep -q healthcheck \
    || { echo "FAIL: the image has no HEALTHCHECK (built without --format docker?)" >&2; exit 1; }

# Bad operator input: no key on a non-loopback address refuses to start, in one line.
set +e
refusal=$($PODMAN run --rm --network host --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
    -e DOCREADER_ADDR="0.0.0.0:$svc_port" "$image" 2>&1 | grep -v systemd)
set -e
echo "$refusal" | grep -q "DOCREADER_API_KEYS" \
    || { echo "FAIL: no refusal without keys: $refusal" >&2; exit 1; }
echo "container: without keys it refuses to start: $refusal"
# … and a data volume it cannot write, naming the path and the user.
$PODMAN volume create "$volume-ro" >/dev/null
set +e
refusal=$($PODMAN run --rm --network host --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
    -v "$volume-ro:/var/lib/docreader:ro" -e DOCREADER_ADDR="0.0.0.0:$svc_port" \
    -e DOCREADER_API_KEYS="$key:acme" "$image" 2>&1 | grep -v systemd)
set -e
$PODMAN volume rm -f "$volume-ro" >/dev/null
echo "$refusal" | grep -q "/var/lib/docreader is not writable by this process (uid 10001" \
    || { echo "FAIL: no clear refusal of a read-only volume: $refusal" >&2; exit 1; }
echo "container: a volume it cannot write refuses to start: $refusal"

start() {
    local t0 t1
    t0=$(date +%s%N)
    "$@" >/dev/null 2>"$work/podman.err" || { cat "$work/podman.err" >&2; exit 1; }
    for _ in $(seq 1 1000); do
        curl -sf -o /dev/null "http://127.0.0.1:$svc_port/readyz" && break
        sleep 0.005
    done
    t1=$(date +%s%N)
    curl -sf -o /dev/null "http://127.0.0.1:$svc_port/readyz" \
        || { echo "FAIL: the container did not become ready" >&2; exit 1; }
    echo "container: ready $(((t1 - t0) / 1000000)) ms after \`$1 $2 $3 …\`"
}
# Read-only root, data on one volume, a key, one CORS origin, JSON logs (the image's default).
start $PODMAN run -d --name "$name" --read-only --network host \
    --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
    -v "$volume:/var/lib/docreader" \
    -e DOCREADER_ADDR="0.0.0.0:$svc_port" \
    -e DOCREADER_API_KEYS="$key:acme" \
    -e DOCREADER_CORS_ORIGINS="$origin" \
    -e DOCREADER_MCP_ALLOWED_HOSTS=docs.example.test \
    "$image"
$PODMAN healthcheck run "$name" >/dev/null 2>&1 \
    || { echo "FAIL: podman healthcheck run says unhealthy" >&2; exit 1; }
[ "$($PODMAN inspect --format '{{.State.Health.Status}}' "$name")" = healthy ] \
    || { echo "FAIL: the container's health is not 'healthy'" >&2; exit 1; }
echo "container: the image's HEALTHCHECK (docreader healthcheck) says healthy"

# The gateway: docker/nginx.conf with the two addresses of this run.
mkdir -p "$work/gateway/logs"
chmod -R 777 "$work/gateway"
sed -e "s/server 127.0.0.1:8080;/server 127.0.0.1:$svc_port;/" \
    -e "s/listen 127.0.0.1:8000;/listen 127.0.0.1:$gw_port;/" docker/nginx.conf >"$work/nginx.conf"
grep -q "127.0.0.1:$svc_port" "$work/nginx.conf" && grep -q "127.0.0.1:$gw_port" "$work/nginx.conf" \
    || { echo "FAIL: docker/nginx.conf no longer has the addresses this test replaces" >&2; exit 1; }
nginx -p "$work/gateway" -c "$work/nginx.conf" -e "$work/gateway/logs/error.log"
echo "container: nginx $(nginx -v 2>&1 | cut -d/ -f2) on 127.0.0.1:$gw_port → 127.0.0.1:$svc_port"

export PODMAN
python3 tests/container/check.py \
    --gateway "http://127.0.0.1:$gw_port" --key "$key" --origin "$origin" \
    --container "$name" --shared tests/corpus
$PODMAN logs "$name" 2>/dev/null | python3 -c '
import json, sys
lines = [l for l in sys.stdin if l.strip()]
bad = [l for l in lines if not l.lstrip().startswith("{") or not json.loads(l)]
assert lines and not bad, f"{len(bad)} log lines are not JSON, e.g. {bad[:2]}"
print(f"container: {len(lines)} log lines on stdout, every one JSON")
'
ok=1
echo "container: every check passed"
