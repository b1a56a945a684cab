# tools/aarch64-env.sh: sourced (not run) by .ci/aarch64 and .ci/dist-aarch64, from the repo
# root, under `set -euo pipefail`: what both need to run arm64 CPython on an x86-64 host.
#   aarch64_tools   install Debian's aarch64 cross compiler and qemu-user (with the static
#                   build and binfmt-support) when missing; apt-get update only then
#   aarch64_binfmt  mount binfmt_misc and register qemu-aarch64 with it, so that an arm64
#                   process can start another (pytest-xdist's workers, pip's build steps)
#   aarch64_tree    set TREE to the cached Debian bookworm arm64 tree
#                   (tools/build-debian-tree.sh arm64) and export QEMU_LD_PREFIX and QEMU_CPU
#                   for the processes that binfmt_misc starts
#   arm COMMAND...  run an arm64 executable under qemu-aarch64 -L TREE -cpu max (qemu's
#                   default CPU, named: it has the SHA1 instructions)
#   aarch64_venv    make (once) the cached venv ARM_VENV of the tree's CPython 3.11 with the
#                   test dependencies pinned by .ci/constraints.txt, installed again only
#                   when the pins or the list change
#   aarch64_cc      the cross compiler with the tree as its sysroot, for CC and LDSHARED
#   took STEP       print how long the step since the last call (or since sourcing) took
# Cache: $UUIDKIT_CACHE (default /opt/uuidkit-cache). Needs root (apt-get, mount).

AARCH64_CACHE=${UUIDKIT_CACHE:-/opt/uuidkit-cache}
ARM_VENV=$AARCH64_CACHE/venv-arm64-3.11
# The arm64 venv's packages (versions from .ci/constraints.txt): setuptools and wheel build the
# accelerator, the rest runs tests/core and tests/generators (python-ulid and cloudpickle for
# two of them; duckdb, a large native wheel, is left out and its test skips).
ARM_PACKAGES=("setuptools>=77" wheel pytest hypothesis pytest-timeout pytest-xdist numpy pyarrow
    python-ulid cloudpickle)
AARCH64_STARTED=$(date +%s%N)
AARCH64_STEP_STARTED=$AARCH64_STARTED

seconds_since() {  # NANOSECONDS: the time since then, in seconds with one decimal
    local tenths=$((($(date +%s%N) - $1) / 100000000))
    echo "$((tenths / 10)).$((tenths % 10))"
}

took() {
    printf '%s: %-34s %6s s\n' "$(basename "$0")" "$1" "$(seconds_since "$AARCH64_STEP_STARTED")"
    AARCH64_STEP_STARTED=$(date +%s%N)
}

aarch64_tools() {
    local missing=() package
    command -v aarch64-linux-gnu-gcc >/dev/null || missing+=(gcc-aarch64-linux-gnu)
    for package in qemu-user qemu-user-static binfmt-support; do
        dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        echo "$(basename "$0"): installing ${missing[*]}"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
}

aarch64_binfmt() {
    local binfmt=/proc/sys/fs/binfmt_misc
    if ! grep -qs " $binfmt binfmt_misc " /proc/mounts; then
        mount -t binfmt_misc binfmt_misc "$binfmt"
    fi
    if ! grep -qx enabled "$binfmt/qemu-aarch64" 2>/dev/null; then
        update-binfmts --enable qemu-aarch64
    fi
}

aarch64_tree() {
    TREE=$(tools/build-debian-tree.sh arm64)
    export QEMU_LD_PREFIX=$TREE QEMU_CPU=max
}

arm() {
    qemu-aarch64 -L "$TREE" -cpu max "$@"
}

aarch64_cc() {
    echo "aarch64-linux-gnu-gcc --sysroot=$TREE"
}

aarch64_venv() {
    local stamp=$ARM_VENV/.uuidkit-installed want
    want=$({ printf '%s\n' "${ARM_PACKAGES[@]}"; cat .ci/constraints.txt; } | sha256sum | cut -d' ' -f1)
    if ! arm "$ARM_VENV/bin/python" -c 'import platform, sys
assert platform.machine() == "aarch64" and sys.version_info[:2] == (3, 11)' 2>/dev/null; then
        rm -rf "$ARM_VENV"
        arm "$TREE/usr/bin/python3.11" -m venv "$ARM_VENV"
    fi
    if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
        rm -f "$stamp"
        arm "$ARM_VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
            -c .ci/constraints.txt "${ARM_PACKAGES[@]}"
        echo "$want" >"$stamp"  # last: an interrupted install leaves no stamp
    fi
}
