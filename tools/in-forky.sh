#!/usr/bin/env bash
# tools/in-forky.sh COMMAND [ARGS...]: run COMMAND inside the cached Debian forky tree (made by
# tools/build-debian-tree.sh forky), where Debian's CPython 3.14 and 3.15 run, with this checkout
# at the same path as outside, so a command given a path of the checkout works unchanged.
#
# The tree is entered in a private mount namespace (unshare --mount): /proc, /sys and /dev, the
# checkout, the host's resolver configuration and CA bundle are bind-mounted there and vanish with
# the command, so nothing is left mounted whatever way it ends, and two runs never share mounts.
# The environment is a clean one (no host paths such as pip's find-links into the host's disk);
# UUIDKIT_*, CI, PYTHON* and PIP_INDEX_URL pass through. Needs root.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: tools/in-forky.sh COMMAND [ARGS...]" >&2; exit 2; }
here=$(cd "$(dirname "$0")/.." && pwd -P)
tree=$("$here/tools/build-debian-tree.sh" forky)
ca=${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}
[ -f "$ca" ] || ca=/etc/ssl/certs/ca-certificates.crt

pass=(PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin HOME=/root LANG=C.UTF-8
      SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt PIP_CERT=/etc/ssl/certs/ca-certificates.crt
      PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_DEFAULT_TIMEOUT=180 PIP_ROOT_USER_ACTION=ignore)
while IFS= read -r name; do
    pass+=("$name=${!name}")
done < <(compgen -e | grep -E '^(UUIDKIT_|PYTHON|CI$|PIP_INDEX_URL$|PIP_EXTRA_INDEX_URL$|CFLAGS$)' || true)

# The work runs from the checkout's own path inside the tree; its mount point is made once.
mkdir -p "$tree$here"
cwd=$(pwd -P)
case $cwd/ in "$here"/*) ;; *) cwd=$here ;; esac
exec unshare --mount --propagation private -- /bin/bash -euo pipefail -c '
    tree=$1 here=$2 ca=$3 cwd=$4
    shift 4
    envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    mount --rbind /proc "$tree/proc"
    mount --rbind /sys "$tree/sys"
    mount --rbind /dev "$tree/dev"
    mount --bind "$here" "$tree$here"
    if [ -L "$tree/etc/resolv.conf" ] || [ ! -e "$tree/etc/resolv.conf" ]; then
        rm -f "$tree/etc/resolv.conf" && : >"$tree/etc/resolv.conf"
    fi
    mount --bind /etc/resolv.conf "$tree/etc/resolv.conf"
    mount --bind "$ca" "$tree/etc/ssl/certs/ca-certificates.crt"
    mount -t tmpfs tmpfs "$tree/tmp"
    exec chroot "$tree" /usr/bin/env -i "${envs[@]}" \
        /bin/sh -c "cd \"\$1\" && shift && exec \"\$@\"" in-forky "$cwd" "$@"
' in-forky "$tree" "$here" "$ca" "$cwd" "${pass[@]}" -- "$@"
