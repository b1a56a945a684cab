#!/usr/bin/env bash
# Print the bin directory of a PostgreSQL 18 server, building it first if needed.
#
# The machine's Debian ships an older PostgreSQL; the server's own uuidv7() (PostgreSQL 18)
# is built from Debian forky's postgresql-18 source package, fetched with `apt-get source`
# through a deb-src entry this script adds (deb-src only: no forky binary package can be
# installed through it). It is configured with the fewest options a throwaway test cluster
# needs and installed into a cached prefix ($UUIDKIT_CACHE, default /opt/uuidkit-cache),
# which later runs reuse. The build goes into a fresh directory next to the prefix and is
# renamed into place only once `postgres --version` answers, so an interrupted build never
# leaves a half-built prefix that a later run would take for a finished one.
# Progress goes to stderr; stdout is only the bin directory.
set -euo pipefail
cache=${UUIDKIT_CACHE:-/opt/uuidkit-cache}
prefix=$cache/postgresql-18

# The pin: upstream 18.6 and its tarball's SHA-256 (tools/fetch-debian-source.sh).
upstream=18.6
sha256=555610c24d53e4316da5b7d3fc25c279d96856d5e0e23ee308c328c5fa881d9f
server_is_18() {
    "$1/bin/postgres" --version 2>/dev/null | grep -q "(PostgreSQL) ${upstream//./\\.}\$"
}

mkdir -p "$cache"
exec 9>>"$cache/.postgresql-18.lock"  # a second caller waits for the first build
flock 9
if server_is_18 "$prefix"; then
    echo "$prefix/bin"
    exit 0
fi
{
    here=$(cd "$(dirname "$0")" && pwd)
    # Since PostgreSQL 17 the release tarball no longer carries its generated parsers, so
    # bison and flex are needed; ICU, readline and zlib are left out (a test cluster needs
    # none of them).
    if ! command -v bison >/dev/null || ! command -v flex >/dev/null || ! command -v pkg-config >/dev/null; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq build-essential pkg-config \
            bison flex >/dev/null
    fi
    mkdir -p "$cache"
    work=$(mktemp -d)
    staged=$(mktemp -d "$cache/.postgresql-18.XXXXXX")
    trap 'rm -rf "$work" "$staged"' EXIT
    cd "$work"
    tar -xf "$("$here/fetch-debian-source.sh" forky postgresql-18 "$upstream" "$sha256" "$work")"
    cd "postgresql-$upstream"
    # The prefix is the final path (the server finds its share/ and lib/ relative to it);
    # DESTDIR stages the files so that only a complete tree is moved there.
    ./configure --prefix="$prefix" --without-icu --without-readline --without-zlib >/dev/null
    make -j"$(nproc)" >/dev/null 2>&1
    make install DESTDIR="$staged" >/dev/null 2>&1
    server_is_18 "$staged$prefix"
    chmod 755 "$staged$prefix"
    mv -T "$staged$prefix" "$prefix"
} >&2
echo "$prefix/bin"
