#!/usr/bin/env bash
# tools/build-debian-tree.sh forky|arm64: print the path of a cached Debian tree, making it first
# if needed, for the interpreters and machines this host's Debian does not carry:
#   forky  Debian forky (amd64) with CPython 3.14 and 3.15 (-dev, -venv) and gcc, run by chroot;
#          its CPythons are built for a newer C library than Debian 12's, so they run only there.
#   arm64  Debian bookworm (arm64), extracted, with CPython 3.11 and its headers: the sysroot of
#          the aarch64 cross-compiler and the library root of qemu-aarch64 (-L).
# The tree is made by mmdebstrap from the mirror this machine's apt already uses (the URIs: line
# of its sources, whatever Debian release the host runs), into a fresh directory beside the
# cached one, and renamed into place only once it passes its check, so an interrupted run never
# leaves a half-made tree that a later run would take for a finished one. Cache: $UUIDKIT_CACHE
# (default /opt/uuidkit-cache). Progress goes to stderr; stdout is only the tree's path.
set -euo pipefail
kind=${1:?usage: build-debian-tree.sh forky|arm64}
cache=${UUIDKIT_CACHE:-/opt/uuidkit-cache}
tree=$cache/debian-$kind

check() {  # TREE: does it hold what its kind promises?
    case $kind in
        forky) [ -x "$1/usr/bin/python3.14" ] && [ -x "$1/usr/bin/python3.15" ] \
                   && [ -x "$1/usr/bin/gcc" ] && [ -f "$1/usr/include/python3.15/Python.h" ] ;;
        arm64) [ -f "$1/usr/include/python3.11/Python.h" ] && [ -e "$1/usr/bin/python3.11" ] \
                   && [ -e "$1/lib/ld-linux-aarch64.so.1" ] ;;
    esac
}

mkdir -p "$cache"
exec 9>>"$cache/.debian-$kind.lock"  # a second caller waits for the first build
flock 9
if check "$tree" 2>/dev/null; then
    echo "$tree"
    exit 0
fi
{
    mirror=$(sed -n 's/^URIs:[[:space:]]*//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null \
        | grep -v security | head -n 1)
    [ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $2 !~ /security/ {print $2; exit}' \
        /etc/apt/sources.list 2>/dev/null)
    [ -n "$mirror" ] || { echo "build-debian-tree: no Debian mirror found in apt's sources" >&2; exit 1; }
    command -v mmdebstrap >/dev/null || {
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null
    }
    work=$(mktemp -d "$cache/.debian-$kind.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    case $kind in
        forky)
            # The mirror's forky Release file is past its Valid-Until date.
            mmdebstrap --quiet --variant=apt --aptopt='Acquire::Check-Valid-Until "false"' \
                --include=python3.14,python3.14-dev,python3.14-venv,python3.15,python3.15-dev,python3.15-venv,gcc,libc6-dev,git,ca-certificates \
                forky "$work/tree" "$mirror" ;;
        arm64)
            mmdebstrap --quiet --variant=extract --arch=arm64 \
                --include=python3,python3-dev,libpython3.11-dev,libc6-dev,libstdc++6,python3-pip,python3-venv \
                bookworm "$work/tree" "$mirror" ;;
        *) echo "build-debian-tree: unknown tree $kind (forky or arm64)" >&2; exit 2 ;;
    esac
    check "$work/tree" || { echo "build-debian-tree: the $kind tree lacks what it should hold" >&2; exit 1; }
    rm -rf "$tree"
    mv "$work/tree" "$tree"
} >&2
echo "$tree"
