"""The accelerator built on CPython's public API only: the path an unknown CPython takes.

On the versions the suite has checked (3.11 to 3.13 with a GIL) the accelerator writes and
reads ints through their digits and allocates objects as ``PyType_GenericAlloc`` would; on any
other version it uses public functions only. This test builds that second variant here
(``UUIDKIT_PUBLIC_API=1``, in a copy of the sources), checks it took the public path, and runs
the twin tests (every compiled function against its pure-Python reference) on it.

References: RFC 9562 §4.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TWIN_TESTS = [
    "tests/core/test_speedups.py",
    "tests/core/test_fields_layout.py",
    "tests/core/test_stdlib_surface.py",
    "tests/generators/test_gen_v7_compiled.py",
    "tests/generators/test_gen_plain_functions.py",
]

pytestmark = pytest.mark.slow


def test_the_public_api_build_passes_the_twin_tests(tmp_path: Path) -> None:
    if shutil.which(os.environ.get("CC", "cc")) is None:
        pytest.skip("no C compiler")
    tree = tmp_path / "tree"
    ignored = shutil.ignore_patterns("__pycache__", "*.so", "*.egg-info", "build")
    tree.mkdir()
    for name in ("setup.py", "pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, tree / name)
    shutil.copytree(ROOT / "src", tree / "src", ignore=ignored)
    shutil.copytree(ROOT / "tests", tree / "tests", ignore=ignored)
    environment = {
        key: value
        for key, value in os.environ.items()
        if key not in ("UUIDKIT_PURE", "PYTHONPATH", "PYTEST_XDIST_WORKER")
    }
    environment |= {"UUIDKIT_PUBLIC_API": "1", "UUIDKIT_REQUIRE_SPEEDUPS": "1"}
    build = subprocess.run(
        [sys.executable, "setup.py", "--quiet", "build_ext", "--inplace"],
        cwd=tree,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, build.stderr
    environment["PYTHONPATH"] = str(tree / "src")
    probe = subprocess.run(
        [sys.executable, "-c", "import uuidkit._speedups as s; print(s.USES_INTERNALS)"],
        cwd=tree,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert probe.stdout.strip() == "0"
    tests = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-n",
            "0",
            "-m",
            "",
            *TWIN_TESTS,
        ],
        cwd=tree,
        env=environment,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert tests.returncode == 0, tests.stdout[-4000:] + tests.stderr[-2000:]
