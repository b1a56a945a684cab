# Sourced by .ci/run and the .ci/ scripts: timing of steps, finding interpreters, system packages.
# shellcheck shell=bash

ci_steps=()
# step NAME COMMAND...: run COMMAND, print and record how long it took; stop CI if it fails.
step() {
    local name=$1 start=$SECONDS status=0
    shift
    echo "::: $name" >&2
    "$@" || status=$?
    ci_steps+=("$(printf '%5ds  %s%s' $((SECONDS - start)) "$name" "$([ $status = 0 ] || echo "  FAILED ($status)")")")
    echo "::: $name: $((SECONDS - start)) s$([ $status = 0 ] || echo ", failed with status $status")" >&2
    if [ $status != 0 ]; then
        ci_summary
        exit $status
    fi
}

ci_summary() {
    echo "CI steps (wall-clock):" >&2
    printf '  %s\n' "${ci_steps[@]}" >&2
    echo "  total $SECONDS s" >&2
}

# find_python VERSION: the path of CPython VERSION (3.12, ...), found not assumed: pythonVERSION
# on PATH outside any venv, then pyenv's newest VERSION.x, then /usr/bin, /usr/local/bin.
find_python() {
    local version=$1 candidate root found
    root=$(pyenv root 2>/dev/null || echo "${PYENV_ROOT:-$HOME/.pyenv}")
    for candidate in $(command -v "python$version" 2>/dev/null) \
            $(ls -d "$root"/versions/"$version".*/bin/"python$version" 2>/dev/null | sort -V -r) \
            "/usr/local/bin/python$version" "/usr/bin/python$version"; do
        [ -x "$candidate" ] || continue
        case $candidate in "${VIRTUAL_ENV:-/nonexistent}"/*) continue ;; esac
        # The interpreter's own path (a pyenv shim names the real one this way).
        found=$("$candidate" -c 'import sys; print("%d.%d" % sys.version_info[:2], sys.executable)' 2>/dev/null) || continue
        if [ "${found%% *}" = "$version" ]; then
            echo "${found#* }"
            return 0
        fi
    done
    echo "CI: needs CPython $version (not on PATH, in pyenv or /usr/bin)" >&2
    return 1
}

# ensure_debs PACKAGE...: install the Debian packages not yet installed (apt-get update first,
# once per CI run and only when something is missing): a warm machine installs nothing.
ensure_debs() {
    local missing=() package
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' \
            || missing+=("$package")
    done
    [ ${#missing[@]} = 0 ] && return 0
    echo "CI: installing ${missing[*]}" >&2
    if [ -z "${ci_apt_updated:-}" ]; then
        apt-get update -qq
        ci_apt_updated=1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}
