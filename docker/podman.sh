# Sourced by docker/build-image.sh and tests/container/run.sh: podman as it runs on these
# machines, and the Debian packages the container path needs.
#
# Debian's podman 4.3 runs with Debian's runc (crun refuses hybrid cgroups) and cgroupfs
# (no systemd); PODMAN overrides the whole command.
PODMAN=${PODMAN:-podman --runtime runc --cgroup-manager cgroupfs}

# need_tools CMD[:PACKAGE] ...: install the Debian package of each missing command when root,
# else say plainly what to install and stop.
need_tools() {
    local missing=() spec cmd pkg
    for spec in "$@"; do
        cmd=${spec%%:*}
        pkg=${spec#*:}
        command -v "$cmd" >/dev/null 2>&1 || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
        echo "missing: ${missing[*]} (Debian packages); install them, or run this as root on Debian" >&2
        return 1
    fi
    echo "installing ${missing[*]} from Debian (missing here)"
    apt-get update -qq >/dev/null 2>&1 || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
