#!/usr/bin/env bash
# ThreadSanitizer over the free-threaded stress tests: builds uuidkit._speedups with
# -fsanitize=thread for the free-threaded CPython 3.13t (tools/build-cpython-ft.sh), runs the
# stress tests and the compiled v7/Gregorian core tests with PYTHON_GIL=0 and gcc's libtsan
# preloaded (the interpreter itself is not instrumented), and fails when TSan reports a race
# in which one of the two accesses is the extension's own (tools/tsan_reports.py; the
# interpreter's reports among themselves are noise and are counted, not shown).
#
# Not part of CI: it takes several minutes, and whether two threads overlap enough to expose
# a race depends on the machine. UUIDKIT_STRESS_CALLS (default 20000) sets the calls per
# thread; UUIDKIT_FT_PYTHON names a 3.13t interpreter with pytest and hypothesis installed
# (else a venv is made as .ci/freethreaded makes one). The checkout's own in-place build is
# left alone: the TSan build is made in a copy of the tree.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
libtsan=$(gcc -print-file-name=libtsan.so.2)
if [ ! -e "$libtsan" ]; then
    echo "tsan-check: gcc's ThreadSanitizer runtime is missing (Debian: apt-get install libtsan2)" >&2
    exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python=${UUIDKIT_FT_PYTHON:-}
if [ -z "$python" ]; then
    "$(tools/build-cpython-ft.sh)" -m venv "$work/venv"
    "$work/venv/bin/python" -m pip install --quiet "setuptools>=77" wheel pytest \
        "hypothesis<6.150" pytest-timeout  # later hypothesis: no 3.13t wheel
    python=$work/venv/bin/python
fi
mkdir "$work/tree" "$work/logs"
cp -r setup.py pyproject.toml README.md LICENSE src tests "$work/tree/"
find "$work/tree" -name '*.so' -delete
cd "$work/tree"
# -O1 keeps the reports' line numbers close to the source; -Werror as in CI.
UUIDKIT_REQUIRE_SPEEDUPS=1 LDFLAGS="-fsanitize=thread" \
    CFLAGS="-fsanitize=thread -O1 -g -fno-omit-frame-pointer -Wall -Wextra -Werror" \
    "$python" setup.py --quiet build_ext --inplace
status=0
LD_PRELOAD=$libtsan TSAN_OPTIONS="halt_on_error=0 exitcode=0 log_path=$work/logs/tsan" \
    PYTHON_GIL=0 PYTHONPATH=src UUIDKIT_REQUIRE_SPEEDUPS=1 \
    UUIDKIT_STRESS_CALLS=${UUIDKIT_STRESS_CALLS:-20000} \
    "$python" -W error::RuntimeWarning -m pytest -q -p no:cacheprovider \
    tests/generators/test_gen_free_threading.py tests/generators/test_gen_v7_compiled.py \
    tests/generators/test_gen_gregorian_core.py || status=$?
shopt -s nullglob
"$python" "$root/tools/tsan_reports.py" "$work"/logs/tsan.* || status=1
exit "$status"
