#!/usr/bin/env bash
# The Kubernetes manifests (docker/kubernetes/*.yaml): each document validated against the
# API's schemas by kubernetes-validate (pinned in tests/python/requirements.txt), strictly
# (an unknown field fails), for the oldest Kubernetes they name (1.30: the preStop `sleep`
# action) and the newest it knows; then tests/kubernetes/check.py checks what the comments
# promise: the grace period covers preStop + drain, probes on /readyz and /healthz, a
# read-only root with the data dir on a volume, the keys file on the Secret's mount, and the
# Service and PodDisruptionBudget selecting the Deployment's pods. Part of `make test`
# (a few seconds); fails on any invalid manifest.
#
#   bash tests/kubernetes/validate.sh [FILE...]      (default: docker/kubernetes/*.yaml)
set -euo pipefail
cd "$(dirname "$0")/../.."
py=$(python3 scripts/pyenv.py)
validate="$(dirname "$py")/kubernetes-validate"
[ -x "$validate" ] || { echo "kubernetes: no kubernetes-validate in $(dirname "$py")" >&2; exit 1; }

if [ $# -gt 0 ]; then files=("$@"); else files=(docker/kubernetes/*.yaml); fi
[ -e "${files[0]}" ] || { echo "kubernetes: no manifests (${files[*]})" >&2; exit 1; }
for version in 1.30.0 1.37.0; do
    # Exit status: non-zero for an invalid document (and for one it has no schema for).
    if ! out=$("$validate" --strict --kubernetes-version "$version" "${files[@]}" 2>&1); then
        echo "$out" >&2
        echo "kubernetes: FAIL: invalid manifests for Kubernetes $version" >&2
        exit 1
    fi
    if grep -qiE 'warn|error|invalid' <<<"$out"; then
        echo "$out" >&2
        echo "kubernetes: FAIL: kubernetes-validate warned for Kubernetes $version" >&2
        exit 1
    fi
    echo "kubernetes: ${#files[@]} files valid (strict) for Kubernetes $version: $(grep -c ' passed for resource ' <<<"$out") documents"
done
"$py" tests/kubernetes/check.py "${files[@]}"
