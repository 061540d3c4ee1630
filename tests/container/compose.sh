#!/usr/bin/env bash
# `make test-container`, second part (the Makefile runs it after tests/container/run.sh):
# docker/compose.yaml brought up as users bring it up, with podman-compose (pinned in
# tests/python/requirements.txt): Postgres, SeaweedFS (S3, which makes its bucket), two docreader
# replicas of the image under test, nginx in front. Then tests/container/compose_check.py
# through nginx's published port: an upload read back through both replicas, an upload URL
# made on one and used on the other, /mcp's host check, one replica stopped (the other
# serves), and `down -v` leaves nothing behind. About 1 minute.
#
# What is substituted, and why: no container registry can be reached here, so the upstream
# images of postgres, seaweedfs and nginx cannot be pulled. tests/container/standins.sh
# builds stand-ins from this machine's binaries (Debian's PostgreSQL 15 and nginx, the
# pinned `weed`), and the compose file's own image variables (POSTGRES_IMAGE,
# SEAWEEDFS_IMAGE, NGINX_IMAGE) point at them; the docreader image is the real one.
# tests/container/compose.override.yaml adds only this machine's open-file limits. The
# containers run on the compose file's own bridge network, names resolved by podman's DNS
# plugin (installed from Debian when missing).
#
# Two things podman 4.3 (Debian 12's) does not do, which docker compose does by itself, are
# done here: health checks are not run on a timer (no systemd), and podman-compose ignores
# `condition: service_healthy` before podman 4.6 (it says so). So the stack comes up in two
# steps, `up` of postgres and seaweedfs, then `up` of the rest once `podman healthcheck run`
# (the compose file's checks) passes for both; the replicas' checks are then run likewise.
#
#   bash tests/container/compose.sh          (IMAGE=… for another docreader image)
#
# Needs root and the image (`make image`); fails, saying what is missing, when any part
# cannot be had: never skipped.
set -euo pipefail
cd "$(dirname "$0")/../.."
source docker/podman.sh
need_tools podman runc curl openssl:openssl
started=$(date +%s)
# The reason is said again after the logs the cleanup prints, so that it ends the output (CI
# shows the output's tail).
fail() { failed="$*"; echo "compose: FAIL: $*" >&2; exit 1; }

image=${IMAGE:-localhost/docreader:latest}
$PODMAN image exists "$image" || fail "no image $image: build it first (make image)"
case "$($PODMAN info --format '{{.Host.NetworkBackend}}')" in
    cni) need_tools /usr/lib/cni/dnsname:golang-github-containernetworking-plugin-dnsname ;;
    netavark) need_tools /usr/lib/podman/aardvark-dns:aardvark-dns ;;
esac
py=$(python3 scripts/pyenv.py)
podman_compose="$(dirname "$py")/podman-compose"
[ -x "$podman_compose" ] || fail "no podman-compose in $(dirname "$py") (tests/python/requirements.txt)"
echo "compose: $("$podman_compose" --version 2>/dev/null | grep -i podman-compose | head -1)"

standin=localhost/docreader-standin
bash tests/container/standins.sh "$standin"

work=$(mktemp -d)
chmod 755 "$work"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
gw_port=$(free_port)
key=compose-test-key-$(openssl rand -hex 12)
printf '# the compose test'"'"'s keys (key:tenant)\n%s:acme\n' "$key" >"$work/api-keys"
chmod 644 "$work/api-keys"  # read by uid 10001 in the replicas

# The compose file's variables (README, "Many replicas with compose").
export DOCREADER_IMAGE="$image" \
    POSTGRES_IMAGE="$standin-postgres:test" \
    SEAWEEDFS_IMAGE="$standin-seaweedfs:test" \
    NGINX_IMAGE="$standin-nginx:test" \
    POSTGRES_PASSWORD="$(openssl rand -hex 16)" \
    S3_ACCESS_KEY=compose-test \
    S3_SECRET_KEY="$(openssl rand -hex 16)" \
    DOCREADER_API_KEYS_SECRET="$work/api-keys" \
    GATEWAY_ADDR=127.0.0.1 GATEWAY_PORT="$gw_port" \
    DOCREADER_PUBLIC_URL="http://127.0.0.1:$gw_port" \
    DOCREADER_MCP_ALLOWED_HOSTS=127.0.0.1
project=docreader-compose-$$
read -r -a pm <<<"$PODMAN"
compose() {
    "$podman_compose" --podman-path "${pm[0]}" --podman-args "${pm[*]:1}" -p "$project" \
        -f docker/compose.yaml -f tests/container/compose.override.yaml "$@"
}
container() {  # the container of a service
    $PODMAN ps -a --filter "label=io.podman.compose.project=$project" \
        --filter "label=com.docker.compose.service=$1" --format '{{.Names}}' | head -1
}

