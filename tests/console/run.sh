#!/usr/bin/env bash
# The web console (issue #20) in a real browser: Debian's Chromium driven by playwright-core,
# checked with axe-core (both pinned in package-lock.json, from npm), against a docreader
# started here with an API key and a frontend's origin in --cors-origins.
# tests/console/console.test.mjs says what is checked of the console; cors.test.mjs what of
# a frontend on another origin (upload URL + PUT, Prefer: respond-async and Location, a page
# image with X-Document-Password and ETag; an origin not listed refused);
# screenshots (375 px and 1280 px wide) go to target/console/.
#
#   bash tests/console/run.sh
#   DOCREADER_BIN=target/release/docreader bash tests/console/run.sh
#
# Installs Chromium (apt, as root) and the npm packages (npm ci) when missing; a part that
# cannot be had is said plainly and fails the run — a skipped browser test is a defect.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
here="$root/tests/console"
cd "$root"
say() { echo "console: $*" >&2; }

bin="${DOCREADER_BIN:-${CARGO_TARGET_DIR:-target}/debug/docreader}"
if [ ! -x "$bin" ]; then
  say "no docreader binary at $bin (build it first: cargo build)"
  exit 2
fi
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"

chromium="${CHROMIUM:-/usr/bin/chromium}"
if [ ! -x "$chromium" ]; then
  say "installing Debian's chromium"
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y chromium >/tmp/console-apt.log 2>&1; then
    apt-get update >/dev/null 2>&1 || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y chromium >/tmp/console-apt.log 2>&1 || {
      say "chromium could not be installed (apt-get install chromium): $(tail -n 3 /tmp/console-apt.log)"
      exit 1
    }
  fi
fi
if ! (cd "$here" && node -e 'require.resolve("playwright-core"); require.resolve("axe-core")' 2>/dev/null); then
  say "installing playwright-core and axe-core (npm ci)"
  (cd "$here" && npm ci --no-audit --no-fund >/tmp/console-npm.log 2>&1) || {
    say "npm ci failed: $(tail -n 3 /tmp/console-npm.log)"
    exit 1
  }
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/docreader-console.XXXXXX")"
mkdir "$work/data"
server=""
status=1
finish() {
  if [ -n "$server" ] && kill -0 "$server" 2>/dev/null; then
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi
  if [ "$status" = 0 ]; then rm -rf "$work"; else say "kept $work (serve.log)"; fi
}
trap finish EXIT

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port="$(free_port)"
# A frontend's origin for the cross-origin flows (cors.test.mjs), and one not allowed.
origin_port="$(free_port)"
other_port="$(free_port)"
key="console-test-key-$RANDOM$RANDOM"
unset_env=()
for name in $(compgen -e | grep '^DOCREADER_' | grep -vx 'DOCREADER_NATIVE_DIR' || true); do
  unset_env+=(-u "$name")
done
env "${unset_env[@]}" DOCREADER_API_KEYS="$key:console" OMP_THREAD_LIMIT=1 \
  "$bin" serve --addr "127.0.0.1:$port" --data-dir "$work/data" --workers 1 \
  --cors-origins "http://127.0.0.1:$origin_port" >"$work/serve.log" 2>&1 &
server=$!
for _ in $(seq 1 150); do
  if curl -fsS -o /dev/null "http://127.0.0.1:$port/readyz" 2>/dev/null; then break; fi
  if ! kill -0 "$server" 2>/dev/null; then
    say "the server exited before it was ready:"; tail -n 30 "$work/serve.log" >&2; exit 1
  fi
  sleep 0.2
done

mkdir -p "${CARGO_TARGET_DIR:-target}/console"
shots="$(cd "${CARGO_TARGET_DIR:-target}/console" && pwd)"
if BASE="http://127.0.0.1:$port" KEY="$key" CHROMIUM="$chromium" SHOTS="$shots" ROOT="$root" \
  node "$here/console.test.mjs" && \
  BASE="http://127.0.0.1:$port" KEY="$key" CHROMIUM="$chromium" ROOT="$root" \
  ORIGIN_PORT="$origin_port" OTHER_PORT="$other_port" node "$here/cors.test.mjs"; then
  status=0
  say "passed; screenshots in $shots"
else
  say "FAILED"
fi
exit "$status"
