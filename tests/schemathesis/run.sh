#!/usr/bin/env bash
# schemathesis against a running docreader (issue #14, item 9): every operation of
# /openapi.json with --checks all, about 25 generated requests per operation and phase
# (some 450 requests, under 10 s with a debug build).
#
#   bash tests/schemathesis/run.sh [extra `schemathesis run` options]
#   make schemathesis
#   DOCREADER_BIN=target/release/docreader bash tests/schemathesis/run.sh
#   bash tests/schemathesis/run.sh --continue-on-failure -n 100   # deeper: past the first
#                                                                  # failure of each operation
#
# It never builds docreader: it starts the binary at $DOCREADER_BIN (default
# target/debug/docreader) as `serve --workers 0` on a free loopback port with a fresh data
# dir, waits for /readyz, uploads real files of every format (their ids are what
# schemathesis.toml's dictionaries and hooks.py put in requests, so reads reach the
# extractors), runs the pinned schemathesis from the test venv (scripts/pyenv.py), stops the
# server and exits with schemathesis's status (2: no binary).
# Expected refusals are in tests/schemathesis/schemathesis.toml and hooks.py.
#
# The work dir (server log, data dir, JUnit report) is removed after a clean run and kept
# after a failing one; SCHEMATHESIS_KEEP=1 keeps it always. SCHEMATHESIS_SCHEMA=FILE tests
# the server against FILE instead of the /openapi.json it serves.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
here="$root/tests/schemathesis"
cd "$root"
say() { echo "schemathesis: $*" >&2; }

bin="${DOCREADER_BIN:-target/debug/docreader}"
if [ ! -x "$bin" ]; then
  say "no docreader binary at $bin"
  say "  build it first (cargo build), or set DOCREADER_BIN=/path/to/docreader"
  exit 2
fi
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"

py="$(python3 scripts/pyenv.py)"
st="$(dirname "$py")/schemathesis"
"$st" --version >&2

work="$(mktemp -d "${TMPDIR:-/tmp}/docreader-schemathesis.XXXXXX")"
mkdir "$work/data"
server=""
status=1
finish() {
  if [ -n "$server" ] && kill -0 "$server" 2>/dev/null; then
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi
  if [ "$status" = 0 ] && [ -z "${SCHEMATHESIS_KEEP:-}" ]; then
    rm -rf "$work"
  else
    say "kept $work (serve.log, data/, report/)"
  fi
}
trap finish EXIT

port="$("$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
base="http://127.0.0.1:$port"

# The server's settings are the command line's alone: no API keys, no server paths, no CORS
# from the caller's environment (DOCREADER_NATIVE_DIR, where the native parts are, stays).
unset_env=()
for name in $(compgen -e | grep '^DOCREADER_' | grep -vx 'DOCREADER_NATIVE_DIR' || true); do
  unset_env+=(-u "$name")
done
say "starting $bin on $base"
env "${unset_env[@]}" "$bin" serve --addr "127.0.0.1:$port" --data-dir "$work/data" --workers 0 \
  >"$work/serve.log" 2>&1 &
server=$!

for _ in $(seq 1 150); do
  if curl -fsS -o /dev/null "$base/readyz" 2>/dev/null; then break; fi
  if ! kill -0 "$server" 2>/dev/null; then
    say "the server exited before it was ready:"; tail -n 30 "$work/serve.log" >&2; exit 1
  fi
  sleep 0.2
done
if ! curl -fsS -o /dev/null "$base/readyz"; then
  say "the server did not answer /readyz within 30 s:"; tail -n 30 "$work/serve.log" >&2; exit 1
fi

# Real files of every family, uploaded twice: the first ids are read, the second deleted.
cat >"$work/note.eml" <<'EOF'
From: Ann <ann@example.com>
To: Bob <bob@example.com>
Subject: schemathesis fixture
Date: Mon, 01 Jan 2024 10:00:00 +0000
Message-ID: <schemathesis@example.com>
Content-Type: text/plain; charset=utf-8

First line of the body.
Second line of the body.
EOF
# Two that reads refuse: a PDF cut short (422 corrupt) and a 69-byte PNG whose header
# says 50000 x 50000 pixels (too large to decode).
head -c 1200 fixtures/pdf/three_pages.pdf >"$work/truncated.pdf"
"$py" - "$work/huge.png" <<'PY'
import struct, sys, zlib
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
ihdr = struct.pack(">IIBBBBB", 50000, 50000, 8, 0, 0, 0, 0)
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 100)) + chunk(b"IEND", b"")
open(sys.argv[1], "wb").write(png)
PY
fixtures=(fixtures/pdf/three_pages.pdf fixtures/office/report.docx fixtures/office/deck.pptx
          fixtures/office/book.xlsx fixtures/text/utf8_bom.txt fixtures/text/gbk.csv
          fixtures/images/hello.png "$work/note.eml" "$work/truncated.pdf" "$work/huge.png")
upload() {  # upload NAME: upload the fixtures; their ids go to NAME.dict (a schemathesis
            # dictionary: one quoted id a line), their records to NAME.json (for hooks.py)
  local parts=() f
  for f in "${fixtures[@]}"; do parts+=(-F "file=@$f"); done
  curl -fsS "${parts[@]}" "$base/upload" >"$work/$1.json" || {
    say "uploading the fixtures failed:"; cat "$work/$1.json" >&2; exit 1; }
  "$py" - "$work/$1.json" "$work/$1.dict" <<'PY'
import json, sys
files = json.load(open(sys.argv[1]))["files"]
with open(sys.argv[2], "w") as out:
    for f in files:
        out.write(json.dumps(f["file_id"]) + "\n")
print(f"schemathesis: uploaded {len(files)} files: " + ", ".join(f"{f['name']} ({f['format']})" for f in files),
      file=sys.stderr)
PY
}
upload file_ids
upload spare_ids
# Read jobs of the first uploads (job_ids.dict), for GET/DELETE /jobs/{id} and its events.
"$py" - "$work/file_ids.json" "$work/job_ids.dict" "$base" <<'PY'
import json, sys, urllib.request
files, out, base = json.load(open(sys.argv[1]))["files"], open(sys.argv[2], "w"), sys.argv[3]
for f in files[:4]:
    req = urllib.request.Request(f"{base}/read", method="POST",
                                 data=json.dumps({"file_id": f["file_id"], "async": True}).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req) as r:
        assert r.status == 202, r.status
        out.write(json.dumps(json.load(r)["job_id"]) + "\n")
print("schemathesis: submitted 4 read jobs", file=sys.stderr)
PY

cp "$here/schemathesis.toml" "$here/hooks.py" "$work/"
# SCHEMATHESIS_SCHEMA=FILE tests this server against another description (say the committed
# openapi/openapi.json, or a draft of a schema fix) instead of the one it serves.
schema=("$base/openapi.json")
if [ -n "${SCHEMATHESIS_SCHEMA:-}" ]; then
  schema=("$(cd "$(dirname "$SCHEMATHESIS_SCHEMA")" && pwd)/$(basename "$SCHEMATHESIS_SCHEMA")" --url "$base")
fi
say "running: schemathesis run ${schema[*]} --checks all $*"
started=$SECONDS
status=0
(cd "$work" && "$st" --config-file schemathesis.toml run "${schema[@]}" --checks all \
   --report junit --report-dir "$work/report" "$@") || status=$?
say "schemathesis finished in $((SECONDS - started)) s with status $status"

if ! kill -0 "$server" 2>/dev/null; then
  say "the server died during the run:"; tail -n 30 "$work/serve.log" >&2
  [ "$status" != 0 ] || status=1
fi
exit "$status"
