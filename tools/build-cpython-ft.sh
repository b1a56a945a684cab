#!/usr/bin/env bash
# Print the path of a free-threaded CPython 3.13 (PEP 703), building it first if needed.
#
# The source is Debian trixie's python3.13 source package (CPython 3.13.5), fetched with
# `apt-get source` through a deb-src entry this script adds; it is configured with
# --disable-gil and installed into a cached prefix ($UUIDKIT_CACHE, default
# /opt/uuidkit-cache), which later runs reuse. Takes about ten minutes on two idle cores.
# Progress goes to stderr; stdout is only the interpreter's path.
set -euo pipefail
prefix=${UUIDKIT_CACHE:-/opt/uuidkit-cache}/cpython-3.13t
python=$prefix/bin/python3.13t
if [ -x "$python" ] && "$python" -c 'import sys; assert not sys._is_gil_enabled()' 2>/dev/null; then
    echo "$python"
    exit 0
fi
{
    sources=/etc/apt/sources.list.d/uuidkit-trixie-src.sources
    if [ ! -f "$sources" ]; then
        printf '%s\n' 'Types: deb-src' 'URIs: http://deb.debian.org/debian' 'Suites: trixie' \
            'Components: main' 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' \
            >"$sources"
    fi
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libssl-dev libffi-dev zlib1g-dev \
        libbz2-dev liblzma-dev libsqlite3-dev libreadline-dev >/dev/null
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    cd "$work"
    apt-get source --download-only --tar-only python3.13 >/dev/null 2>&1
    tar -xf python3.13_*.orig.tar.*
    cd Python-3.13*/
    ./configure --disable-gil --prefix="$prefix" >/dev/null
    make -j"$(nproc)" >/dev/null 2>&1
    make altinstall >/dev/null 2>&1
    "$python" -c 'import sys; assert not sys._is_gil_enabled()'
} >&2
echo "$python"