cleanup() {
    set +e
    if [ "${ok:-0}" != 1 ]; then
        for s in postgres seaweedfs docreader-1 docreader-2 nginx; do
            c=$(container "$s")
            [ -n "$c" ] || continue
            echo "--- $s ($c, $($PODMAN inspect --format '{{.State.Status}} exit {{.State.ExitCode}}' "$c" 2>/dev/null)): last 25 log lines ---"
            $PODMAN logs "$c" 2>&1 | grep -v systemd | tail -25
        done
    fi
    compose down -v -t 10 >"$work/down.log" 2>&1
    # Whatever `down` left (it is checked below when the run passed).
    $PODMAN ps -aq --filter "label=io.podman.compose.project=$project" | xargs -r $PODMAN rm -f -t 0 >/dev/null 2>&1
    $PODMAN volume ls -q --filter "label=io.podman.compose.project=$project" | xargs -r $PODMAN volume rm -f >/dev/null 2>&1
    $PODMAN network rm -f "${project}_default" >/dev/null 2>&1
    for s in postgres seaweedfs nginx; do $PODMAN rmi -f "$standin-$s:test" >/dev/null 2>&1; done
    rm -rf "$work"
    [ -z "${failed:-}" ] || echo "compose: FAIL: $failed" >&2
}
trap cleanup EXIT

# nginx's config for the stack is docker/nginx-replicas.conf's for containers: the same
# `http` block but for the replicas' addresses, the listen address and the log paths, or the
# two have drifted.
python3 - <<'PY' || fail "docker/nginx-compose.conf has drifted from docker/nginx-replicas.conf (see above)"
import difflib, re, sys
def http(path):
    text = open(path).read()
    lines = [re.sub(r"\s*#.*", "", l).strip() for l in text[text.index("http {"):].splitlines()]
    return [l for l in lines if l and not re.match(r"(server \S+:\d+ |listen |access_log )", l)]
a, b = http("docker/nginx-replicas.conf"), http("docker/nginx-compose.conf")
if a != b:
    sys.stdout.writelines(difflib.unified_diff([l + "\n" for l in a], [l + "\n" for l in b],
                                               "docker/nginx-replicas.conf", "docker/nginx-compose.conf"))
    sys.exit(1)
PY

compose config >"$work/config.yaml" 2>"$work/config.err" || { cat "$work/config.err" >&2; fail "compose config"; }
for s in postgres seaweedfs docreader-1 docreader-2 nginx; do
    grep -q "^  $s:" "$work/config.yaml" || fail "docker/compose.yaml has no service $s"
done

healthy() {  # healthy SERVICE SECONDS: the compose file's health check passes
    local c t
    c=$(container "$1")
    [ -n "$c" ] || fail "no container for $1"
    t=$(($(date +%s) + $2))
    until $PODMAN healthcheck run "$c" >/dev/null 2>&1; do
        [ "$($PODMAN inspect --format '{{.State.Running}}' "$c")" = true ] || fail "$1 stopped"
        [ "$(date +%s)" -lt "$t" ] || fail "$1 not healthy within $2 s"
        sleep 1
    done
}

t0=$(date +%s)
compose up -d --no-build postgres seaweedfs >"$work/up1.log" 2>&1 || { cat "$work/up1.log" >&2; fail "up postgres seaweedfs"; }
# Generous bounds for a loaded machine (each is healthy within seconds here).
healthy postgres 180
healthy seaweedfs 180
# Not `podman logs | grep -q`: under pipefail, grep leaving at the first match makes podman
# die of SIGPIPE and the pipeline fail once SeaweedFS has logged more than a pipe holds.
bucket_said() { $PODMAN logs "$(container seaweedfs)" 2>&1 | grep -c "bucket docreader: ready" >/dev/null; }
for _ in $(seq 1 50); do
    bucket_said && break
    sleep 0.2
done
bucket_said \
    || fail "seaweedfs is healthy but did not say the bucket is ready"
echo "compose: postgres and seaweedfs (its bucket made) healthy $(($(date +%s) - t0)) s after \`up\`"

t0=$(date +%s)
compose up -d --no-build >"$work/up2.log" 2>&1 || { cat "$work/up2.log" >&2; fail "up"; }
healthy docreader-1 180
healthy docreader-2 180
for _ in $(seq 1 50); do
    curl -sf -o /dev/null "http://127.0.0.1:$gw_port/readyz" && break
    sleep 0.2
done
curl -sf -o /dev/null "http://127.0.0.1:$gw_port/readyz" || fail "nginx does not answer on 127.0.0.1:$gw_port"
echo "compose: both replicas healthy and nginx answering on 127.0.0.1:$gw_port $(($(date +%s) - t0)) s after \`up\`"

export PODMAN
python3 tests/container/compose_check.py --gateway "http://127.0.0.1:$gw_port" --key "$key" \
    --replica "$(container docreader-1)" --replica "$(container docreader-2)"

t0=$(date +%s)
compose down -v -t 10 >"$work/down.log" 2>&1 || { cat "$work/down.log" >&2; fail "down"; }
left=$($PODMAN ps -aq --filter "label=io.podman.compose.project=$project"; \
    $PODMAN volume ls -q --filter "label=io.podman.compose.project=$project")
[ -z "$left" ] || fail "\`down -v\` left containers or volumes: $left"
echo "compose: \`down -v\` removed every container and volume in $(($(date +%s) - t0)) s"
ok=1
echo "compose: every check passed ($(($(date +%s) - started)) s in all)"
