#!/usr/bin/env bash
# Print the path of a free-threaded CPython 3.13 (PEP 703), building it first if needed.
#
# The source is Debian trixie's python3.13 source package, pinned to CPython 3.13.5 and its
# tarball's SHA-256 (tools/fetch-debian-source.sh); it is configured with
# --disable-gil and installed into a cached prefix ($UUIDKIT_CACHE, default
# /opt/uuidkit-cache), which later runs reuse. Takes about ten minutes on two idle cores. The
# install is staged (DESTDIR) and renamed into place only once the interpreter answers, so an
# interrupted build never leaves a prefix a later run would take for a finished one; a lock
# makes a second caller wait for the first build instead of building beside it.
# Progress goes to stderr; stdout is only the interpreter's path.
set -euo pipefail
cache=${UUIDKIT_CACHE:-/opt/uuidkit-cache}
prefix=$cache/cpython-3.13t
python=$prefix/bin/python3.13t
upstream=3.13.5
sha256=93e583f243454e6e9e4588ca2c2662206ad961659863277afcdb96801647d640
is_pinned_ft() {
    "$1" -c "import sys, platform; assert not sys._is_gil_enabled(); assert platform.python_version() == '$upstream'" 2>/dev/null
}
mkdir -p "$cache"
exec 9>>"$cache/.cpython-3.13t.lock"
flock 9
if [ -x "$python" ] && is_pinned_ft "$python"; then
    echo "$python"
    exit 0
fi
{
    here=$(cd "$(dirname "$0")" && pwd)
    missing=()
    for package in libssl-dev libffi-dev zlib1g-dev libbz2-dev liblzma-dev libsqlite3-dev libreadline-dev; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' \
            || missing+=("$package")
    done
    [ ${#missing[@]} = 0 ] || { apt-get update -qq; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libssl-dev libffi-dev zlib1g-dev \
        libbz2-dev liblzma-dev libsqlite3-dev libreadline-dev >/dev/null; }
    work=$(mktemp -d)
    staged=$(mktemp -d "$cache/.cpython-3.13t.XXXXXX")
    trap 'rm -rf "$work" "$staged"' EXIT
    cd "$work"
    tar -xf "$("$here/fetch-debian-source.sh" trixie python3.13 "$upstream" "$sha256" "$work")"
    cd "Python-$upstream"
    ./configure --disable-gil --prefix="$prefix" >/dev/null
    make -j"$(nproc)" >/dev/null 2>&1
    make altinstall DESTDIR="$staged" >/dev/null 2>&1
    # The staged interpreter runs from its final path only; check it there after the rename,
    # and take the prefix back out if it does not answer.
    rm -rf "$prefix"
    mv -T "$staged$prefix" "$prefix"
    is_pinned_ft "$python" || { rm -rf "$prefix"; echo "build-cpython-ft: the build does not run" >&2; exit 1; }
} >&2
echo "$python"
