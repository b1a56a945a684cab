"""Installing where no C compiler works: the build succeeds and uuidkit runs on the pure path.

Each test copies the sources (no ``build/`` directory, no compiled module) into a temporary
directory, points ``CC`` at a compiler that always fails, builds or installs from there,
and imports the result in a fresh interpreter. No network: pip runs with
``--no-build-isolation --no-deps --no-index``. ``UUIDKIT_REQUIRE_SPEEDUPS=1`` (what CI sets
with ``-Werror``) must turn the same failure into a failed build.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FALLBACK_MESSAGE = "building the C accelerator failed"

#: A fresh interpreter importing the installed copy: the pure path, and it works.
CHECK = """
import sys, uuid
import uuidkit
from uuidkit import _accel
assert uuidkit.__file__.startswith(sys.argv[1]), uuidkit.__file__
assert _accel.SPEEDUPS is None and not _accel.PURE_REQUESTED
value = uuidkit.uuid7()
assert type(value) is uuid.UUID and value.version == 7
assert uuidkit.parse(uuidkit.format_uuid(value)) == value
assert uuidkit.uuid4().version == 4
print("pure path ok")
"""


def _copy_sources(destination: Path) -> Path:
    """The files ``pip install .`` reads, without anything built."""
    tree = destination / "uuidkit-src"
    tree.mkdir()
    for name in ("setup.py", "pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, tree / name)
    ignored = shutil.ignore_patterns("__pycache__", "*.so", "*.pyd", "*.egg-info")
    shutil.copytree(ROOT / "src", tree / "src", ignore=ignored)
    return tree


def _environment(**extra: str) -> dict[str, str]:
    """This process's environment with a compiler that always fails and no uuidkit switches."""
    environment = {
        key: value
        for key, value in os.environ.items()
        if key not in ("UUIDKIT_PURE", "UUIDKIT_REQUIRE_SPEEDUPS", "PYTHONPATH", "CFLAGS")
    }
    false = shutil.which("false")
    assert false is not None
    environment["CC"] = false
    environment.update(extra)
    return environment


def _run(
    command: list[str], cwd: Path, environment: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, cwd=cwd, env=environment, capture_output=True, text=True, timeout=120
    )


def _check_pure_import(location: Path) -> None:
    environment = _environment(PYTHONPATH=str(location))
    result = _run([sys.executable, "-c", CHECK, str(location)], location, environment)
    assert result.returncode == 0, result.stderr
    assert "pure path ok" in result.stdout


def test_build_without_a_compiler_falls_back_to_pure_python(tmp_path: Path) -> None:
    tree = _copy_sources(tmp_path)
    command = [sys.executable, "setup.py", "build_ext", "--inplace"]
    result = _run(command, tree, _environment())
    assert result.returncode == 0, result.stderr
    assert FALLBACK_MESSAGE in result.stderr
    assert "pure-Python" in result.stderr
    assert not any((tree / "src" / "uuidkit").glob("_speedups*.so"))
    _check_pure_import(tree / "src")


def test_required_speedups_make_the_same_failure_fatal(tmp_path: Path) -> None:
    tree = _copy_sources(tmp_path)
    command = [sys.executable, "setup.py", "build_ext", "--inplace"]
    result = _run(command, tree, _environment(UUIDKIT_REQUIRE_SPEEDUPS="1"))
    assert result.returncode != 0
    assert "UUIDKIT_REQUIRE_SPEEDUPS is set" in result.stderr


def _can_build_wheels() -> bool:
    if importlib.util.find_spec("wheel") is not None:
        return True
    return importlib.util.find_spec("setuptools.command.bdist_wheel") is not None


@pytest.mark.skipif(
    not _can_build_wheels(), reason="pip --no-build-isolation needs the 'wheel' package here"
)
def test_pip_install_without_a_compiler_succeeds(tmp_path: Path) -> None:
    tree = _copy_sources(tmp_path)
    target = tmp_path / "site"
    command = [
        *(sys.executable, "-m", "pip", "install", "--verbose", "--no-build-isolation"),
        *("--no-deps", "--no-index", "--disable-pip-version-check", "--target", str(target)),
        str(tree),
    ]
    result = _run(command, tmp_path, _environment())
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert FALLBACK_MESSAGE in result.stdout + result.stderr
    assert (target / "uuidkit" / "__init__.py").is_file()
    assert not any((target / "uuidkit").glob("_speedups*.so"))
    _check_pure_import(target)
