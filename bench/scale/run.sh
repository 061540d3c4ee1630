#!/usr/bin/env bash
# Many replicas, measured (issue #22): bench/scale/bench_scale.py against a throwaway
# Postgres and SeaweedFS (started as tests/scale/run.sh starts them), with the release build.
#
#   bash bench/scale/run.sh [--reads 60] [--uploads 10] [--seconds 20] [--json FILE]
#   DOCREADER_BIN=path/to/docreader bash bench/scale/run.sh
set -euo pipefail
BENCH=bench-scale
# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
fetch_native
# Postgres, nginx and the weed binary as the scale test finds them (it fetches weed once).
weed="$(SCALE_PRINT_TOOLS=1 bash tests/scale/run.sh | sed -n 's/^weed=//p')"
pg_bindir=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
exec python3 "$here/bench_scale.py" --bin "$DOCREADER_BIN" --weed "$weed" --pg-bindir "$pg_bindir" "$@"
