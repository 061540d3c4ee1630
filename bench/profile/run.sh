#!/usr/bin/env bash
# Table profiles (issue #20): a generated CSV read with and without `--profile true`
# (`docreader read`, the extraction's own elapsed_ms and the process's peak RSS), best of
# N runs. See bench/profile/bench_profile.py.
#
#   bash bench/profile/run.sh [--mb 50] [--runs 5]
#   DOCREADER_BIN=path/to/docreader bash bench/profile/run.sh
set -euo pipefail

BENCH=bench-profile
# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

"$PYTHON" "$here/bench_profile.py" --bin "$DOCREADER_BIN" "$@"
