#!/usr/bin/env bash
# tools/fetch-debian-source.sh SUITE PACKAGE UPSTREAM SHA256 DIR: download the upstream tarball of
# Debian source package PACKAGE at upstream version UPSTREAM from suite SUITE into DIR, check that
# it has the SHA-256 SHA256, and print its path.
#
# The pin is the upstream version and the tarball's checksum, not a Debian revision: a stable
# update (3.13.5-2+deb13u6 after u5) carries the same tarball and is taken; a different upstream
# release, or a tarball that differs by one byte, fails here, naming both, until the pin is
# updated on purpose. A deb-src entry for SUITE is added once (deb-src only: nothing from that
# suite can be installed through it). Progress goes to stderr; stdout is only the path.
set -euo pipefail
suite=$1 package=$2 upstream=$3 sha256=$4 dir=$5
sources=/etc/apt/sources.list.d/uuidkit-$suite-src.sources
if [ ! -f "$sources" ]; then
    mirror=$(sed -n 's/^URIs:[[:space:]]*//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null \
        | grep -v security | head -n 1)
    printf '%s\n' 'Types: deb-src' "URIs: ${mirror:-http://deb.debian.org/debian}" "Suites: $suite" \
        'Components: main' 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' >"$sources"
fi
candidate() {  # the Debian version of PACKAGE in SUITE whose upstream part is UPSTREAM
    apt-cache showsrc "$package" 2>/dev/null | sed -n 's/^Version: //p' \
        | grep -E "^([0-9]+:)?${upstream//./\\.}-" | head -n 1
}
version=$(candidate)
if [ -z "$version" ]; then
    apt-get update -qq >&2
    version=$(candidate)
fi
if [ -z "$version" ]; then
    echo "fetch-debian-source: $suite has no $package $upstream (it serves:" \
        "$(apt-cache showsrc "$package" 2>/dev/null | sed -n 's/^Version: //p' | tr '\n' ' '));" \
        "update the pin in the calling script" >&2
    exit 1
fi
(cd "$dir" && apt-get source --download-only --tar-only "$package=$version" >/dev/null 2>&1) || {
    echo "fetch-debian-source: apt-get source $package=$version failed" >&2
    exit 1
}
tarball=$(ls "$dir/${package}_${upstream}.orig.tar."* 2>/dev/null | head -n 1)
[ -n "$tarball" ] || { echo "fetch-debian-source: no ${package}_${upstream}.orig.tar.* fetched" >&2; exit 1; }
found=$(sha256sum "$tarball" | cut -d' ' -f1)
if [ "$found" != "$sha256" ]; then
    echo "fetch-debian-source: $tarball has SHA-256 $found, the pin says $sha256" >&2
    exit 1
fi
echo "$tarball"
